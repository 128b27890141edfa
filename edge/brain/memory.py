"""Per-companion conversation memory: a bounded window of turns behind fixed system rules.

The system text (identity, rules, events) is not part of the window: it is rebuilt for every
call, so no amount of talk can push the rules out. The window keeps the last ``max_messages``
turns, always starting on a user turn so the model never sees an orphaned reply.
"""

from __future__ import annotations

import collections
import threading

from edge.providers.base import Message, Role


class ConversationMemory:
    def __init__(self, max_messages: int = 8):
        if max_messages < 0:
            raise ValueError(f"max_messages must be >= 0, got {max_messages}")
        self.max_messages = max_messages
        self._turns: collections.deque[Message] = collections.deque(maxlen=max_messages or None)
        self._lock = threading.Lock()

    def add(self, role: Role, content: str) -> None:
        if self.max_messages == 0:
            return
        with self._lock:
            self._turns.append(Message(role, content))

    def window(self) -> list[Message]:
        """The remembered turns, oldest first, starting at a user turn."""
        with self._lock:
            turns = list(self._turns)
        while turns and turns[0].role != "user":
            turns.pop(0)
        return turns

    def clear(self) -> None:
        with self._lock:
            self._turns.clear()

    def __len__(self) -> int:
        return len(self._turns)

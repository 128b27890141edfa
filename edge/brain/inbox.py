"""What a brain does with inputs that arrive while it is busy: nothing a person says is lost.

The brain handles one input at a time, so inputs wait here. Each kind waits its own way:

* **Text a person said** (a ``text`` perception) is queued in order, up to a generous bound;
  past it, a new utterance is appended to the newest waiting one (one turn reads both lines),
  never dropped.
* **What a sensor saw** (``object`` / ``image`` perceptions) is only worth its newest state:
  a new one replaces the waiting one of the same title.
* **Messages from other companions** are queued up to ``queue_size``; past it the oldest
  waiting message or sensor input is dropped (the other companion's rules let it resend).

``put`` says what happened, so the console can tell the user. ``hold`` pauses taking inputs
out (the emergency stop) without refusing new ones.
"""

from __future__ import annotations

import collections
import dataclasses
import threading
from dataclasses import dataclass
from typing import Any, TypeGuard, Union

from edge.protocol.payloads import CompanionMessage, Perception

Input = Union[Perception, CompanionMessage]


@dataclass(frozen=True)
class Placed:
    """How ``put`` placed an input: queued, coalesced (merged into or replacing a waiting one)
    or queued after dropping ``dropped``; ``waiting`` counts inputs now waiting."""

    how: str
    waiting: int
    dropped: Input | None = None

    def event(self, item: Input, held: bool) -> dict[str, Any]:
        """The observer's view of an input that has to wait: what it was and how it waits."""
        if isinstance(item, Perception):
            what = {"title": item.title, "format": item.format, "text": item.body_text()[:200], "id": item.id}
        else:
            what = {"title": "message", "format": "text", "text": item.message[:200], "from": item.sender}
        event: dict[str, Any] = {"input": what, "waiting": self.waiting, "held": held}
        if self.dropped is not None:
            event["dropped_id"] = getattr(self.dropped, "id", None)
        return event


def is_said(item: Input) -> TypeGuard[Perception]:
    """Text a person said (or typed): the input that must never be lost."""
    return isinstance(item, Perception) and item.format == "text"


class Inbox:
    """A thread-safe waiting room for one brain's inputs."""

    def __init__(self, queue_size: int = 8, said_size: int = 32):
        if queue_size < 1 or said_size < 1:
            raise ValueError(f"queue sizes must be >= 1, got queue_size={queue_size}, said_size={said_size}")
        self.queue_size = queue_size
        self.said_size = said_size
        self._items: collections.deque[Input] = collections.deque()
        self._cond = threading.Condition()
        self._held = False
        self._closed = False
        self._in_hand = 0               # taken by ``get`` and not yet ``done``

    def __len__(self) -> int:
        with self._cond:
            return len(self._items)

    def settled(self) -> bool:
        """Nothing waits and nothing taken is still being handled."""
        with self._cond:
            return not self._items and not self._in_hand

    def put(self, item: Input) -> Placed:
        with self._cond:
            placed = self._place(item)
            self._cond.notify_all()
            return placed

    def _place(self, item: Input) -> Placed:
        items = self._items
        if is_said(item):
            said = [(i, waiting) for i, waiting in enumerate(items) if is_said(waiting)]
            same = [(i, waiting) for i, waiting in said if waiting.title == item.title]
            if len(said) < self.said_size or not same:
                items.append(item)
                return Placed("queued", len(items))
            i, last = same[-1]
            items[i] = dataclasses.replace(last, body=f"{last.body}\n{item.body}", ts=item.ts)
            return Placed("coalesced", len(items))
        if isinstance(item, Perception):
            for i, waiting in enumerate(items):
                if isinstance(waiting, Perception) and not is_said(waiting) and waiting.title == item.title:
                    items[i] = item
                    return Placed("coalesced", len(items))
        others = [i for i, waiting in enumerate(items) if not is_said(waiting)]
        dropped = None
        if len(others) >= self.queue_size:
            dropped = items[others[0]]
            del items[others[0]]
        items.append(item)
        return Placed("dropped" if dropped else "queued", len(items), dropped)

    def get(self, timeout: float | None = None) -> Input | None:
        """The next input, waiting for one; None when closed, held or nothing came within ``timeout``."""
        with self._cond:
            self._cond.wait_for(lambda: self._closed or (self._items and not self._held), timeout)
            if self._closed or self._held or not self._items:
                return None
            self._in_hand += 1
            return self._items.popleft()

    def done(self) -> None:
        """The input ``get`` handed out has been handled."""
        with self._cond:
            self._in_hand -= 1

    def hold(self, held: bool) -> None:
        """While held, ``get`` hands nothing out; inputs still arrive and wait."""
        with self._cond:
            self._held = held
            self._cond.notify_all()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

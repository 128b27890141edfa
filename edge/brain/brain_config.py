"""How one companion's brain behaves: its queues, its rounds of correction, what its model is offered.

The stack's settings (queue size, result timeout, memory) land here when edge/app.py builds a
brain; every part of the brain reads the one it is given, so a test builds a brain with exactly
the behaviour it checks.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class BrainConfig:
    queue_size: int = 8               # waiting sensor inputs and messages (the newest per title kept)
    said_queue_size: int = 32         # waiting utterances; past it they are coalesced, never dropped
    warm: bool = True                 # warm the provider with this companion's prompt before ready
    result_timeout_s: float = 60.0
    max_corrections: int = 2          # extra rounds per input after a rejected decision or a failed action
    events_only_tools: bool = False   # True: only the perception's event actions (a prompt per perception: no cache)
    max_tokens: int | None = None     # None: what the offered actions can need (decision.decision_budget)
    temperature: float = 0.2
    call_timeout_s: float | None = None  # per provider call; None: the provider's own timeout
    memory_messages: int = 4          # conversation window (user + assistant turns) behind the system rules
    message_interval_s: float = 10.0  # seed rule: at least this long between own messages
    max_exchanges: int = 15           # seed rule: messages per conversation
    conversation_idle_s: float = 120.0
    max_tools: int = 12               # above this many actions, tool retrieval picks the most relevant
    stream_speech: bool = True        # say a reply in words a clause at a time while the model writes on

"""Companion-to-companion messaging under the seed's rules, enforced in code.

- A companion handles only messages addressed to its id or to ``"all"``, never its own.
- Its own sends are at least ``min_interval_s`` (10 s) apart. A send that comes too early is
  not refused and does not block the decision loop: it is scheduled for the first allowed
  moment on the clock.
- A conversation (the messages between this companion and one peer, or ``"all"``, with no gap
  longer than ``idle_s``) holds at most ``max_exchanges`` (15) messages, counting both
  directions; then it is closed: incoming messages in it are ignored and sends are refused,
  each with a log line. After ``idle_s`` of quiet a new conversation may begin.
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass, field
from typing import Callable

from edge.brain.clock import Clock
from edge.log import get_logger
from edge.protocol.payloads import CompanionMessage

log = get_logger(__name__)

BROADCAST = "all"


@dataclass
class Conversation:
    peer: str
    started: float
    last: float
    exchanges: int = 0
    closed: bool = False
    id: str = field(default_factory=lambda: str(uuid.uuid4()))


@dataclass(frozen=True)
class SendOutcome:
    accepted: bool
    reason: str
    at: float | None = None          # when it goes out (now or later)
    conversation: str | None = None


class MessagingRules:
    def __init__(self, own_id: str, clock: Clock, publish: Callable[[CompanionMessage], object],
                 min_interval_s: float = 10.0, max_exchanges: int = 15, idle_s: float = 120.0):
        self.own_id = own_id
        self.clock = clock
        self.publish = publish
        self.min_interval_s = min_interval_s
        self.max_exchanges = max_exchanges
        self.idle_s = idle_s
        self._conversations: dict[str, Conversation] = {}
        self._next_send_at = float("-inf")
        self._lock = threading.Lock()
        self.sent: list[tuple[float, CompanionMessage]] = []  # (when it went out, message)

    def _conversation(self, peer: str, now: float) -> Conversation:
        conv = self._conversations.get(peer)
        if conv is None or now - conv.last > self.idle_s:
            conv = Conversation(peer=peer, started=now, last=now)
            self._conversations[peer] = conv
        return conv

    def conversation_with(self, peer: str) -> Conversation | None:
        return self._conversations.get(peer)

    def accept(self, message: CompanionMessage) -> tuple[bool, str, Conversation | None]:
        """Whether to handle an incoming message; counts it as an exchange when handled."""
        if message.sender == self.own_id:
            return False, "own message", None
        if message.to not in (self.own_id, BROADCAST):
            return False, f"addressed to {message.to}", None
        now = self.clock.now()
        with self._lock:
            conv = self._conversation(message.sender, now)
            if conv.closed:
                log.info("message.ignored", companion=self.own_id, peer=message.sender, conversation=conv.id,
                         reason=f"conversation closed after {self.max_exchanges} exchanges")
                return False, "conversation closed", conv
            conv.exchanges += 1
            conv.last = now
            self._close_if_full(conv)
            return True, "ok", conv

    def send(self, to: str, text: str) -> SendOutcome:
        """Queue one message under the rules; returns at once."""
        if to == self.own_id:
            return SendOutcome(False, "a companion does not message itself")
        now = self.clock.now()
        with self._lock:
            conv = self._conversation(to, now)
            if conv.closed:
                log.info("message.refused", companion=self.own_id, peer=to, conversation=conv.id,
                         reason=f"conversation closed after {self.max_exchanges} exchanges")
                return SendOutcome(False, f"conversation with {to} is closed ({self.max_exchanges} exchanges)",
                                   conversation=conv.id)
            conv.exchanges += 1
            conv.last = now
            self._close_if_full(conv)
            at = max(now, self._next_send_at)
            self._next_send_at = at + self.min_interval_s
        message = CompanionMessage(sender=self.own_id, to=to, message=text)
        if at <= now:
            self._go(message)
        else:
            log.info("message.delayed", companion=self.own_id, peer=to, wait_s=round(at - now, 3),
                     reason=f"at least {self.min_interval_s:.0f} s between sends")
            self.clock.schedule(at - now, lambda: self._go(message))
        return SendOutcome(True, "sent" if at <= now else f"scheduled in {at - now:.1f} s", at, conv.id)

    def _go(self, message: CompanionMessage) -> None:
        self.sent.append((self.clock.now(), message))
        self.publish(message)

    def _close_if_full(self, conv: Conversation) -> None:
        if conv.exchanges >= self.max_exchanges and not conv.closed:
            conv.closed = True
            log.info("conversation.closed", companion=self.own_id, peer=conv.peer, conversation=conv.id,
                     exchanges=conv.exchanges)

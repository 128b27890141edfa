"""One companion's brain: its inputs, its single decision loop, and its link to the body.

Exactly one loop per companion, on its own thread, handling one input at a time: a companion
that is still speaking does not start deciding about the next thing it saw. Inputs are
perceptions addressed to it and messages from other companions; those that arrive meanwhile
wait in a bounded queue, and when it is full the oldest is dropped with a log line (the newest
view of the world matters most). A text perception starting with ``/`` is a slash command and
runs without the LLM. Everything else is a turn (``turn.py``).
"""

from __future__ import annotations

import collections
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Union

from edge.brain import prompt
from edge.brain.clock import Clock, SystemClock
from edge.brain.conversation import MessagingRules
from edge.brain.fast_path import FastPath
from edge.brain.memory import ConversationMemory
from edge.brain.slash import SlashError, SlashHelp, is_slash, parse_slash
from edge.brain.state import BrainState, allowed
from edge.brain.turn import TurnRunner, messaging_tool, refused
from edge.bus import Bus
from edge.log import get_logger
from edge.protocol.companion import Companion
from edge.protocol.payloads import Action, ActionResult, CompanionMessage, Perception, Reply
from edge.providers.base import Provider, ToolCall
from edge.providers.retrieval import choose_tools, perception_query
from edge.providers.sentence_examples import sentence_examples

log = get_logger(__name__)

Observer = Callable[[str, dict[str, Any]], None]
Peers = Callable[[], list[dict[str, Any]]]
Input = Union[Perception, CompanionMessage]


@dataclass
class BrainConfig:
    queue_size: int = 8
    result_timeout_s: float = 60.0
    max_corrections: int = 2          # extra rounds per input after a rejected decision or a failed action
    events_only_tools: bool = True    # offer only the perception's event actions when it has events
    max_tokens: int = 96
    temperature: float = 0.2
    call_timeout_s: float | None = None  # per provider call; None: the provider's own timeout
    memory_messages: int = 4          # conversation window (user + assistant turns) behind the system rules
    message_interval_s: float = 10.0  # seed rule: at least this long between own messages
    max_exchanges: int = 15           # seed rule: messages per conversation
    conversation_idle_s: float = 120.0
    max_tools: int = 12               # above this many actions, tool retrieval picks the most relevant


@dataclass
class _Pending:
    done: threading.Event = field(default_factory=threading.Event)
    result: ActionResult | None = None


class CompanionBrain:
    """Subscribes to perceptions for one companion and to ``messages``; acts, one input at a time."""

    def __init__(self, companion: Companion, provider: Provider, bus: Bus, config: BrainConfig | None = None,
                 observer: Observer | None = None, clock: Clock | None = None, peers: Peers | None = None):
        self.companion = companion
        self.provider = provider
        self.bus = bus
        self.config = config or BrainConfig()
        self.observer = observer or (lambda kind, data: None)
        self.clock = clock or SystemClock()
        self._own_clock = clock is None
        self.peers = peers or (lambda: [])
        self.memory = ConversationMemory(self.config.memory_messages)
        self.messaging = MessagingRules(companion.id, self.clock, bus.publish, self.config.message_interval_s,
                                        self.config.max_exchanges, self.config.conversation_idle_s)
        self.state = BrainState.WAITING
        self._queue: collections.deque[Input] = collections.deque()
        self._wake = threading.Condition()
        self._pending: dict[str, _Pending] = {}
        self._pending_lock = threading.Lock()
        self._stop = threading.Event()
        self._turns = TurnRunner(self)
        self._fast = FastPath(self)   # the file's sentence templates, compiled once
        self._thread = threading.Thread(target=self._run, name=f"brain-{companion.name}", daemon=True)
        self.handled = 0
        self.dropped = 0
        self.ignored = 0

    # -- wiring ---------------------------------------------------------------------------

    def start(self) -> "CompanionBrain":
        self.bus.subscribe(Perception, self._on_perception)
        self.bus.subscribe(ActionResult, self._on_result)
        self.bus.subscribe(CompanionMessage, self._on_message)
        self._thread.start()
        log.info("brain.ready", companion=self.companion.id, name=self.companion.name,
                 provider=getattr(self.provider, "name", "?"))
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        with self._wake:
            self._wake.notify_all()
        with self._pending_lock:
            for pending in self._pending.values():
                pending.done.set()
        if self._thread.is_alive():
            self._thread.join(timeout)
        self._turns.close()
        if self._own_clock:
            self.clock.close()

    @property
    def busy(self) -> bool:
        return self.state != BrainState.WAITING

    def idle(self) -> bool:
        """True when nothing is queued and no input is being handled."""
        with self._wake:
            return not self._queue and not self.busy

    def set_state(self, new: BrainState) -> None:
        if not allowed(self.state, new):
            log.error("brain.bad_transition", companion=self.companion.name, current=self.state.value, new=new.value)
        if new != self.state:
            log.debug("brain.state", companion=self.companion.name, state=new.value)
            self.state = new
            self.observer("state", {"state": new.value})

    # -- bus callbacks (paho's thread: only enqueue) ---------------------------------------

    def _on_perception(self, perception: Perception) -> None:
        if perception.to not in ("all", self.companion.id):
            return
        if self.companion.perception(perception.title) is None:
            known = ", ".join(p.title for p in self.companion.perceptions)
            log.warning("perception.unknown_title", companion=self.companion.name, title=perception.title,
                        known=known, id=perception.id)
            self.ignored += 1
            self.observer("perception_rejected", {"perception": perception.to_dict(),
                                                  "reason": f"unknown perception title {perception.title!r}; known: {known}"})
            return
        self._enqueue(perception)

    def _on_message(self, message: CompanionMessage) -> None:
        ok, reason, _ = self.messaging.accept(message)
        if ok:
            self._enqueue(message)
        elif reason == "conversation closed":
            self.ignored += 1

    def _enqueue(self, item: Input) -> None:
        with self._wake:
            if len(self._queue) >= self.config.queue_size:
                old = self._queue.popleft()
                self.dropped += 1
                log.warning("input.dropped", companion=self.companion.name, kind=type(old).__name__,
                            id=getattr(old, "id", None), reason=f"queue full ({self.config.queue_size}); oldest dropped")
            self._queue.append(item)
            self._wake.notify()

    def _on_result(self, result: ActionResult) -> None:
        with self._pending_lock:
            pending = self._pending.get(result.id)
        if pending is not None:
            pending.result = result
            pending.done.set()

    # -- the loop -------------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.is_set():
            with self._wake:
                while not self._queue and not self._stop.is_set():
                    self._wake.wait(0.5)
                if self._stop.is_set():
                    return
                item = self._queue.popleft()
            try:
                if isinstance(item, CompanionMessage):
                    self.handle_message(item)
                elif item.format == "text" and is_slash(item.body):
                    self.handle_slash(item)
                else:
                    self.handle(item)
            except Exception as exc:  # one bad turn must not end the companion
                log.error("brain.turn_failed", companion=self.companion.name, error=repr(exc), exc_info=True)
            finally:
                self.set_state(BrainState.WAITING)
                self.handled += 1

    def handle(self, perception: Perception) -> list[ActionResult]:
        """Decide about one perception and carry the decision out; returns the results."""
        self.observer("perception", {"perception": perception.to_dict()})
        quick = self._fast.run(perception)   # a command the companion file names: no LLM
        if quick is not None:
            return quick
        tools = prompt.offered_tools(self.companion, perception.title, self.config.events_only_tools)
        if len(tools) > self.config.max_tools:  # a large action set: offer only the most relevant
            event_actions = [n for e in self.companion.events_for(perception.title) for n in e.actions]
            query = perception_query(perception.title, perception.body, perception.format)
            tools = choose_tools(tools, query, self.config.max_tools, event_actions,
                                 examples=sentence_examples(self.companion.source))
        others = [p for p in self._peer_ids() if p != self.companion.id]
        if others:  # with other companions around, the model may also talk to them
            tools.append(messaging_tool(others))
        system = self.system_text(perception.title)
        return self._turns.run(prompt.user_text(perception), tools, perception.id, system).results

    def handle_message(self, message: CompanionMessage) -> list[ActionResult]:
        """A message from another companion: a turn whose tools include replying to it."""
        self.observer("message", {"message": message.to_dict()})
        peers = [p for p in self._peer_ids() if p != self.companion.id]
        if message.sender not in peers:
            peers.append(message.sender)
        tools = [messaging_tool(peers), *prompt.offered_tools(self.companion, "message", True)]
        name = self._peer_name(message.sender)
        text = f"Message from {name} ({message.sender}): {message.message}"
        return self._turns.run(text, tools, f"message:{message.sender}", self.system_text("message")).results

    def handle_slash(self, perception: Perception) -> None:
        """``/name args`` runs the action directly; ``/help`` lists the actions. Replies on ``replies``."""
        self.observer("perception", {"perception": perception.to_dict()})
        try:
            command = parse_slash(perception.body, self.companion)
        except SlashError as exc:
            self._reply(perception, str(exc), ok=False)
            return
        if isinstance(command, SlashHelp):
            self._reply(perception, command.text)
            return
        self.set_state(BrainState.EXECUTING_ACTIONS)
        self.set_state(BrainState.AWAITING_RESULTS)
        result = self.perform(command.name, command.params, perception.id)
        if result is None:
            self._reply(perception, f"/{command.name}: no result from the body", ok=False)
        elif result.ok:
            self._reply(perception, f"/{command.name}: done")
        else:
            self._reply(perception, f"/{command.name}: failed ({result.error.code}): {result.error.message}", ok=False)

    def _reply(self, perception: Perception, text: str, ok: bool = True) -> None:
        reply = Reply(sender=self.companion.id, to=perception.sender, in_reply_to=perception.id, text=text, ok=ok)
        self.bus.publish(reply)
        self.observer("reply", {"reply": reply.to_dict()})

    # -- acting ---------------------------------------------------------------------------

    def perform(self, name: str, params: dict[str, Any], source_id: str) -> ActionResult | None:
        """Publish one action and wait for its result (None after ``result_timeout_s``)."""
        action = Action(name=name, params=params, sender=self.companion.id)
        pending = _Pending()
        with self._pending_lock:
            self._pending[action.id] = pending
        try:
            self.bus.publish(action)
            self.observer("action", {"perception_id": source_id, "action": action.to_dict()})
            if not pending.done.wait(self.config.result_timeout_s):
                log.warning("action.no_result", companion=self.companion.name, action=action.name, id=action.id,
                            reason=f"no result within {self.config.result_timeout_s:.0f} s; is the body running?")
                self.observer("result_timeout", {"action": action.to_dict()})
                return None
            if pending.result is not None:
                self.observer("result", {"result": pending.result.to_dict()})
            return pending.result
        finally:
            with self._pending_lock:
                self._pending.pop(action.id, None)

    def send_message(self, call: ToolCall, source_id: str) -> ActionResult:
        """The built-in ``send_message`` action: goes out under the seed's rules, never blocks."""
        now = time.time()
        outcome = self.messaging.send(call.args["to"], call.args["message"])
        self.observer("message_sent" if outcome.accepted else "message_refused",
                      {"to": call.args["to"], "message": call.args["message"], "detail": outcome.reason})
        if not outcome.accepted:
            return refused(call, "message_refused", outcome.reason, now)
        return ActionResult(id=call.id, name=call.name, ok=True, sender=self.companion.id, started=now, finished=now)

    # -- context --------------------------------------------------------------------------

    def system_text(self, perception_title: str | None) -> str:
        """Identity and rules for this input's perception, plus who else is around."""
        text = prompt.system_text(self.companion, perception_title)
        others = [p for p in self.peers() if p.get("id") != self.companion.id]
        if others:
            listed = "; ".join(f"{p.get('name', '?')} ({p.get('id')}): {p.get('personality', '')}".strip()
                               for p in others)
            text += f"\nOther companions: {listed}"
        return text

    def _peer_ids(self) -> list[str]:
        return [str(p["id"]) for p in self.peers() if p.get("id")]

    def _peer_name(self, peer_id: str) -> str:
        for p in self.peers():
            if p.get("id") == peer_id:
                return str(p.get("name", peer_id))
        return peer_id

"""One companion's brain: its inputs, its single decision loop, and its link to the body.

Exactly one loop per companion, on its own thread, handling one input at a time: a companion
that is still speaking does not start deciding about the next thing it saw. Inputs are
perceptions addressed to it and messages from other companions; those that arrive meanwhile
wait in the inbox (``inbox.py``: what a person said is queued or coalesced, never dropped; a
sensor's newest view replaces the one waiting), and the observer hears how each was placed.

A text perception starting with ``/`` is a slash command: it runs on a worker of its own,
without the LLM, so it never waits behind a turn. Everything else is a turn (``turn.py``).
An engaged emergency stop (the retained ``estop`` topic) cancels the turn in progress (its
decision is never carried out) and holds new turns until it is released. Before it says it
is ready, the brain warms its provider with its own prompt, so the first decision is not slow.
"""

from __future__ import annotations

import collections
import queue
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from edge.brain import prompt
from edge.brain.clock import Clock, SystemClock
from edge.brain.conversation import MessagingRules
from edge.brain.inbox import Inbox, Input
from edge.brain.intent import CommandSense
from edge.brain.names import SelfAddress
from edge.brain.fast_path import FastPath
from edge.brain.memory import ConversationMemory
from edge.brain.novelty import ViewMemory
from edge.brain.slash import SlashError, SlashHelp, is_slash, parse_slash
from edge.brain.state import BrainState, allowed
from edge.brain.turn import TurnRunner, messaging_tool, refused
from edge.runtime.action_client import ActionClient
from edge.runtime.node import Node
from edge.runtime.transport import Transport
from edge.runtime.worker import Worker, guarded
from edge.log import get_logger
from edge.protocol.action_names import SPEECH_ACTIONS, STOP
from edge.protocol.companion import Companion
from edge.protocol.dedupe import RecentIds
from edge.protocol.payloads import (Action, ActionError, ActionResult, CompanionMessage, Estop, Perception, Reply,
                                    VoiceActivity)
from edge.providers.base import Provider, ProviderError, ToolCall, warm
from edge.brain.retrieval import choose_tools, perception_query
from edge.brain.sentence_examples import sentence_examples

log = get_logger(__name__)

Observer = Callable[[str, dict[str, Any]], None]
Peers = Callable[[], list[dict[str, Any]]]
SLASH_QUEUE = 64


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


class CompanionBrain:
    """Subscribes to perceptions for one companion and to ``messages``; acts, one input at a time."""

    def __init__(self, companion: Companion, provider: Provider, bus: Transport, config: BrainConfig | None = None,
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
        self._inbox = Inbox(self.config.queue_size, self.config.said_queue_size)
        self._slash: queue.Queue[Perception | None] = queue.Queue(SLASH_QUEUE)
        self._count_lock = threading.Lock()
        # the node runtime (docs/nodes.md): handlers before connecting, worker failures on status/<node>
        self.node = Node(bus, kind="brain", command="companion run brain", companion=companion.id)
        self._stop = self.node.stop_event
        self._turns = TurnRunner(self)
        self._views = ViewMemory()
        self._seen_ids = RecentIds()
        self._commands = CommandSense(companion, prompt.offered_tools(companion, "", False))
        self.self_address = SelfAddress(companion)
        self._fast = FastPath(self)   # the file's sentence templates, compiled once
        self._workers = (Worker(self.node, f"brain-{companion.name}", self._turn_step, self._stop),
                         Worker(self.node, f"slash-{companion.name}", self._slash_step, self._stop))
        self.turn_cancel = threading.Event()   # the turn in progress's; set by an engaged estop or a barge-in
        self.cancel_why = "emergency stop"
        self._spoken_ids: collections.deque[str] = collections.deque(maxlen=32)   # our recent speak actions
        self.estop_engaged = False
        self.warm_s: float | None = None
        self.handled = 0
        self.dropped = 0
        self.coalesced = 0
        self.ignored = 0
        # Handlers before the transport connects (docs/nodes.md): what a persistent session queued
        # while the brain was down, and what is said during the warm-up, waits in the inbox.
        self.node.on(Estop, self._on_estop)
        self.node.on(Perception, self._on_perception)
        self.action_client = ActionClient(bus, subscribe=False)
        self.node.on(ActionResult, self._on_result)
        self.node.on(CompanionMessage, self._on_message)
        self.node.on(VoiceActivity, self._on_voice)

    # -- wiring ---------------------------------------------------------------------------

    def start(self) -> "CompanionBrain":
        """Warm the provider and start the workers; ``brain.ready`` is logged last. (Handlers are
        registered when the brain is built, so its transport may connect before the warm-up.)"""
        if self.config.warm:
            self.warm()
        for worker in self._workers:
            worker.start()
        log.info("brain.ready", companion=self.companion.id, name=self.companion.name,
                 provider=getattr(self.provider, "name", "?"), warm_s=self.warm_s)
        return self

    def warm(self) -> float | None:
        """One decision-shaped call with this companion's system prompt and the actions of its
        first perception (text input when it has one); seconds taken, None if nothing to warm.
        A failure is logged, not raised: the first real turn will report it properly."""
        self._commands.read("hello")   # embeds the command and talk banks once (~0.3 s), not in a turn
        if not hasattr(self.provider, "warm"):
            return None
        titles = [p.title for p in self.companion.perceptions]
        title = "input" if "input" in titles else (titles[0] if titles else None)  # the seed's "what was said"
        tools = prompt.offered_tools(self.companion, title, self.config.events_only_tools) if title else []
        name = getattr(self.provider, "name", "?")
        self.observer("warming", {"provider": name})
        started = time.monotonic()
        try:
            shown = tools[:self.config.max_tools]
            warmed = warm(self.provider, self._turns.context(shown, self.system_text(title), described=shown))
        except ProviderError as exc:
            log.warning("brain.warm_failed", companion=self.companion.name, code=exc.code, reason=exc.message)
            self.observer("warm_failed", {"provider": name, "error": exc.to_json()})
            return None
        self.warm_s = round(time.monotonic() - started, 3)
        log.info("brain.warmed", companion=self.companion.name, provider=name, seconds=self.warm_s, warmed=warmed)
        self.observer("warmed", {"provider": name, "seconds": self.warm_s})
        return self.warm_s

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self.turn_cancel.set()
        self._inbox.close()
        try:
            self._slash.put_nowait(None)
        except queue.Full:
            pass
        self.action_client.release_all()
        for worker in self._workers:
            worker.join(timeout)
        self._turns.close()
        if self._own_clock:
            self.clock.close()

    @property
    def busy(self) -> bool:
        return self.state != BrainState.WAITING

    def idle(self) -> bool:
        """True when nothing waits and no input (turn or slash command) is being handled."""
        return self._inbox.settled() and not self._slash.unfinished_tasks

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
        if not self._seen_ids.first_time(perception.id):   # a QoS-1 redelivery: decided already
            log.info("perception.duplicate", companion=self.companion.name, id=perception.id)
            return
        if perception.format == "text" and is_slash(perception.body):
            self._enqueue_slash(perception)
        else:
            self._enqueue(perception)

    def _on_message(self, message: CompanionMessage) -> None:
        ok, reason, _ = self.messaging.accept(message)
        if ok:
            self._enqueue(message)
        elif reason == "conversation closed":
            self.ignored += 1

    def _enqueue(self, item: Input) -> None:
        """Into the inbox; when the input has to wait, the observer hears how it was placed."""
        waits = self.busy or self.estop_engaged
        placed = self._inbox.put(item)
        if placed.how == "coalesced":
            self._count("coalesced")
        if placed.dropped is not None:
            self._count("dropped")
            log.warning("input.dropped", companion=self.companion.name, kind=type(placed.dropped).__name__,
                        id=getattr(placed.dropped, "id", None),
                        reason=f"{self.config.queue_size} sensor inputs and messages already waiting; oldest dropped")
        if waits or placed.dropped is not None:
            self.observer(placed.how, placed.event(item, held=self.estop_engaged))

    def _enqueue_slash(self, perception: Perception) -> None:
        try:
            self._slash.put_nowait(perception)
        except queue.Full:
            self._reply(perception, f"busy: {SLASH_QUEUE} slash commands are already waiting; send it again", ok=False)

    def _on_estop(self, estop: Estop) -> None:
        """Engaged: cancel the turn in progress and hold new ones; released: go on with what waits."""
        if estop.engaged == self.estop_engaged:
            return  # the retained state again (a reconnect)
        self.estop_engaged = estop.engaged
        self._inbox.hold(estop.engaged)
        cancelled = estop.engaged and self.busy
        if estop.engaged:
            self.turn_cancel.set()  # the turn in progress, or the one just being started
        log.warning("brain.estop", companion=self.companion.name, engaged=estop.engaged, by=estop.sender,
                    turn_cancelled=cancelled)
        self.observer("estop", {"engaged": estop.engaged, "by": estop.sender, "turn_cancelled": cancelled,
                                "waiting": len(self._inbox)})

    def _count(self, counter: str) -> None:
        with self._count_lock:
            setattr(self, counter, getattr(self, counter) + 1)

    def _on_result(self, result: ActionResult) -> None:
        self.action_client.deliver(result)

    def _on_voice(self, voice: VoiceActivity) -> None:
        """A person talked over the robot (barge-in): the body has cut the speech; the turn that
        spoke ends here, its model call cancelled and no further clause said. Only the brain
        whose words were playing, when the microphone says which (``over``)."""
        if voice.event != "started" or voice.over and not set(voice.over) & set(self._spoken_ids):
            return   # an onset only pauses the speech; the turn ends when it is a person
        self.cancel_why = "the person talked over the robot"
        self.turn_cancel.set()
        log.info("brain.barge_in", companion=self.companion.name, onset=voice.onset)
        self.observer("barge_in", {"voice": voice.to_dict()})

    # -- the loop -------------------------------------------------------------------------

    def _turn_step(self) -> None:
        """One input from the inbox, decided and carried out. A bad turn is logged with its input
        and counted on our status (edge/runtime/worker.py); the companion goes on."""
        item = self._inbox.get(timeout=0.5)
        if item is None:
            return
        self.turn_cancel, self.cancel_why = threading.Event(), "emergency stop"
        if self.estop_engaged:  # engaged between taking the input and here: this turn is cancelled too
            self.turn_cancel.set()
        try:
            handle = self.handle_message if isinstance(item, CompanionMessage) else self.handle
            guarded(self.node, "turn", handle, item, topic=item.TOPIC, item=item)
        finally:
            self.set_state(BrainState.WAITING)
            self._count("handled")
            self._inbox.done()

    def _slash_step(self) -> None:
        """A slash command, on a worker of its own: it acts while a turn is still deciding."""
        perception = self._slash.get()   # stop() wakes it with None
        try:
            if perception is not None:
                guarded(self.node, "slash", self.handle_slash, perception, topic=perception.TOPIC, item=perception)
                self._count("handled")
        finally:
            self._slash.task_done()

    def handle(self, perception: Perception) -> list[ActionResult]:
        """Decide about one perception and carry the decision out; returns the results."""
        self.observer("perception", {"perception": perception.to_dict()})
        quick = self._fast.run(perception)   # a command the companion file names: no LLM
        if quick is not None:
            return quick
        same = self._views.unchanged(perception)   # nothing new in view: no action, no LLM
        if same is not None:
            self.observer("decision", {"perception_id": perception.id, "route": "unchanged", "latency_s": 0.0,
                                       "reason": same, "problems": [],
                                       "response": {"segments": [], "metadata": {"decision": "none"}}})
            return []
        tools = prompt.offered_tools(self.companion, perception.title, self.config.events_only_tools)
        many = len(tools) > self.config.max_tools
        if many:  # a large action set: the most relevant (docs/runtime.md)
            event_actions = [n for e in self.companion.events_for(perception.title) for n in e.actions]
            query = perception_query(perception.title, perception.body, perception.format)
            tools = choose_tools(tools, query, self.config.max_tools, event_actions,
                                 examples=sentence_examples(self.companion.source))
        others = [p for p in self._peer_ids() if p != self.companion.id]
        if others:  # with other companions around, the model may also talk to them
            tools.append(messaging_tool(others))
        described = list(tools)   # the prompt describes these every turn; the offer below may narrow
        tools = prompt.ground_tools(tools, perception)
        system = self.system_text(perception.title)
        # Words from a person lean towards words, unless by meaning they ask for an action; when
        # they clearly do, the model is asked how to act, not whether to talk (intent.py)
        spoken_to = perception.format == "text"
        if spoken_to:
            started = time.perf_counter()
            tools, spoken_to, command = self._commands.offer(perception.body_text(), tools, many)
            if not spoken_to:   # a command: its words may settle it without the model (fast_path.py)
                tools, done = self._fast.by_meaning(perception, tools, started, self._commands.choose, command)
                if done is not None:
                    return done
        heard = perception.body_text() if perception.format == "text" else None
        return self._turns.run(prompt.user_text(perception), tools, perception.id, system, spoken_to, heard,
                               described).results

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
        result = self.perform(command.name, command.params, perception.id)
        if result is None:
            self._reply(perception, f"/{command.name}: no result from the body", ok=False)
        elif result.ok:
            self._reply(perception, f"/{command.name}: done")
        elif result.error is not None:
            self._reply(perception, f"/{command.name}: failed ({result.error.code}): {result.error.message}", ok=False)
        else:  # the schema requires an error with a failure; a body that sent none still gets an answer
            self._reply(perception, f"/{command.name}: failed (no reason given)", ok=False)

    def _reply(self, perception: Perception, text: str, ok: bool = True) -> None:
        reply = Reply(sender=self.companion.id, to=perception.sender, in_reply_to=perception.id, text=text, ok=ok)
        self.bus.publish(reply)
        self.observer("reply", {"reply": reply.to_dict()})

    # -- acting ---------------------------------------------------------------------------

    def perform(self, name: str, params: dict[str, Any], source_id: str) -> ActionResult | None:
        """Publish one action and wait for its result (None after ``result_timeout_s``)."""
        return self.send(name, params, source_id)()

    def send(self, name: str, params: dict[str, Any], source_id: str) -> Callable[[], ActionResult | None]:
        """Publish one action now; the returned call waits for its result (None after
        ``result_timeout_s``). A streamed reply's first clause is sent while the model writes on.

        While the estop is engaged the action is refused here, as the body would refuse it,
        and never published: a decision that was on its way when the estop came is not carried out."""
        action = Action(name=name, params=params, sender=self.companion.id)
        if self.estop_engaged and name != STOP:
            now = time.time()
            result = ActionResult(id=action.id, name=name, ok=False, sender=self.companion.id, started=now,
                                  finished=now, error=ActionError("estop_engaged", "emergency stop is engaged; "
                                                                                   "action not sent"))
            self.observer("result", {"result": result.to_dict()})
            return lambda: result
        if name in SPEECH_ACTIONS:
            self._spoken_ids.append(action.id)
        sent = self.action_client.send(action, on_sent=lambda: self.observer(
            "action", {"perception_id": source_id, "action": action.to_dict()}))

        def wait() -> ActionResult | None:
            answer = sent.wait(self.config.result_timeout_s)
            if answer is None and self._stop.is_set():
                return None  # released by stop(): not a missing body
            if answer is None:
                log.warning("action.no_result", companion=self.companion.name, action=action.name, id=action.id,
                            reason=f"no result within {self.config.result_timeout_s:.0f} s; is the body running?")
                self.observer("result_timeout", {"action": action.to_dict()})
                return None
            self.observer("result", {"result": answer.to_dict()})
            return answer
        return wait

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
        text = prompt.system_text(self.companion)
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

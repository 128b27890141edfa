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

A turn about a perception runs its stages in the order ``stages.py`` lists them, each timed.
The helpers act only through ``Acting`` (acting.py), never through this class.
"""

from __future__ import annotations

import queue
import threading
import time
from typing import Any, Callable

from edge.brain import prompt
from edge.brain.acting import Acting, Observer, Wait
from edge.brain.brain_config import BrainConfig
from edge.brain.clock import Clock, SystemClock
from edge.brain.conversation import MessagingRules
from edge.brain.fast_path import FastPath
from edge.brain.inbox import Inbox, Input
from edge.brain.intent import CommandSense
from edge.brain.memory import ConversationMemory
from edge.brain.names import SelfAddress
from edge.brain.slash import SlashError, SlashHelp, is_slash, parse_slash
from edge.brain.stages import TurnStages
from edge.brain.state import BrainState
from edge.brain.turn import TurnRunner, messaging_tool
from edge.log import get_logger
from edge.protocol.companion import Companion
from edge.protocol.dedupe import RecentIds
from edge.protocol.payloads import ActionResult, CompanionMessage, Estop, Perception, Reply, VoiceActivity
from edge.protocol.speech_action import speech_names
from edge.providers.base import Provider, ProviderError, ToolCall, warm
from edge.runtime.action_client import ActionClient
from edge.runtime.node import Node
from edge.runtime.transport import Transport
from edge.runtime.worker import Worker, guarded

log = get_logger(__name__)

__all__ = ["BrainConfig", "CompanionBrain"]

Peers = Callable[[], list[dict[str, Any]]]
SLASH_QUEUE = 64


class CompanionBrain:
    """Subscribes to perceptions for one companion and to ``messages``; acts, one input at a time."""

    def __init__(self, companion: Companion, provider: Provider, bus: Transport, config: BrainConfig | None = None,
                 observer: Observer | None = None, clock: Clock | None = None, peers: Peers | None = None):
        self.companion = companion
        self.provider = provider
        self.bus = bus
        self.config = config or BrainConfig()
        self.clock = clock or SystemClock()
        self._own_clock = clock is None
        self.peers = peers or (lambda: [])
        self.memory = ConversationMemory(self.config.memory_messages)
        self.messaging = MessagingRules(companion.id, self.clock, bus.publish, self.config.message_interval_s,
                                        self.config.max_exchanges, self.config.conversation_idle_s)
        self._inbox = Inbox(self.config.queue_size, self.config.said_queue_size)
        self._slash: queue.Queue[Perception | None] = queue.Queue(SLASH_QUEUE)
        self._count_lock = threading.Lock()
        # the node runtime (docs/nodes.md): handlers before connecting, worker failures on status/<node>
        self.node = Node(bus, kind="brain", command="companion run brain", companion=companion.id)
        self._stop = self.node.stop_event
        self.action_client = ActionClient(bus, subscribe=False)
        # what the turn's helpers are given instead of this brain (acting.py)
        self.acts = Acting(companion.id, companion.name, self.action_client, self.messaging,
                           observer or (lambda kind, data: None), self.config.result_timeout_s, self._stop,
                           speech_names([companion]))
        self.self_address = SelfAddress(companion)
        self._turns = TurnRunner(companion, provider, self.config, self.memory, self.self_address, self.acts)
        self._seen_ids = RecentIds()
        self._commands = CommandSense(companion, prompt.offered_tools(companion, "", False))
        self._turns.restated = self._commands.restates
        self._fast = FastPath(companion, self.memory, self.acts)   # the file's sentence templates, compiled once
        self._stages = TurnStages(companion, self.config, self.acts, self._turns, self._fast, self._commands,
                                  self._peer_ids, self.system_text)
        self._workers = (Worker(self.node, f"brain-{companion.name}", self._turn_step, self._stop),
                         Worker(self.node, f"slash-{companion.name}", self._slash_step, self._stop))
        self.warm_s: float | None = None
        self.handled = 0
        self.dropped = 0
        self.coalesced = 0
        self.ignored = 0
        # Handlers before the transport connects (docs/nodes.md): what a persistent session queued
        # while the brain was down, and what is said during the warm-up, waits in the inbox.
        self.node.on(Estop, self._on_estop)
        self.node.on(Perception, self._on_perception)
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

    # -- the loop's own state, kept where the turn's helpers change it (acting.py) -------------

    @property
    def state(self) -> BrainState:
        return self.acts.state

    def set_state(self, new: BrainState) -> None:
        self.acts.set_state(new)

    @property
    def observer(self) -> Observer:
        return self.acts.observer

    @property
    def estop_engaged(self) -> bool:
        return self.acts.estop_engaged

    @property
    def turn_cancel(self) -> threading.Event:
        return self.acts.turn_cancel

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
        self.acts.estop_engaged = estop.engaged
        self._inbox.hold(estop.engaged)
        cancelled = estop.engaged and self.busy
        if estop.engaged:
            self.acts.turn_cancel.set()  # the turn in progress, or the one just being started
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
        if voice.event != "started" or voice.over and not set(voice.over) & set(self.acts.spoken_ids):
            return   # an onset only pauses the speech; the turn ends when it is a person
        self.acts.cancel("the person talked over the robot")
        log.info("brain.barge_in", companion=self.companion.name, onset=voice.onset)
        self.observer("barge_in", {"voice": voice.to_dict()})

    # -- the loop -------------------------------------------------------------------------

    def _turn_step(self) -> None:
        """One input from the inbox, decided and carried out. A bad turn is logged with its input
        and counted on our status (edge/runtime/worker.py); the companion goes on."""
        item = self._inbox.get(timeout=0.5)
        if item is None:
            return
        self.acts.new_turn()   # cancelled at once when the estop was engaged since the input was taken
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
        return self._stages.run(perception)

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
        return self.acts.perform(name, params, source_id)

    def send(self, name: str, params: dict[str, Any], source_id: str) -> Wait:
        """Publish one action now; the returned call waits for its result (acting.py)."""
        return self.acts.send(name, params, source_id)

    def send_message(self, call: ToolCall, source_id: str) -> ActionResult:
        """The built-in ``send_message`` action: goes out under the seed's rules, never blocks."""
        return self.acts.send_message(call, source_id)

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

"""The body node: receive actions, check them, carry them out one at a time, report results.

Whatever executes the actions (the simulator, servo drivers, a speaker) sits behind the
small ``ActionExecutor`` interface. The node owns everything around it that must hold for
every body: params validated against the companion's action schema before anything moves,
estop that stops the current action and refuses new ones, duplicate deliveries (QoS 1 is
at-least-once) ignored, and exactly one ``actions/results`` message per action.

The handlers go through a ``Node`` (edge/runtime/node.py) and the actions run on a ``Worker``
(edge/runtime/worker.py), so the body fails as every node does: a bug while carrying out an
action is answered with a failed ``body_error`` result, logged with the node, topic and an
excerpt of the action, counted as ``worker_failed`` on ``status/<node>``, and the next action
runs. A result that cannot be encoded (say, an executor's message with a lone surrogate) is
answered with a failed ``unencodable_result`` naming the field instead.
"""

from __future__ import annotations

import queue
import threading
import time
from typing import Protocol

from body_drivers.speech.hold import PlaybackHold
from body_drivers.timeline import Timeline
from edge.protocol.action_codes import ActionCode
from edge.runtime.node import Node
from edge.runtime.transport import Transport
from edge.runtime.worker import WORKER_FAILED, Worker, guarded
from edge.log import get_logger
from edge.protocol import codec
from edge.protocol.codec import CodecError
from edge.protocol.dedupe import RecentIds
from edge.protocol.action_names import SPEECH_ACTION, SPEECH_ACTIONS, STOP
from edge.protocol.companion import ActionSpec, Companion, validate_params
from edge.protocol.speech_action import SpokenAction, spoken_action
from edge.protocol.payloads import Action, ActionError, ActionResult, Estop, PayloadError, Speaking, VoiceActivity

log = get_logger(__name__)

IDLE_WAIT_S = 0.5  # the worker looks at its stop event at least this often
UNENCODABLE_RESULT = "unencodable_result"


class ActionFailure(Exception):
    """An executor's way to fail an action; ``code`` is short and machine-readable."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


class ActionExecutor(Protocol):
    def execute(self, action: Action, cancel: threading.Event) -> None:
        """Carry out the action; return when it is finished; raise ActionFailure if it cannot."""

    def stop(self) -> None:
        """Stop all motion and sound now (estop, shutdown)."""


class BodyNode:
    """Subscribes to ``actions``, ``estop`` and ``voice``; publishes ``actions/results``.

    ``bus`` is the body's transport, or a ``Node`` already built on it (the stack's, which the
    safety monitor also reports its state to); ``start`` registers the handlers, so connect after."""

    def __init__(self, bus: Transport | Node, executor: ActionExecutor, companions: list[Companion],
                 timeline: Timeline | None = None, queue_size: int = 64):
        self.node = bus if isinstance(bus, Node) else Node(bus)
        self.bus = self.node.transport
        self.executor = executor
        self.companions = {c.id: c for c in companions}
        self.timeline = timeline or Timeline()
        self._queue: queue.Queue[Action | None] = queue.Queue(queue_size)
        self._seen = RecentIds(512)   # QoS 1 may deliver an action twice: it is done once
        self._cancel = threading.Event()
        self._current: Action | None = None      # the action being carried out
        self._interrupted: str | None = None     # the speech a person talked over
        self.estop_engaged = False
        self.worker = Worker(self.node, "body", self._step)

    @property
    def errors(self) -> dict[str, int]:
        """The worker's survived failures so far, by kind (the transport counts them with the rest)."""
        return {k: n for k, n in self.bus.errors.items() if k in (WORKER_FAILED, UNENCODABLE_RESULT)}

    def start(self) -> "BodyNode":
        self.node.on(Action, self._on_action, on_invalid=self._on_invalid_action)
        self.node.on(Estop, self._on_estop)
        self.node.on(VoiceActivity, self._on_voice)
        speaker = getattr(self.executor, "speaker", None)
        if speaker is not None and hasattr(speaker, "sounding"):
            speaker.sounding = self._sounding   # a speech action's first audio is announced
        self.worker.start()
        log.info("body.ready", node=self.bus.node_id, companions=len(self.companions))
        return self

    def stop(self) -> None:
        self._cancel.set()
        self.executor.stop()
        try:
            self._queue.put_nowait(None)   # after what is already queued
        except queue.Full:
            self.worker.stop_event.set()
        self.worker.join(5)
        self.timeline.close()

    # -- receiving ------------------------------------------------------------------------

    def _on_action(self, action: Action) -> None:
        if not self._seen.first_time(action.id):
            log.info("action.duplicate", id=action.id, name=action.name)
            return
        if action.name == STOP:
            self._stop_now(action)
            return
        if self.estop_engaged:
            self._finish(action, time.time(), ActionError(ActionCode.ESTOP_ENGAGED, "emergency stop is engaged; action refused"))
            return
        try:
            self._queue.put_nowait(action)
        except queue.Full:
            self._finish(action, time.time(), ActionError(ActionCode.BODY_BUSY, f"body queue full ({self._queue.maxsize} actions)"))

    def _stop_now(self, action: Action) -> None:
        """``stop`` jumps the queue: the current action (motion, speech) is cut, the waiting ones
        are dropped with a ``cancelled`` result, and the stop itself succeeds at once."""
        started = time.time()
        self._cancel.set()
        self.executor.stop()
        while True:
            try:
                waiting = self._queue.get_nowait()
            except queue.Empty:
                break
            if waiting is not None:
                self._finish(waiting, started, ActionError(ActionCode.CANCELLED, "dropped by a stop action"))
        self.timeline.record("stop", id=action.id, by=action.sender)
        self._finish(action, started, None)

    def _on_voice(self, voice: VoiceActivity) -> None:
        """A person talked over the robot (barge-in): the speech playing now is cut, and the speech
        waiting behind it is dropped; motion goes on. ``over`` names what the microphone knew was
        playing: a later sentence is not cut by an event about an earlier one. ``onset`` (a sound
        that may be a person) pauses the speech until ``started`` or ``dismissed`` says which."""
        current = self._current
        if current is None or not self.is_speech(current):
            return
        if voice.over and current.id not in voice.over:
            return
        hold = self._speech_hold()
        if voice.event == "onset" and hold is not None:
            hold.pause()
            self.timeline.record("speech.paused", id=current.id, by=voice.sender, onset=voice.onset)
            return
        if voice.event != "started":
            if voice.event == "dismissed" and hold is not None:
                hold.resume()
                self.timeline.record("speech.resumed", id=current.id, by=voice.sender)
            return
        self._interrupted = current.id
        self._cancel.set()
        if hold is not None:
            hold.resume()   # after the cut: the paused writer wakes to find it
        kept: list[Action | None] = []
        while True:
            try:
                waiting = self._queue.get_nowait()
            except queue.Empty:
                break
            if waiting is not None and self.is_speech(waiting):
                self._finish(waiting, time.time(), ActionError(ActionCode.INTERRUPTED,
                                                               "dropped: a person talked over the robot"))
            else:
                kept.append(waiting)
        for item in kept:
            self._queue.put_nowait(item)
        self.timeline.record("speech.interrupted", id=current.id, by=voice.sender, onset=voice.onset)
        log.info("speech.interrupted", id=current.id, by=voice.sender)

    def _sounding(self, at: float) -> None:
        """The speech being carried out began to sound (its first audio went to the device): said on
        ``speaking``, so the microphone learns the robot's voice from then, not from the action,
        which on a busy CPU comes seconds before the voice (synthesis)."""
        current = self._current
        if current is not None and self.is_speech(current):
            self.bus.publish(Speaking(sender=self.bus.node_id, action=current.id, at=at))

    def _speech_hold(self) -> PlaybackHold | None:
        """The pause of a body that speaks (its ``speaker``'s); None for one that does not."""
        hold = getattr(getattr(self.executor, "speaker", None), "hold", None)
        return hold if isinstance(hold, PlaybackHold) else None

    def _on_invalid_action(self, topic: str, error: PayloadError, raw: bytes) -> None:
        """Answer a broken action with a failed result when it carries an id we can answer to."""
        readable = codec.salvage(raw, Action.LIMITS)
        action_id, name = readable.get("id"), readable.get("name", "")
        if action_id:
            now = time.time()
            result = ActionResult(id=action_id, name=name, ok=False,
                                  sender=self.bus.node_id, started=now, finished=now,
                                  error=ActionError(ActionCode.INVALID_PAYLOAD, error.message))
            self.bus.publish(result)
            self.timeline.record("action.rejected", id=action_id, reason=error.message)

    def _on_estop(self, estop: Estop) -> None:
        was, self.estop_engaged = self.estop_engaged, estop.engaged
        if estop.engaged and not was:
            log.warning("estop.engaged", by=estop.sender)
            self._cancel.set()
            self.executor.stop()
        elif was and not estop.engaged:
            log.warning("estop.released", by=estop.sender)
        self.timeline.record("estop", engaged=estop.engaged, by=estop.sender)

    # -- executing ------------------------------------------------------------------------

    def _step(self) -> None:
        """One action off the queue, guarded: a failure is reported to the node (worker_failed)."""
        try:
            action = self._queue.get(timeout=IDLE_WAIT_S)
        except queue.Empty:
            return
        if action is None:   # stop(): nothing more to do
            self.worker.stop_event.set()
            return
        guarded(self.node, "body", self._perform_answered, action, topic=action.topic(self.bus.namespace), item=action)

    def _perform_answered(self, action: Action) -> None:
        """``_perform``, and a bug of ours in it still answers the action (``body_error``) before
        the exception goes on to be logged and counted."""
        try:
            self._perform(action)
        except Exception as exc:
            self._finish(action, time.time(), ActionError(ActionCode.BODY_ERROR, codec.clip(f"{type(exc).__name__}: {exc}")))
            raise

    def spec_for(self, action: Action) -> ActionSpec | None:
        """The schema an action is checked against: its sender's definition, else any loaded one."""
        companion = self.companions.get(action.sender)
        if companion is not None:
            return companion.action(action.name)
        for other in self.companions.values():
            spec = other.action(action.name)
            if spec is not None:
                return spec
        return None

    def voice_of(self, action: Action) -> SpokenAction | None:
        """The sender's voice when ``action`` is it (``whisper``, ``shaberu``: edge/protocol/speech_action.py)."""
        companion = self.companions.get(action.sender) or next(
            (c for c in self.companions.values() if c.action(action.name) is not None), None)
        voice = spoken_action(companion)
        return voice if voice is not None and voice.name == action.name else None

    def is_speech(self, action: Action) -> bool:
        """Words said aloud: barge-in cuts them, the microphone is told when they sound."""
        return action.name in SPEECH_ACTIONS or self.voice_of(action) is not None

    def _as_spoken(self, action: Action) -> Action:
        """What the executor is handed: a companion's voice under any name, with its words in any
        parameter, is ``speak {"message": ...}`` to every body (the result keeps the action's own name)."""
        voice = self.voice_of(action)
        words = voice.words(action.params) if voice is not None else None
        if voice is None or words is None or (action.name == SPEECH_ACTION and voice.param == "message"):
            return action
        return Action(name=SPEECH_ACTION, params={"message": words}, sender=action.sender, id=action.id, ts=action.ts)

    def _perform(self, action: Action) -> None:
        started = time.time()
        spec = self.spec_for(action)
        if spec is None:
            self._finish(action, started, ActionError(ActionCode.UNKNOWN_ACTION, f"no companion here defines the action {action.name!r}"))
            return
        problems = validate_params(spec, action.params)
        if problems:
            detail = "; ".join(f"{p.pointer or '/'}: {p.message}" for p in problems)
            self._finish(action, started, ActionError(ActionCode.INVALID_PARAMS, f"{action.name}: {detail}"))
            return
        self._cancel.clear()   # before the estop check: an estop from now on sets it again
        if self.estop_engaged:
            self._finish(action, started, ActionError(ActionCode.ESTOP_ENGAGED, "emergency stop is engaged; action refused"))
            return
        self.timeline.record("action.started", id=action.id, name=action.name, params=action.params)
        self._current = action
        try:
            self.executor.execute(self._as_spoken(action), self._cancel)
        except ActionFailure as exc:
            self._finish(action, started, self._talked_over(action) or ActionError(exc.code, exc.message))
            return
        except Exception as exc:  # an executor bug fails this action, not the node
            log.error("action.crashed", name=action.name, id=action.id, error=repr(exc), exc_info=True)
            self._finish(action, started, ActionError(ActionCode.BODY_ERROR, f"{type(exc).__name__}: {exc}"))
            return
        finally:
            self._current = None
        if self._cancel.is_set():
            self._finish(action, started, self._talked_over(action) or
                         ActionError(ActionCode.CANCELLED, "stopped before it finished (estop or shutdown)"))
            return
        self._finish(action, started, None)

    def _talked_over(self, action: Action) -> ActionError | None:
        if self._interrupted != action.id:
            return None
        return ActionError(ActionCode.INTERRUPTED, "cut short: a person talked over the robot (barge-in)")

    def _finish(self, action: Action, started: float, error: ActionError | None) -> None:
        result = ActionResult(id=action.id, name=action.name, ok=error is None, sender=self.bus.node_id,
                              started=started, finished=time.time(), error=error)
        # The timeline first: whoever reacts to the result finds the action's whole story written.
        if error is None:
            self.timeline.record("action.finished", id=action.id, name=action.name)
        else:
            log.info("action.failed", name=action.name, id=action.id, code=error.code, reason=error.message)
            self.timeline.record("action.failed", id=action.id, name=action.name, code=error.code, reason=error.message)
        try:
            self.bus.publish(result)
        except CodecError as exc:  # e.g. a lone surrogate in a name or message: say so instead
            self.node.failed(UNENCODABLE_RESULT, result.topic(self.bus.namespace), b"",
                             f"the result of {codec.scrub(action.id)}: {exc}")
            error = ActionError(ActionCode.UNENCODABLE_RESULT, f"the result could not be encoded: {exc}")
            self.bus.publish(ActionResult(id=codec.scrub(action.id), name=codec.scrub(action.name), ok=False,
                                          sender=self.bus.node_id, started=started, finished=time.time(),
                                          error=error))

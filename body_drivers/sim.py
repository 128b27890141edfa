"""The headless simulated body: a pose that moves in real time, a gaze, and a real voice.

``move`` and ``look`` change a kept pose at a bounded speed (so a move takes time, like a
real one, and an estop can interrupt it half-way); ``speak`` (or ``say``) goes through the real speech
pipeline (piper, then sounddevice) when a speaker is given; any other action the definition
declares is accepted and recorded, so every companion file runs on the simulator.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from body_drivers.node import ActionFailure
from body_drivers.timeline import Timeline
from edge.log import get_logger
from edge.protocol.action_codes import ActionCode
from edge.protocol.action_names import SPEECH_ACTIONS
from edge.protocol.payloads import Action

log = get_logger(__name__)

Vector = tuple[float, float, float]
STEP_S = 0.02


@dataclass
class Pose:
    position: Vector = (0.0, 0.0, 0.0)
    gaze: Vector = (0.0, 0.0, 1.0)


@dataclass
class SimConfig:
    move_speed: float = 2.0      # position units per second
    look_speed: float = 4.0      # gaze units per second
    gesture_s: float = 0.05      # how long an action without a simulation of its own takes
    max_duration_s: float = 5.0  # no simulated motion takes longer than this


SPOKEN_KEPT = 1000


class SimBody:
    """Executes actions against a simulated pose; thread-safe reads of ``pose``."""

    def __init__(self, speaker: Any = None, timeline: Timeline | None = None, config: SimConfig | None = None):
        self.speaker = speaker
        self.timeline = timeline or Timeline()
        self.config = config or SimConfig()
        self._pose = Pose()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.spoken: list[dict[str, Any]] = []   # the last SPOKEN_KEPT sentences (tests, the demo)
        self._handlers: dict[str, Callable[[Action, threading.Event], None]] = {
            "move": self._move, "look": self._look, **{name: self._speak for name in SPEECH_ACTIONS},
        }

    @property
    def pose(self) -> Pose:
        with self._lock:
            return Pose(self._pose.position, self._pose.gaze)

    def execute(self, action: Action, cancel: threading.Event) -> None:
        self._stop.clear()
        handler = self._handlers.get(action.name, self._gesture)
        handler(action, cancel)

    def stop(self) -> None:
        self._stop.set()

    # -- actions --------------------------------------------------------------------------

    def _move(self, action: Action, cancel: threading.Event) -> None:
        self._glide("position", _target(action.params, self.pose.position), self.config.move_speed, cancel)

    def _look(self, action: Action, cancel: threading.Event) -> None:
        self._glide("gaze", _target(action.params, self.pose.gaze), self.config.look_speed, cancel)

    def _glide(self, part: str, target: Vector, speed: float, cancel: threading.Event) -> None:
        """Move one part of the pose toward ``target`` at ``speed``; stops where it is on cancel."""
        start = getattr(self.pose, part)
        distance = math.dist(start, target)
        duration = min(distance / speed if speed > 0 else 0.0, self.config.max_duration_s)
        t0 = time.monotonic()
        while True:
            frac = 1.0 if duration <= 0 else min(1.0, (time.monotonic() - t0) / duration)
            point = tuple(a + (b - a) * frac for a, b in zip(start, target))
            with self._lock:
                setattr(self._pose, part, point)
            if frac >= 1.0:
                break
            if cancel.is_set() or self._stop.is_set():
                self.timeline.record(f"{part}.halted", at=list(point))
                raise ActionFailure(ActionCode.CANCELLED, f"{part} halted at {_fmt(point)} before reaching {_fmt(target)}")
            time.sleep(min(STEP_S, duration))
        self.timeline.record(f"{part}.reached", at=list(target), seconds=round(duration, 3))

    def _speak(self, action: Action, cancel: threading.Event) -> None:
        text = str(action.params.get("message", "")).strip()
        if not text:
            raise ActionFailure(ActionCode.INVALID_PARAMS, f"{action.name}: message is empty")
        entry: dict[str, Any] = {"id": action.id, "text": text}
        if self.speaker is not None:
            report = self.speaker.speak(text, cancel=cancel)
            entry.update(seconds=getattr(report, "seconds", None), cancelled=getattr(report, "cancelled", False))
            if entry["cancelled"]:
                raise ActionFailure(ActionCode.CANCELLED, "speech cut short (estop or stop)")
        self.spoken.append(entry)
        del self.spoken[:-SPOKEN_KEPT]   # a robot that talks all day must not keep every sentence
        self.timeline.record("speech.done", **entry)

    def _gesture(self, action: Action, cancel: threading.Event) -> None:
        """Actions the simulator has no model for (wave, nod, ...) take a moment and are recorded."""
        if cancel.wait(self.config.gesture_s):
            raise ActionFailure(ActionCode.CANCELLED, f"{action.name} cancelled")
        self.timeline.record("gesture.done", name=action.name, params=action.params)


def _target(params: dict[str, Any], current: Vector) -> Vector:
    """x, y, z from the params; an axis the action's schema leaves out keeps its current value."""
    x, y, z = (float(params.get(axis, now)) for axis, now in zip("xyz", current))
    return x, y, z


def _fmt(v) -> str:
    return "(" + ", ".join(f"{c:.2f}" for c in v) + ")"

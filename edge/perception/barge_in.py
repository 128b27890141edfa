"""Barge-in: a person starts talking while the robot speaks, and the robot stops talking.

The microphone node notices the person's voice frame by frame and publishes a ``voice`` event
(``VoiceActivity``, docs/protocol.md) at once; the body cuts the speech it is playing.

Without an echo canceller in front, the microphone hears the robot too, and the VAD calls the
robot's voice speech like any other. So while the robot speaks (``SelfVoiceGate.speaking``) a
frame counts as the person only when the VAD calls it speech *and* it is ``margin_db`` louder
than the robot's own voice at this microphone. That level is learned from what was heard while
the robot spoke: a high percentile of the levels of the frames the VAD called speech (its
voice) over the last ``history_s`` of its talk. Until ``min_history_s`` of its voice has been
heard, nothing counts as barge-in. Where the microphone does not hear the robot at all (a
headset, a perfect echo canceller) the VAD hears little voice while it talks (under a quarter
of the frames): after twice that time (longer than piper's first sentence takes to come) the
level is the room's while it spoke, and any voice is the person's. A person who talks before then is learned as the robot until 20 s of its talk
have gone by. A person
must therefore be louder at the microphone than the robot's loudest syllables. An echo
canceller in front (PipeWire's echo-cancel module on Pi OS, docs/microphone.md) lowers the
robot's level by 20-30 dB, after which a person at a normal distance is well above it.

``need_frames`` person frames within ``window_frames`` fire it; the onset is the first of
them. After firing it waits for the next sound the gate reports before it can fire again.
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from edge.perception.self_voice import SelfVoiceGate
from edge.perception.vad import FrameClassifier, level_dbfs

SAMPLE_RATE = 16000


@dataclass(frozen=True)
class BargeInConfig:
    margin_db: float = 9.0        # the person's frames are this much louder than the robot's voice
    echo_percentile: float = 95.0  # "the robot's voice": this percentile of its speech frames' levels
    history_s: float = 20.0       # of the robot's talk kept for that percentile
    min_history_s: float = 1.0    # of the robot's voice heard before barge-in is armed
    need_frames: int = 3          # person frames ...
    window_frames: int = 5        # ... within this many consecutive frames

    def check(self) -> None:
        if not 1 <= self.need_frames <= self.window_frames:
            raise ValueError(f"barge-in need_frames must be within 1..window_frames ({self.window_frames}), "
                             f"got {self.need_frames}")
        if self.margin_db < 0 or not 50 <= self.echo_percentile <= 100:
            raise ValueError("barge-in margin_db must be >= 0 and echo_percentile within 50..100")


@dataclass(frozen=True)
class Onset:
    sample: int         # stream index of the first frame heard as the person
    at: float           # wall time that frame arrived
    over: list[str]     # the sounds (speak action ids) it interrupted


class BargeIn:
    """Fed every VAD decision (``wrap`` the classifier the segmenter uses), in the capture thread."""

    def __init__(self, gate: SelfVoiceGate, announce: Callable[[Onset], None],
                 config: BargeInConfig | None = None, clock: Callable[[], float] = time.time):
        self.gate = gate
        self.announce = announce
        self.config = config or BargeInConfig()
        self.config.check()
        self._clock = clock
        self.frame_samples = 480
        self._heard: collections.deque[tuple[float, bool]] = collections.deque()  # (level, VAD speech) while it spoke
        self._pending: collections.deque[tuple[float, bool]] = collections.deque()
        self._window: collections.deque[tuple[bool, int, float]] = collections.deque()
        self._frames = 0            # frames seen since the stream began
        self._fired_over: set[str] = set()
        self._onsets: list[Onset] = []
        self._lock = threading.Lock()
        self.fired = 0

    def wrap(self, vad: FrameClassifier) -> "TappedVad":
        self.frame_samples = int(getattr(vad, "frame_samples", self.frame_samples))
        return TappedVad(vad, self)

    @property
    def echo_db(self) -> float | None:
        """The robot's voice level learned here (dBFS), or None until enough of it was heard."""
        need = max(self.config.min_history_s * SAMPLE_RATE / self.frame_samples, 1)
        voice = [level for level, speech in self._heard if speech]
        if len(voice) >= need:
            kept = voice
        elif len(self._heard) >= 2 * need and len(voice) < len(self._heard) / 4:
            kept = [level for level, _ in self._heard]   # the robot is not heard here: the room's level
        else:
            return None
        return float(np.percentile(kept, self.config.echo_percentile))

    def take(self) -> Onset | None:
        """The onset fired since the last call, for the node's own bookkeeping (capture thread)."""
        with self._lock:
            return self._onsets.pop(0) if self._onsets else None

    def observe(self, frame: np.ndarray, speech: bool) -> None:
        c = self.config
        sample = self._frames * self.frame_samples
        self._frames += 1
        speaking = self.gate.speaking()
        if not speaking or self._fired_over.issuperset(speaking):
            self._window.clear()
            self._pending.clear()
            if not speaking:
                self._fired_over.clear()
            return
        level = level_dbfs(frame)
        echo = self.echo_db
        person = speech and echo is not None and level >= echo + c.margin_db
        self._window.append((person, sample, self._clock()))
        if len(self._window) > c.window_frames:
            self._window.popleft()
        self._pending.append((level, speech))   # the robot, once too old to be a person's first words
        if len(self._pending) > c.window_frames:
            self._heard.append(self._pending.popleft())
            while len(self._heard) > c.history_s * SAMPLE_RATE / self.frame_samples:
                self._heard.popleft()
        if sum(p for p, _, _ in self._window) >= c.need_frames:
            first = next((s, t) for p, s, t in self._window if p)
            self._fire(Onset(first[0], first[1], sorted(speaking)))

    def _fire(self, onset: Onset) -> None:
        self.fired += 1
        self._fired_over.update(onset.over)
        self._window.clear()
        self._pending.clear()   # they were the person's, not the robot's
        self.gate.interrupt()
        with self._lock:
            self._onsets.append(onset)
        self.announce(onset)


class TappedVad:
    """The segmenter's classifier, unchanged, with each decision shown to the barge-in detector."""

    def __init__(self, inner: FrameClassifier, detector: BargeIn):
        self.inner = inner
        self.detector = detector
        self.name = inner.name
        self.frame_samples = inner.frame_samples

    def __getattr__(self, name: str) -> Any:   # name, frame_samples, model, reset ...
        return getattr(self.inner, name)

    def is_speech(self, frame: np.ndarray) -> bool:
        speech = self.inner.is_speech(frame)
        self.detector.observe(frame, speech)
        return speech

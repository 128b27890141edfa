"""Barge-in: a person starts talking while the robot speaks, and the robot stops talking.

The microphone node notices the person's voice frame by frame and publishes a ``voice`` event
(``VoiceActivity``, docs/protocol.md) at once; the body cuts the speech it is playing.

Without an echo canceller in front, the microphone hears the robot too, and the VAD calls the
robot's voice speech like any other. So while the robot speaks (``SelfVoiceGate.speaking``) a
frame counts as the person only when the VAD calls it speech *and* it is ``margin_db`` louder
than the robot's own voice at this microphone.

That level is learned at the start of each of the robot's sounds (its first ``probe_s``): people
talk over a robot once they have heard what it is saying, so what the microphone hears then is
the robot (or, behind a headset or a good canceller, the room). Where the VAD calls a quarter or
more of those frames speech, the robot is heard here and its level is a high percentile of their
levels; otherwise the robot is not heard and the level is the room's, the same percentile of the
others. The level in use is the median over the last ``sounds_kept`` sounds, so a person who did
talk over one sound's start is not taken for the robot ever after (learning from all of the
robot's talk did that: behind a canceller a person who talked in its first two seconds became
"the robot's voice", and each later attempt, not fired, was learned again). Nothing counts as
barge-in until one sound's start has been heard. A person must be louder at the microphone than
the robot's loudest syllables; an echo canceller in front (PipeWire's echo-cancel module on Pi OS,
docs/microphone.md) lowers the robot's level by 20-30 dB, after which a person at a normal
distance is well above it.

``need_frames`` person frames within ``window_frames`` fire it (``started``: the body cuts the
speech); the onset is the first of them. After firing it waits for the next sound the gate
reports before it can fire again. Speech frames take Silero three frames or more to call, so
before that, ``pause_need`` of ``pause_window`` frames (one: the first) that are as loud and that
Silero gives at least ``pause_probability`` announce an ``onset``: the body pauses the speech at once, and if no
person is confirmed within ``confirm_s`` the pause is ``dismissed`` and the speech goes on (a
clap, a knock, a dropped spoon). The person is confirmed only on what is heard once the robot
is silent (``settle_s`` after the pause, where the robot is heard here): a knock over the robot's
voice is loud, and the robot's voice under it is speech, but the knock alone is not. A voice that is loud and speech in every
frame from the pause on, ``need_frames`` + 1 of them (0.13 s), is a person too: a knock is that
loud for 0.1 s at most, while a short word ("Stop!", "Hey!", or "front" before a breath and
"center") is mostly over by the settle's end, and the robot went on (only to be cut at the next
word). Nothing is learned while paused.

Where the robot is not heard here (most of the last sounds' starts held no voice: a canceller or a
headset in front), a word that begins with a hiss (/s/ of "stop", /ʃ/ of "shh") is 0.1 s of
noise before Silero hears a voice, and behind PipeWire's canceller that 0.1 s was what made a
pause late. So there, with ``pause_on_hiss``, a frame that loud whose sound is mostly above 2.5
kHz pauses without Silero's word. A level alone is not enough even there: when the machine is
busy the canceller loses the echo for a few frames, and what leaks through is the robot's voice,
loud and below 1 kHz (bench/README.md). Where the robot is heard, its own /s/ could pass, so
Silero must agree.
"""

from __future__ import annotations

import collections
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from edge.perception.microphone.self_voice import SelfVoiceGate
from edge.perception.microphone.vad import FrameClassifier, level_dbfs

SAMPLE_RATE = 16000
HISS_HZ = 2500.0   # /s/ and /ʃ/ are mostly above this; a voice's echo mostly below 1 kHz


def high_share(frame: np.ndarray) -> float:
    """The share of the frame's energy above HISS_HZ."""
    power = np.abs(np.fft.rfft(frame.astype(np.float64) * np.hanning(frame.size))) ** 2
    total = float(power.sum())
    high = float(power[np.fft.rfftfreq(frame.size, 1 / SAMPLE_RATE) >= HISS_HZ].sum())
    return high / total if total > 0 else 0.0


@dataclass(frozen=True)
class BargeInConfig:
    margin_db: float = 9.0        # the person's frames are this much louder than the robot's voice
    echo_percentile: float = 95.0  # "the robot's voice": this percentile of a sound's start
    probe_s: float = 1.5          # the start of each sound, where the robot's level is learned
    min_probe_s: float = 0.5      # a sound heard for less teaches nothing
    sounds_kept: int = 5          # the level in use: the median over this many sounds
    need_frames: int = 3          # person frames ...
    window_frames: int = 5        # ... within this many consecutive frames
    pause: bool = True            # announce an onset (the speech pauses) before a person is sure
    pause_probability: float = 0.2  # a frame that may be a person: Silero says at least this ...
    pause_need: int = 1           # ... in this many frames ...
    pause_window: int = 1         # ... of this many
    pause_on_hiss: bool = True    # where the robot is not heard here, a loud hiss pauses too ...
    hiss_share: float = 0.5       # ... a frame with at least this share of its energy above HISS_HZ ...
    pause_level_dbfs: float = -55.0  # ... and at least this loud (a voice near the robot)
    confirm_s: float = 0.6        # a paused speech goes on when no person is heard within this
    settle_s: float = 0.1         # after a pause the robot's last buffered words still arrive (where it is heard)

    def check(self) -> None:
        if not 1 <= self.need_frames <= self.window_frames:
            raise ValueError(f"barge-in need_frames must be within 1..window_frames ({self.window_frames}), "
                             f"got {self.need_frames}")
        if self.margin_db < 0 or not 50 <= self.echo_percentile <= 100:
            raise ValueError("barge-in margin_db must be >= 0 and echo_percentile within 50..100")
        if not 1 <= self.pause_need <= self.pause_window or not 0 < self.pause_probability < 1 \
                or self.confirm_s <= 0:
            raise ValueError("barge-in pause needs 1 <= pause_need <= pause_window, 0 < pause_probability < 1 "
                             "and confirm_s > 0")
        if not 0 < self.hiss_share < 1:
            raise ValueError(f"barge-in hiss_share is a share of a frame's energy, within 0..1, got {self.hiss_share}")
        if not -100 < self.pause_level_dbfs <= 0:
            raise ValueError(f"barge-in pause_level_dbfs is a level in dBFS, within -100..0, got {self.pause_level_dbfs}")
        if not 0 < self.min_probe_s <= self.probe_s or self.sounds_kept < 1:
            raise ValueError("barge-in needs 0 < min_probe_s <= probe_s and sounds_kept >= 1")


@dataclass(frozen=True)
class Onset:
    sample: int         # stream index of the first frame heard as the person
    at: float           # wall time that frame arrived
    over: list[str]     # the sounds (speak action ids) it interrupted
    event: str = "started"   # a person (cut); "onset": maybe one (pause); "dismissed": not one


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
        self._probe: list[tuple[float, bool]] = []      # (level, VAD speech) at the current sound's start
        self._probe_keys: set[str] = set()                # the sounds it belongs to
        self._probe_done = True                           # learned from (or too short): wait for the next
        # per sound: (level, whether the robot was heard at its start)
        self._learned: collections.deque[tuple[float, bool]] = collections.deque(maxlen=self.config.sounds_kept)
        self._learned_guessing = False   # something in _learned was learned before the body said when sounds start
        self._probe_guessing = False     # the probe holds frames heard before it did
        self._pending: collections.deque[tuple[float, bool]] = collections.deque()
        self._window: collections.deque[tuple[bool, int, float]] = collections.deque()
        self._maybe: collections.deque[tuple[bool, int, float]] = collections.deque()
        self._paused: Onset | None = None   # the onset announced, while no person is confirmed
        self._paused_frames = 0
        self._voiced_through = False        # every frame from the pause on was a person's
        self._rearm = False                 # after a dismissal: no new pause until that loud sound stops
        self._frames = 0            # frames seen since the stream began
        self._fired_over: set[str] = set()
        self._onsets: list[Onset] = []
        self._lock = threading.Lock()
        self.fired = 0
        self._heard_at: float | None = None   # when the frames being fed arrived (the gate's clock)

    def wrap(self, vad: FrameClassifier) -> "TappedVad":
        self.frame_samples = int(getattr(vad, "frame_samples", self.frame_samples))
        return TappedVad(vad, self)

    @property
    def echo_db(self) -> float | None:
        """The robot's voice level learned here (dBFS), or None until one sound's start was heard."""
        return float(np.median([level for level, _ in self._learned])) if self._learned else None

    @property
    def robot_heard(self) -> bool | None:
        """Whether the microphone hears the robot's voice (no canceller or headset in front), or
        None until one sound's start was heard: most of the last sounds decide."""
        if not self._learned:
            return None
        return 2 * sum(heard for _, heard in self._learned) >= len(self._learned)

    def _probe_frames(self, seconds: float) -> int:
        return max(int(seconds * SAMPLE_RATE / self.frame_samples), 1)

    def _end_probe(self) -> None:
        """Learn the level of the sound whose start was just heard (when enough of it was)."""
        probe, self._probe = self._probe, []
        guessing, self._probe_guessing = self._probe_guessing, False
        self._probe_done = True
        if len(probe) < self._probe_frames(self.config.min_probe_s) or (guessing and self.gate.announced):
            return   # too little; or taken from a speak action's moment, which may be the quiet before its voice
        voice = [level for level, speech in probe if speech]
        # else the robot is not heard: the room's level, without the few voice frames (a person
        # starting to talk as the probe ended, or an echo too faint to reach the room's loudest)
        heard = len(voice) >= len(probe) / 4
        kept = voice if heard else [level for level, speech in probe if not speech]
        self._learned.append((float(np.percentile(kept, self.config.echo_percentile)), heard))
        self._learned_guessing = self._learned_guessing or guessing

    def _forget_guesses(self) -> None:
        """The body has just said when a sound started (``Speaking``): what was learned before, from
        the moment of a ``speak`` action, may be the silence before a late voice (synthesis on a
        busy CPU), so it goes, and the robot's level is learned again from sounds' real starts."""
        if self._learned_guessing and self.gate.announced:
            self._learned.clear()
            self._learned_guessing = False

    def _learn(self, speaking: list[str], level: float, speech: bool) -> None:
        """The frame that left the window (too old to be a person's first words) joins the probe."""
        if not self._probe_keys.issuperset(speaking):   # another sound began: a new start to hear
            self._end_probe()
            self._probe_keys, self._probe_done = set(speaking), False
        if self._probe_guessing and self.gate.announced:   # the body has said when sounds start: begin again
            self._probe, self._probe_guessing = [], False
        if not self._probe_done:
            self._probe.append((level, speech))
            self._probe_guessing = self._probe_guessing or not self.gate.announced
            if len(self._probe) >= self._probe_frames(self.config.probe_s):
                self._end_probe()

    def hearing(self, at: float | None) -> None:
        """The frames fed next arrived at ``at`` (the gate's clock). Whether the robot was talking
        is asked about then: on a busy CPU the node works up to a second behind the microphone,
        and asking about "now" counted what was heard before a speak as the robot's sound start."""
        self._heard_at = at

    def take(self) -> Onset | None:
        """The onset fired since the last call, for the node's own bookkeeping (capture thread)."""
        with self._lock:
            return self._onsets.pop(0) if self._onsets else None

    def observe(self, frame: np.ndarray, speech: bool, probability: float | None = None) -> None:
        c = self.config
        sample = self._frames * self.frame_samples
        self._frames += 1
        speaking = self.gate.speaking(at=self._heard_at)
        self._forget_guesses()
        if not speaking or self._fired_over.issuperset(speaking):
            self._reset()
            if self._probe:      # the sound ended or was talked over before its start was all heard
                self._end_probe()
            if not speaking:
                self._probe_keys = set()   # a sound heard again (it had not yet begun to sound) is a new start
                self._fired_over.clear()
            return
        level = level_dbfs(frame)
        echo = self.echo_db
        loud = echo is not None and level >= echo + c.margin_db
        maybe = loud and ((speech if probability is None else probability >= c.pause_probability)
                          or (c.pause_on_hiss and level >= c.pause_level_dbfs and not self.robot_heard
                              and high_share(frame) >= c.hiss_share))
        now = self._clock()
        # behind a canceller the robot's last buffered words are cancelled like the rest: no settle
        settle = math.ceil(c.settle_s * SAMPLE_RATE / self.frame_samples) \
            if self._paused is not None and self.robot_heard else 0
        settling = self._paused_frames < settle
        person = speech and loud
        _push(self._window, (person and not settling, sample, now), c.window_frames)
        _push(self._maybe, (maybe, sample, now), c.pause_window)
        if self._paused is None:
            self._pending.append((level, speech))   # the robot, once too old to be a person's first words
            if len(self._pending) > c.window_frames:
                self._learn(speaking, *self._pending.popleft())
        else:
            self._paused_frames += 1   # nothing learned: the robot is silent while paused
            self._voiced_through = self._voiced_through and person
        # a voice loud in every frame from the pause on is a person's word (a knock is not, for
        # this long); a short word is mostly over by the settle's end, too soon for 3 in 5
        voiced = self._paused is not None and self._voiced_through and self._paused_frames >= c.need_frames
        if sum(p for p, _, _ in self._window) >= c.need_frames or voiced:
            first = (self._paused.sample, self._paused.at) if self._paused else \
                next((s, t) for p, s, t in self._window if p)
            self._fire(Onset(first[0], first[1], sorted(speaking)))
        elif c.pause and self._paused is None and not self._rearm and \
                sum(m for m, _, _ in self._maybe) >= c.pause_need:
            first = next((s, t) for m, s, t in self._maybe if m)
            self._paused, self._paused_frames = Onset(first[0], first[1], sorted(speaking), "onset"), 0
            self._voiced_through = person
            self._pending.clear()   # they may be the person's
            self._window.clear()    # the person is confirmed on what is heard once the robot is silent
            self.announce(self._paused)
        elif self._paused is not None and self._paused_frames * self.frame_samples >= c.confirm_s * SAMPLE_RATE:
            paused, self._paused, self._rearm = self._paused, None, True
            self.announce(Onset(paused.sample, paused.at, paused.over, "dismissed"))
        if self._rearm and not any(m for m, _, _ in self._maybe):
            self._rearm = False

    def _reset(self) -> None:
        self._window.clear()
        self._maybe.clear()
        self._pending.clear()
        self._paused, self._rearm = None, False

    def _fire(self, onset: Onset) -> None:
        self.fired += 1
        self._fired_over.update(onset.over)
        self._reset()           # the pending frames were the person's, not the robot's
        self.gate.interrupt(at=self._heard_at)   # from the audio that fired it, not from now
        with self._lock:
            self._onsets.append(onset)
        self.announce(onset)


def _push(window: collections.deque[tuple[bool, int, float]], item: tuple[bool, int, float], size: int) -> None:
    window.append(item)
    if len(window) > size:
        window.popleft()


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
        self.detector.observe(frame, speech, getattr(self.inner, "last_probability", None))
        return speech

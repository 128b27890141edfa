"""Voice activity detection and utterance segmentation for 16 kHz int16 audio.

Three frame classifiers, one segmenter:

* ``SileroVad`` (the default, ``vad_silero.py``): a small neural network that tells voices
  from noise, so a fan, a hum or a TV's hiss does not open utterances. Its weights come in
  the faster-whisper wheel the default recognizer needs; without them ``auto`` falls back
  to energy and says so.
* ``EnergyVad`` (the fallback): a frame is speech when it stands ``threshold_db`` above
  the noise floor, the floor being a low percentile of the last few seconds of frame
  levels. Following the floor lets it work in a quiet study and beside a fan alike; it
  needs nothing but numpy and every decision can be explained in decibels.
* ``WebrtcVad``: the WebRTC classifier (a spectral GMM) that ships inside the
  pocketsphinx wheel.

Each classifier has its own frame size (``frame_samples``: 480 = 30 ms, Silero 512 = 32 ms);
the segmenter counts in its classifier's frames.

``Segmenter`` turns per-frame decisions into utterances: speech must last ``start_s``
(within ``start_window_s``) before an utterance opens, so a door slam does not; the
``pre_roll_s`` kept before that point saves the soft onset of the first word; the
utterance closes after ``end_silence_s`` of non-speech (the hangover, which is most of
the delay between the end of a sentence and its transcript); shorter than
``min_speech_s`` of speech is dropped as a click; longer than ``max_utterance_s`` is cut
(the recognizer then works on bounded pieces, and a stuck-open detector cannot hold audio
forever).
"""

from __future__ import annotations

import collections
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Callable, Protocol

import numpy as np

SAMPLE_RATE = 16000
FRAME_SAMPLES = 480  # 30 ms: a frame size both classifiers accept


class FrameClassifier(Protocol):
    """Says whether one frame (``frame_samples`` int16 samples at 16 kHz) is speech."""

    name: str
    frame_samples: int

    def is_speech(self, frame: np.ndarray) -> bool: ...


def level_dbfs(frame: np.ndarray) -> float:
    """RMS level in dB relative to a full-scale square wave; digital silence is -100."""
    if frame.size == 0:
        return -100.0
    power = float(np.mean(np.square(frame, dtype=np.float64)))
    return max(10.0 * np.log10(power / (32768.0 ** 2)) if power > 0 else -100.0, -100.0)


class EnergyVad:
    """Speech = a frame ``threshold_db`` above the tracked noise floor and above ``min_level_db``.

    The floor is the ``floor_percentile`` of frame levels over the last ``floor_window_s``:
    people pause between words, so even during talk the low percentile is background (it
    takes 0.3 s of pauses in 6 s); a sound with no pause at all for that long, a fan, a
    hum, becomes the floor. Until a window has
    filled, the quietest frame seen so far stands in (a stream that opens on speech then
    learns its floor in the first pause).
    """

    name = "energy"
    frame_samples = FRAME_SAMPLES

    def __init__(self, threshold_db: float = 9.0, min_level_db: float = -60.0,
                 floor_window_s: float = 6.0, floor_percentile: float = 5.0):
        self.threshold_db = threshold_db
        self.min_level_db = min_level_db
        self.floor_percentile = floor_percentile
        frames = max(int(floor_window_s * SAMPLE_RATE / FRAME_SAMPLES), 1)
        self._levels: collections.deque[float] = collections.deque(maxlen=frames)
        self.floor_db = -100.0
        self.last_level_db = -100.0

    def is_speech(self, frame: np.ndarray) -> bool:
        level = level_dbfs(frame)
        self._levels.append(level)
        self.last_level_db = level
        if len(self._levels) == self._levels.maxlen:
            self.floor_db = float(np.percentile(self._levels, self.floor_percentile))
        else:
            self.floor_db = min(self._levels)
        return level >= self.min_level_db and level >= self.floor_db + self.threshold_db


class WebrtcVad:
    """The WebRTC VAD from the pocketsphinx wheel; ``mode`` 0 (loose) .. 3 (strict)."""

    name = "webrtc"
    frame_samples = FRAME_SAMPLES

    def __init__(self, mode: int = 1):
        try:
            from pocketsphinx import Vad
        except ImportError as exc:
            raise RuntimeError(f"the webrtc VAD comes with pocketsphinx ({exc}); install: pip install pocketsphinx") from exc
        if mode not in (0, 1, 2, 3):
            raise ValueError(f"webrtc VAD mode must be 0..3, got {mode!r}")
        self._vad = Vad(mode, SAMPLE_RATE, FRAME_SAMPLES / SAMPLE_RATE)
        if self._vad.frame_bytes != FRAME_SAMPLES * 2:  # the library may round the frame length
            raise RuntimeError(f"webrtc VAD wants {self._vad.frame_bytes} bytes per frame, not {FRAME_SAMPLES * 2}")

    def is_speech(self, frame: np.ndarray) -> bool:
        return bool(self._vad.is_speech(np.ascontiguousarray(frame, dtype=np.int16).tobytes()))


VAD_SPECS = "auto (silero, else energy), silero[:THRESHOLD 0.05-0.95], energy[:THRESHOLD_DB] or webrtc[:MODE 0-3]"


def make_vad(spec: str = "silero") -> FrameClassifier:
    """``silero``, ``silero:THRESHOLD``, ``energy``, ``energy:THRESHOLD_DB``, ``webrtc`` or ``webrtc:MODE``.
    A Silero VAD whose package is missing raises ``VadError`` saying what to install."""
    kind, _, arg = spec.strip().lower().partition(":")
    try:
        if kind == "silero":
            from edge.perception.microphone.vad_silero import SileroVad
            return SileroVad(float(arg)) if arg else SileroVad()
        if kind == "energy":
            return EnergyVad(float(arg)) if arg else EnergyVad()
        if kind == "webrtc":
            return WebrtcVad(int(arg)) if arg else WebrtcVad()
    except ValueError as exc:
        raise ValueError(f"VAD {spec!r}: {exc}") from None
    raise ValueError(f"unknown VAD {spec!r}: expected {VAD_SPECS}")


def choose_vad(spec: str | None = None) -> tuple[FrameClassifier, str | None]:
    """The VAD for ``--vad SPEC``; ``None``/``auto`` is Silero, or energy when Silero cannot load.
    Returns (classifier, why it fell back or None): the node shows the reason instead of
    failing, since energy still works (less well with a fan or a TV on)."""
    if spec not in (None, "", "auto"):
        return make_vad(spec), None
    from edge.perception.microphone.vad_silero import VadError
    try:
        return make_vad("silero"), None
    except VadError as exc:
        return EnergyVad(), f"silero unavailable ({exc}); using the energy VAD"


@dataclass(frozen=True)
class SegmenterConfig:
    start_s: float = 0.09          # this much speech ...
    start_window_s: float = 0.15   # ... within this window opens an utterance
    pre_roll_s: float = 0.3        # audio kept from before the opening
    end_silence_s: float = 0.3     # non-speech that closes it: the end of the turn
    min_speech_s: float = 0.2      # less speech than this is a click, not a word
    max_utterance_s: float = 15.0  # cut here and go on with a new utterance
    tail_s: float = 0.2            # silence kept after the last speech frame, for the recognizer
    pause_s: float = 0.1           # non-speech after which the words so far may be recognized early
    finished_silence_s: float = 0.2  # the end of the turn when those words are a finished sentence

    def frames(self, seconds: float, frame_samples: int = FRAME_SAMPLES) -> int:
        return max(int(round(seconds * SAMPLE_RATE / frame_samples)), 1)

    def check(self) -> None:
        for name in ("start_s", "start_window_s", "end_silence_s", "max_utterance_s"):
            if getattr(self, name) <= 0:
                raise ValueError(f"segmenter {name} must be positive, got {getattr(self, name)}")
        if self.start_s > self.start_window_s:
            raise ValueError(f"segmenter start_s ({self.start_s}) cannot exceed start_window_s ({self.start_window_s})")
        if self.max_utterance_s <= self.pre_roll_s + self.start_window_s:
            raise ValueError("segmenter max_utterance_s must be longer than pre_roll_s + start_window_s")


@dataclass
class Utterance:
    """One stretch of speech. Sample indices count from the start of the stream."""

    samples: np.ndarray
    start_sample: int
    speech_end_sample: int   # just after the last speech frame
    speech_frames: int
    truncated: bool = False  # cut at max_utterance_s; the talk went on
    frame_samples: int = FRAME_SAMPLES

    @property
    def end_sample(self) -> int:
        return self.start_sample + len(self.samples)

    @property
    def seconds(self) -> float:
        return len(self.samples) / SAMPLE_RATE

    @property
    def speech_seconds(self) -> float:
        return self.speech_frames * self.frame_samples / SAMPLE_RATE


@dataclass
class _Open:
    frames: list[np.ndarray]
    start_sample: int
    speech_frames: int = 0
    silence_run: int = 0
    last_speech_end: int = 0


@dataclass
class Segmenter:
    """Feed int16 blocks of any size; get back the utterances they complete."""

    vad: FrameClassifier = field(default_factory=EnergyVad)
    config: SegmenterConfig = field(default_factory=SegmenterConfig)
    # Called with the utterance as it would close now, once ``pause_s`` of non-speech follows
    # speech: a recognizer may start on it while the end of the turn is still being decided,
    # and its text is used if the utterance then closes with the same words (mic_node.py).
    on_pause: Callable[[Utterance], None] | None = None

    def __post_init__(self) -> None:
        self.config.check()
        c = self.config
        self.frame_samples = int(getattr(self.vad, "frame_samples", FRAME_SAMPLES))
        self._pre: collections.deque[np.ndarray] = collections.deque(maxlen=self._n(c.pre_roll_s) +
                                                                     self._n(c.start_window_s))
        self._recent: collections.deque[bool] = collections.deque(maxlen=self._n(c.start_window_s))
        self._carry = np.zeros(0, dtype=np.int16)
        self._open: _Open | None = None
        self._pos = 0          # stream index of the next frame
        self.dropped_short = 0  # utterances discarded as clicks (tests and status read it)

    def _n(self, seconds: float) -> int:
        return self.config.frames(seconds, self.frame_samples)

    @property
    def in_speech(self) -> bool:
        return self._open is not None

    def feed(self, block: np.ndarray) -> list[Utterance]:
        fs = self.frame_samples
        data = np.concatenate([self._carry, np.asarray(block, dtype=np.int16).ravel()])
        whole = len(data) // fs * fs
        self._carry = data[whole:].copy()
        out: list[Utterance] = []
        for frame in data[:whole].reshape(-1, fs):
            done = self._frame(frame.copy())
            if done is not None:
                out.append(done)
        return out

    def flush(self) -> list[Utterance]:
        """End of stream (or a gap in it): the utterance in progress, if it holds enough speech.
        The classifier's memory of the stream is cleared too."""
        reset = getattr(self.vad, "reset", None)
        if reset is not None:
            reset()
        if self._open is None:
            return []
        done = self._close(self._open, truncated=False)
        self._open = None
        return [done] if done is not None else []

    def restart_at(self, sample: int) -> None:
        """A new speaker took over at ``sample`` (barge-in): the utterance in progress now begins
        there, with ``pre_roll_s`` before it; what came earlier (the robot) is forgotten."""
        current = self._open
        if current is None:
            return
        fs = self.frame_samples
        begin = max(sample - self._n(self.config.pre_roll_s) * fs, current.start_sample)
        skip = (begin - current.start_sample) // fs
        current.frames = current.frames[skip:]
        current.start_sample += skip * fs
        current.speech_frames = max((self._pos - sample) // fs, 0)
        current.silence_run = 0
        current.last_speech_end = self._pos

    def open_until(self) -> tuple[int, int] | None:
        """(first sample, end of the last speech) of the utterance in progress: the key of the
        guess ``on_pause`` offered for it."""
        current = self._open
        return None if current is None else (current.start_sample, current.last_speech_end)

    def end_turn(self, key: tuple[int, int]) -> list[Utterance] | None:
        """The words of the utterance ``key`` (``open_until``) were a finished sentence
        (``turn_end``): close it once ``finished_silence_s`` of silence has followed. ``[]``: not
        yet; None: that utterance is no longer open (it closed, or the person went on)."""
        current = self._open
        if current is None or self.open_until() != key:
            return None
        if current.silence_run < self._n(self.config.finished_silence_s):
            return []
        self._open = None
        done = self._close(current, truncated=False)
        return [done] if done is not None else []

    def utterances(self, blocks: Iterator[np.ndarray]) -> Iterator[Utterance]:
        """Every utterance in a finite stream of blocks, the last one flushed."""
        for block in blocks:
            yield from self.feed(block)
        yield from self.flush()

    def _frame(self, frame: np.ndarray) -> Utterance | None:
        c, fs = self.config, self.frame_samples
        start = self._pos
        self._pos += fs
        speech = self.vad.is_speech(frame)
        current = self._open
        if current is None:
            self._pre.append(frame)
            self._recent.append(speech)
            if sum(self._recent) < self._n(c.start_s):
                return None
            frames = list(self._pre)
            current = self._open = _Open(frames, self._pos - len(frames) * fs,
                                         speech_frames=sum(self._recent), last_speech_end=self._pos)
            self._pre.clear()
            self._recent.clear()
            return None
        current.frames.append(frame)
        if speech:
            current.speech_frames += 1
            current.silence_run = 0
            current.last_speech_end = start + fs
        else:
            current.silence_run += 1
            if self.on_pause is not None and current.silence_run == self._n(c.pause_s) \
                    and current.silence_run < self._n(c.end_silence_s):
                guess = self._utterance(current, truncated=False)
                if guess is not None:
                    self.on_pause(guess)
        if current.silence_run >= self._n(c.end_silence_s):
            self._open = None
            return self._close(current, truncated=False)
        if len(current.frames) >= self._n(c.max_utterance_s):
            # go on at once with a fresh utterance: the talk has not stopped
            self._open = _Open([], self._pos, last_speech_end=self._pos)
            return self._close(current, truncated=True)
        return None

    def _close(self, current: _Open, truncated: bool) -> Utterance | None:
        done = self._utterance(current, truncated)
        if done is None:
            self.dropped_short += 1
        return done

    def _utterance(self, current: _Open, truncated: bool) -> Utterance | None:
        """What ``current`` is as an utterance now; None when it holds too little speech."""
        c = self.config
        if current.speech_frames < self._n(c.min_speech_s):
            return None
        samples = np.concatenate(current.frames) if current.frames else np.zeros(0, dtype=np.int16)
        if not truncated:  # keep a little silence after the last word, drop the rest of the hangover
            keep = current.last_speech_end - current.start_sample + int(c.tail_s * SAMPLE_RATE)
            samples = samples[:max(keep, 0)]
        return Utterance(samples=samples, start_sample=current.start_sample,
                         speech_end_sample=current.last_speech_end, speech_frames=current.speech_frames,
                         truncated=truncated, frame_samples=self.frame_samples)

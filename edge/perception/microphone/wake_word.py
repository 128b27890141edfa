"""An optional wake word for the microphone node, and the follow-up window that spares it.

With a wake word configured (``--wake-word hey_jarvis``), what the microphone hears is for the
robot only when the person said the wake word in that utterance or shortly before it, or when
they are already in a conversation: the utterance starts within ``follow_up_s`` of the robot
finishing a sentence, of the last utterance let through, or of the wake word. Everything else
(a TV, people talking among themselves) is dropped before recognition costs anything. Without a
wake word nothing here runs and the node publishes every utterance, as before.

The detector is microWakeWord (``pymicro-wakeword``: a TFLite runtime and the four official
models, Apache-2.0, inside its wheel), a streaming network fed 10 ms feature steps; it costs
~0.04 ms of CPU per 10 ms of audio here, so it runs in the capture thread on every block.
Positions are stream sample indices, like the segmenter's, so the gate's decisions do not
depend on how fast the audio arrives.
"""

from __future__ import annotations

import collections
import difflib
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from edge.log import get_logger
from edge.perception.microphone.vad import SAMPLE_RATE, Utterance

log = get_logger(__name__)

INSTALL = "pip install 'companion-edge[mic]' (or pymicro-wakeword)"


class WakeWordError(RuntimeError):
    """The detector cannot be built (package or model missing); the message says what to do."""


@dataclass(frozen=True)
class Detection:
    sample: int          # stream index just past the block in which it was heard
    probability: float


class WakeWordDetector:
    """microWakeWord on a stream of 16 kHz mono int16 blocks of any size.

    The model reports a probability every three 10 ms steps, averaged over the last few; one
    utterance of the wake word keeps it over the cutoff for ~0.2-1.2 s, so a detection is
    reported once and the detector re-arms only after ``rearm_s`` below the cutoff."""

    def __init__(self, name: str, *, rearm_s: float = 0.3):
        try:
            from pymicro_wakeword import MicroWakeWord, MicroWakeWordFeatures, Model
        except (ImportError, OSError) as exc:   # OSError: its TFLite library does not load here
            raise WakeWordError(f"wake word {name!r} needs the microWakeWord runtime: {INSTALL} ({exc})") from exc
        self.name = name
        try:
            if name.endswith(".json"):   # a model someone trained: its manifest beside the .tflite
                self.model_file = Path(name)
                self._model = MicroWakeWord.from_config(self.model_file)
            else:
                self._model = MicroWakeWord.from_builtin(Model(name))
                self.model_file = Path(str(self._model.tflite_model))
        except (OSError, KeyError, ValueError, json.JSONDecodeError) as exc:
            known = ", ".join(m.value for m in Model)
            raise WakeWordError(f"wake word {name!r} could not be loaded ({exc!r}); the built-in ones are "
                                f"{known}, or give a microWakeWord manifest (.json)") from exc
        self._features = MicroWakeWordFeatures()
        self.phrase: str = self._model.wake_word
        self.cutoff = float(self._model.probability_cutoff)
        self._rearm_steps = max(int(rearm_s * 100), 1)   # feature steps are 10 ms
        self._below = self._rearm_steps
        self._feature_cls = MicroWakeWordFeatures

    def feed(self, samples: np.ndarray, start_sample: int) -> Detection | None:
        """The detection in this block, if the wake word was just heard."""
        found: Detection | None = None
        data = np.asarray(samples, dtype=np.int16).ravel()
        for features in self._features.process_streaming(data.tobytes()):
            p = self._model.process_streaming_prob(features) or 0.0
            if p > self.cutoff:
                if self._below >= self._rearm_steps and found is None:
                    found = Detection(start_sample + len(data), round(p, 3))
                self._below = 0
            else:
                self._below += 1
        return found

    def reset(self) -> None:
        """The stream broke (a device reopened): forget the half-heard audio."""
        self._features = self._feature_cls()
        self._model.reset()
        self._below = self._rearm_steps


class WakeGate:
    """Decides which utterances reach the recognizer when a wake word is asked for.

    Thread-safe: ``feed``/``admit`` run in the capture thread, ``strip`` in the
    recognizer thread. ``on_wake`` is called (capture thread) with each detection."""

    def __init__(self, detector: WakeWordDetector, follow_up_s: float = 5.0,
                 on_wake: Callable[[Detection], None] | None = None, late_s: float = 0.5):
        self.detector = detector
        self.follow_up = int(follow_up_s * SAMPLE_RATE)
        self.follow_up_s = follow_up_s
        self.on_wake = on_wake
        self.late = int(late_s * SAMPLE_RATE)   # a detection trails the wake word by up to ~0.25 s
        self.detections = 0
        self._open_until: int | None = None     # the conversation is open until this sample
        self._wakes: collections.deque[int] = collections.deque(maxlen=64)
        self._lock = threading.Lock()

    def feed(self, samples: np.ndarray, start_sample: int, *, fresh: bool = False, robot: bool = False) -> None:
        """One block: ``fresh`` after the device reopened, ``robot`` while the robot was talking
        (a reply to it needs no wake word)."""
        if fresh:
            self.detector.reset()
        if robot:
            with self._lock:
                self._extend(start_sample + len(samples))
        hit = self.detector.feed(samples, start_sample)
        if hit is None:
            return
        with self._lock:
            self.detections += 1
            self._wakes.append(hit.sample)
            self._extend(hit.sample)
        log.info("mic.wake_word", phrase=self.detector.phrase, sample=hit.sample, probability=hit.probability)
        if self.on_wake is not None:
            self.on_wake(hit)

    def wanted(self, utt: Utterance) -> bool:
        """Whether the utterance is for the robot (no side effects: the early guess asks too)."""
        with self._lock:
            return self._open_until is not None and utt.start_sample <= self._open_until

    def admit(self, utt: Utterance) -> bool:
        """``wanted``, and if so the conversation stays open for ``follow_up_s`` after it."""
        with self._lock:
            if self._open_until is None or utt.start_sample > self._open_until:
                log.debug("mic.no_wake_word", start_sample=utt.start_sample, seconds=round(utt.seconds, 2))
                return False
            self._extend(utt.speech_end_sample)
            return True

    def strip(self, utt: Utterance, text: str) -> str:
        """``text`` without the wake word at its start, when it was heard in this utterance."""
        with self._lock:
            inside = any(utt.start_sample <= d <= utt.end_sample + self.late for d in self._wakes)
        return strip_phrase(text, self.detector.phrase) if inside else text

    def start_line(self) -> str:
        return (f"waiting for the wake word {self.detector.phrase!r} ({self.detector.name}, microWakeWord) · "
                f"follow-up without it for {self.follow_up_s:g} s after the robot speaks or the last request")

    def _extend(self, sample: int) -> None:
        until = sample + self.follow_up
        self._open_until = until if self._open_until is None else max(self._open_until, until)


def strip_phrase(text: str, phrase: str, min_ratio: float = 0.65) -> str:
    """``text`` with its first words removed when they spell (roughly) the wake ``phrase``.

    A recognizer writes a wake word in many ways ("Hey Jarvis,", "hey jarvis", "Okay, Nabu."), so
    the letters of the first one to ``n + 1`` words (after at most one filler word) are compared
    with the phrase's; the best match at ``min_ratio`` or more is cut with the punctuation after
    it. What is left keeps the text's capitalisation: "Hey Jarvis, what time is it?" gives
    "What time is it?"."""
    target = re.sub(r"[^a-z0-9]", "", phrase.lower())
    words = list(re.finditer(r"[\w']+", text))
    n = len(phrase.split())
    best: tuple[float, int] | None = None   # (ratio, end of the match in text)
    for first in range(min(2, len(words))):
        for count in range(1, n + 2):
            if first + count > len(words):
                break
            letters = "".join(w.group().lower() for w in words[first:first + count]).replace("'", "")
            ratio = difflib.SequenceMatcher(None, letters, target).ratio() - 0.05 * first
            if ratio >= min_ratio and (best is None or ratio >= best[0]):   # a tie: the longer
                best = (ratio, words[first + count - 1].end())
    if best is None:
        return text
    rest = re.sub(r"^[\s,.!?;:\-]+", "", text[best[1]:])
    if rest and text[:1].isupper():
        rest = rest[0].upper() + rest[1:]
    return rest


def teach_recognizer(engine: Any, phrase: str) -> None:
    """Tell Whisper the wake word exists (its prompt), so it writes "Okay Nabu" rather than
    "Okay, now, Boo" and the phrase can be stripped; measured in docs/microphone.md."""
    prompt = getattr(engine, "prompt", None)
    if hasattr(engine, "prompt"):
        engine.prompt = f"{prompt} {phrase}." if prompt else f"{phrase}."


def wake_gate(name: str, follow_up_s: float, engine: Any, say: Callable[[str], None]) -> WakeGate:
    """The gate ``run_mic`` uses: the detector, Whisper told of the phrase, a line per detection."""
    detector = WakeWordDetector(name)
    teach_recognizer(engine, detector.phrase)
    return WakeGate(detector, follow_up_s,
                    on_wake=lambda hit: say(f"wake word {detector.phrase!r} heard (p {hit.probability:.2f}) · "
                                            f"listening for {follow_up_s:g} s"))

"""Speak text: synthesize sentence by sentence while the previous sentence is playing.

A producer thread synthesizes into a small bounded queue and `AudioOutput.play` drains
it, so the first sentence is heard after one sentence of synthesis, not the whole
text's, and memory stays bounded for long texts. `speak` returns when playback has
ended, which is when the body reports the `speak` action's result.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np

from .hold import PlaybackHold
from .playback import Player
from .tts import Synthesizer, split_sentences

_LOGGER = logging.getLogger(__name__)
_POLL_S = 0.02  # how often waiting threads look at the cancel flag
Halted = Callable[[], bool]


class SpeechError(RuntimeError):
    """Synthesis failed part-way; `report` says what was already spoken."""

    def __init__(self, message: str, report: SpeechReport) -> None:
        super().__init__(message)
        self.report = report


@dataclass(frozen=True)
class SpeechReport:
    """What one `speak` did. Times are `time.monotonic()` seconds."""

    text: str
    engine: str
    sample_rate: int
    sentences: int  # the text split into this many
    sentences_synthesized: int
    frames_synthesized: int
    frames_written: int  # what reached the device (less than synthesized when cancelled)
    seconds: float  # audio duration written
    cancelled: bool
    started_at: float  # speak() was called
    synthesis_started_at: float | None
    sentence_ready_at: tuple[float, ...]  # when each sentence's audio was ready
    first_audio_at: float | None  # the device accepted the first block
    ended_at: float  # playback over (played out, or cut by cancel)
    synthesis_seconds: float  # compute time spent in the engine
    underflows: int = 0

    @property
    def time_to_first_audio(self) -> float | None:
        """speak() call to first frame written: what a listener waits for."""
        return None if self.first_audio_at is None else self.first_audio_at - self.started_at

    @property
    def real_time_factor(self) -> float | None:
        """Synthesis compute time over synthesized audio time (below 1: faster than speech)."""
        if not self.frames_synthesized:
            return None
        return self.synthesis_seconds / (self.frames_synthesized / self.sample_rate)


@dataclass
class _Production:
    """What the producer thread did, read by `speak` once playback is over."""

    ready_at: list[float] = field(default_factory=list)
    frames: int = 0
    synthesis_seconds: float = 0.0
    started_at: float | None = None
    error: tuple[int, str, BaseException] | None = None


_END = object()


class Speaker:
    """Text in, sound out, one utterance at a time; cancel cuts it within ~20 ms.

    Calls to `speak` from several threads take turns; to interrupt the current
    utterance, set the `cancel` event that was passed to it.
    """

    def __init__(self, synth: Synthesizer, output: Player, *, queue_sentences: int = 2) -> None:
        if queue_sentences < 1:
            raise ValueError("queue_sentences must be at least 1")
        self.synth = synth
        self.output = output
        self._queue_sentences = queue_sentences
        self.hold = PlaybackHold()   # a barge-in onset pauses the speech playing (speech/hold.py)
        # told the wall time each utterance's first audio goes to the device: the body announces it
        # (``speaking``), so the microphone knows when the robot's voice really starts
        self.sounding: Callable[[float], None] | None = None
        self._speak_lock = threading.Lock()
        self._synth_lock = threading.Lock()  # a cancelled producer may still be finishing a sentence

    def speak(self, text: str, cancel: threading.Event | None = None) -> SpeechReport:
        """Say `text` and return once it has been heard (or cancelled).

        Raises ValueError for text with nothing to say, `AudioDeviceError` when the
        device cannot be opened, and `SpeechError` when the engine fails on a sentence.
        """
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"speak needs some text, got {text!r}")
        sentences = split_sentences(text)
        if not sentences:
            raise ValueError(f"nothing to say in {text!r}: it has no words")
        with self._speak_lock:
            return self._speak(text, sentences, cancel or threading.Event())

    def _speak(self, text: str, sentences: list[str], cancel: threading.Event) -> SpeechReport:
        started = time.monotonic()
        abort = threading.Event()  # our own stop, so the caller's event is never touched

        def halted() -> bool:
            return cancel.is_set() or abort.is_set()

        chunks: queue.Queue[object] = queue.Queue(maxsize=self._queue_sentences)
        made = _Production()

        producer = threading.Thread(
            target=self._produce, args=(sentences, chunks, made, halted),
            name="speech-synth", daemon=True,
        )
        producer.start()
        finished = False
        try:
            played = self.output.play(_told_at_first(_drain(chunks, halted), self.sounding), self.synth.sample_rate,
                                      cancel, self.hold)
            finished = True
        finally:
            abort.set()
            # After a cancel or a device error, do not wait on a sentence still in synthesis.
            producer.join(timeout=None if finished and not played.cancelled else _POLL_S)

        report = SpeechReport(
            text=text, engine=self.synth.name, sample_rate=self.synth.sample_rate,
            sentences=len(sentences), sentences_synthesized=len(made.ready_at),
            frames_synthesized=made.frames, frames_written=played.frames_written,
            seconds=played.seconds, cancelled=played.cancelled, started_at=started,
            synthesis_started_at=made.started_at, sentence_ready_at=tuple(made.ready_at),
            first_audio_at=played.first_audio_at, ended_at=played.ended_at,
            synthesis_seconds=made.synthesis_seconds, underflows=played.underflows,
        )
        if made.error is not None:
            index, sentence, exc = made.error
            raise SpeechError(
                f"{self.synth.name} failed on sentence {index + 1}/{len(sentences)} "
                f"{sentence!r}: {exc}", report,
            ) from exc
        _LOGGER.debug("spoke %d/%d sentences, %.2f s audio, first audio after %s s%s",
                      report.sentences_synthesized, report.sentences, report.seconds,
                      None if report.time_to_first_audio is None else f"{report.time_to_first_audio:.3f}",
                      " (cancelled)" if report.cancelled else "")
        return report

    def _produce(self, sentences: list[str], chunks: queue.Queue[object], made: _Production,
                 halted: Halted) -> None:
        """Producer thread: synthesize each sentence and queue it; always end with _END."""
        try:
            for index, sentence in enumerate(sentences):
                with self._synth_lock:
                    if halted():
                        return
                    began = time.monotonic()
                    if made.started_at is None:
                        made.started_at = began
                    try:
                        audio = np.asarray(self.synth.synthesize(sentence), dtype=np.int16)
                    except Exception as exc:  # reported by speak() after playback ends
                        made.error = (index, sentence, exc)
                        return
                    made.synthesis_seconds += time.monotonic() - began
                made.ready_at.append(time.monotonic())
                made.frames += int(audio.size)
                if not _put(chunks, audio, halted):
                    return
        finally:
            _put(chunks, _END, halted)


def _put(chunks: queue.Queue[object], item: object, halted: Halted) -> bool:
    """Block until the queue takes `item`, giving up when speech is halted."""
    while not halted():
        try:
            chunks.put(item, timeout=_POLL_S)
            return True
        except queue.Full:
            continue
    return False


def _drain(chunks: queue.Queue[object], halted: Halted) -> Iterator[np.ndarray]:
    """The playback side: yield queued audio until the end marker or a halt."""
    while not halted():
        try:
            item = chunks.get(timeout=_POLL_S)
        except queue.Empty:
            continue
        if item is _END:
            return
        assert isinstance(item, np.ndarray)
        yield item


def _told_at_first(chunks: Iterator[np.ndarray], tell: Callable[[float], None] | None) -> Iterator[np.ndarray]:
    """The chunks as they are; ``tell`` hears the wall time the first one goes to the output. What
    it does wrong is logged, never the speech's end."""
    first = True
    for chunk in chunks:
        if first and tell is not None:
            try:
                tell(time.time())
            except Exception:  # noqa: BLE001 - an announcement must not silence the robot
                _LOGGER.exception("the first-audio hook failed")
        first = False
        yield chunk

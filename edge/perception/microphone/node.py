"""The microphone node: audio → voice activity → utterances → speech recognition → ``input`` perceptions.

``MicNode`` is the loop itself, for ``companion up`` and for tests that bring their own bus,
source and recognizer; ``run_mic`` (edge/perception/microphone/run.py) is what ``companion run mic`` calls.

Capture and segmentation run in the caller's thread and never wait on recognition:
finished utterances go through a small queue to a recognizer thread, which publishes; each
utterance is worked on under ``guarded`` (edge/runtime/worker.py): an engine failure costs that
utterance (``dropped: error``) and, like any bug there, is logged and counted as ``worker_failed``.
While the robot speaks (``SelfVoiceGate``, fed from ``actions`` and ``actions/results``)
the blocks heard are marked, and an utterance that overlaps a marked block is dropped
before it costs any recognition.

The retained ``status/<node-id>`` carries ``mic``: ``opening``, ``listening``,
``reopening`` (with ``reason``, ``attempt``, ``retry_in_s``), ``ended`` (a WAV played
out), ``stopped`` or ``failed`` (with ``reason``); and ``source``, ``recognizer``,
``heard``, ``published``, ``self_voice_dropped``; with a wake word (edge/perception/microphone/wake_word.py)
also ``wake_word``, ``wake_words`` (times heard) and ``no_wake_word`` (utterances it dropped).
"""

from __future__ import annotations

import bisect
import collections
import queue
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from edge.log import get_logger
from edge.perception.microphone.audio_source import AudioSource
from edge.perception.microphone.barge_in import BargeIn, Onset
from edge.perception.microphone.self_voice import SelfVoiceGate
from edge.perception.microphone.stt import Recognizer, Transcript
from edge.perception.microphone.vad import Segmenter, Utterance
from edge.perception.microphone.turn_end import sounds_finished
from edge.perception.microphone.wake_word import WakeGate
from edge.protocol.payloads import Action, ActionResult, Perception, Speaking
from edge.runtime.transport import Transport
from edge.runtime.worker import FailureSink, guarded

log = get_logger(__name__)


@dataclass
class MicOptions:
    title: str = "input"          # the perception title the companion file declares
    to: str = "all"               # a companion id, or "all"
    min_confidence: float = 0.0   # transcripts below this are dropped (pocketsphinx's are rough)
    queue_size: int = 4           # utterances waiting for the recognizer before new ones are dropped
    progress_s: float = 30.0      # how often the status carries the counters
    early: bool = True            # recognize at a pause, before the end of the turn is decided


@dataclass
class Heard:
    """What became of one utterance; handed to ``on_heard`` (tests, bench, console)."""

    utterance: Utterance
    speech_end_at: float                 # wall time the block with the last speech sample arrived
    transcript: Transcript | None = None
    perception: Perception | None = None
    dropped: str | None = None           # self_voice | no_wake_word | wake_word_only | empty | low_confidence
                                         # | busy | error
    published_at: float | None = None
    early: bool = False                  # its text was recognized at a pause, before the turn ended


@dataclass
class _Marks:
    """Sample ranges heard while the robot was talking, merged and pruned as the stream goes."""

    ranges: collections.deque[list[int]] = field(default_factory=lambda: collections.deque(maxlen=512))

    def add(self, start: int, end: int) -> None:
        if self.ranges and self.ranges[-1][1] >= start:
            self.ranges[-1][1] = max(self.ranges[-1][1], end)
        else:
            self.ranges.append([start, end])

    def overlaps(self, start: int, end: int) -> bool:
        return any(a < end and start < b for a, b in self.ranges)

    def cut_from(self, sample: int) -> None:
        """Nothing from ``sample`` on was the robot after all (a person talked over it)."""
        kept = [[a, min(b, sample)] for a, b in self.ranges if a < sample]
        self.ranges.clear()
        self.ranges.extend(kept)


class MicNode:
    """Runs one audio source to its end (or ``stop``), publishing what it recognizes."""

    def __init__(self, bus: Transport, source: AudioSource, recognizer: Recognizer,
                 options: MicOptions | None = None, *, gate: SelfVoiceGate | None = None,
                 segmenter: Segmenter | None = None, on_heard: Callable[[Heard], None] | None = None,
                 on_status: Callable[..., None] | None = None, barge_in: BargeIn | None = None,
                 failures: FailureSink | None = None, wake: WakeGate | None = None):
        self.bus = bus
        self.failures = failures or bus   # the Node (which also refreshes the status) or the transport
        self.source = source
        self.recognizer = recognizer
        self.options = options or MicOptions()
        self.gate = gate or SelfVoiceGate()
        self.segmenter = segmenter or Segmenter()
        self.on_heard = on_heard
        self.on_status = on_status or (lambda state, **details: None)
        self.barge_in = barge_in   # its detector must see the segmenter's VAD (BargeIn.wrap)
        self.wake = wake           # None: every utterance is for the robot
        self.heard: list[Heard] = []
        self.counts = collections.Counter[str]()
        self._marks = _Marks()
        self._arrivals: collections.deque[tuple[int, float]] = collections.deque(maxlen=4096)
        # (utterance, speech end time); a time of None marks an early guess (recognized at a pause)
        self._work: queue.Queue[tuple[Utterance, float | None] | None] = queue.Queue(
            maxsize=max(self.options.queue_size, 1))
        self._guessed: tuple[tuple[int, int], Transcript] | None = None   # recognizer thread only
        # (start, speech end) of a guess that wrote a finished sentence: the capture thread may end
        # that turn after finished_silence_s instead of end_silence_s (turn_end.py)
        self._finished: tuple[int, int] | None = None
        if self.options.early and self.segmenter.on_pause is None:
            self.segmenter.on_pause = self._guess
        self._worker = threading.Thread(target=self._recognize_loop, name="mic-stt", daemon=True)
        self._pending: list[Any] = []
        self._record = threading.Lock()  # _finish runs in both threads

    def subscribe(self) -> None:
        """Listen for our own speech: the robot's ``speak`` actions and their results. (``run_mic``
        registers the gate's handlers on its ``Node`` before connecting instead.)"""
        self.bus.subscribe(Action, self.gate.on_action)
        self.bus.subscribe(ActionResult, self.gate.on_result)
        self.bus.subscribe(Speaking, self.gate.on_speaking)

    def run(self, stop: threading.Event) -> None:
        self._worker.start()
        next_progress = time.monotonic() + self.options.progress_s
        try:
            for block in self.source.blocks(stop):
                if block.fresh:  # the device was reopened: what came before has ended
                    self._segments(self.segmenter.flush())
                self._arrivals.append((block.end_sample, block.captured_at))
                talking = self.gate.active(at=block.arrived)   # then, not now: this CPU may be behind
                if self.wake is not None:   # before the segmenter: a wake word ending an utterance counts
                    self.wake.feed(block.samples, block.start_sample, fresh=block.fresh, robot=talking)
                if talking:
                    self._marks.add(block.start_sample, block.end_sample)
                if self.barge_in is not None:
                    self.barge_in.hearing(block.arrived)
                self._segments(self.segmenter.feed(block.samples))
                self._end_finished_turn()
                if self.barge_in is not None:
                    self._taken_over(self.barge_in.take())
                if time.monotonic() >= next_progress:
                    self.on_status(None, **self.progress())
                    next_progress = time.monotonic() + self.options.progress_s
            if not stop.is_set():
                self._segments(self.segmenter.flush())
        finally:
            self._work.put(None)
            self._worker.join()
            for info in self._pending:
                try:
                    info.wait_for_publish(2.0)
                except (RuntimeError, ValueError):
                    pass

    def progress(self) -> dict[str, int]:
        wake = {} if self.wake is None else {"wake_words": self.wake.detections,
                                             "no_wake_word": self.counts["no_wake_word"]}
        return {"heard": self.counts["heard"], "published": self.counts["published"],
                "self_voice_dropped": self.counts["self_voice"], "barge_in": self.counts["barge_in"], **wake}

    def _taken_over(self, onset: Onset | None) -> None:
        """A person talked over the robot: their utterance begins at the onset and is theirs."""
        if onset is None:
            return
        self.counts["barge_in"] += 1
        self._marks.cut_from(onset.sample - int(self.segmenter.config.pre_roll_s * 16000))
        self.segmenter.restart_at(onset.sample)

    # -- capture thread -------------------------------------------------------------------

    def _segments(self, utterances: Iterable[Utterance]) -> None:
        for utt in utterances:
            with self._record:
                self.counts["heard"] += 1
            speech_end_at = self._arrival_of(utt.speech_end_sample)
            if self._robot_heard(utt):
                self._finish(Heard(utt, speech_end_at, dropped="self_voice"))
                continue
            if self.wake is not None and not self.wake.admit(utt):
                self._finish(Heard(utt, speech_end_at, dropped="no_wake_word"))
                continue
            try:
                self._work.put_nowait((utt, speech_end_at))
            except queue.Full:
                log.warning("mic.busy", reason="the recognizer is behind; utterance dropped",
                            seconds=round(utt.seconds, 2), waiting=self._work.qsize())
                self._finish(Heard(utt, speech_end_at, dropped="busy"))

    def _end_finished_turn(self) -> None:
        """The guess at the pause wrote a finished sentence: end the turn as soon as the shorter
        silence has passed, if the person has not gone on meanwhile."""
        finished = self._finished
        if finished is None:
            return
        ended = self.segmenter.end_turn(finished)
        if ended is None or ended:
            self._finished = None      # ended now, closed the usual way, or the person went on
        if ended:
            self._segments(ended)

    def _robot_heard(self, utt: Utterance) -> bool:
        """Whether the robot was speaking while this utterance's voice was heard. The voice, not
        the pre-roll kept before it, decides: a person who starts just after the echo tail is heard."""
        voice_from = min(utt.start_sample + int(self.segmenter.config.pre_roll_s * 16000), utt.speech_end_sample)
        return self._marks.overlaps(voice_from, utt.end_sample)

    def _guess(self, utt: Utterance) -> None:
        """A pause: the recognizer may start on the words so far. If the turn then ends with the
        same words, their text is ready ~0.2 s sooner; if the person goes on, the guess is
        dropped. Never queued over real work, never for the robot's own voice."""
        if self.gate.active() or self._robot_heard(utt) or not self._work.empty() or \
                (self.wake is not None and not self.wake.wanted(utt)):
            return
        try:
            self._work.put_nowait((utt, None))
        except queue.Full:
            pass

    def _arrival_of(self, sample: int) -> float:
        """When the block holding ``sample`` arrived (the moment the node could know of it)."""
        ends = [end for end, _ in self._arrivals]
        i = bisect.bisect_left(ends, sample)
        return self._arrivals[min(i, len(self._arrivals) - 1)][1] if self._arrivals else time.time()

    # -- recognizer thread ----------------------------------------------------------------

    def _recognize_loop(self) -> None:
        while (item := self._work.get()) is not None:
            guarded(self.failures, "mic", self._recognize, item, topic=f"utterance at sample {item[0].start_sample}")

    def _recognize(self, item: tuple[Utterance, float | None]) -> None:
        utt, speech_end_at = item
        key = (utt.start_sample, utt.speech_end_sample)
        if speech_end_at is None:     # an early guess: worth it only if nothing newer waits
            if self._work.empty():
                try:
                    self._guessed = (key, self.recognizer.transcribe(utt.samples))
                except Exception as exc:  # noqa: BLE001 - the real utterance will report it
                    log.debug("mic.guess_failed", error=repr(exc))
                    return
                if sounds_finished(self._guessed[1].text):
                    self._finished = key
            return
        heard = Heard(utt, speech_end_at)
        if self._guessed is not None and self._guessed[0] == key:
            heard.transcript, self._guessed, heard.early = self._guessed[1], None, True   # already done
        else:
            try:
                heard.transcript = self.recognizer.transcribe(utt.samples)
            except Exception as exc:  # costs this utterance, not the node; guarded reports it
                heard.dropped = "error"
                self._finish(heard)
                raise RuntimeError(f"recognizer {getattr(self.recognizer, 'name', '?')} failed: {exc!r}") from exc
        self._publish(heard)

    def _publish(self, heard: Heard) -> None:
        transcript = heard.transcript
        assert transcript is not None
        said = transcript.text.strip()
        text = self.wake.strip(heard.utterance, said) if self.wake is not None else said   # the request follows it
        if not text:
            heard.dropped = "wake_word_only" if said else "empty"
        elif transcript.confidence < self.options.min_confidence:
            heard.dropped = "low_confidence"
        if heard.dropped:
            self._finish(heard)
            return
        perception = Perception(title=self.options.title, body=text, format="text", to=self.options.to,
                                sender=self.bus.node_id)
        self._pending = [p for p in self._pending if not p.is_published()][-64:]
        self._pending.append(self.bus.publish(perception))
        heard.perception, heard.published_at = perception, time.time()
        self._finish(heard)

    def _finish(self, heard: Heard) -> None:
        key = heard.dropped or "published"
        with self._record:
            self.counts[key] += 1
            self.heard.append(heard)
            del self.heard[:-256]
        t = heard.transcript
        (log.debug if key == "no_wake_word" else log.info)(   # not for us: no news
                 "mic.heard", outcome=key, text=t.text if t else None, via=t.via if t else None,
                 confidence=round(t.confidence, 2) if t else None, seconds=round(heard.utterance.seconds, 2),
                 rtf=round(t.real_time_factor or 0.0, 3) if t else None)
        if self.on_heard is not None:
            try:
                self.on_heard(heard)
            except Exception as exc:  # an observer's bug must not stop the node
                log.error("mic.observer_failed", error=repr(exc))


# ------------------------------------------------------------------------------- runner


def default_node_id(source: str | int | None) -> str:
    """``mic-default``, ``mic-usb``, ``mic-hello`` (from hello.wav): stable across restarts."""
    text = "default" if source in (None, "") else str(source).strip()
    text = Path(text).stem if text.lower().endswith((".wav", ".wave")) else text
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40]
    return f"mic-{slug or 'default'}"

"""The sound rig of the voice benches: a microphone that "hears" a recording at real time and a
speaker whose first sample can be timed, both through ALSA, plus thin timing wrappers around
the recognizer, the model and the speaker (the parts are real; only their clocks are read).

ALSA (the same `file` plugin the tests use, tests/rigs/mic_audio.py and tests/rigs/alsa_sink.py):

* ``pcm.mic`` reads a raw 16 kHz int16 file (``infile``) over the ``null`` PCM; the mic node's
  source paces it to real time.
* ``pcm.!default`` writes what the body plays, raw, into a FIFO. A reader thread holds the FIFO
  open and notes the wall time of every read: the moment bytes leave the "speaker device"
  (measured: the first bytes of a stream are readable < 1 ms after PortAudio's first write,
  then every 20 ms block as it is written at real time).

The config goes under ``$XDG_CONFIG_HOME/alsa/asoundrc`` so HOME, and with it the model store
under ``~/.local/share``, stays the user's.
"""

from __future__ import annotations

import bisect
import os
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

RATE = 16000

_ASOUNDRC = """\
# Written by bench/voice_rig.py
pcm.!default {{
    type file
    slave.pcm "null"
    file "{fifo}"
    format "raw"
}}
pcm.mic {{
    type file
    slave.pcm "null"
    file "/dev/null"
    infile "{infile}"
    format "raw"
}}
"""


class SpeakerTap:
    """Reads the speaker FIFO in a thread; ``first_after(t)`` is when sound next left the device."""

    def __init__(self, fifo: Path):
        if not fifo.exists():
            os.mkfifo(fifo)
        self._fd = os.open(fifo, os.O_RDWR)  # read-write: never EOF between the body's streams
        self.times: list[float] = []
        self.samples: list[np.ndarray] = []
        self._lock = threading.Lock()
        self._stop = False
        threading.Thread(target=self._read, name="speaker-tap", daemon=True).start()

    def _read(self) -> None:
        while not self._stop:
            data = os.read(self._fd, 65536)
            now = time.time()
            with self._lock:
                self.times.append(now)
                self.samples.append(np.frombuffer(data[: len(data) // 2 * 2], dtype="<i2"))

    def first_after(self, t: float) -> float | None:
        with self._lock:
            i = bisect.bisect_left(self.times, t)
            return self.times[i] if i < len(self.times) else None

    def bytes_between(self, start: float, end: float) -> int:
        with self._lock:
            return sum(2 * len(s) for at, s in zip(self.times, self.samples) if start <= at < end)

    def close(self) -> None:
        self._stop = True
        os.close(self._fd)


@dataclass
class AlsaRig:
    folder: Path
    infile: Path = field(init=False)
    tap: SpeakerTap = field(init=False)

    def __post_init__(self) -> None:
        conf = self.folder / "config" / "alsa"
        conf.mkdir(parents=True, exist_ok=True)
        self.infile = self.folder / "mic.raw"
        fifo = self.folder / "speaker.fifo"
        (conf / "asoundrc").write_text(_ASOUNDRC.format(fifo=fifo, infile=self.infile), encoding="utf-8")
        self.tap = SpeakerTap(fifo)
        os.environ.setdefault("XDG_DATA_HOME", str(Path.home() / ".local" / "share"))
        os.environ["XDG_CONFIG_HOME"] = str(self.folder / "config")
        os.environ.pop("ALSA_CONFIG_PATH", None)

    def hear(self, samples: np.ndarray) -> float:
        """What the microphone will capture (16 kHz int16); restarts PortAudio; returns seconds."""
        from body_drivers.speech.playback import AudioOutput

        self.infile.write_bytes(np.asarray(samples, dtype="<i2").tobytes())
        AudioOutput.reinitialize()
        return len(samples) / RATE


@dataclass(frozen=True)
class Spoken:
    text: str
    start: int   # first sample above 1 % of full scale
    end: int     # just after the last one


def loud_span(clip: np.ndarray) -> tuple[int, int]:
    loud = np.nonzero(np.abs(clip.astype(np.int32)) > 328)[0]
    return int(loud[0]), int(loud[-1]) + 1


def session(clips: list[tuple[str, np.ndarray]], gap_s: float, lead_s: float = 1.0) -> tuple[np.ndarray, list[Spoken]]:
    """The clips in a row, each followed by ``gap_s`` of silence (time for the robot to answer)."""
    parts, spans, pos = [np.zeros(int(lead_s * RATE), np.int16)], [], int(lead_s * RATE)
    for text, clip in clips:
        a, b = loud_span(clip)
        spans.append(Spoken(text, pos + a, pos + b))
        parts += [clip, np.zeros(int(gap_s * RATE), np.int16)]
        pos += len(clip) + int(gap_s * RATE)
    return np.concatenate(parts), spans


# ---------------------------------------------------------------------------- timing wrappers


class TimedRecognizer:
    """The node's recognizer, with the wall time each call started and ended (by transcript id)."""

    def __init__(self, inner: Any):
        self.inner = inner
        self.calls: dict[int, tuple[float, float]] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def transcribe(self, samples: np.ndarray) -> Any:
        started = time.time()
        transcript = self.inner.transcribe(samples)
        self.calls[id(transcript)] = (started, time.time())
        return transcript


@dataclass
class ModelCall:
    prompt: str
    context: Any
    started: float
    ended: float


class RecordingProvider:
    """The brain's provider, unchanged, with each call's prompt, context and wall times kept."""

    def __init__(self, inner: Any):
        self.inner = inner
        self.name = inner.name
        self.calls: list[ModelCall] = []

    def generate(self, prompt: str, context: Any) -> Any:
        started = time.time()
        response = self.inner.generate(prompt, context)
        self.calls.append(ModelCall(prompt, context, started, time.time()))
        return response

    def warm(self, context: Any) -> bool:
        return bool(self.inner.warm(context)) if hasattr(self.inner, "warm") else False

    def close(self) -> None:
        """The stack closes its provider on stop; the bench still needs it for the bare run."""

    def shutdown(self) -> None:
        self.inner.close()

    def again(self, call: ModelCall) -> float:
        """The same prompt and context once more, alone: seconds."""
        context = replace(call.context, cancel=None) if hasattr(call.context, "cancel") else call.context
        started = time.perf_counter()
        self.inner.generate(call.prompt, context)
        return time.perf_counter() - started


class RecordingSpeaker:
    """The body's Speaker, with each SpeechReport kept (monotonic times turned into wall times)."""

    def __init__(self, inner: Any):
        self.inner = inner
        self.reports: list[tuple[str, Any]] = []
        self.offset = time.time() - time.monotonic()

    def speak(self, text: str, cancel: threading.Event | None = None) -> Any:
        report = self.inner.speak(text, cancel=cancel)
        self.reports.append((text, report))
        return report

    def wall(self, monotonic: float | None) -> float | None:
        return None if monotonic is None else monotonic + self.offset

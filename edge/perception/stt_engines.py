"""Optional recognizers, used only when their package is installed and a model is on disk.

Both are imported lazily, so the mic node runs without them; neither downloads anything:
``whisper:DIR`` wants a faster-whisper (CTranslate2) model folder, ``vosk:DIR`` an
unpacked vosk model. Stronger than pocketsphinx on free speech, heavier on a Pi.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

import numpy as np

from edge.perception.stt import SAMPLE_RATE, RecognizerError, Transcript, check_pcm


def _model_dir(engine: str, path: str, hint: str) -> Path:
    if not path:
        raise RecognizerError(f"{engine} needs a model folder: {engine}:/path/to/model ({hint})")
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise RecognizerError(f"{engine} model folder not found: {folder} ({hint})")
    return folder


class WhisperRecognizer:
    """faster-whisper on the CPU (int8), greedy decoding, English unless told otherwise."""

    def __init__(self, model_dir: str, *, language: str | None = "en", device: str = "cpu",
                 compute_type: str = "int8"):
        folder = _model_dir("whisper", model_dir, "e.g. a faster-whisper-tiny.en folder; `companion models` lists them")
        try:
            from faster_whisper import WhisperModel
        except ImportError as exc:
            raise RecognizerError(f"faster-whisper is not installed ({exc}); install it: pip install faster-whisper") from exc
        try:
            self._model: Any = WhisperModel(str(folder), device=device, compute_type=compute_type,
                                            local_files_only=True)
        except Exception as exc:  # a folder without model.bin / config.json: say which
            raise RecognizerError(f"cannot load the whisper model in {folder}: {exc}") from exc
        self.language = language
        self.name = f"whisper:{folder.name}"

    def transcribe(self, pcm16k: np.ndarray) -> Transcript:
        pcm = check_pcm(pcm16k)
        started = time.perf_counter()
        audio = pcm.astype(np.float32) / 32768.0
        segments, _info = self._model.transcribe(audio, language=self.language, beam_size=1,
                                                 vad_filter=False, condition_on_previous_text=False)
        pieces = list(segments)
        text = " ".join(s.text.strip() for s in pieces if s.text.strip())
        logprob = float(np.mean([s.avg_logprob for s in pieces])) if pieces else -math.inf
        confidence = math.exp(logprob) if pieces else 0.0
        return Transcript(text, confidence, self.name, "whisper", time.perf_counter() - started,
                          len(pcm) / SAMPLE_RATE)


class VoskRecognizer:
    """vosk (Kaldi); one recognizer object per utterance keeps utterances independent."""

    def __init__(self, model_dir: str):
        folder = _model_dir("vosk", model_dir, "e.g. an unpacked vosk-model-small-en-us folder")
        try:
            import vosk
        except ImportError as exc:
            raise RecognizerError(f"vosk is not installed ({exc}); install it: pip install vosk") from exc
        vosk.SetLogLevel(-1)
        try:
            self._model = vosk.Model(str(folder))
        except Exception as exc:
            raise RecognizerError(f"cannot load the vosk model in {folder}: {exc}") from exc
        self._vosk = vosk
        self.name = f"vosk:{folder.name}"

    def transcribe(self, pcm16k: np.ndarray) -> Transcript:
        pcm = check_pcm(pcm16k)
        started = time.perf_counter()
        rec = self._vosk.KaldiRecognizer(self._model, SAMPLE_RATE)
        rec.SetWords(True)
        rec.AcceptWaveform(pcm.tobytes())
        result = json.loads(rec.FinalResult())
        words = result.get("result", [])
        confidence = float(np.mean([w.get("conf", 0.0) for w in words])) if words else 0.0
        return Transcript(result.get("text", ""), confidence, self.name, "vosk",
                          time.perf_counter() - started, len(pcm) / SAMPLE_RATE)

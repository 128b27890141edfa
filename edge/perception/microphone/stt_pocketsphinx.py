"""The pocketsphinx engine: the small fallback recognizer (``--stt pocketsphinx[:hybrid|lm]``).

``PocketsphinxRecognizer`` needs nothing but its wheel (which carries an en-US acoustic model,
dictionary and general language model). Its general LM mishears the short commands a
companion hears most; a grammar of the phrases the companion knows (``phrases.py``) decodes
those exactly, but forces everything else into one of its phrases ("front left", said by a
person, came out as "turn to the left"). So the grammar is only a re-ranker: every utterance
is decoded both ways, and the grammar's phrase replaces the free LM's words only when it is
a whole phrase, explains the audio almost as well (the acoustic log-likelihood gap per 10 ms
frame stays under ``margin``) AND sounds like what the LM heard (``verify``): the phone-level
edit distance between the two, as a share of the phrase's phones, plus a quarter of the gap,
must stay under ``max_distance``, and the two must share a word. "pip look down" heard as
"the book down" passes; "front left" heard as "aren't left" does not become "turn to the
left", nor "o'clock" heard as "oh come on" "okay nod". The grammar-only mode, which
returned a phrase for any speech, was removed. ``lm`` mode never uses the grammar.
``bench/mic.py`` measures both.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from edge.log import get_logger
from edge.perception.microphone.phrases import GrammarError, PhraseGrammar, edit_distance, grammar_for
from edge.perception.microphone.stt import SAMPLE_RATE, RecognizerError, Transcript, check_pcm

log = get_logger(__name__)

POCKETSPHINX_HINT = "pip install pocketsphinx"
MODES = ("hybrid", "lm")
_REMOVED = {"grammar": "pocketsphinx:grammar was removed: it answered a command for any speech (a person saying "
                       "\"front left\" became \"turn to the left\"); use pocketsphinx (the grammar, verified) "
                       "or pocketsphinx:lm"}
_FILLERS = ("<s>", "</s>", "<sil>", "[NOISE]", "++", "(NULL)")


@dataclass(frozen=True)
class _Pass:
    text: str
    acoustic: float | None  # ln-likelihood of the best path's audio; None when it underflowed
    prob: float
    frames: int


class PocketsphinxRecognizer:
    """pocketsphinx with a phrase grammar and the general LM; see the module docstring."""

    def __init__(self, companions: Iterable[Any] = (), phrases: Sequence[str] = (), *,
                 mode: str = "hybrid", margin: float = 1.2, max_distance: float = 0.55,
                 model_dir: str | Path | None = None):
        if mode in _REMOVED:
            raise RecognizerError(_REMOVED[mode])
        if mode not in MODES:
            raise RecognizerError(f"unknown pocketsphinx mode {mode!r}: expected one of {', '.join(MODES)}")
        try:
            from pocketsphinx import Decoder, get_model_path
        except ImportError as exc:
            raise RecognizerError(f"pocketsphinx is not installed ({exc}); install it: {POCKETSPHINX_HINT}") from exc
        base = Path(model_dir) if model_dir is not None else Path(get_model_path())
        files = {"hmm": base / "en-us" / "en-us", "lm": base / "en-us" / "en-us.lm.bin",
                 "dict": base / "en-us" / "cmudict-en-us.dict"}
        for key, path in files.items():
            if not path.exists():
                raise RecognizerError(f"pocketsphinx model file missing: {path} ({key}); reinstall: {POCKETSPHINX_HINT}")
        started = time.perf_counter()
        self._decoder = Decoder(hmm=str(files["hmm"]), lm=str(files["lm"]), dict=str(files["dict"]),
                                loglevel="FATAL")
        self.mode = mode
        self.margin = margin
        self.max_distance = max_distance
        self.name = f"pocketsphinx:{mode}"
        self._lock = threading.Lock()
        self.grammar: PhraseGrammar | None = None
        if mode != "lm":
            try:
                self.grammar = grammar_for(list(companions), phrases, known_word=self.knows)
                self._decoder.add_jsgf_string("phrases", self.grammar.text)
            except (GrammarError, ValueError, RuntimeError) as exc:
                raise RecognizerError(f"cannot build the phrase grammar: {exc}") from exc
        log.info("stt.ready", engine=self.name, load_s=round(time.perf_counter() - started, 2),
                 phrases=len(self.grammar.phrases) if self.grammar else 0,
                 dropped=len(self.grammar.dropped) if self.grammar else 0)

    def knows(self, word: str) -> bool:
        """Whether the pronunciation dictionary has the word (a grammar may only use those)."""
        return self._decoder.lookup_word(word) is not None

    def transcribe(self, pcm16k: np.ndarray) -> Transcript:
        pcm = check_pcm(pcm16k)
        audio_s = len(pcm) / SAMPLE_RATE
        started = time.perf_counter()
        if len(pcm) < SAMPLE_RATE // 10:  # under 100 ms: nothing a decoder can use
            return Transcript("", 0.0, self.name, "", 0.0, audio_s)
        raw = pcm.tobytes()
        with self._lock:
            text, confidence, via = self._recognize(raw)
        return Transcript(text, confidence, self.name, via, time.perf_counter() - started, audio_s)

    def _recognize(self, raw: bytes) -> tuple[str, float, str]:
        free = self._pass("_default", raw)
        if self.mode == "lm" or self.grammar is None:
            return free.text, free.prob if free.text else 0.0, "lm"
        fixed = self._pass("phrases", raw)
        if self.grammar.complete(fixed.text) and fixed.acoustic is not None and free.acoustic is not None:
            gap = (free.acoustic - fixed.acoustic) / max(fixed.frames, 1)
            distance = self.verify(fixed.text, free.text, gap)
            log.debug("stt.rerank", grammar=fixed.text, lm=free.text, gap=round(gap, 3), distance=round(distance, 3))
            shared = set(fixed.text.split()) & set(free.text.split())  # "okay nod" for "oh come on": none
            if gap <= self.margin and distance <= self.max_distance and shared:
                return fixed.text, max(0.5, 1.0 - distance), "grammar"
        return free.text, free.prob if free.text else 0.0, "lm"

    def verify(self, phrase: str, heard: str, gap: float) -> float:
        """How far the grammar's ``phrase`` is from what the free LM ``heard``: the phone edit
        distance over the phrase's phones, plus a quarter of the acoustic gap (0 = the same)."""
        want, got = self.phones(phrase), self.phones(heard)
        return edit_distance(want, got) / max(len(want), 1) + 0.25 * max(gap, 0.0)

    def phones(self, text: str) -> list[str]:
        """The dictionary's phones for ``text`` (a word it lacks counts as one unknown phone)."""
        out: list[str] = []
        for word in text.split():
            found = self._decoder.lookup_word(word)
            out += found.split() if found else [f"?{word}"]
        return out

    def _pass(self, search: str, raw: bytes) -> _Pass:
        d = self._decoder
        d.activate_search(search)
        d.start_utt()
        d.process_raw(raw, full_utt=True)
        d.end_utt()
        hyp = d.hyp()
        segments = list(d.seg() or [])
        total, underflow = 0.0, False
        # the final </s> repeats the score of the word before it; leave it out
        for seg in segments[:-1] if segments and segments[-1].word == "</s>" else segments:
            if seg.ascore <= 0.0:  # the likelihood underflowed a double: no comparison possible
                underflow = True
                break
            total += math.log(seg.ascore)
        words = [w for w in (hyp.hypstr.split() if hyp is not None else []) if not w.startswith(_FILLERS)]
        return _Pass(" ".join(words), total if segments and not underflow else None,
                     float(hyp.prob) if hyp is not None else 0.0, d.n_frames())

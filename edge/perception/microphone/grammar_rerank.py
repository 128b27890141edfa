"""The companion's grammar as a re-ranker for a recognizer that takes no prompt (Moonshine).

Moonshine writes free speech better than Whisper tiny.en but, with nothing telling it the
robot's name and verbs, it writes "High pet." for "hi pip" and "Star" for "stop". A grammar
that answers with its own phrases would invent commands nobody gave ("front left" became
"turn to the left pip" with pocketsphinx's). So the grammar only proposes: the few phrases
nearest to what the recognizer wrote (by spelling, rapidfuzz) are each written the way the
recognizer writes ("Hi, Pip."), and the recognizer's own model scores them against the same
audio. A phrase replaces the transcript only when the model finds it almost as likely as its
own first choice: within ``margin`` nats of log-probability over the whole sentence. On the
sentences the margin was chosen on (bench/mic.py's), phrases Moonshine misspelled scored 0.5-5
nats below its own text, the nearest phrase to speech that was no phrase 13 nats and more;
docs/microphone.md has the figures on sentences it was not chosen on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from edge.perception.microphone.phrases import PhraseGrammar, normalize_text

QUESTION_STARTS = frozenset(
    "what who how where why when which are is am do does did can could will would should may shall".split())


@dataclass(frozen=True)
class RerankConfig:
    margin: float = 6.0         # nats a phrase may score below the recognizer's own text and still win
    candidates: int = 3         # nearest phrases scored by the model
    min_similarity: float = 50  # rapidfuzz ratio (0-100) a phrase needs to be scored at all
    max_words: int = 8          # longer transcripts are free speech: left alone


@dataclass(frozen=True)
class Reranked:
    text: str                   # what goes out: the phrase as written, or the recognizer's own text
    phrase: str | None          # the grammar phrase chosen, None when the recognizer's text stayed
    gap: float | None           # the recognizer's score minus the best phrase's (nats); None: none scored


class GrammarReranker:
    """Proposes grammar phrases near a transcript; the caller's ``score`` decides."""

    def __init__(self, grammar: PhraseGrammar, config: RerankConfig | None = None):
        self.grammar = grammar
        self.config = config or RerankConfig()
        self.sentences = grammar.sentences()
        self.names = frozenset(w for n in grammar.names + ("robot",) for w in n.split())

    def nearest(self, heard: str) -> list[str]:
        """Up to ``candidates`` phrases spelled most like ``heard`` (normalized words)."""
        from rapidfuzz import fuzz, process

        found = process.extract(heard, self.sentences, scorer=fuzz.ratio, limit=self.config.candidates,
                                score_cutoff=self.config.min_similarity)
        return [phrase for phrase, _, _ in found]

    def written(self, phrase: str) -> str:
        """The phrase as a recognizer that writes sentences would: "hi pip" -> "Hi, Pip."."""
        words = phrase.split()
        out: list[str] = []
        for i, word in enumerate(words):
            name = word in self.names and word != "robot"
            text = word.capitalize() if name or i == 0 else word
            if name and i == len(words) - 1 and i > 0 and out:
                out[-1] += ","                      # "Good job, Pip."
            out.append(text)
            if name and i == 0 and len(words) > 1:
                out[-1] += ","                      # "Pip, look down."
        end = "?" if words and words[0] in QUESTION_STARTS else "."
        return " ".join(out) + end

    def rerank(self, text: str, own_score: float, score: Callable[[str], float]) -> Reranked:
        """``text`` as the recognizer wrote it, ``own_score`` its log-probability, ``score`` the
        log-probability the same model gives another text for the same audio."""
        heard = normalize_text(text)
        if not heard or len(heard.split()) > self.config.max_words or self.grammar.complete(heard):
            return Reranked(text, None, None)
        best: tuple[float, str, str] | None = None
        for phrase in self.nearest(heard):
            written = self.written(phrase)
            value = score(written)
            if best is None or value > best[0]:
                best = (value, phrase, written)
        if best is None:
            return Reranked(text, None, None)
        gap = own_score - best[0]
        if gap <= self.config.margin:
            return Reranked(best[2], best[1], gap)
        return Reranked(text, None, gap)

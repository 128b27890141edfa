"""Tool retrieval: offer the model only the actions that matter for this input (OpenStarry §6 B).

A companion with many actions cannot put every schema in every prompt: a small model's context
fills up and its choice gets worse with each extra option. The rankers score each tool against
the input (the perception text, the user's words); ``choose_tools`` is the brain's policy on top
(docs/runtime.md, "Tool retrieval"), ``select_tools`` the plain top-N.

Rankers (``scores(query, documents) -> list[float]``; embedding rankers also take several texts
per tool through ``passage_scores``):

* ``OnnxEmbeddingRanker`` (``edge/providers/embedding_onnx.py``), the default when its model has
  been fetched: multilingual sentence embeddings on onnxruntime, no torch. It links inputs that
  share meaning but no words with a tool ("it's so dark in here" -> the light, "Say cheese!" ->
  the camera), in English and Japanese. A tool's texts are its name and description with its
  parameters' descriptions, plus an example sentence per ``x-sentences`` template; its score is
  the best of them.
* ``Bm25Ranker``, the fallback (no model, no numpy): Okapi BM25 over each tool's name,
  description, parameters and examples. Written here (~40 lines) instead of using
  ``rank-bm25``: that package pulls numpy, has not changed since 2022, and its IDF turns
  negative for words in more than half of the documents; the variant here (Lucene's
  ``log(1 + (N - n + .5)/(n + .5))``) is never negative. Latin words are split on case and
  underscores (``turnOnLight``), lightly stemmed (``lamps``/``lamp``, ``waving``/``wave``) and
  stripped of a few English filler words; Chinese, Japanese and Korean text has no spaces, so
  it is indexed as overlapping character bigrams (``電気をつけて`` -> 電気 気を をつ つけ けて),
  as Lucene's CJK analyzer does. 0.25 ms for 40 tools, 7 ms for 1,000 (2 cores, cached).

``COMPANION_RETRIEVAL`` = ``auto`` (default: ONNX when available, else BM25), ``onnx`` or ``bm25``
chooses; the log says which was picked and why. Ties keep the tools' original order, so the
same input always offers the same tools.
"""

from __future__ import annotations

import functools
import json
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from edge import environment
from edge.log import get_logger
from edge.providers.base import Tool

log = get_logger(__name__)

NAME_WEIGHT = 2             # a tool's name words count twice (BM25): they say what it does most directly
KEEP_ALWAYS = ("speak",)    # the companion's voice: the answer to any input no other tool fits
RETRIEVAL_ENV = "COMPANION_RETRIEVAL"
MAX_QUERY_CHARS = 1000   # a long JSON body says what it is in its first few hundred characters


@runtime_checkable
class Ranker(Protocol):
    """Scores each document's relevance to the query; higher is more relevant."""

    def scores(self, query: str, documents: Sequence[str]) -> list[float]: ...


Examples = Mapping[str, Sequence[str]]     # action name -> sentences a user would say for it


@runtime_checkable
class PassageRanker(Protocol):
    """A ranker that scores a tool by several texts (its description and its examples)."""

    def passage_scores(self, query: str, passages: Sequence[Sequence[str]]) -> list[float]: ...


# -- selection -------------------------------------------------------------------------------


def select_tools(tools: Sequence[Tool], query: str, top_n: int, always: Iterable[str] = (),
                 *, ranker: Ranker | None = None, examples: Examples | None = None) -> list[Tool]:
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
    scores = rank(tools, query, ranker, examples)
    ranked = sorted((i for i in range(len(tools)) if i not in pinned), key=lambda i: (-scores[i], i))
    chosen = pinned | set(ranked[:top_n])
    return [tool for i, tool in enumerate(tools) if i in chosen]


def choose_tools(tools: Sequence[Tool], query: str, max_tools: int, event_actions: Iterable[str] = (),
                 *, keep: Iterable[str] = KEEP_ALWAYS, ranker: Ranker | None = None,
                 examples: Examples | None = None) -> list[Tool]:
    """The brain's choice: at most ``max_tools`` tools, in their original order.

    Places go first to the tools in ``keep`` (``speak``), then to the perception's event
    actions, then to the rest; within each group the ranker's order decides. So an event's
    actions are all offered while they fit, and when an event offers more than ``max_tools``
    the ones the ranker puts first are kept. ``keep`` tools are kept even past the limit.
    ``examples`` are sentences a user would say for an action (``sentence_examples``)."""
    if max_tools < 0:
        raise ValueError(f"max_tools must be >= 0, got {max_tools}")
    tools = list(tools)
    if len(tools) <= max_tools:
        return tools
    kept, events = set(keep), set(event_actions)
    scores = rank(tools, query, ranker, examples)

    def place(i: int) -> tuple[int, float, int]:
        name = tools[i].name
        return (0 if name in kept else 1 if name in events else 2), -scores[i], i

    order = sorted(range(len(tools)), key=place)
    chosen = set(order[:max_tools]) | {i for i, t in enumerate(tools) if t.name in kept}
    return [tool for i, tool in enumerate(tools) if i in chosen]


def perception_query(title: str, body: Any, fmt: str = "text") -> str:
    """What a perception is matched by: a text body as it is (a prefix such as the prompt's
    ``input (text):`` only blurs an embedding), a structured one as the title and compact JSON,
    an image (base64) by its title alone; at most ``MAX_QUERY_CHARS``."""
    if fmt == "image":
        return title
    text = body if isinstance(body, str) else \
        f"{title}: {json.dumps(body, ensure_ascii=False, separators=(',', ':'), default=str)}"
    return text[:MAX_QUERY_CHARS]


def rank(tools: Sequence[Tool], query: str, ranker: Ranker | None = None,
         examples: Examples | None = None) -> list[float]:
    """Each tool's score for ``query``. A failing embedding ranker (a corrupt model file) is
    logged and replaced by BM25 for the rest of the process, so a turn never fails for it."""
    global _default
    ranker = ranker or default_ranker()
    said = examples or {}
    try:
        if isinstance(ranker, PassageRanker):
            scores = ranker.passage_scores(query, [tool_passages(t, said.get(t.name, ())) for t in tools])
        else:
            scores = ranker.scores(query, [tool_document(t, said.get(t.name, ())) for t in tools])
    except Exception as exc:
        if ranker is DEFAULT_RANKER:
            raise
        log.warning("retrieval.ranker_failed", ranker=type(ranker).__name__, error=repr(exc)[:200],
                    fallback="bm25")
        if ranker is _default:
            _default = DEFAULT_RANKER
        scores = DEFAULT_RANKER.scores(query, [tool_document(t, said.get(t.name, ())) for t in tools])
    if len(scores) != len(tools):
        raise ValueError(f"ranker returned {len(scores)} scores for {len(tools)} tools")
    return list(scores)


# -- what a tool is searched by --------------------------------------------------------------


def tool_document(tool: Tool, examples: Sequence[str] = ()) -> str:
    """BM25's text for a tool: its name (twice), description, each parameter's name,
    description and enum values (a gesture's ``wave``/``bow`` are often what the input says),
    and its example sentences."""
    name = " ".join(split_identifier(tool.name))
    parts = [name] * NAME_WEIGHT + [tool.description or ""]
    _schema_words(tool.parameters, parts, depth=0)
    parts.extend(examples)
    return "\n".join(p for p in parts if p)


def tool_passages(tool: Tool, examples: Sequence[str] = ()) -> list[str]:
    """An embedding ranker's texts for a tool: "name. description", the same followed by its
    parameters' descriptions and enum values, then each example sentence on its own. (The
    short text alone ranks best on bench/retrieval.py; parameters help where they carry the
    meaning, as a face's "happy sad angry" do, so both are kept and the better one counts.)"""
    head = f"{' '.join(split_identifier(tool.name))}. {tool.description or ''}".strip()
    details: list[str] = []
    _schema_words(tool.parameters, details, depth=0, names=False)
    full = " ".join([head, *(d.strip() for d in details if d and d.strip())])
    return list(dict.fromkeys([head, full, *examples]))


def _schema_words(schema: Any, out: list[str], depth: int, names: bool = True) -> None:
    if not isinstance(schema, dict) or depth > 3:
        return
    for key in ("title", "description"):
        if isinstance(schema.get(key), str) and depth > 0:
            out.append(schema[key])
    for value in schema.get("enum") or ():
        if isinstance(value, str):
            out.append(" ".join(split_identifier(value)))
    for prop, spec in (schema.get("properties") or {}).items():
        if names:
            out.append(" ".join(split_identifier(str(prop))))
        _schema_words(spec, out, depth + 1, names)
    _schema_words(schema.get("items"), out, depth + 1, names)


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
    cached by text; only the query is embedded on each call."""

    def __init__(self, encode: Encoder, cache_size: int = 4096):
        self._encode = encode
        self._cache: dict[str, Any] = {}
        self._cache_size = cache_size

    def _units(self, texts: list[str]) -> Any:
        import numpy as np
        vectors = np.asarray(self._encode(texts), dtype=np.float32).reshape(len(texts), -1)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms > 0, norms, 1.0)

    def passage_scores(self, query: str, passages: Sequence[Sequence[str]]) -> list[float]:
        import numpy as np
        wanted = list(dict.fromkeys(t for texts in passages for t in texts))
        missing = [t for t in wanted if t not in self._cache]
        if missing:
            if len(self._cache) + len(missing) > self._cache_size:
                self._cache.clear()
                missing = wanted
            self._cache.update(zip(missing, self._units(missing)))
        if not wanted:
            return [-1.0] * len(passages)
        q = self._units([query])[0]
        sims = dict(zip(wanted, (np.stack([self._cache[t] for t in wanted]) @ q).tolist()))
        return [max((sims[t] for t in texts), default=-1.0) for texts in passages]

    def scores(self, query: str, documents: Sequence[str]) -> list[float]:
        return self.passage_scores(query, [[d] for d in documents])


_default: Ranker | None = None


def default_ranker() -> Ranker:
    """The ranker ``$COMPANION_RETRIEVAL`` asks for (``auto`` when unset), chosen once per
    process and logged: ONNX embeddings when available, else BM25."""
    global _default
    if _default is None:
        _default = pick_ranker((environment.value(RETRIEVAL_ENV) or "auto").lower())
        log.info("retrieval.ranker", kind="bm25" if _default is DEFAULT_RANKER else "onnx",
                 model=str(getattr(_default, "model_path", "")) or None)
    return _default


def reset_default_ranker() -> None:
    """Forget the chosen ranker (tests; after fetching the model in a running process)."""
    global _default
    _default = None


def pick_ranker(kind: str = "auto") -> Ranker:
    """``bm25``, ``onnx`` (raises when the runtime or model is missing) or ``auto``."""
    if kind == "bm25":
        return DEFAULT_RANKER
    if kind not in ("onnx", "auto"):
        raise ValueError(f"unknown ranker {kind!r} (from ${RETRIEVAL_ENV}?); expected auto, onnx or bm25")
    from edge.providers.embedding_onnx import MODEL_NAME, load_onnx_ranker
    ranker = load_onnx_ranker()
    if ranker is None and kind == "onnx":
        raise RuntimeError("the ONNX ranker needs onnxruntime, onnxruntime-extensions and its model "
                           f"(pip install onnxruntime onnxruntime-extensions; companion models fetch {MODEL_NAME})")
    return ranker or DEFAULT_RANKER

"""Tool retrieval: offer the model only the actions that matter for this input (OpenStarry §6 B).

A companion with many actions cannot put every schema in every prompt: a small model's context
fills up and its choice gets worse with each extra option. The rankers (``rankers.py``:
``scores(query, documents) -> list[float]``; embedding rankers also take several texts per tool
through ``passage_scores``) score each tool against the input (the perception text, the user's
words); ``choose_tools`` is the brain's policy on top (docs/runtime.md, "Tool retrieval"),
``select_tools`` the plain top-N. A tool's texts are its name and description with its
parameters' descriptions, plus an example sentence per ``x-sentences`` template; an embedding
ranker scores it by the best of them.

robot.toml's ``[brain] retrieval`` chooses the ranker (``ranker_choice.py``). Ties keep the tools'
original order, so the same input always offers the same tools.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from edge.brain.ranker_choice import default_ranker, fall_back
from edge.brain.rankers import DEFAULT_RANKER, PassageRanker, Ranker, split_identifier
from edge.log import get_logger
from edge.providers.base import Tool

log = get_logger(__name__)

NAME_WEIGHT = 2             # a tool's name words count twice (BM25): they say what it does most directly
KEEP_ALWAYS = ("speak",)    # the voice (the brain passes the companion's own): the answer to any input no other tool fits
MAX_QUERY_CHARS = 1000   # a long JSON body says what it is in its first few hundred characters

Examples = Mapping[str, Sequence[str]]     # action name -> sentences a user would say for it


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
        fall_back(ranker)
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

"""Structured-output decisions for models without native tool calling.

A small local model (SmolLM2-135M through llama.cpp) has no tool support in its chat template,
so the provider constrains its output with a JSON Schema grammar instead. Every reply is then
exactly one *decision*, a compact JSON object:

    {"action": "<action name>", "params": {...}}    one of the offered actions
    {"action": "none"}                               deliberately do nothing
    {"action": "none", "reason": "<= 80 chars"}      ... optionally saying why (kept for logs)

Why this shape: the action name comes first, so the model commits to *what* before *how*, and
each ``anyOf`` branch ties ``params`` to that action's own schema. No free "thought" field (on a
135M model ~8 ms a token, no better choice); a plain ``{"action":"none"}`` costs ~5 tokens.

The schema is plain JSON Schema (draft 2020-12 subset), usable by any structured-output API.
Action schemas are reduced to the keywords grammar converters honour: unknown keywords made
llguidance (llama.cpp's default converter) log an error and then decode *unconstrained*, and
a string without ``maxLength`` let the model ramble until ``max_tokens`` cut the JSON short.
Number ``minimum``/``maximum`` are kept (llguidance enforces them, GBNF ignores them); the brain,
not ``parse_decision``, validates params against the full schema and feeds violations back.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from edge.protocol.action_names import SPEECH_ACTIONS
from edge.protocol.speech_action import spoken_action_of
from edge.providers.base import ContentSegment, ProviderResponse, Tool, ToolCall
from edge.providers.decision_parse import NO_ACTION, parse_decision

__all__ = ["NO_ACTION", "Speech", "as_words", "decision_budget", "decision_prompt", "decision_schema", "grammar_schema",
           "map_spoken", "parse_decision", "parse_reply", "speech_grammar", "speech_of", "words_schema"]

DEFAULT_MAX_STRING = 160   # chars; a spoken line or two. Only applied where the action sets none.
DEFAULT_MAX_ITEMS = 8
REASON_MAX = 80

# Keywords copied as they are (after recursion where they hold schemas).
_SCALAR_KEYWORDS = ("type", "enum", "const", "maxLength", "minLength", "minimum", "maximum",
                    "exclusiveMinimum", "exclusiveMaximum", "minItems", "maxItems")


def grammar_schema(schema: Any, max_string: int = DEFAULT_MAX_STRING) -> dict[str, Any]:
    """Reduce one action's params schema to what grammar converters handle, bounded in length.

    Kept: type, properties, required, enum, const, string/array/number bounds, items, anyOf
    (oneOf becomes anyOf). Objects with properties get ``additionalProperties: false``
    (llguidance otherwise lets the model invent keys). Dropped: description, title, format,
    pattern, $ref and everything else (they either break the grammar or only inform humans).
    """
    if not isinstance(schema, Mapping):
        return {}
    out: dict[str, Any] = {k: schema[k] for k in _SCALAR_KEYWORDS if k in schema}
    branches = schema.get("anyOf", schema.get("oneOf"))
    if isinstance(branches, list) and branches:
        out["anyOf"] = [grammar_schema(b, max_string) for b in branches]
    props = schema.get("properties")
    if isinstance(props, Mapping):
        out["properties"] = {str(k): grammar_schema(v, max_string) for k, v in props.items()}
        required = schema.get("required")
        if isinstance(required, list):
            out["required"] = [r for r in required if r in out["properties"]]
        out["additionalProperties"] = False
    items = schema.get("items")
    if isinstance(items, Mapping):
        out["items"] = grammar_schema(items, max_string)
    types = out.get("type")
    types = types if isinstance(types, list) else [types]
    if "string" in types and "maxLength" not in out and "enum" not in out and "const" not in out:
        out["maxLength"] = max(max_string, out.get("minLength", 0))
    if "array" in types and "maxItems" not in out:
        out["maxItems"] = max(DEFAULT_MAX_ITEMS, out.get("minItems", 0))
    return out


def decision_schema(tools: Iterable[Tool], max_string: int = DEFAULT_MAX_STRING,
                    allow_none: bool = True) -> dict[str, Any]:
    """A JSON Schema whose instances are exactly one decision: one offered action or (unless
    ``allow_none`` is off) none."""
    branches: list[dict[str, Any]] = []
    for tool in tools:
        if tool.name == NO_ACTION:
            raise ValueError(f"an action may not be named {NO_ACTION!r}: that name means 'no action'")
        params = grammar_schema(tool.parameters, max_string)
        params.setdefault("type", "object")
        branches.append(_object({"action": {"const": tool.name}, "params": params}, ["action", "params"]))
    if allow_none or not branches:
        branches.append(_object({"action": {"const": NO_ACTION},
                                 "reason": {"type": "string", "maxLength": REASON_MAX}}, ["action"]))
    return {"anyOf": branches}


def decision_budget(tools: Iterable[Tool], max_string: int = DEFAULT_MAX_STRING) -> int:
    """Enough ``max_tokens`` for the longest legal decision among ``tools``, so a reply is never cut
    off mid-grammar (a fixed 96 could not hold a legal Japanese ``speak``).

    Per action: the JSON around it plus each parameter at its largest; a string counts its
    ``maxLength`` characters at one token each when they may be Japanese/Chinese (Qwen and
    SmolLM2 spend about one token per kana or kanji) and at 1/3 token each otherwise; we cannot
    know the language in advance, so a string may be either: the budget takes the larger.
    """
    def cost(schema: Any) -> int:
        if not isinstance(schema, Mapping):
            return 4
        if "enum" in schema or "const" in schema:
            return 6
        types = schema.get("type")
        types = types if isinstance(types, list) else [types]
        if "string" in types:
            return 4 + int(schema.get("maxLength", max_string))
        if "object" in types or "properties" in schema:
            props = schema.get("properties")
            fields = props.values() if isinstance(props, Mapping) else ()
            return 4 + sum(4 + cost(v) for v in fields)
        if "array" in types:
            return 4 + int(schema.get("maxItems", DEFAULT_MAX_ITEMS)) * (1 + cost(schema.get("items")))
        return 6     # a number, boolean or null
    longest = max((8 + len(t.name) + cost(grammar_schema(t.parameters, max_string)) for t in tools), default=0)
    return max(longest, 16 + REASON_MAX)


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def decision_prompt(tools: Iterable[Tool], speech: "Speech | None" = None) -> str:
    """The lines appended to the system text so the model knows what it may do, and what every
    parameter means: ``- look(x, y, z): Turn the head.`` then one line per parameter with its range
    and the companion file's own description (``x -1..1: your left (-1) to right (1)``). Without
    the descriptions a model cannot know which way is left (issue 11: "look left" turned right).

    The text depends only on the tools, so a brain that offers the same actions for every
    perception keeps this whole block in llama.cpp's prompt cache.
    """
    lines = ["Pick the best action for the situation. Actions:"]
    for tool in tools:
        props = _properties(tool.parameters)
        lines.append(f"- {tool.name}({', '.join(props)}): {_first_sentence(tool.description)}")
        for name, spec in props.items():
            hint = _param_hint(spec)
            described = _first_sentence(str(spec.get("description") or ""), 120)
            if described or hint:
                lines.append(f"    {name}{' ' + hint if hint else ''}{': ' + described if described else ''}")
    lines.append(f"- {NO_ACTION}: do nothing (when nothing calls for an action)")
    if speech is not None:
        lines.append(f"To {speech.action}, reply with just the words to say. For anything else, reply with one "
                     'JSON decision: {"action": NAME, "params": {...}}.')
    else:
        lines.append('Reply with one JSON decision: {"action": NAME, "params": {...}}.')
    return "\n".join(lines)


def _properties(schema: Any) -> dict[str, Mapping[str, Any]]:
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(props, Mapping):
        return {}
    return {str(k): (v if isinstance(v, Mapping) else {}) for k, v in props.items()}


def _param_hint(spec: Mapping[str, Any]) -> str:
    """A parameter's range in a few characters: ``-1..1``, ``1..5``, ``a|b|c``, ``<= 120 chars``."""
    if "minimum" in spec and "maximum" in spec:   # first: a range narrowed by an enum reads the same
        return f"{spec['minimum']}..{spec['maximum']}"
    if isinstance(spec.get("enum"), list):
        return "|".join(str(v) for v in spec["enum"][:6])
    if "maxLength" in spec:
        return f"(text, at most {spec['maxLength']} characters)"
    if spec.get("type") == "string":
        return "(text)"
    return ""


def _first_sentence(text: str, limit: int = 80) -> str:
    text = " ".join((text or "").split())
    for stop in (". ", "。"):
        if stop in text:
            text = text.split(stop, 1)[0] + stop.strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."


# -- speech as plain text -----------------------------------------------------------------------


@dataclass(frozen=True)
class Speech:
    """The companion's speech action (``speak`` with one required text parameter), which a model
    may answer with plain words instead of a JSON decision.

    Why: a small chat model answers a question in words far more reliably than it picks
    ``"action":"speak"`` inside JSON (measured on Qwen2.5-Coder-0.5B: questions answered in words
    instead of a ``look`` copied from an example; docs/embedded-model.md). Commands still come as
    JSON decisions, held to their schemas by the same grammar.
    """

    action: str
    param: str
    max_chars: int
    min_chars: int = 1
    japanese: bool = False     # the action is described in Japanese: words start in Japanese

    def call(self, text: str) -> ToolCall:
        return ToolCall(name=self.action, args={self.param: text})


_KANA = re.compile(r"[\u3040-\u30ff]")
# Kanji and full-width marks are Chinese as much as Japanese ("抱歉，我无法..." passed as Japanese):
# Japanese words show a kana within their first few characters (after a kanji name: "麻布麻衣です").
_KANJI_LEAD = 6
_JAPANESE_OPENING = "(?:[\\u4e00-\\u9fff]{0,%d}[\\u3040-\\u30ff])" % _KANJI_LEAD
# Words hold no JSON: with speech only offered as words, the 0.5B model still tried to write its
# decision, and '"params":{}}' was said aloud. Braces, brackets and double quotes (and their
# full-width forms) are not part of anything a companion says.
_WORD_CHARS = '[^\\n{}\\[\\]"\\uff02\\uff3b\\uff3d\\uff5b\\uff5d]'


def map_spoken(response: ProviderResponse, change: Callable[[str], str],
               voices: Collection[str] = SPEECH_ACTIONS) -> ProviderResponse:
    """``response`` with ``change`` applied to every string argument of its speech calls (those
    named in ``voices``: the companion's, edge/protocol/speech_action.py; ids kept); the same
    object when nothing changed."""
    segments: list[ContentSegment] = []
    changed = False
    for segment in response.segments:
        call = segment.tool_call
        if segment.type == "tool_call" and call is not None and call.name in voices:
            args = {k: change(v) if isinstance(v, str) else v for k, v in call.args.items()}
            if args != call.args:
                segment = ContentSegment(type="tool_call", tool_call=ToolCall(call.name, args, call.id))
                changed = True
        segments.append(segment)
    return ProviderResponse(segments=segments, metadata=response.metadata) if changed else response


def speech_of(tools: Iterable[Tool], max_string: int = DEFAULT_MAX_STRING) -> Speech | None:
    """The offered speech action, if one fits: the tools' voice (``speak``/``say``, or the one
    the file marks or shapes as its voice: edge/protocol/speech_action.py) with exactly one
    parameter, required, free text."""
    tools = list(tools)
    voice = spoken_action_of((t.name, t.description, t.parameters) for t in tools)
    tool = next((t for t in tools if voice is not None and t.name == voice.name), None)
    if tool is None or not isinstance(tool.parameters, Mapping):
        return None
    props = _properties(tool.parameters)
    required = tool.parameters.get("required") or []
    if len(props) == 1 and list(props) == list(required):
        name, spec = next(iter(props.items()))
        if spec.get("type") == "string" and "enum" not in spec and "const" not in spec:
            described = f"{tool.description} {spec.get('description', '')}"
            return Speech(tool.name, name, int(spec.get("maxLength", max_string)),
                          max(1, int(spec.get("minLength", 1))), _KANA.search(described) is not None)
    return None


def speech_grammar(schema: dict[str, Any] | None, speech: Speech | None, compact: dict[str, Any]) -> str:
    """An llguidance grammar: one JSON decision, or (with ``speech``) one line of words to say that
    does not start like JSON, bounded by the speech parameter's length. ``schema`` None: words only
    (a person spoke and only speech is offered)."""
    if speech is None:
        if schema is None:
            raise ValueError("a grammar needs a decision schema or a speech action")
        return "%llguidance {}\nstart: " + "%json " + json.dumps({**schema, "x-guidance": compact})
    rest = max(0, speech.max_chars - 1)
    least = max(0, speech.min_chars - 1)
    # A companion described in Japanese starts its words in Japanese (else: "How can I assist you today?");
    if speech.japanese:   # its opening may take _KANJI_LEAD characters more: within maxLength still
        first, rest, least = _JAPANESE_OPENING, max(0, rest - _KANJI_LEAD), max(0, least - _KANJI_LEAD)
    else:
        first = '[^{\\s\\["]'
    words = f"words: /{first}{_WORD_CHARS}{{{least},{rest}}}/\n"
    if schema is None:
        return "%llguidance {}\nstart: words\n" + words
    decision = "%json " + json.dumps({**schema, "x-guidance": compact})
    return ("%llguidance {}\nstart: decision | words\n"
            f"decision: {decision}\n" + words)


def words_schema(tools: Iterable[Tool], speech: Speech, allow_none: bool, max_string: int = DEFAULT_MAX_STRING) -> dict[str, Any] | None:
    """The JSON side of a grammar that also takes words: every offered action but speech, which
    only comes as words (so a Japanese companion's speech always starts in Japanese: a JSON
    ``speak`` let the 0.5B model answer "I'm sorry, but I can't help with that."). None when
    nothing is left for it (only speech offered, and no "none": a person is answered)."""
    others = [t for t in tools if t.name != speech.action]
    if not others and not allow_none:
        return None
    return decision_schema(others, max_string, allow_none)


def parse_reply(raw: str, tools: Iterable[Tool | str] | Mapping[str, Any], speech: Speech | None) -> ProviderResponse:
    """A decision (see ``parse_decision``), or, when it does not start like JSON and a speech
    action is offered, the words to say as a call of that action."""
    text = raw.strip() if isinstance(raw, str) else raw
    if speech is not None and isinstance(text, str) and text and text[0] not in "{[`\"":
        if len(text) >= speech.max_chars - 1:        # stopped by the length cap: end on a whole sentence
            ends = [i for i, ch in enumerate(text) if ch in ".!?。！？"]
            text = text[:ends[-1] + 1] if ends and ends[-1] >= speech.min_chars - 1 else text
        return ProviderResponse(segments=[ContentSegment(type="tool_call", tool_call=speech.call(text))],
                                metadata={"finish_reason": "tool_use", "decision": speech.action, "spoken": True})
    return parse_decision(raw, tools)


def as_words(decision_json: str, speech: Speech | None) -> str:
    """A demonstrated decision as the model should write it: a JSON speak decision becomes its
    plain words when the model may answer in words (so examples show the format it will use)."""
    if speech is None:
        return decision_json
    try:
        value = json.loads(decision_json)
    except ValueError:
        return decision_json
    if isinstance(value, dict) and value.get("action") == speech.action and isinstance(value.get("params"), dict):
        words = value["params"].get(speech.param)
        if isinstance(words, str) and words.strip():
            return words.strip()
    return decision_json

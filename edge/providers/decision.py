"""Structured-output decisions for models without native tool calling.

A small local model (SmolLM2-135M through llama.cpp) has no tool support in its chat template,
so the provider constrains its output with a JSON Schema grammar instead. Every reply is then
exactly one *decision*, a compact JSON object:

    {"action": "<action name>", "params": {...}}    one of the offered actions
    {"action": "none"}                               deliberately do nothing
    {"action": "none", "reason": "<= 80 chars"}      ... optionally saying why (kept for logs)

Why this shape: the action name comes first, so the model commits to *what* before *how*, and
each ``anyOf`` branch ties ``params`` to that action's own schema. There is no free "thought"
field: on a 135M model it costs ~8 ms per token and does not improve the choice, and the
``reason`` of a no-action is optional, so a plain ``{"action":"none"}`` costs ~5 tokens.

The schema is plain JSON Schema (draft 2020-12 subset), usable by any structured-output API.
Action schemas are reduced to the keywords grammar converters honour: unknown keywords made
llguidance (llama.cpp's default converter) log an error and then decode *unconstrained*, and
a string without ``maxLength`` let the model ramble until ``max_tokens`` cut the JSON short.
Number ``minimum``/``maximum`` are kept (llguidance enforces them, the GBNF converter ignores
them); ``parse_decision`` never checks them: the brain validates params against the action's
full schema and feeds violations back to the model.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from edge.providers.base import ContentSegment, ProviderResponse, Tool, ToolCall

NO_ACTION = "none"
DEFAULT_MAX_STRING = 160   # chars; a spoken line or two. Only applied where the action sets none.
DEFAULT_MAX_ITEMS = 8
REASON_MAX = 80
RAW_EXCERPT = 200          # how much of an unparsable reply an error segment quotes

# Keywords copied as they are (after recursion where they hold schemas).
_SCALAR_KEYWORDS = ("type", "enum", "const", "maxLength", "minLength", "minimum", "maximum",
                    "exclusiveMinimum", "exclusiveMaximum", "minItems", "maxItems")


def _tool_names(tools: Iterable[Tool | str] | Mapping[str, Any]) -> list[str]:
    """Accept the tools as a list of ``Tool``, a list of names, or a name->tool map (OpenStarry)."""
    return [t if isinstance(t, str) else t.name for t in tools]


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


def decision_schema(tools: Iterable[Tool], max_string: int = DEFAULT_MAX_STRING) -> dict[str, Any]:
    """A JSON Schema whose instances are exactly one decision: one offered action or none."""
    branches: list[dict[str, Any]] = []
    for tool in tools:
        if tool.name == NO_ACTION:
            raise ValueError(f"an action may not be named {NO_ACTION!r}: that name means 'no action'")
        params = grammar_schema(tool.parameters, max_string)
        params.setdefault("type", "object")
        branches.append(_object({"action": {"const": tool.name}, "params": params}, ["action", "params"]))
    branches.append(_object({"action": {"const": NO_ACTION},
                             "reason": {"type": "string", "maxLength": REASON_MAX}}, ["action"]))
    return {"anyOf": branches}


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def decision_prompt(tools: Iterable[Tool]) -> str:
    """The few lines appended to the system text so a small model knows what it may do.

    Measured on SmolLM2-135M: a plain ``- name(args): what it does`` list picked sensible
    actions more often than JSON examples (which it copied verbatim) or longer instructions.
    """
    lines = ["Pick the best action for the situation. Actions:"]
    for tool in tools:
        lines.append(f"- {tool.name}({_param_hint(tool.parameters)}): {_first_sentence(tool.description)}")
    lines.append(f"- {NO_ACTION}: do nothing")
    lines.append("Reply in JSON.")
    return "\n".join(lines)


def _param_hint(schema: Any) -> str:
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(props, Mapping):
        return ""
    hints = []
    for name, spec in props.items():
        spec = spec if isinstance(spec, Mapping) else {}
        if isinstance(spec.get("enum"), list):
            hints.append(f"{name}: {'|'.join(str(v) for v in spec['enum'][:6])}")
        elif "minimum" in spec and "maximum" in spec:
            hints.append(f"{name} {spec['minimum']}..{spec['maximum']}")
        else:
            hints.append(str(name))
    return ", ".join(hints)


def _first_sentence(text: str, limit: int = 80) -> str:
    text = " ".join((text or "").split())
    for stop in (". ", "。"):
        if stop in text:
            text = text.split(stop, 1)[0]
    return text if len(text) <= limit else text[: limit - 3] + "..."


# -- parsing ---------------------------------------------------------------------------------


class _Unparsable(Exception):
    pass


def parse_decision(raw: str, tools: Iterable[Tool | str] | Mapping[str, Any]) -> ProviderResponse:
    """Turn a model's raw reply into segments; a reply that is not a decision becomes an
    ``error`` segment naming the problem and quoting the reply, never a silent empty call.

    Lenient only where remote models commonly wrap output: one surrounding Markdown code fence.
    Extra top-level keys (a "thought" some model adds) are ignored; params are not checked
    against the action's schema here (the brain does that, with feedback to the model).
    """
    names = _tool_names(tools)
    meta: dict[str, Any] = {}
    try:
        decision = _load_object(raw)
        action = decision.get("action")
        if not isinstance(action, str):
            raise _Unparsable(f'"action" must be a string naming an action, got {json.dumps(action)}')
        if action == NO_ACTION and NO_ACTION not in names:
            meta.update(finish_reason="end_turn", decision=NO_ACTION)
            reason = decision.get("reason")
            if isinstance(reason, str) and reason.strip():
                meta["reason"] = reason.strip()
            return ProviderResponse(segments=[], metadata=meta)
        if action not in names:
            offered = ", ".join([*names, NO_ACTION])
            raise _Unparsable(f"unknown action {action!r} (offered: {offered})")
        params = decision.get("params", {})
        if not isinstance(params, dict):
            raise _Unparsable(f'"params" of {action!r} must be an object, got {_json_type(params)}')
    except _Unparsable as exc:
        segment = ContentSegment(type="error", text=f"{exc}; raw output: {_excerpt(raw)}")
        return ProviderResponse(segments=[segment], metadata={"finish_reason": "error"})
    call = ToolCall(name=action, args=params)
    return ProviderResponse(segments=[ContentSegment(type="tool_call", tool_call=call)],
                            metadata={"finish_reason": "tool_use", "decision": action})


def _load_object(raw: str) -> dict[str, Any]:
    if not isinstance(raw, str):
        raise _Unparsable(f"expected text, got {type(raw).__name__}")
    text = _strip_fence(raw.strip())
    if not text:
        raise _Unparsable("empty reply")
    try:
        value, end = json.JSONDecoder().raw_decode(text)
    except json.JSONDecodeError as exc:
        cut = exc.pos >= len(text) - 1 or exc.msg.startswith("Unterminated string")
        where = "(the reply is cut off)" if cut else f"at char {exc.pos}"
        raise _Unparsable(f"not JSON: {exc.msg} {where}") from None
    if text[end:].strip():
        raise _Unparsable(f"extra text after the JSON decision at char {end}")
    if not isinstance(value, dict):
        raise _Unparsable(f"expected a JSON object, got {_json_type(value)}")
    return value


def _strip_fence(text: str) -> str:
    if text.startswith("```") and text.endswith("```") and len(text) >= 6:
        body = text[3:-3]
        first_newline = body.find("\n")
        if first_newline != -1 and body[:first_newline].strip().isalnum():
            body = body[first_newline + 1:]   # drop a language tag such as ```json
        return body.strip()
    return text


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string",
            list: "an array", dict: "an object"}.get(type(value), type(value).__name__)


def _excerpt(raw: Any) -> str:
    text = raw if isinstance(raw, str) else repr(raw)
    if len(text) > RAW_EXCERPT:
        text = text[:RAW_EXCERPT] + f"... ({len(text)} chars)"
    return json.dumps(text, ensure_ascii=False)

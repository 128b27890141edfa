"""A model's reply read as one decision (``{"action": ..., "params": {...}}``), or an ``error``
segment that names what was wrong and quotes the reply: never a silent empty call. The
decision's shape and grammar are in decision.py; this is the reading, shared by every provider."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from edge.providers.base import ContentSegment, ProviderResponse, Tool, ToolCall

NO_ACTION = "none"
RAW_EXCERPT = 200          # how much of an unparsable reply an error segment quotes


def _tool_names(tools: Iterable[Tool | str] | Mapping[str, Any]) -> list[str]:
    """Accept the tools as a list of ``Tool``, a list of names, or a name->tool map (OpenStarry)."""
    return [t if isinstance(t, str) else t.name for t in tools]



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

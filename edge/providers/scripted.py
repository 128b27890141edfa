"""The ``scripted`` provider: replays prepared replies, for tests, demos and benches.

A script is a JSON array or JSON Lines (blank lines and lines starting with ``#`` skipped);
each ``generate`` call consumes the next item:

    {"segments": [...], "metadata": {...}}             a full ProviderResponse (its to_json shape)
    {"action": "speak", "params": {"text": "hi"}}      one tool call (params default to {})
    {"text": "..."}                                    a text reply
    {"none": true}                                     no action (empty segments, end_turn)
    {"raw": "<model output>"}                          parsed by parse_decision against the
                                                       offered tools, as a real model reply would be
    {"error": {"code": "E2001", "message": "..."}}     generate raises ProviderError

Any item may add ``"metadata": {...}``. Shorthand actions are *not* checked against the offered
tools, so a test can hand the brain an unknown action on purpose; ``raw`` items are.
Every call is recorded in ``calls`` as ``(prompt, context)`` so tests can assert on what the
brain sent; only the last ``keep_calls`` are kept, so a looping script in a soak or a demo does
not grow without bound. With ``delay_s=0`` nothing sleeps (a latency bench measures the rest of the stack).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from edge.providers.base import (ContentSegment, ProviderContext, ProviderError, ProviderResponse,
                                 ToolCall)
from edge.providers.decision import parse_decision

_SEGMENT_TYPES = {"text", "image", "audio", "video", "ui", "tool_call", "error"}
_KINDS = ("segments", "action", "text", "none", "raw", "error")


class ScriptError(ValueError):
    """A script that cannot be replayed; the message names the file and the line (or item)."""


class ScriptedProvider:
    """Replays a script item by item; thread-safe, so several brains may share one."""

    def __init__(self, path_or_items: str | Path | Sequence[dict[str, Any]], delay_s: float = 0.0,
                 loop: bool = False, keep_calls: int = 1000):
        if isinstance(path_or_items, (str, Path)):
            self.source = str(path_or_items)
            self.items = load_script(path_or_items)
        else:
            self.source = "<items>"
            self.items = [_check_item(item, f"{self.source} item {i + 1}") for i, item in enumerate(path_or_items)]
        self.name = f"scripted:{self.source}"
        self.delay_s = delay_s
        self.loop = loop
        self.calls: list[tuple[str, ProviderContext]] = []
        self.call_count = 0
        self.keep_calls = keep_calls
        self._next = 0
        self._lock = threading.Lock()

    @property
    def remaining(self) -> int:
        return len(self.items) - self._next

    def generate(self, prompt: str, context: ProviderContext) -> ProviderResponse:
        started = time.perf_counter()
        with self._lock:
            # A snapshot, cheap: the brain reuses one context and swaps in longer histories.
            self.calls.append((prompt, dataclasses.replace(context, tools=list(context.tools),
                                                           history=list(context.history))))
            del self.calls[:-self.keep_calls]
            self.call_count += 1
            if self._next >= len(self.items):
                if not self.loop or not self.items:
                    raise ProviderError("E1001", f"script {self.source} is exhausted: all {len(self.items)} "
                                                 f"replies used, call {self.call_count} has none left")
                self._next = 0
            index = self._next
            self._next += 1
        if self.delay_s:
            time.sleep(self.delay_s)
        response = _reply(self.items[index], context)
        meta = {"model": "scripted", "provider": "scripted", "item": index + 1}
        meta.setdefault("finish_reason", "tool_use" if response.tool_calls else "end_turn")
        meta.update(response.metadata)
        meta["latency_s"] = round(time.perf_counter() - started, 6)
        response.metadata = meta
        return response

    def close(self) -> None:
        pass


def load_script(path: str | Path) -> list[dict[str, Any]]:
    """Read a JSON array or JSON Lines file of items, checking each, with file:line errors."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScriptError(f"{path}: cannot read script: {exc.strerror or exc}") from None
    if text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ScriptError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None
        if not isinstance(data, list) or not data:
            raise ScriptError(f"{path}: a JSON script must be a non-empty array of items")
        return [_check_item(item, f"{path} item {i + 1}") for i, item in enumerate(data)]
    items = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ScriptError(f"{path}:{number}: invalid JSON: {exc.msg} at column {exc.colno}") from None
        items.append(_check_item(item, f"{path}:{number}"))
    if not items:
        raise ScriptError(f"{path}: the script has no items")
    return items


def _check_item(item: Any, where: str) -> dict[str, Any]:
    """Reject what replay would choke on, at load time, so a bad script fails before the run."""
    if not isinstance(item, dict):
        raise ScriptError(f"{where}: an item must be a JSON object, got {type(item).__name__}")
    kinds = [k for k in _KINDS if k in item]
    if len(kinds) != 1:
        found = ", ".join(kinds) or "none of them"
        raise ScriptError(f"{where}: an item needs exactly one of {', '.join(_KINDS)} (found {found})")
    kind = kinds[0]
    if "metadata" in item and not isinstance(item["metadata"], dict):
        raise ScriptError(f"{where}: metadata must be an object")
    try:
        if kind == "segments":
            _segments(item["segments"])
        elif kind == "action":
            if not isinstance(item["action"], str) or not isinstance(item.get("params", {}), dict):
                raise ValueError('"action" must be a string and "params" an object')
        elif kind in ("text", "raw") and not isinstance(item[kind], str):
            raise ValueError(f'"{kind}" must be a string')
        elif kind == "error":
            error = item["error"]
            if not isinstance(error, dict) or not isinstance(error.get("code"), str) \
                    or not isinstance(error.get("message", ""), str):
                raise ValueError('"error" must be {"code": "E....", "message": "..."}')
    except (ValueError, TypeError, KeyError) as exc:
        raise ScriptError(f"{where}: {exc}") from None
    return item


def _reply(item: dict[str, Any], context: ProviderContext) -> ProviderResponse:
    meta = dict(item.get("metadata") or {})
    if "error" in item:
        error = item["error"]
        raise ProviderError(error["code"], error.get("message", "scripted error"),
                            retryable=error.get("retryable"), fallbackable=error.get("fallbackable"),
                            retry_after=error.get("retry_after"))
    if "segments" in item:
        return ProviderResponse(segments=_segments(item["segments"]), metadata=meta)
    if "action" in item:
        call = ToolCall(name=item["action"], args=copy.deepcopy(item.get("params", {})))
        return ProviderResponse(segments=[ContentSegment(type="tool_call", tool_call=call)], metadata=meta)
    if "text" in item:
        return ProviderResponse(segments=[ContentSegment(type="text", text=item["text"])], metadata=meta)
    if "raw" in item:
        response = parse_decision(item["raw"], context.tools)
        response.metadata = {**response.metadata, "raw": item["raw"], **meta}
        return response
    return ProviderResponse(segments=[], metadata={"decision": "none", **meta})


def _segments(data: Any) -> list[ContentSegment]:
    """ContentSegment.to_json's shape back to segments (a fresh tool-call id when none given)."""
    if not isinstance(data, list):
        raise ValueError('"segments" must be an array')
    out = []
    for i, seg in enumerate(data):
        if not isinstance(seg, dict) or seg.get("type") not in _SEGMENT_TYPES:
            raise ValueError(f"segment {i}: needs a type, one of {', '.join(sorted(_SEGMENT_TYPES))}")
        call = None
        if seg["type"] == "tool_call":
            tc = seg.get("toolCall")
            if not isinstance(tc, dict) or not isinstance(tc.get("name"), str) \
                    or not isinstance(tc.get("args", {}), dict):
                raise ValueError(f'segment {i}: a tool_call needs "toolCall": {{"name": str, "args": object}}')
            call = ToolCall(name=tc["name"], args=copy.deepcopy(tc.get("args", {})))
            if tc.get("id"):
                call.id = str(tc["id"])
        out.append(ContentSegment(type=seg["type"], text=seg.get("text"), data=seg.get("data"),
                                  mime_type=seg.get("mimeType"), tool_call=call, ui=seg.get("ui")))
    return out

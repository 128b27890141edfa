"""The AI-Protocol's normalized streaming events, and how a stream becomes a ProviderResponse.

Every streaming provider yields these and nothing else, whatever its API sends on the wire
(SSE, NDJSON, JSON chunks). ``collect`` folds a stream into the same ``ProviderResponse`` that
``generate`` returns, so a provider implements streaming once and gets ``generate`` for free.
Tool-call arguments arrive as JSON text in pieces; when the joined text is not valid JSON the
call becomes an ``error`` segment that quotes it (never a silent ``{}``).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Iterator, Union

from edge.providers.base import ContentSegment, ProviderError, ProviderResponse, ToolCall


@dataclass
class PartialContentDelta:
    text: str
    type: str = field(default="PartialContentDelta", init=False)


@dataclass
class ThinkingDelta:
    text: str
    type: str = field(default="ThinkingDelta", init=False)


@dataclass
class ToolCallStarted:
    index: int
    id: str
    name: str
    type: str = field(default="ToolCallStarted", init=False)


@dataclass
class PartialToolCall:
    index: int
    arguments_delta: str
    type: str = field(default="PartialToolCall", init=False)


@dataclass
class ToolCallEnded:
    index: int
    type: str = field(default="ToolCallEnded", init=False)


@dataclass
class Metadata:
    model: str | None = None
    usage: dict[str, int] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    type: str = field(default="Metadata", init=False)


@dataclass
class StreamEnd:
    finish_reason: str = "end_turn"
    type: str = field(default="StreamEnd", init=False)


@dataclass
class StreamError:
    error: dict[str, Any]
    type: str = field(default="StreamError", init=False)


StreamEvent = Union[PartialContentDelta, ThinkingDelta, ToolCallStarted, PartialToolCall, ToolCallEnded,
                    Metadata, StreamEnd, StreamError]


def event_json(event: StreamEvent) -> dict[str, Any]:
    data = asdict(event)
    return {"type": data.pop("type"), **{k: v for k, v in data.items() if v not in (None, {}, [])}}


@dataclass
class _OpenCall:
    id: str
    name: str
    arguments: list[str] = field(default_factory=list)
    position: int = 0


def collect(events: Iterable[StreamEvent]) -> ProviderResponse:
    """Fold a stream into a ProviderResponse, keeping text and tool calls in stream order.
    A StreamError raises the ProviderError it carries."""
    segments: list[ContentSegment] = []
    open_calls: dict[int, _OpenCall] = {}
    metadata: dict[str, Any] = {}
    for event in events:
        if isinstance(event, PartialContentDelta):
            if segments and segments[-1].type == "text":
                segments[-1].text = (segments[-1].text or "") + event.text
            else:
                segments.append(ContentSegment(type="text", text=event.text))
        elif isinstance(event, ThinkingDelta):
            metadata["thinking"] = metadata.get("thinking", "") + event.text
        elif isinstance(event, ToolCallStarted):
            open_calls[event.index] = _OpenCall(event.id, event.name, position=len(segments))
            segments.append(ContentSegment(type="tool_call"))  # placeholder, filled at the end
        elif isinstance(event, PartialToolCall):
            if event.index in open_calls:
                open_calls[event.index].arguments.append(event.arguments_delta)
        elif isinstance(event, ToolCallEnded):
            call = open_calls.pop(event.index, None)
            if call is not None:
                segments[call.position] = finish_tool_call(call.id, call.name, "".join(call.arguments))
        elif isinstance(event, Metadata):
            if event.model:
                metadata["model"] = event.model
            if event.usage:
                metadata["usage"] = event.usage
            extra = dict(event.extra)
            for error in extra.pop("errors", None) or []:  # parse failures travel as metadata in a stream
                segments.append(ContentSegment(type="error", text=str(error)))
            metadata.update(extra)
        elif isinstance(event, StreamEnd):
            metadata["finish_reason"] = event.finish_reason
        elif isinstance(event, StreamError):
            err = event.error
            raise ProviderError(err.get("code", "E9999"), err.get("message", "stream failed"),
                                retry_after=err.get("retry_after"), status=err.get("status"))
    for call in open_calls.values():  # a stream that ended without closing its calls
        segments[call.position] = finish_tool_call(call.id, call.name, "".join(call.arguments))
    return ProviderResponse(segments=[s for s in segments if s.type != "tool_call" or s.tool_call or s.text],
                            metadata=metadata)


def finish_tool_call(call_id: str, name: str, arguments: str | dict | None) -> ContentSegment:
    """A tool_call segment from its arguments as JSON text (or an already parsed object);
    arguments that are not a JSON object become an error segment naming the tool."""
    if isinstance(arguments, dict):
        return ContentSegment(type="tool_call", tool_call=ToolCall(name=name, args=arguments, id=call_id))
    text = (arguments or "").strip() or "{}"
    try:
        args = json.loads(text)
    except json.JSONDecodeError as exc:
        return ContentSegment(type="error", text=f"tool call {name!r} ({call_id}) has arguments that are not "
                                                 f"valid JSON ({exc.msg} at column {exc.colno}): {text[:200]}")
    if not isinstance(args, dict):
        return ContentSegment(type="error", text=f"tool call {name!r} ({call_id}) has arguments that are not "
                                                 f"a JSON object: {text[:200]}")
    return ContentSegment(type="tool_call", tool_call=ToolCall(name=name, args=args, id=call_id))


def replay(response: ProviderResponse) -> Iterator[StreamEvent]:
    """A finished response as a stream, for providers without native streaming."""
    index = 0
    for seg in response.segments:
        if seg.type == "text" and seg.text:
            yield PartialContentDelta(seg.text)
        elif seg.type == "tool_call" and seg.tool_call:
            yield ToolCallStarted(index, seg.tool_call.id, seg.tool_call.name)
            yield PartialToolCall(index, json.dumps(seg.tool_call.args, ensure_ascii=False))
            yield ToolCallEnded(index)
            index += 1
    meta = response.metadata
    extra = {k: v for k, v in meta.items() if k not in ("model", "usage", "finish_reason", "errors")}
    if response.errors:  # the event set has no error segment: carry them in the metadata
        extra["errors"] = response.errors
    yield Metadata(model=meta.get("model"), usage=meta.get("usage"), extra=extra)
    yield StreamEnd(meta.get("finish_reason", "tool_use" if response.tool_calls else "end_turn"))

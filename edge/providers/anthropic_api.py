"""The ``anthropic`` provider: Claude models through the Messages API (``POST /v1/messages``).

SPEC ``anthropic:MODEL[@URL]``; the key comes from ``ANTHROPIC_API_KEY`` (``x-api-key``).
Upstream: the system text is the top-level ``system``; tools become
``{name, description, input_schema}`` (full JSON Schema is accepted as it is); ``max_tokens``
is required by the API, so it defaults to ``DEFAULT_MAX_TOKENS``; ``temperature`` is clamped to
the API's 0..1 (the standard range is 0..2). There is no JSON response mode, so a
``response_format`` becomes one instruction line in the system text. Tool use is native and
reliable on every Claude model, so the ``structured`` decision mode is not offered here.

Downstream: ``text`` / ``tool_use`` / ``thinking`` blocks, in the order given; ``refusal``
is ``content_filter``. Streaming reads the named SSE events (message_start, content_block_*,
message_delta, message_stop, ping, error); an ``error`` event inside a 200 stream is classified
by its type like an HTTP error (``overloaded_error`` -> E3002 and so on).
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from typing import Any, Iterable, Iterator

import httpx

from edge.log import get_logger
from edge.providers.base import ContentSegment, ProviderContext, ProviderError, ProviderResponse, Tool
from edge.providers.errors import code_for_status, prefer_status
from edge.providers.events import (Metadata, PartialContentDelta, PartialToolCall, StreamEnd, StreamEvent,
                                   ThinkingDelta, ToolCallEnded, ToolCallStarted, finish_tool_call)
from edge.providers.http import DEFAULT_TIMEOUT_S, HttpApi, parse_chunk
from edge.providers.remote_request import api_key, check_cancel, conversation, pick

log = get_logger(__name__)

DEFAULT_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
KEY_ENV = ("ANTHROPIC_API_KEY",)
DEFAULT_MAX_TOKENS = 1024
MESSAGES_PATH = "/v1/messages"

_ERROR_TYPES = {
    "invalid_request_error": "E1001", "authentication_error": "E1002", "permission_error": "E1003",
    "not_found_error": "E1004", "request_too_large": "E1005", "rate_limit_error": "E2001",
    "billing_error": "E2002", "api_error": "E3001", "overloaded_error": "E3002", "timeout_error": "E3003",
}

_FINISH = {"end_turn": "end_turn", "max_tokens": "max_tokens", "stop_sequence": "stop_sequence",
           "tool_use": "tool_use", "refusal": "content_filter", "pause_turn": "end_turn",
           "model_context_window_exceeded": "max_tokens"}


def error_code(error_type: str | None, message: str, status: int | None) -> str:
    """An Anthropic error type (and its message and HTTP status) -> a standard code."""
    return prefer_status(_type_code(error_type, message, status), status, message)


def _type_code(error_type: str | None, message: str, status: int | None) -> str:
    """The code the error type names. The generic types (``invalid_request_error``, ``api_error``)
    yield to a specific HTTP status in ``prefer_status``; two messages refine them: an empty
    credit balance is reported as ``invalid_request_error`` (HTTP 400) but is a quota that
    waiting will not fix, and a prompt over the context window is a request that is too large.
    """
    if error_type == "invalid_request_error":
        if "credit balance" in message.lower():
            return "E2002"
        return code_for_status(400, message)
    if error_type == "rate_limit_error":
        return code_for_status(429, message)   # E2001, or E2002 when the message is about quota
    if error_type in _ERROR_TYPES:
        return _ERROR_TYPES[error_type]
    return code_for_status(status, message) if status else "E9999"


class _AnthropicHttp(HttpApi):
    """HttpApi that classifies a failed status by the error type in Anthropic's body."""

    def error_for_response(self, response: httpx.Response) -> ProviderError:
        base = super().error_for_response(response)
        error_type = None
        try:
            body = json.loads(response.content)
            error_type = body.get("error", {}).get("type") if isinstance(body, dict) else None
        except (ValueError, AttributeError):
            pass
        code = error_code(error_type if isinstance(error_type, str) else None, base.message, response.status_code)
        return ProviderError(code, base.message, retry_after=base.retry_after, status=base.status,
                             provider=self.provider)


class AnthropicProvider:
    """Claude through the Messages API; ``generate`` is one request, ``stream`` reads SSE."""

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 timeout_s: float = DEFAULT_TIMEOUT_S, structured: bool = False,
                 temperature: float | None = None, max_tokens: int | None = None):
        self.model = model
        self.name = f"anthropic:{model}"
        self.base_url = (base_url or DEFAULT_URL).rstrip("/")
        self.official_host = base_url is None or self.base_url == DEFAULT_URL
        self.timeout_s = timeout_s
        self.temperature = temperature
        self.max_tokens = max_tokens
        self._explicit_key = api_key
        self._api: HttpApi | None = None
        self._lock = threading.Lock()
        if structured:
            log.info("anthropic.structured_ignored", provider=self.name,
                     reason="native tool use is used on every Claude model")

    # -- plumbing ---------------------------------------------------------------------------

    def _http(self) -> HttpApi:
        """The HTTP client, made on first use so a missing key fails the call (E1002), not the
        construction: in a fallback chain the next provider can then take over."""
        with self._lock:
            if self._api is None:
                key = api_key(self._explicit_key, KEY_ENV, self.official_host, self.name)
                headers = {"anthropic-version": API_VERSION, "content-type": "application/json"}
                if key:
                    headers["x-api-key"] = key
                self._api = _AnthropicHttp(self.name, self.base_url, headers, self.timeout_s)
            return self._api

    def close(self) -> None:
        with self._lock:
            if self._api is not None:
                self._api.close()
                self._api = None

    # -- upstream ---------------------------------------------------------------------------

    def request_body(self, prompt: str, context: ProviderContext, stream: bool = False) -> dict[str, Any]:
        """The Messages API request for this prompt and context."""
        system, turns = conversation(context, prompt)
        instruction = _format_instruction(context.response_format)
        if instruction:
            system = f"{system}\n\n{instruction}" if system else instruction
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": pick(context.max_tokens, self.max_tokens) or DEFAULT_MAX_TOKENS,
            "messages": [{"role": t.role, "content": t.parts[0] if len(t.parts) == 1
                          else [{"type": "text", "text": p} for p in t.parts]} for t in turns],
        }
        if system:
            body["system"] = system
        temperature = pick(context.temperature, self.temperature)
        if temperature is not None:
            body["temperature"] = min(max(float(temperature), 0.0), 1.0)
        if context.top_p is not None:
            body["top_p"] = context.top_p
        if context.stop:
            body["stop_sequences"] = list(context.stop)
        if context.tools:
            body["tools"] = [_tool(t) for t in context.tools]
            choice = _tool_choice(context.tool_choice, context.tools, self.name)
            if choice is not None:
                body["tool_choice"] = choice
        if stream:
            body["stream"] = True
        return body

    # -- calls ------------------------------------------------------------------------------

    def generate(self, prompt: str, context: ProviderContext) -> ProviderResponse:
        check_cancel(context.cancel, self.name)
        api = self._http()
        started = time.monotonic()
        data = api.post_json(MESSAGES_PATH, self.request_body(prompt, context), timeout_s=context.timeout_s)
        check_cancel(context.cancel, self.name)
        return self._response(data, time.monotonic() - started)

    def stream(self, prompt: str, context: ProviderContext) -> Iterator[StreamEvent]:
        check_cancel(context.cancel, self.name)
        api = self._http()
        started = time.monotonic()
        pairs = api.stream_sse(MESSAGES_PATH, self.request_body(prompt, context, stream=True),
                               timeout_s=context.timeout_s, cancel=context.cancel)
        yield from self._events(pairs, started)

    # -- downstream -------------------------------------------------------------------------

    def _response(self, data: dict[str, Any], latency_s: float) -> ProviderResponse:
        """A non-streaming Message -> segments in block order (thinking goes to metadata)."""
        if data.get("type") == "error":
            raise self._stream_error(data)
        blocks = data.get("content")
        if not isinstance(blocks, list):
            raise ProviderError("E9999", f"{self.name} answered without a content list: {str(data)[:200]}",
                                provider=self.name)
        segments: list[ContentSegment] = []
        thinking: list[str] = []
        for block in blocks:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text" and block.get("text"):
                if segments and segments[-1].type == "text":
                    segments[-1].text = (segments[-1].text or "") + block["text"]
                else:
                    segments.append(ContentSegment(type="text", text=block["text"]))
            elif kind == "tool_use":
                segments.append(finish_tool_call(block.get("id") or str(uuid.uuid4()), block.get("name") or "?",
                                                 _arguments(block.get("input"))))
            elif kind == "thinking" and block.get("thinking"):
                thinking.append(block["thinking"])
        has_calls = any(s.type == "tool_call" for s in segments)
        metadata: dict[str, Any] = {"model": data.get("model") or self.model, "usage": _usage(data.get("usage")),
                                    "latency_s": round(latency_s, 4),
                                    "finish_reason": _finish(data.get("stop_reason"), has_calls)}
        if thinking:
            metadata["thinking"] = "".join(thinking)
        return ProviderResponse(segments=segments, metadata=metadata)

    def _events(self, pairs: Iterable[tuple[str, str]], started: float) -> Iterator[StreamEvent]:
        """Named SSE events -> normalized events; Metadata + StreamEnd once message_stop arrives."""
        model, stop_reason = self.model, None
        usage: dict[str, Any] = {}
        tool_blocks: set[int] = set()
        any_calls = stopped = False
        for event, data in pairs:
            if event == "ping" or stopped:
                continue
            payload = parse_chunk(data, self.name, f"{event or 'SSE'} event")
            if not isinstance(payload, dict):
                raise ProviderError("E9999", f"{self.name} sent a {event or 'SSE'} event that is not a JSON "
                                             f"object: {data[:200]!r}", provider=self.name)
            kind = payload.get("type") or event
            index = payload.get("index", 0)
            if kind == "error":
                raise self._stream_error(payload)
            if kind == "message_start":
                message = payload.get("message") or {}
                model = message.get("model") or model
                usage.update(message.get("usage") or {})
            elif kind == "content_block_start":
                block = payload.get("content_block") or {}
                if block.get("type") == "tool_use":
                    tool_blocks.add(index)
                    any_calls = True
                    yield ToolCallStarted(index, block.get("id") or str(uuid.uuid4()), block.get("name") or "?")
                    if block.get("input"):   # the API starts with {} and streams the JSON; a proxy may not
                        given = block["input"]
                        yield PartialToolCall(index, given if isinstance(given, str) else json.dumps(given))
                elif block.get("type") == "text" and block.get("text"):
                    yield PartialContentDelta(block["text"])
                elif block.get("type") == "thinking" and block.get("thinking"):
                    yield ThinkingDelta(block["thinking"])
            elif kind == "content_block_delta":
                delta = payload.get("delta") or {}
                if delta.get("type") == "text_delta" and delta.get("text"):
                    yield PartialContentDelta(delta["text"])
                elif delta.get("type") == "input_json_delta":
                    yield PartialToolCall(index, delta.get("partial_json") or "")
                elif delta.get("type") == "thinking_delta" and delta.get("thinking"):
                    yield ThinkingDelta(delta["thinking"])
            elif kind == "content_block_stop":
                if index in tool_blocks:
                    tool_blocks.discard(index)
                    yield ToolCallEnded(index)
            elif kind == "message_delta":
                stop_reason = (payload.get("delta") or {}).get("stop_reason") or stop_reason
                usage.update(payload.get("usage") or {})
            elif kind == "message_stop":
                stopped = True   # read on to the end of the body so the connection is released cleanly
        if not stopped:
            raise ProviderError("E3001", f"{self.name} stream ended before message_stop (connection cut?)",
                                provider=self.name)
        yield Metadata(model=model, usage=_usage(usage), extra={"latency_s": round(time.monotonic() - started, 4)})
        yield StreamEnd(_finish(stop_reason, any_calls))

    def _stream_error(self, payload: dict[str, Any]) -> ProviderError:
        raw = payload.get("error")
        error: dict[str, Any] = raw if isinstance(raw, dict) else {}
        error_type = error.get("type") if isinstance(error.get("type"), str) else None
        message = str(error.get("message") or "no message")
        return ProviderError(error_code(error_type, message, None),
                             f"{self.name} reported an error: {message} ({error_type or 'no type'})",
                             provider=self.name)


def _tool(tool: Tool) -> dict[str, Any]:
    """A tool in Anthropic's shape; ``input_schema`` must be an object schema, so one is made
    when the action declares no parameters."""
    schema = dict(tool.parameters) if isinstance(tool.parameters, dict) else {}
    schema.setdefault("type", "object")
    if schema["type"] == "object":
        schema.setdefault("properties", {})
    return {"name": tool.name, "description": tool.description or "", "input_schema": schema}


def _tool_choice(choice: str | dict[str, Any] | None, tools: list[Tool],
                 provider: str) -> dict[str, Any] | None:
    if choice is None:
        return None
    if isinstance(choice, dict) and isinstance(choice.get("name"), str):
        if choice["name"] not in {t.name for t in tools}:
            raise ProviderError("E1001", f"{provider}: tool_choice names {choice['name']!r}, which is not an "
                                         f"offered tool", provider=provider)
        return {"type": "tool", "name": choice["name"]}
    mapped = {"auto": "auto", "required": "any", "any": "any", "none": "none"}.get(choice) \
        if isinstance(choice, str) else None
    if mapped is None:
        raise ProviderError("E1001", f"{provider}: unknown tool_choice {choice!r} "
                                     f"(expected auto, required, none or {{'name': TOOL}})", provider=provider)
    return {"type": mapped}


def _format_instruction(response_format: dict[str, Any] | None) -> str | None:
    """The Messages API has no JSON mode: ask for JSON in words (the caller validates)."""
    if not response_format:
        return None
    if response_format.get("type") == "json_schema":
        schema = response_format.get("schema") or (response_format.get("json_schema") or {}).get("schema")
        if schema:
            return ("Reply with only one JSON object and no other text. It must match this JSON Schema: "
                    + json.dumps(schema, ensure_ascii=False, separators=(",", ":")))
    if response_format.get("type") in ("json_schema", "json_object"):
        return "Reply with only one JSON object and no other text."
    return None


def _arguments(value: Any) -> str | dict[str, Any]:
    """Tool input as given: an object stays one; anything else is JSON text that
    ``finish_tool_call`` turns into an error segment if it is not an object."""
    if isinstance(value, (dict, str)):
        return value
    return json.dumps(value)


def _usage(raw: Any) -> dict[str, int]:
    """Anthropic counts cached prompt tokens apart; the standard prompt_tokens includes them."""
    raw = raw if isinstance(raw, dict) else {}
    prompt = sum(int(raw.get(k) or 0) for k in ("input_tokens", "cache_creation_input_tokens",
                                                "cache_read_input_tokens"))
    return {"prompt_tokens": prompt, "completion_tokens": int(raw.get("output_tokens") or 0)}


def _finish(stop_reason: Any, has_calls: bool) -> str:
    if isinstance(stop_reason, str) and stop_reason in _FINISH:
        return _FINISH[stop_reason]
    return "tool_use" if has_calls else "end_turn"


def build(model: str, base_url: str | None, options: dict[str, Any]) -> AnthropicProvider:
    """The factory's entry point for ``anthropic:MODEL[@URL][?timeout=&temperature=&max_tokens=]``."""
    return AnthropicProvider(model, base_url, timeout_s=options.get("timeout", DEFAULT_TIMEOUT_S),
                             structured=options.get("structured", False),
                             temperature=options.get("temperature"), max_tokens=options.get("max_tokens"))

"""The ``gemini`` provider: Google's Generative Language API (``models/MODEL:generateContent``).

SPEC ``gemini:MODEL[@URL]``; the key comes from ``GEMINI_API_KEY`` or ``GOOGLE_API_KEY`` and
travels in the ``x-goog-api-key`` header (never in the URL, where it would end up in logs).
Upstream: turns are ``contents`` of role user/model with text ``parts``; the system text is
``systemInstruction``; tools are ``functionDeclarations`` whose parameters are cleaned to
Gemini's Schema subset (``gemini_schema``); tool_choice is ``toolConfig.functionCallingConfig``
(AUTO / ANY / NONE, ``allowedFunctionNames`` for one tool); the standard parameters go to
``generationConfig`` (temperature, maxOutputTokens, topP, stopSequences, and
responseMimeType + responseSchema for a ``response_format``).

Structured mode (``structured`` on, tools given): no function declarations; the reply is
constrained by ``responseSchema`` = the decision schema and parsed by ``parse_decision``.

Downstream: a reply (and every chunk of ``:streamGenerateContent?alt=sse``) is a
GenerateContentResponse; the first candidate's parts become text / tool calls in order (a
functionCall has no id before Gemini 3: a UUID is made), ``thought`` parts go to thinking.
``finishReason`` STOP is ``tool_use`` when calls were made (Gemini has no reason of its own for
that) and ``end_turn`` otherwise, stop sequences included (Gemini reports those as STOP too).
``MALFORMED_FUNCTION_CALL`` and its kin finish with ``error`` and, from ``generate``, an error
segment the brain can feed back. Errors are classified by their ``status`` name, see
``error_code``.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

import httpx

from edge.providers.base import ContentSegment, ProviderContext, ProviderError, ProviderResponse, Tool
from edge.providers.decision import decision_prompt, decision_schema, parse_decision
from edge.providers.errors import code_for_status, prefer_status
from edge.providers.events import (Metadata, PartialContentDelta, PartialToolCall, StreamEnd, StreamEvent,
                                   ThinkingDelta, ToolCallEnded, ToolCallStarted, collect, replay)
from edge.providers.gemini_schema import function_parameters, gemini_schema
from edge.providers.http import DEFAULT_TIMEOUT_S, HttpApi, parse_chunk
from edge.providers.remote_request import api_key, check_cancel, conversation, pick

DEFAULT_URL = "https://generativelanguage.googleapis.com"
API_VERSION = "v1beta"
KEY_ENV = ("GEMINI_API_KEY", "GOOGLE_API_KEY")

_STATUS_CODES = {
    "INVALID_ARGUMENT": "E1001", "FAILED_PRECONDITION": "E1001", "OUT_OF_RANGE": "E1001",
    "UNIMPLEMENTED": "E1001", "UNAUTHENTICATED": "E1002", "PERMISSION_DENIED": "E1003", "NOT_FOUND": "E1004",
    "RESOURCE_EXHAUSTED": "E2001", "ABORTED": "E4001", "ALREADY_EXISTS": "E4001", "CANCELLED": "E4002",
    "INTERNAL": "E3001", "UNKNOWN": "E3001", "DATA_LOSS": "E3001", "UNAVAILABLE": "E3002",
    "DEADLINE_EXCEEDED": "E3003",
}
_QUOTA_HINTS = ("perday", "per day", "daily", "depleted")
_TOO_LARGE_HINTS = ("exceeds the maximum number of tokens", "input token count")

_FILTERED = {"SAFETY", "RECITATION", "LANGUAGE", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY"}
_BROKEN_CALL = {"MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS"}


# -- errors ---------------------------------------------------------------------------------


def error_code(error: dict[str, Any], http_status: int | None = None) -> str:
    """A Google RPC error body (``{"code", "message", "status", "details"}``) -> a standard code.

    Two statuses need a closer look. A wrong key is ``400 INVALID_ARGUMENT`` with reason
    ``API_KEY_INVALID``: that is authentication. ``429 RESOURCE_EXHAUSTED`` says "exceeded your
    current quota" for per-minute limits too, so the message alone cannot tell rate from quota:
    a daily quota (``...PerDay...`` quota id) or depleted credits is E2002, the rest E2001.
    """
    message = str(error.get("message") or "")
    status = error.get("status") if isinstance(error.get("status"), str) else None
    details = [d for d in error.get("details") or [] if isinstance(d, dict)]
    reasons = {d.get("reason") for d in details}
    if "API_KEY_INVALID" in reasons or "api key not valid" in message.lower():
        return "E1002"
    if status == "RESOURCE_EXHAUSTED" or (status is None and http_status == 429):
        quota_ids = " ".join(str(v.get("quotaId", "")) for d in details for v in d.get("violations") or []
                             if isinstance(v, dict))
        text = f"{message} {quota_ids}".lower()
        return "E2002" if any(hint in text for hint in _QUOTA_HINTS) else "E2001"
    if status == "INVALID_ARGUMENT" and (code_for_status(400, message) == "E1005"
                                         or any(h in message.lower() for h in _TOO_LARGE_HINTS)):
        return "E1005"
    if status in _STATUS_CODES:   # INVALID_ARGUMENT or UNKNOWN on a 401 is still authentication
        return prefer_status(_STATUS_CODES[status], http_status, message)
    if http_status:
        return code_for_status(http_status, message)
    return "E9999"


def retry_delay(error: dict[str, Any]) -> float | None:
    """Seconds from a ``google.rpc.RetryInfo`` detail (``"retryDelay": "34s"``), if any."""
    for detail in error.get("details") or []:
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("google.rpc.RetryInfo"):
            try:
                return max(0.0, float(str(detail.get("retryDelay", "")).rstrip("s")))
            except ValueError:
                return None
    return None


def _error_object(body: Any) -> dict[str, Any]:
    """The ``error`` object of a body (the non-SSE stream wraps it in a list)."""
    if isinstance(body, list) and body:
        body = body[0]
    error = body.get("error") if isinstance(body, dict) else None
    return error if isinstance(error, dict) else {}


class _GeminiHttp(HttpApi):
    """HttpApi that classifies a failed status by the RPC status name, with RetryInfo's delay."""

    def error_for_response(self, response: httpx.Response) -> ProviderError:
        base = super().error_for_response(response)
        try:
            error = _error_object(json.loads(response.content))
        except ValueError:
            error = {}
        retry_after = base.retry_after if base.retry_after is not None else retry_delay(error)
        return ProviderError(error_code(error, response.status_code), base.message, retry_after=retry_after,
                             status=base.status, provider=self.provider)


# -- the provider -----------------------------------------------------------------------------


@dataclass
class _Reply:
    """What the chunks of one reply have said so far."""

    model: str
    usage: dict[str, int] = field(default_factory=dict)
    finish: str | None = None
    finish_message: str | None = None
    calls: int = 0


class GeminiProvider:
    """Gemini through generateContent / streamGenerateContent (SSE)."""

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 timeout_s: float = DEFAULT_TIMEOUT_S, structured: bool = False,
                 temperature: float | None = None, max_tokens: int | None = None):
        self.model = model.removeprefix("models/")
        self.name = f"gemini:{self.model}"
        self.base_url = (base_url or DEFAULT_URL).rstrip("/")
        self.official_host = base_url is None or self.base_url == DEFAULT_URL
        self.timeout_s = timeout_s
        self.structured = structured
        self.temperature = temperature
        self.max_tokens = max_tokens
        self._explicit_key = api_key
        self._api: HttpApi | None = None
        self._lock = threading.Lock()

    def _http(self) -> HttpApi:
        """Made on first use, so a missing key fails the call (E1002) and a chain can fall back."""
        with self._lock:
            if self._api is None:
                key = api_key(self._explicit_key, KEY_ENV, self.official_host, self.name)
                headers = {"x-goog-api-key": key} if key else {}
                self._api = _GeminiHttp(self.name, self.base_url, headers, self.timeout_s)
            return self._api

    def close(self) -> None:
        with self._lock:
            if self._api is not None:
                self._api.close()
                self._api = None

    def _structured(self, context: ProviderContext) -> bool:
        return bool(pick(context.structured, self.structured)) and bool(context.tools)

    def _path(self, method: str) -> str:
        return f"/{API_VERSION}/models/{self.model}:{method}"

    # -- upstream ---------------------------------------------------------------------------

    def request_body(self, prompt: str, context: ProviderContext) -> dict[str, Any]:
        """The GenerateContentRequest for this prompt and context (the same for streaming)."""
        system, turns = conversation(context, prompt)
        structured = self._structured(context)
        if structured:
            system = f"{system}\n\n{decision_prompt(context.tools)}" if system else decision_prompt(context.tools)
        body: dict[str, Any] = {"contents": [{"role": "model" if t.role == "assistant" else "user",
                                              "parts": [{"text": p} for p in t.parts]} for t in turns]}
        if system:
            body["systemInstruction"] = {"parts": [{"text": system}]}
        if context.tools and not structured:
            body["tools"] = [{"functionDeclarations": [_declaration(t) for t in context.tools]}]
            config = _calling_config(context.tool_choice, context.tools, self.name)
            if config is not None:
                body["toolConfig"] = {"functionCallingConfig": config}
        generation: dict[str, Any] = {}
        for key, value in (("temperature", pick(context.temperature, self.temperature)),
                           ("maxOutputTokens", pick(context.max_tokens, self.max_tokens)),
                           ("topP", context.top_p), ("stopSequences", list(context.stop or []) or None)):
            if value is not None:
                generation[key] = value
        if structured:
            generation["responseMimeType"] = "application/json"
            generation["responseSchema"] = gemini_schema(decision_schema(context.tools), ordered=True)
        elif context.response_format:
            generation.update(_response_format(context.response_format))
        if generation:
            body["generationConfig"] = generation
        return body

    # -- calls ------------------------------------------------------------------------------

    def generate(self, prompt: str, context: ProviderContext) -> ProviderResponse:
        check_cancel(context.cancel, self.name)
        api = self._http()
        started = time.monotonic()
        data = api.post_json(self._path("generateContent"), self.request_body(prompt, context),
                             timeout_s=context.timeout_s)
        check_cancel(context.cancel, self.name)
        response = collect(self._events([data], started, streamed=False))
        if response.metadata.get("finish_reason") == "error":
            detail = response.metadata.get("finish_detail", "the reply was rejected")
            response.segments.append(ContentSegment(type="error", text=f"{self.name}: {detail}"))
        return self._decide(response, context.tools) if self._structured(context) else response

    def stream(self, prompt: str, context: ProviderContext) -> Iterator[StreamEvent]:
        """Native streaming; in structured mode the JSON is collected and parsed first, then
        replayed as events (a half-written decision means nothing to a listener)."""
        check_cancel(context.cancel, self.name)
        api = self._http()
        started = time.monotonic()
        pairs = api.stream_sse(self._path("streamGenerateContent"), self.request_body(prompt, context),
                               timeout_s=context.timeout_s, cancel=context.cancel, params={"alt": "sse"})
        events = self._events((parse_chunk(data, self.name) for _, data in pairs), started, streamed=True)
        if self._structured(context):
            yield from replay(self._decide(collect(events), context.tools))
        else:
            yield from events

    # -- downstream -------------------------------------------------------------------------

    def _events(self, chunks: Iterable[Any], started: float, streamed: bool) -> Iterator[StreamEvent]:
        """GenerateContentResponse chunks -> normalized events, ending with Metadata + StreamEnd."""
        reply = _Reply(self.model)
        for chunk in chunks:
            if not isinstance(chunk, dict):
                raise ProviderError("E9999", f"{self.name} sent a chunk that is not a JSON object: "
                                             f"{str(chunk)[:200]}", provider=self.name)
            if "error" in chunk:
                error = _error_object(chunk)
                code = error_code(error, error.get("code") if isinstance(error.get("code"), int) else None)
                raise ProviderError(code, f"{self.name} reported an error: {error.get('message', chunk['error'])}"
                                          f" ({error.get('status', 'no status')})",
                                    retry_after=retry_delay(error), provider=self.name)
            yield from self._chunk_events(chunk, reply)
        if reply.finish is None:
            raise ProviderError("E3001" if streamed else "E9999",
                                f"{self.name} {'stream ended' if streamed else 'answered'} without a finishReason"
                                f"{' (connection cut?)' if streamed else ''}", provider=self.name)
        extra: dict[str, Any] = {"latency_s": round(time.monotonic() - started, 4)}
        if reply.finish_message:
            extra["finish_detail"] = reply.finish_message
        yield Metadata(model=reply.model, usage=reply.usage or None, extra=extra)
        yield StreamEnd(_normalized_finish(reply.finish, reply.calls > 0))

    def _chunk_events(self, chunk: dict[str, Any], reply: _Reply) -> Iterator[StreamEvent]:
        reply.model = chunk.get("modelVersion") or reply.model
        if isinstance(chunk.get("usageMetadata"), dict):
            reply.usage = _usage(chunk["usageMetadata"])
        blocked = (chunk.get("promptFeedback") or {}).get("blockReason")
        if blocked:
            reply.finish, reply.finish_message = "SAFETY", f"the prompt was blocked ({blocked})"
        candidates = chunk.get("candidates") or []
        candidate = candidates[0] if candidates and isinstance(candidates[0], dict) else {}
        for part in (candidate.get("content") or {}).get("parts") or []:
            if not isinstance(part, dict):
                continue
            if isinstance(part.get("text"), str) and part["text"]:
                yield ThinkingDelta(part["text"]) if part.get("thought") else PartialContentDelta(part["text"])
            elif isinstance(part.get("functionCall"), dict):
                call = part["functionCall"]
                index, reply.calls = reply.calls, reply.calls + 1
                yield ToolCallStarted(index, call.get("id") or str(uuid.uuid4()), call.get("name") or "?")
                yield PartialToolCall(index, _arguments(call.get("args")))
                yield ToolCallEnded(index)
        if candidate.get("finishReason"):
            reply.finish = str(candidate["finishReason"])
            if reply.finish in _BROKEN_CALL or reply.finish in _FILTERED:
                reply.finish_message = candidate.get("finishMessage") or f"finishReason {reply.finish}"

    def _decide(self, response: ProviderResponse, tools: list[Tool]) -> ProviderResponse:
        """Structured mode: the reply's text is one decision. The API's metadata is kept; its
        finish reason gives way to the decision's unless the reply was cut or filtered."""
        decided = parse_decision(response.text, tools)
        metadata = {**response.metadata, **decided.metadata}
        if decided.metadata.get("finish_reason") == "error" and \
                response.metadata.get("finish_reason") in ("max_tokens", "content_filter"):
            metadata["finish_reason"] = response.metadata["finish_reason"]
        return ProviderResponse(segments=decided.segments, metadata=metadata)


def _declaration(tool: Tool) -> dict[str, Any]:
    declaration: dict[str, Any] = {"name": tool.name, "description": tool.description or ""}
    parameters = function_parameters(tool.parameters)
    if parameters is not None:
        declaration["parameters"] = parameters
    return declaration


def _calling_config(choice: str | dict[str, Any] | None, tools: list[Tool],
                    provider: str) -> dict[str, Any] | None:
    if choice is None:
        return None
    if isinstance(choice, dict) and isinstance(choice.get("name"), str):
        if choice["name"] not in {t.name for t in tools}:
            raise ProviderError("E1001", f"{provider}: tool_choice names {choice['name']!r}, which is not an "
                                         f"offered tool", provider=provider)
        return {"mode": "ANY", "allowedFunctionNames": [choice["name"]]}
    mode = {"auto": "AUTO", "required": "ANY", "any": "ANY", "none": "NONE"}.get(choice) \
        if isinstance(choice, str) else None
    if mode is None:
        raise ProviderError("E1001", f"{provider}: unknown tool_choice {choice!r} "
                                     f"(expected auto, required, none or {{'name': TOOL}})", provider=provider)
    return {"mode": mode}


def _response_format(response_format: dict[str, Any]) -> dict[str, Any]:
    """``{"type": "json_object"}`` -> JSON mode; ``json_schema`` -> JSON mode + responseSchema."""
    kind = response_format.get("type")
    if kind == "json_schema":
        schema = response_format.get("schema") or (response_format.get("json_schema") or {}).get("schema")
        out: dict[str, Any] = {"responseMimeType": "application/json"}
        if schema:
            out["responseSchema"] = gemini_schema(schema, ordered=True)
        return out
    if kind == "json_object":
        return {"responseMimeType": "application/json"}
    return {}


def _arguments(args: Any) -> str:
    """functionCall.args as JSON text: an object normally; a string (from a proxy) is taken as
    JSON text, so broken JSON or a non-object becomes an error segment, never a silent {}."""
    if args is None:
        return "{}"
    return args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)


def _usage(raw: dict[str, Any]) -> dict[str, int]:
    """Thinking tokens are billed as output: they count in completion_tokens, and apart."""
    thoughts = int(raw.get("thoughtsTokenCount") or 0)
    usage = {"prompt_tokens": int(raw.get("promptTokenCount") or 0),
             "completion_tokens": int(raw.get("candidatesTokenCount") or 0) + thoughts}
    if thoughts:
        usage["reasoning_tokens"] = thoughts
    return usage


def _normalized_finish(reason: str, has_calls: bool) -> str:
    if reason == "MAX_TOKENS":
        return "max_tokens"
    if reason in _FILTERED:
        return "content_filter"
    if reason in _BROKEN_CALL:
        return "error"
    return "tool_use" if has_calls else "end_turn"


def build(model: str, base_url: str | None, options: dict[str, Any]) -> GeminiProvider:
    """The factory's entry point for ``gemini:MODEL[@URL][?timeout=&structured=&temperature=&max_tokens=]``."""
    return GeminiProvider(model, base_url, timeout_s=options.get("timeout", DEFAULT_TIMEOUT_S),
                          structured=options.get("structured", False),
                          temperature=options.get("temperature"), max_tokens=options.get("max_tokens"))

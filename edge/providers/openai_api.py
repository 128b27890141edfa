"""The ``openai`` provider: OpenAI's Chat Completions API and every server that speaks it.

One wire format covers OpenAI itself and the OpenAI-compatible servers a robot meets in practice
(llama.cpp's ``llama-server``, vLLM, Ollama's ``/v1``, LM Studio, Groq, DeepSeek ...), so the
translation is written once here: ``POST {base_url}/chat/completions`` where ``base_url`` already
ends in ``/v1``. ``generate`` sends one non-streaming request; ``stream`` reads the SSE reply
(``data: {chunk}`` ... ``data: [DONE]``) and yields the normalized events.

Choices worth knowing (docs/providers/openai.md has the full table):

* The token limit is sent as ``max_completion_tokens`` to api.openai.com (its reasoning models
  reject ``max_tokens``) and as ``max_tokens`` to any other base URL (what compatible servers read).
* ``Message`` has no tool-call id, and OpenAI rejects a ``tool`` message that answers no call,
  so history tool results travel as user turns prefixed ``Tool result:``.
* Structured mode sends the decision schema as ``response_format`` instead of native tools, for
  models (SmolLM2 behind llama.cpp) whose chat template has no tool support.
* API error *codes* beat the status text (``openai_errors``): ``rate_limit_exceeded`` is E2001
  even when its message mentions billing, ``insufficient_quota`` E2002, ``context_length_exceeded`` E1005.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any, Iterable, Iterator
from urllib.parse import urlparse

from edge import environment
from edge.providers.base import ContentSegment, Message, ProviderContext, ProviderError, ProviderResponse, Tool
from edge.providers.decision import NO_ACTION, decision_prompt, decision_schema, parse_decision
from edge.providers.events import (Metadata, PartialContentDelta, PartialToolCall, StreamEnd, StreamEvent,
                                   ThinkingDelta, ToolCallEnded, ToolCallStarted, collect, finish_tool_call,
                                   replay)
from edge.providers.http import DEFAULT_TIMEOUT_S, error_message, parse_chunk
from edge.providers.openai_errors import OpenAIHttpApi, classify_error

OFFICIAL_BASE_URL = "https://api.openai.com/v1"
OFFICIAL_HOST = "api.openai.com"
API_KEY_ENV = "OPENAI_API_KEY"
BASE_URL_ENV = "OPENAI_BASE_URL"
ORG_ENV, PROJECT_ENV = "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"
PATH = "chat/completions"

_FINISH = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use", "function_call": "tool_use",
           "content_filter": "content_filter"}
_TOOL_CHOICES = ("auto", "none", "required")


class OpenAIProvider:
    """Chat Completions over HTTP; thread-safe as far as httpx's client is (one request per call)."""

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 timeout_s: float = DEFAULT_TIMEOUT_S, structured: bool = False, temperature: float | None = None,
                 max_tokens: int | None = None):
        self.model = model
        self.name = f"openai:{model}"
        self.base_url = (base_url or environment.value(BASE_URL_ENV) or OFFICIAL_BASE_URL).rstrip("/")
        self.official = urlparse(self.base_url).hostname == OFFICIAL_HOST
        self.api_key = api_key if api_key is not None else environment.value(API_KEY_ENV)
        self.structured = structured
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout_s = timeout_s
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        for env, header in ((ORG_ENV, "OpenAI-Organization"), (PROJECT_ENV, "OpenAI-Project")):
            if (text := environment.value(env)) is not None:
                headers[header] = text
        self.api = OpenAIHttpApi(self.name, self.base_url, headers, timeout_s)

    # -- the contract --------------------------------------------------------------------

    def generate(self, prompt: str, context: ProviderContext) -> ProviderResponse:
        """One non-streaming request; a decision in structured mode, else text and tool calls."""
        body, decision_tools = self.request_body(prompt, context, stream=False)
        self._check_ready(context)
        started = time.perf_counter()
        data = self.api.post_json(PATH, body, timeout_s=context.timeout_s)
        self._check_ready(context)
        if isinstance(data.get("error"), dict):
            raise self._body_error(data["error"])
        return self._reply(data, decision_tools, time.perf_counter() - started)

    def stream(self, prompt: str, context: ProviderContext) -> Iterator[StreamEvent]:
        """The SSE reply as normalized events, ending with Metadata and StreamEnd.

        In structured mode the JSON text is buffered and parsed as one decision first, since a
        half-written decision means nothing to the caller."""
        body, decision_tools = self.request_body(prompt, context, stream=True)
        self._check_ready(context)
        started = time.perf_counter()
        pairs = self.api.stream_sse(PATH, body, timeout_s=context.timeout_s, cancel=context.cancel)
        events = self._events(pairs, started)
        if decision_tools is None:
            yield from events
            return
        streamed = collect(events)
        finish = streamed.metadata.pop("finish_reason", "end_turn")
        response = self._decision(streamed.text, decision_tools, finish)
        response.metadata = {**streamed.metadata, **response.metadata}
        yield from replay(response)

    def close(self) -> None:
        self.api.close()

    def __enter__(self) -> "OpenAIProvider":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- upstream ------------------------------------------------------------------------

    def request_body(self, prompt: str, context: ProviderContext,
                     stream: bool) -> tuple[dict[str, Any], list[Tool] | None]:
        """The JSON body, and the tools a structured decision chooses from (None: native mode)."""
        tools = list(context.tools)
        structured = self.structured if context.structured is None else context.structured
        decision_tools = _decision_tools(tools, context.tool_choice) if structured and tools else None
        system = "\n\n".join(s for s in (context.system.strip(),
                                          decision_prompt(decision_tools) if decision_tools else "") if s)
        messages = ([{"role": "system", "content": system}] if system else []) + \
            [_message(m) for m in context.history] + [{"role": "user", "content": prompt}]
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        temperature = context.temperature if context.temperature is not None else self.temperature
        max_tokens = context.max_tokens if context.max_tokens is not None else self.max_tokens
        if temperature is not None:
            body["temperature"] = temperature
        if max_tokens is not None:
            body["max_completion_tokens" if self.official else "max_tokens"] = max_tokens
        if context.top_p is not None:
            body["top_p"] = context.top_p
        if context.stop and not decision_tools:    # a stop word inside a JSON decision only breaks it
            body["stop"] = list(context.stop)
        if decision_tools:
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": "decision", "schema": _schema_for(decision_tools, context.tool_choice), "strict": False}}
        elif tools and not structured:
            body["tools"] = [_tool(t) for t in tools]
            if context.tool_choice is not None:
                body["tool_choice"] = _tool_choice(context.tool_choice, tools)
        if context.response_format and not decision_tools:
            body["response_format"] = _response_format(context.response_format)
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return body, decision_tools

    def _check_ready(self, context: ProviderContext) -> None:
        if self.official and not self.api_key:
            raise ProviderError("E1002", f"{self.name}: no API key for {OFFICIAL_HOST}; set {API_KEY_ENV} "
                                         f"(or give a base URL for a server that needs none)", provider=self.name)
        if context.cancel is not None and context.cancel.is_set():
            raise ProviderError("E4002", f"{self.name} call cancelled", provider=self.name)

    # -- downstream ----------------------------------------------------------------------

    def _reply(self, data: dict[str, Any], decision_tools: list[Tool] | None, latency_s: float) -> ProviderResponse:
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise ProviderError("E9999", f"{self.name} answered without choices: {json.dumps(data)[:200]}",
                                provider=self.name)
        message = choices[0].get("message") or {}
        finish = choices[0].get("finish_reason")
        text = _text_of(message.get("content"))
        if decision_tools is not None:
            response = self._decision(text, decision_tools, _finish_reason(finish, False))
        else:
            segments = [ContentSegment(type="text", text=t) for t in (text, message.get("refusal")) if t]
            calls = message.get("tool_calls") or ([message["function_call"]] if message.get("function_call") else [])
            for call in calls:
                segments.append(_finished_call(call))
            response = ProviderResponse(segments=segments,
                                        metadata={"finish_reason": _finish_reason(finish, bool(calls))})
        thinking = message.get("reasoning_content") or message.get("reasoning")
        if isinstance(thinking, str) and thinking:
            response.metadata["thinking"] = thinking
        response.metadata.update(model=data.get("model") or self.model, usage=_usage(data.get("usage")),
                                 latency_s=round(latency_s, 4))
        return response

    def _decision(self, raw: str, tools: list[Tool], finish: str) -> ProviderResponse:
        """The reply text as one decision; the API's finish reason wins unless it is a plain stop."""
        response = parse_decision(raw, tools)
        response.metadata["raw"] = raw
        if finish != "end_turn":
            response.metadata["finish_reason"] = finish
        if finish == "max_tokens" and response.errors:
            for segment in response.segments:
                segment.text = f"reply cut off at max_tokens: {segment.text}"
        return response

    def _events(self, pairs: Iterable[tuple[str, str]], started: float) -> Iterator[StreamEvent]:
        """SSE (event, data) pairs -> normalized events; tool calls are keyed by OpenAI's index."""
        open_calls: dict[int, str] = {}     # OpenAI's index -> call id, until finish_reason
        ids: dict[str, int] = {}
        seen_calls = 0
        model = usage = finish = None
        done = False
        for _, data in pairs:
            if data.strip() == "[DONE]":
                done = True
                break
            if not data.strip():
                continue
            chunk = parse_chunk(data, self.name)
            if not isinstance(chunk, dict):
                raise ProviderError("E9999", f"{self.name} sent a stream chunk that is not an object: {data[:200]!r}",
                                    provider=self.name)
            if chunk.get("error"):
                raise self._body_error(chunk["error"])
            model = chunk.get("model") or model
            usage = chunk.get("usage") or usage
            for choice in chunk.get("choices") or []:
                if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                    continue
                delta = choice.get("delta") or {}
                thinking = delta.get("reasoning_content") or delta.get("reasoning")
                if isinstance(thinking, str) and thinking:
                    yield ThinkingDelta(thinking)
                for text in (_text_of(delta.get("content")), delta.get("refusal")):
                    if isinstance(text, str) and text:
                        yield PartialContentDelta(text)
                calls = delta.get("tool_calls") or ([{"index": 0, **delta["function_call"]}]
                                                    if isinstance(delta.get("function_call"), dict) else [])
                for call in calls:
                    index = _call_index(call, ids, open_calls)
                    function = call.get("function") if "function" in call else call
                    function = function if isinstance(function, dict) else {}
                    if index not in open_calls:
                        open_calls[index] = call.get("id") or str(uuid.uuid4())
                        ids[open_calls[index]] = index
                        seen_calls += 1
                        yield ToolCallStarted(index, open_calls[index], function.get("name") or "")
                    arguments = function.get("arguments")
                    if arguments:
                        yield PartialToolCall(index, arguments if isinstance(arguments, str) else json.dumps(arguments))
                if choice.get("finish_reason"):
                    finish = choice["finish_reason"]
                    for index in list(open_calls):
                        yield ToolCallEnded(index)
                        del open_calls[index]
        if not done and finish is None:
            raise ProviderError("E3001", f"{self.name} ended the stream before it finished (no finish_reason, "
                                         f"no [DONE])", provider=self.name)
        for index in open_calls:
            yield ToolCallEnded(index)
        yield Metadata(model=model or self.model, usage=_usage(usage),
                       extra={"latency_s": round(time.perf_counter() - started, 4)})
        yield StreamEnd(_finish_reason(finish, bool(seen_calls)))

    def _body_error(self, error: Any) -> ProviderError:
        """An error object inside a 200 reply (mid-stream, or a proxy's body) -> ProviderError."""
        message = error_message(json.dumps({"error": error}))
        return ProviderError(classify_error(error), f"{self.name} failed: {message}", provider=self.name)


# -- translation helpers ---------------------------------------------------------------------


def _finish_reason(finish: Any, called: bool) -> str:
    """OpenAI's finish_reason -> the standard one. A "stop" (or none) that came with tool calls is
    tool_use: some compatible servers say "stop" there. OpenAI reports a stop sequence as "stop"
    too, so stop_sequence cannot be told apart from end_turn."""
    normal = _FINISH.get(finish) if isinstance(finish, str) else None
    if called and normal in (None, "end_turn"):
        return "tool_use"
    return normal or "end_turn"


def _call_index(call: dict[str, Any], ids: dict[str, int], open_calls: dict[int, str]) -> int:
    """A streamed tool call's index; for servers that omit it, by id, else the call still open."""
    index = call.get("index")
    if isinstance(index, int):
        return index
    call_id = call.get("id")
    if isinstance(call_id, str) and call_id in ids:
        return ids[call_id]
    if call_id or not open_calls:
        return max([*ids.values(), -1]) + 1
    return max(open_calls)


def _message(message: Message) -> dict[str, str]:
    if message.role == "tool":
        return {"role": "user", "content": f"Tool result: {message.content}"}
    return {"role": message.role, "content": message.content}


def _tool(tool: Tool) -> dict[str, Any]:
    parameters = tool.parameters if tool.parameters else {"type": "object", "properties": {}}
    return {"type": "function", "function": {"name": tool.name, "description": tool.description,
                                             "parameters": parameters}}


def _tool_choice(choice: str | dict[str, Any], tools: list[Tool]) -> str | dict[str, Any]:
    if isinstance(choice, str) and choice in _TOOL_CHOICES:
        return choice
    return {"type": "function", "function": {"name": _named_tool(choice, tools)}}


def _named_tool(choice: str | dict[str, Any], tools: list[Tool]) -> str:
    """The offered tool a ``{"name": TOOL}`` choice names; anything else is E1001."""
    name = choice.get("name") if isinstance(choice, dict) else None
    if not isinstance(name, str) or name not in {t.name for t in tools}:
        raise ProviderError("E1001", f"tool_choice {choice!r}: expected auto, none, required or "
                                     f"{{'name': TOOL}} naming an offered tool")
    return name


def _decision_tools(tools: list[Tool], choice: str | dict[str, Any] | None) -> list[Tool] | None:
    """Which tools a structured decision may pick: tool_choice "none" means plain text (None)."""
    if choice is None or choice in ("auto", "required"):
        return tools
    if choice == "none":
        return None
    name = _named_tool(choice, tools)
    return [t for t in tools if t.name == name]


def _schema_for(tools: list[Tool], choice: str | dict[str, Any] | None) -> dict[str, Any]:
    """The decision schema; a required or named tool_choice drops the no-action branch."""
    try:
        schema = decision_schema(tools)
    except ValueError as exc:
        raise ProviderError("E1001", str(exc)) from None
    if choice is not None and choice != "auto":
        schema["anyOf"] = [b for b in schema["anyOf"]
                           if b.get("properties", {}).get("action", {}).get("const") != NO_ACTION]
    return schema


def _response_format(fmt: dict[str, Any]) -> dict[str, Any]:
    """The standard ``{"type": "json_schema", "schema": ...}`` -> OpenAI's nested ``json_schema``."""
    if fmt.get("type") != "json_schema" or "json_schema" in fmt:
        return fmt
    return {"type": "json_schema", "json_schema": {"name": fmt.get("name", "response"), "schema": fmt.get("schema", {}),
                                                   "strict": bool(fmt.get("strict", False))}}


def _finished_call(call: dict[str, Any]) -> ContentSegment:
    function = call.get("function") if "function" in call else call
    function = function if isinstance(function, dict) else {}
    return finish_tool_call(call.get("id") or str(uuid.uuid4()), function.get("name") or "",
                            function.get("arguments"))


def _text_of(content: Any) -> str:
    """Message content: a string, or (some servers) a list of ``{"type": "text", "text"}`` parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text") or "" for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


def _usage(usage: Any) -> dict[str, int] | None:
    if not isinstance(usage, dict):
        return None
    return {"prompt_tokens": int(usage.get("prompt_tokens") or 0),
            "completion_tokens": int(usage.get("completion_tokens") or 0)}


def build(model: str, base_url: str | None, options: dict[str, Any]) -> OpenAIProvider:
    """The factory's entry point for ``openai:MODEL[@BASE_URL]``."""
    return OpenAIProvider(model, base_url, timeout_s=options.get("timeout") or DEFAULT_TIMEOUT_S,
                          structured=bool(options.get("structured", False)),
                          temperature=options.get("temperature"), max_tokens=options.get("max_tokens"))

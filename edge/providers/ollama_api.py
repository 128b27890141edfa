"""The ``ollama`` provider: an Ollama server (local or remote) through the official ``ollama`` client.

``POST /api/chat`` carries the messages, the tools (OpenAI-style function tools), ``options``
(temperature, num_predict, top_p, stop) and, in structured mode, ``format`` = the decision
schema. Replies arrive whole (``stream: false``) or as NDJSON chunks (``done: false`` ... a final
``done: true`` with ``done_reason`` and token counts). Both paths go through one translation
(``_events``), so ``generate`` is ``collect`` over the same events ``stream`` yields; in structured
mode the collected text is then parsed as one decision (``_decide``).

Why the official client and not ``http.HttpApi``: it is what Ollama users already run, it parses
``OLLAMA_HOST`` forms (``:11434``, ``host``, ``https://host``) and adds ``OLLAMA_API_KEY``. What it
does *not* do is classify failures, so every exception it lets through is mapped here:
``ResponseError`` (HTTP status + Ollama's ``{"error": ...}``), ``ConnectionError`` / httpx
transport errors, ``json.JSONDecodeError`` (a malformed NDJSON line) and pydantic's
``ValidationError`` (a line that is JSON but not a chat chunk).

Two things the client's typed models impose (Ollama's server parses tools into similar types):
tool parameters keep only ``type``, ``description``, ``enum`` and ``items`` per property, so
ranges and lengths are folded into each description (``[-1..1]``) where the model can read them;
and tool-call ``arguments`` must be a JSON object, so a server that sends them as a string is
reported as E9999 naming the field (a real Ollama server always sends an object).
"""

from __future__ import annotations

import copy
import json
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any, Iterable, Iterator
from urllib.parse import urlparse

import httpx
import ollama
import pydantic

from edge import environment
from edge.providers.base import (Message, ProviderContext, ProviderError, ProviderResponse, Tool)
from edge.providers.decision import NO_ACTION, decision_prompt, decision_schema, parse_decision
from edge.providers.errors import code_for_status, parse_retry_after
from edge.providers.events import (Metadata, PartialContentDelta, PartialToolCall, StreamEnd, StreamEvent,
                                   ThinkingDelta, ToolCallEnded, ToolCallStarted, collect, replay)

DEFAULT_HOST = "http://127.0.0.1:11434"
HOST_ENV = "OLLAMA_HOST"
API_KEY_ENV = "OLLAMA_API_KEY"
HOSTED_DOMAIN = "ollama.com"      # Ollama's cloud API: the only host where a key is required
CONNECT_TIMEOUT_S = 10.0
_EXCERPT = 200

_FINISH = {"stop": "end_turn", "length": "max_tokens"}
_NO_TOOLS_HINT = "does not support tools"
_OUT_OF_MEMORY_HINT = "requires more system memory"


@dataclass
class _Plan:
    """One call, decided before anything is sent: the ``chat`` kwargs and how to read the reply."""

    kwargs: dict[str, Any]
    tools: list[Tool]
    structured: bool
    timeout_s: float | None


class OllamaProvider:
    """``ollama:MODEL[@URL]``. Thread-safe: the clients (one per timeout) are shared, calls are not."""

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 timeout_s: float = 60.0, structured: bool = False, temperature: float | None = None,
                 max_tokens: int | None = None):
        self.model = model
        self.host = base_url or environment.value(HOST_ENV) or DEFAULT_HOST
        self.api_key = api_key or environment.value(API_KEY_ENV)
        self.timeout_s = timeout_s
        self.structured = structured
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.name = f"ollama:{model}"
        self._clients: dict[float | None, ollama.Client] = {}
        self._lock = threading.Lock()

    # -- the contract --------------------------------------------------------------------

    def generate(self, prompt: str, context: ProviderContext) -> ProviderResponse:
        """One non-streaming ``/api/chat`` call; cancel is checked before sending and on arrival."""
        plan = self._plan(prompt, context)
        client = self._client(plan.timeout_s)
        started = time.perf_counter()
        _check_cancel(context.cancel, self.name)
        try:
            reply = client.chat(**plan.kwargs, stream=False)
        except Exception as exc:
            raise self._translate(exc, plan.timeout_s) from None
        _check_cancel(context.cancel, self.name)
        if plan.structured:
            return self._decide([reply], plan, started, whole=True)
        return collect(self._events([reply], plan, started, whole=True))

    def stream(self, prompt: str, context: ProviderContext) -> Iterator[StreamEvent]:
        """NDJSON chunks as normalized events; cancel is checked between chunks (E4002)."""
        plan = self._plan(prompt, context)
        client = self._client(plan.timeout_s)
        started = time.perf_counter()
        _check_cancel(context.cancel, self.name)
        try:
            chunks = client.chat(**plan.kwargs, stream=True)   # lazy: nothing is sent yet
        except Exception as exc:
            raise self._translate(exc, plan.timeout_s) from None
        chunks = self._read(chunks, context, plan.timeout_s)
        if not plan.structured:
            yield from self._events(chunks, plan, started)
            return
        response = self._decide(chunks, plan, started)    # a decision streams whole, at the end
        yield from replay(response)

    def close(self) -> None:
        with self._lock:
            clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            client.close()

    # -- upstream ------------------------------------------------------------------------

    def _client(self, timeout_s: float | None) -> ollama.Client:
        """The client for this timeout (httpx fixes it per client; ``chat`` takes none)."""
        if self.api_key is None and _is_hosted(self.host):
            raise ProviderError("E1002", f"{self.host} needs an API key: set {API_KEY_ENV}", provider=self.name)
        with self._lock:
            client = self._clients.get(timeout_s)
            if client is None:
                timeout = httpx.Timeout(timeout_s, connect=min(timeout_s, CONNECT_TIMEOUT_S)) \
                    if timeout_s else httpx.Timeout(None)
                headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else None
                client = self._clients[timeout_s] = ollama.Client(host=self.host, timeout=timeout, headers=headers)
        return client

    def _plan(self, prompt: str, context: ProviderContext) -> _Plan:
        tools, hint = _choose_tools(list(context.tools), context.tool_choice, self.name)
        structured = bool(tools) and (self.structured if context.structured is None else context.structured)
        system = [context.system.strip()]
        kwargs: dict[str, Any] = {"model": self.model}
        if structured:
            try:
                schema = decision_schema(tools)
            except ValueError as exc:      # an action named "none"
                raise ProviderError("E1001", str(exc), provider=self.name) from None
            system.append(decision_prompt(tools))
            kwargs["format"] = _forced(schema, context.tool_choice)
        elif tools:
            system.append(hint)
            kwargs["tools"] = [_ollama_tool(t) for t in tools]
        elif context.response_format:
            kwargs["format"] = _format(context.response_format, self.name)
        messages = [{"role": "system", "content": "\n\n".join(s for s in system if s)}] if any(system) else []
        messages += [_message(m) for m in context.history]
        messages.append({"role": "user", "content": prompt})
        kwargs["messages"] = messages
        options = {"temperature": _pick(context.temperature, self.temperature),
                   "num_predict": _pick(context.max_tokens, self.max_tokens),
                   "top_p": context.top_p,
                   "stop": None if structured else context.stop}   # a stop word would cut the JSON
        options = {k: v for k, v in options.items() if v is not None}
        if options:
            kwargs["options"] = options
        timeout = context.timeout_s if context.timeout_s is not None else self.timeout_s
        return _Plan(kwargs, tools, structured, timeout or None)

    # -- downstream ----------------------------------------------------------------------

    def _read(self, chunks: Iterator[Any], context: ProviderContext, timeout_s: float | None) -> Iterator[Any]:
        """The client's chunk iterator with cancel checks and every failure as a ProviderError."""
        try:
            while True:
                try:
                    chunk = next(chunks)
                except StopIteration:
                    return
                except Exception as exc:
                    raise self._translate(exc, timeout_s) from None
                _check_cancel(context.cancel, self.name)
                yield chunk
        finally:
            # the client types its stream as an Iterator; it is a generator, and closing it
            # releases the HTTP response when cancelled or abandoned
            close = getattr(chunks, "close", None)
            if close is not None:
                close()

    def _events(self, chunks: Iterable[Any], plan: _Plan, started: float,
                whole: bool = False) -> Iterator[StreamEvent]:
        """Chat chunks (one whole reply, or a stream) -> normalized events ending with Metadata + StreamEnd."""
        calls = 0
        final = None
        for chunk in chunks:
            if final is not None:
                continue    # read to the end, so that httpx can reuse the connection
            message = chunk.message
            if message.thinking:
                yield ThinkingDelta(message.thinking)
            if message.content:
                yield PartialContentDelta(message.content)
            for call in message.tool_calls or ():
                yield ToolCallStarted(calls, str(uuid.uuid4()), call.function.name)  # Ollama gives no ids
                yield PartialToolCall(calls, json.dumps(dict(call.function.arguments), ensure_ascii=False))
                yield ToolCallEnded(calls)
                calls += 1
            if chunk.done or whole:
                final = chunk
        if final is None:
            raise ProviderError("E3001", f"{self.name}: the stream ended before its final chunk (done: true); "
                                         f"did the Ollama server stop?", provider=self.name)
        finish = _FINISH.get(final.done_reason or "stop", "end_turn")
        if finish == "end_turn" and calls:
            finish = "tool_use"
        usage = {"prompt_tokens": final.prompt_eval_count or 0, "completion_tokens": final.eval_count or 0}
        yield Metadata(model=final.model or self.model, usage=usage, extra={
            "provider": "ollama", "latency_s": round(time.perf_counter() - started, 4),
            "mode": "structured" if plan.structured else "tools" if plan.tools else "text",
            "timings_s": _timings(final)})
        yield StreamEnd(finish)

    def _decide(self, chunks: Iterable[Any], plan: _Plan, started: float, whole: bool = False) -> ProviderResponse:
        """Structured mode: the whole reply text is one decision (a tool call, none, or an error segment)."""
        reply = collect(self._events(chunks, plan, started, whole))
        raw = reply.text
        response = parse_decision(raw, plan.tools)
        response.metadata = {**reply.metadata, **response.metadata, "raw": raw}
        if reply.metadata.get("finish_reason") == "max_tokens":
            response.metadata["finish_reason"] = "max_tokens"
            for segment in response.segments:
                if segment.type == "error":    # say why the JSON is incomplete
                    segment.text = f"reply cut off at max_tokens: {segment.text}"
        return response

    # -- errors --------------------------------------------------------------------------

    def _translate(self, exc: Exception, timeout_s: float | None) -> Exception:
        """Whatever the client raised -> a ProviderError; anything unknown is returned as is."""
        name = self.name
        if isinstance(exc, ProviderError):
            return exc
        if isinstance(exc, ollama.ResponseError):
            return self._response_error(exc)
        if isinstance(exc, httpx.TimeoutException):
            return ProviderError("E3003", f"{name} did not answer within {timeout_s or 0:g} s "
                                          f"({type(exc).__name__}); a first call also loads the model",
                                 provider=name)
        if isinstance(exc, (ConnectionError, httpx.ConnectError)):
            return ProviderError("E3001", f"{name}: nothing answers at {self.host} "
                                          f"(is Ollama running? `ollama serve`)", retryable=False, provider=name)
        if isinstance(exc, httpx.TransportError):
            return ProviderError("E3001", f"{name}: the connection to {self.host} failed: {exc}", provider=name)
        if isinstance(exc, json.JSONDecodeError):
            return ProviderError("E9999", f"{name} sent a malformed NDJSON line ({exc.msg} at column "
                                          f"{exc.colno}): {exc.doc[:_EXCERPT]!r}", provider=name)
        if isinstance(exc, pydantic.ValidationError):
            return ProviderError("E9999", f"{name} sent a chunk that is not a chat reply: "
                                          f"{_first_problem(exc)}", provider=name)
        if isinstance(exc, (AttributeError, TypeError)):   # a JSON line that is not an object
            return ProviderError("E9999", f"{name} sent a reply that is not a JSON object ({exc})", provider=name)
        if isinstance(exc, ollama.RequestError):
            return ProviderError("E1001", f"{name}: {exc.error}", provider=name)
        if isinstance(exc, httpx.HTTPError):
            return ProviderError("E9999", f"{name}: {type(exc).__name__}: {exc}", provider=name)
        return exc

    def _response_error(self, exc: ollama.ResponseError) -> ProviderError:
        """Ollama's ``{"error": "..."}`` with its HTTP status; -1 means it came inside a 200 stream."""
        message = str(exc.error)
        status = exc.status_code if exc.status_code > 0 else None
        context = exc.__context__      # the client raises from inside `except HTTPStatusError`
        headers = context.response.headers if isinstance(context, httpx.HTTPStatusError) else {}
        code = code_for_status(status or 500, message)
        retryable = None
        if code == "E1004":
            hint = (f"pull it first: `ollama pull {self.model}`" if "model" in message.lower()
                    else f"is {self.host} an Ollama server? (@URL is its root, without /api)")
            message = f"{message} ({hint})"
        elif _NO_TOOLS_HINT in message:
            message = f"{message} (use structured mode for this model: `?structured=1`)"
        elif _OUT_OF_MEMORY_HINT in message:
            retryable = False          # waiting frees no memory; another provider may still work
        where = f"HTTP {status}" if status else "an error inside the stream"
        return ProviderError(code, f"{self.name} answered {where}: {message}", retryable=retryable,
                             retry_after=parse_retry_after(headers), status=status, provider=self.name)


# -- request pieces --------------------------------------------------------------------------


def _choose_tools(tools: list[Tool], choice: Any, provider: str) -> tuple[list[Tool], str]:
    """Ollama has no ``tool_choice``: "none" sends no tools, a named tool is sent alone, and both
    "required" and a name add a line to the system text (structured mode enforces them exactly)."""
    if not tools or choice in (None, "auto"):
        return tools, ""
    if choice == "none":
        return [], ""
    if choice == "required":
        return tools, "Answer by calling one of the tools."
    name = choice.get("name") if isinstance(choice, dict) else None
    chosen = [t for t in tools if t.name == name]
    if not chosen:
        offered = ", ".join(t.name for t in tools)
        raise ProviderError("E1001", f"tool_choice {choice!r} names no offered tool (offered: {offered})",
                            provider=provider)
    return chosen, f"Answer by calling the tool {name}."


def _forced(schema: dict[str, Any], choice: Any) -> dict[str, Any]:
    """The decision schema without its "none" branch when a tool call is required."""
    if choice in (None, "auto", "none"):
        return schema
    return {"anyOf": [b for b in schema["anyOf"] if b["properties"]["action"].get("const") != NO_ACTION]}


_HINTED = (("minimum", "maximum", "{}..{}"), ("minLength", "maxLength", "{}..{} chars"),
           ("minItems", "maxItems", "{}..{} items"))


def _ollama_tool(tool: Tool) -> dict[str, Any]:
    """An OpenAI-style function tool; bounds Ollama's types drop are added to the descriptions."""
    parameters = copy.deepcopy(tool.parameters) if isinstance(tool.parameters, dict) else {}
    parameters.setdefault("type", "object")
    for spec in (parameters.get("properties") or {}).values():
        if not isinstance(spec, dict):
            continue
        bounds = []
        for low, high, form in _HINTED:
            if low in spec or high in spec:
                bounds.append(form.format(spec.get(low, ""), spec.get(high, "")))
        if bounds:
            spec["description"] = " ".join(filter(None, [spec.get("description", ""), f"[{'; '.join(bounds)}]"]))
    return {"type": "function",
            "function": {"name": tool.name, "description": tool.description, "parameters": parameters}}


def _format(response_format: dict[str, Any], provider: str) -> str | dict[str, Any]:
    """The standard response_format -> Ollama's ``format`` ("json" or a JSON Schema)."""
    kind = response_format.get("type")
    if kind == "json_object":
        return "json"
    if kind == "json_schema":
        schema = response_format.get("schema") or (response_format.get("json_schema") or {}).get("schema")
        if isinstance(schema, dict):
            return schema
    raise ProviderError("E1001", f"unsupported response_format {json.dumps(response_format)[:_EXCERPT]} "
                                 f"(expected json_object, or json_schema with a schema)", provider=provider)


def _message(message: Message) -> dict[str, str]:
    """History roles are Ollama's own (system, user, assistant, tool)."""
    return {"role": message.role, "content": message.content}


def _pick(per_call: Any, default: Any) -> Any:
    return per_call if per_call is not None else default


def _is_hosted(host: str) -> bool:
    hostname = urlparse(host if "://" in host else f"http://{host}").hostname or ""
    return hostname == HOSTED_DOMAIN or hostname.endswith("." + HOSTED_DOMAIN)


# -- reply pieces ----------------------------------------------------------------------------


def _timings(final: Any) -> dict[str, float]:
    """Ollama's nanosecond durations in seconds (load_s > 0 means the model was loaded for this call)."""
    pairs = (("total", final.total_duration), ("load", final.load_duration),
             ("prompt", final.prompt_eval_duration), ("generate", final.eval_duration))
    return {k: round(v / 1e9, 4) for k, v in pairs if v}


def _first_problem(exc: pydantic.ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(p) for p in error.get("loc", ()))
    value = json.dumps(error.get("input"), ensure_ascii=False, default=str)[:_EXCERPT]
    return f"{where}: {error.get('msg')} (got {value})"


def _check_cancel(cancel: threading.Event | None, provider: str) -> None:
    if cancel is not None and cancel.is_set():
        raise ProviderError("E4002", f"{provider} call cancelled", provider=provider)


def build(model: str, base_url: str | None, options: dict[str, Any]) -> OllamaProvider:
    """The factory's entry: ``ollama:MODEL[@URL]?timeout=&structured=&temperature=&max_tokens=``
    (``timeout=0`` waits without limit)."""
    return OllamaProvider(model, base_url, timeout_s=options.get("timeout", 60.0),
                          structured=options.get("structured", False),
                          temperature=options.get("temperature"), max_tokens=options.get("max_tokens"))

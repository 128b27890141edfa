"""The ollama provider against a local server speaking Ollama's /api/chat wire format (JSON and NDJSON)."""

from __future__ import annotations

import threading
import uuid

import pytest

from edge.providers.base import Message, ProviderContext, ProviderError, Tool
from edge.providers.decision import decision_schema
from edge.providers.events import (Metadata, PartialContentDelta, StreamEnd, ToolCallStarted, collect)
from edge.providers.factory import make_provider
from edge.providers.ollama_api import OllamaProvider
from fake_api import FakeApi, Reply, ndjson

MODEL = "qwen2.5:1.5b"
NDJSON = {"Content-Type": "application/x-ndjson"}

WAG = Tool("wag", "Wag the tail to show joy.",
           {"type": "object", "properties": {"speed": {"type": "number", "minimum": 0, "maximum": 1,
                                                        "description": "0 is slow, 1 is fast."}},
            "required": ["speed"], "additionalProperties": False})
SPEAK = Tool("speak", "Say something out loud.",
             {"type": "object", "properties": {"message": {"type": "string", "maxLength": 120}},
              "required": ["message"]})
TOOLS = [WAG, SPEAK]


def chunk(content: str = "", tool_calls: list | None = None, thinking: str | None = None, **extra) -> dict:
    """One /api/chat chunk (or a whole non-streaming reply when done=True)."""
    message: dict = {"role": "assistant", "content": content}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    if thinking is not None:
        message["thinking"] = thinking
    return {"model": MODEL, "created_at": "2025-01-01T00:00:00.000000Z", "message": message,
            "done": False, **extra}


def final(content: str = "", tool_calls: list | None = None, reason: str = "stop", **extra) -> dict:
    return chunk(content, tool_calls, done=True, done_reason=reason, total_duration=512_000_000,
                 load_duration=2_000_000, prompt_eval_count=26, prompt_eval_duration=130_000_000,
                 eval_count=12, eval_duration=370_000_000, **extra)


def call(name: str, arguments) -> dict:
    return {"function": {"name": name, "arguments": arguments}}


_OPEN: list[OllamaProvider] = []


def provider(api: FakeApi, **kwargs) -> OllamaProvider:
    kwargs.setdefault("timeout_s", 5.0)
    _OPEN.append(OllamaProvider(MODEL, api.url, **kwargs))
    return _OPEN[-1]


def stream_reply(*objects: dict, **kwargs) -> Reply:
    return Reply(200, chunks=ndjson(*objects), headers=NDJSON, **kwargs)


@pytest.fixture
def api():
    with FakeApi() as fake:
        yield fake
        while _OPEN:
            _OPEN.pop().close()     # closes keep-alive connections before the server stops


# -- requests ----------------------------------------------------------------------------------


def test_text_request_and_reply(api):
    api.replies.append(Reply(200, final("Hello there!")))
    context = ProviderContext(system="You are Pip.", history=[Message("user", "hi"), Message("assistant", "hey"),
                                                               Message("tool", '{"ok": true}')],
                              top_p=0.9, stop=["\n\n"])
    response = provider(api, temperature=0.3, max_tokens=64).generate("How are you?", context)

    request = api.requests[0]
    assert (request.method, request.path) == ("POST", "/api/chat")
    assert request.headers["content-type"] == "application/json"
    assert request.body == {
        "model": MODEL, "stream": False,
        "messages": [{"role": "system", "content": "You are Pip."}, {"role": "user", "content": "hi"},
                     {"role": "assistant", "content": "hey"}, {"role": "tool", "content": '{"ok": true}'},
                     {"role": "user", "content": "How are you?"}],
        "tools": [],
        "options": {"temperature": 0.3, "num_predict": 64, "top_p": 0.9, "stop": ["\n\n"]},
    }
    assert response.text == "Hello there!"
    assert [s.type for s in response.segments] == ["text"]
    meta = response.metadata
    assert meta["model"] == MODEL and meta["finish_reason"] == "end_turn" and meta["mode"] == "text"
    assert meta["usage"] == {"prompt_tokens": 26, "completion_tokens": 12}
    assert meta["timings_s"] == {"total": 0.512, "load": 0.002, "prompt": 0.13, "generate": 0.37}
    assert meta["latency_s"] >= 0


def test_per_call_parameters_win_over_constructor_defaults(api):
    api.replies.append(Reply(200, final("ok")))
    provider(api, temperature=0.3, max_tokens=64).generate("x", ProviderContext(temperature=0.0, max_tokens=8))
    assert api.requests[0].body["options"] == {"temperature": 0.0, "num_predict": 8}


def test_tools_are_sent_as_function_tools_with_bounds_in_descriptions(api):
    api.replies.append(Reply(200, final(tool_calls=[call("wag", {"speed": 0.8})])))
    response = provider(api).generate("You see your friend", ProviderContext(tools=TOOLS))

    tools = api.requests[0].body["tools"]
    assert tools[0] == {"type": "function", "function": {
        "name": "wag", "description": "Wag the tail to show joy.",
        "parameters": {"type": "object", "required": ["speed"], "properties": {
            "speed": {"type": "number", "description": "0 is slow, 1 is fast. [0..1]"}}}}}
    assert tools[1]["function"]["parameters"]["properties"]["message"] == {"type": "string",
                                                                           "description": "[..120 chars]"}
    assert WAG.parameters["properties"]["speed"]["description"] == "0 is slow, 1 is fast."  # not mutated
    assert "format" not in api.requests[0].body
    [segment] = response.segments
    assert segment.type == "tool_call" and segment.tool_call.name == "wag"
    assert segment.tool_call.args == {"speed": 0.8}
    uuid.UUID(segment.tool_call.id)              # Ollama gives no id: a UUID is made
    assert response.metadata["finish_reason"] == "tool_use" and response.metadata["mode"] == "tools"


def test_mixed_text_and_two_tool_calls_keep_their_order(api):
    api.replies.append(Reply(200, final("Oh, hi!", [call("wag", {"speed": 1}), call("speak", {"message": "Hi!"})])))
    response = provider(api).generate("hello", ProviderContext(tools=TOOLS))
    assert [s.type for s in response.segments] == ["text", "tool_call", "tool_call"]
    assert response.text == "Oh, hi!"
    assert [(c.name, c.args) for c in response.tool_calls] == [("wag", {"speed": 1}), ("speak", {"message": "Hi!"})]
    assert len({c.id for c in response.tool_calls}) == 2


def test_tool_choice_none_named_and_required(api):
    api.default = Reply(200, final("ok"))
    p = provider(api)
    p.generate("x", ProviderContext(tools=TOOLS, tool_choice="none"))
    assert api.requests[-1].body["tools"] == []
    p.generate("x", ProviderContext(tools=TOOLS, tool_choice={"name": "speak"}))
    body = api.requests[-1].body
    assert [t["function"]["name"] for t in body["tools"]] == ["speak"]
    assert body["messages"][0] == {"role": "system", "content": "Answer by calling the tool speak."}
    p.generate("x", ProviderContext(tools=TOOLS, tool_choice="required", system="Be Pip."))
    assert api.requests[-1].body["messages"][0]["content"] == "Be Pip.\n\nAnswer by calling one of the tools."
    with pytest.raises(ProviderError) as err:
        p.generate("x", ProviderContext(tools=TOOLS, tool_choice={"name": "fly"}))
    assert err.value.code == "E1001" and "offered: wag, speak" in err.value.message


def test_response_format_maps_to_format(api):
    api.default = Reply(200, final('{"mood": "happy"}'))
    schema = {"type": "object", "properties": {"mood": {"type": "string"}}}
    p = provider(api)
    p.generate("x", ProviderContext(response_format={"type": "json_schema", "schema": schema}))
    assert api.requests[-1].body["format"] == schema
    p.generate("x", ProviderContext(response_format={"type": "json_object"}))
    assert api.requests[-1].body["format"] == "json"
    with pytest.raises(ProviderError) as err:
        p.generate("x", ProviderContext(response_format={"type": "xml"}))
    assert err.value.code == "E1001"


# -- structured-output mode ----------------------------------------------------------------------


def test_structured_mode_sends_the_decision_schema_and_parses_the_reply(api):
    api.replies.append(Reply(200, final('{"action": "wag", "params": {"speed": 0.5}}')))
    response = provider(api, structured=True).generate("hi", ProviderContext(tools=TOOLS, system="Be Pip.",
                                                                             stop=["\n"]))
    body = api.requests[0].body
    assert body["format"] == decision_schema(TOOLS)
    assert body["tools"] == []
    assert "options" not in body                 # no stop word inside a JSON decision
    system = body["messages"][0]["content"]
    assert system.startswith("Be Pip.\n\nPick the best action") and "- wag(speed): Wag the tail" in system and "speed 0..1" in system
    assert [(c.name, c.args) for c in response.tool_calls] == [("wag", {"speed": 0.5})]
    assert response.metadata["finish_reason"] == "tool_use" and response.metadata["mode"] == "structured"
    assert response.metadata["usage"] == {"prompt_tokens": 26, "completion_tokens": 12}


def test_structured_mode_per_call_and_required_drops_the_none_branch(api):
    api.replies.append(Reply(200, final('{"action": "speak", "params": {"message": "hi"}}')))
    provider(api).generate("hi", ProviderContext(tools=TOOLS, structured=True, tool_choice="required"))
    branches = api.requests[0].body["format"]["anyOf"]
    assert [b["properties"]["action"]["const"] for b in branches] == ["wag", "speak"]


def test_structured_mode_cut_off_reply_is_an_error_segment(api):
    api.replies.append(Reply(200, final('{"action": "speak", "params": {"mess', reason="length")))
    response = provider(api, structured=True).generate("hi", ProviderContext(tools=TOOLS))
    assert response.errors and response.errors[0].startswith("reply cut off at max_tokens")
    assert response.metadata["finish_reason"] == "max_tokens"


def test_structured_mode_streams_the_decision_at_the_end(api):
    api.replies.append(stream_reply(chunk('{"action": '), chunk('"none"}'), final()))
    events = list(provider(api, structured=True).stream("hi", ProviderContext(tools=TOOLS)))
    assert not any(isinstance(e, PartialContentDelta) for e in events)
    response = collect(events)
    assert response.segments == [] and response.metadata["decision"] == "none"
    assert response.metadata["finish_reason"] == "end_turn"


def test_structured_mode_stream_surfaces_an_unparsable_decision(api):
    api.replies.append(stream_reply(chunk('{"action": "fly"}'), final()))
    response = collect(provider(api, structured=True).stream("hi", ProviderContext(tools=TOOLS)))
    assert response.metadata["finish_reason"] == "error"
    assert "unknown action 'fly'" in response.errors[0]  # an error segment again after the stream


def test_structured_mode_rejects_an_action_named_none(api):
    with pytest.raises(ProviderError) as err:
        provider(api, structured=True).generate("hi", ProviderContext(tools=[Tool("none", "x", {})]))
    assert err.value.code == "E1001" and api.requests == []


# -- streaming -----------------------------------------------------------------------------------


def test_stream_text_events(api):
    api.replies.append(stream_reply(chunk("Hel"), chunk("lo"), chunk("!"), final()))
    events = list(provider(api).stream("hi", ProviderContext()))
    assert api.requests[0].body["stream"] is True
    assert [e.text for e in events if isinstance(e, PartialContentDelta)] == ["Hel", "lo", "!"]
    assert isinstance(events[-2], Metadata) and isinstance(events[-1], StreamEnd)
    assert events[-2].usage == {"prompt_tokens": 26, "completion_tokens": 12}
    assert events[-1].finish_reason == "end_turn"
    assert collect(events).text == "Hello!"


def test_stream_mixed_text_and_tool_calls(api):
    api.replies.append(stream_reply(chunk("Sure"), chunk(tool_calls=[call("wag", {"speed": 0.2})]),
                                    chunk(tool_calls=[call("speak", {"message": "yay"})]), final()))
    events = list(provider(api).stream("hi", ProviderContext(tools=TOOLS)))
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    assert [(e.index, e.name) for e in started] == [(0, "wag"), (1, "speak")]
    response = collect(events)
    assert [s.type for s in response.segments] == ["text", "tool_call", "tool_call"]
    assert response.metadata["finish_reason"] == "tool_use"


def test_stream_thinking_and_length(api):
    api.replies.append(stream_reply(chunk(thinking="hmm, "), chunk(thinking="a wave"), chunk("Hi"),
                                    final(reason="length")))
    response = collect(provider(api).stream("hi", ProviderContext()))
    assert response.metadata["thinking"] == "hmm, a wave"
    assert response.metadata["finish_reason"] == "max_tokens"


def test_malformed_ndjson_line_is_e9999(api):
    api.replies.append(Reply(200, chunks=[*ndjson(chunk("Hi")), '{"model": "x", "message": {"rol\n',
                                          *ndjson(final())], headers=NDJSON))
    with pytest.raises(ProviderError) as err:
        list(provider(api).stream("hi", ProviderContext()))
    assert err.value.code == "E9999" and not err.value.retryable
    assert "ollama:qwen2.5:1.5b sent a malformed NDJSON line" in err.value.message
    assert '{"model": "x"' in err.value.message


def test_a_line_that_is_not_an_object_or_not_a_chat_chunk_is_e9999(api):
    api.replies.append(Reply(200, chunks=["[1, 2]\n"], headers=NDJSON))
    api.replies.append(Reply(200, chunks=ndjson({"model": MODEL, "message": "hi", "done": False}), headers=NDJSON))
    p = provider(api)
    for expected in ("not a JSON object", "not a chat reply: message"):
        with pytest.raises(ProviderError) as err:
            list(p.stream("hi", ProviderContext()))
        assert err.value.code == "E9999" and expected in err.value.message


def test_tool_arguments_as_a_string_are_named_in_the_error(api):
    # Ollama always sends an object; the official client rejects anything else, so we say where.
    api.replies.append(Reply(200, final(tool_calls=[call("wag", '{"speed": ')])))
    with pytest.raises(ProviderError) as err:
        provider(api).generate("hi", ProviderContext(tools=TOOLS))
    assert err.value.code == "E9999"
    assert "message.tool_calls.0.function.arguments" in err.value.message and '{\\"speed\\": ' in err.value.message


def test_error_inside_a_stream(api):
    api.replies.append(stream_reply(chunk("Hi"), {"error": "an error was encountered while running the model"}))
    with pytest.raises(ProviderError) as err:
        list(provider(api).stream("hi", ProviderContext()))
    assert err.value.code == "E3001" and err.value.retryable and err.value.status is None
    assert "inside the stream" in err.value.message


def test_stream_without_final_chunk_is_e3001(api):
    api.replies.append(stream_reply(chunk("Hi")))
    with pytest.raises(ProviderError) as err:
        list(provider(api).stream("hi", ProviderContext()))
    assert err.value.code == "E3001" and "done: true" in err.value.message


def test_non_json_body_is_e9999(api):
    api.replies.append(Reply(200, "<html>proxy</html>", headers={"Content-Type": "text/html"}))
    with pytest.raises(ProviderError) as err:
        provider(api).generate("hi", ProviderContext())
    assert err.value.code == "E9999" and "<html>proxy</html>" in err.value.message


# -- errors --------------------------------------------------------------------------------------


@pytest.mark.parametrize("status, message, code, retryable, fallbackable", [
    (400, "invalid options", "E1001", False, False),
    (401, "unauthorized", "E1002", False, True),
    (403, "forbidden", "E1003", False, False),
    (404, 'model "qwen2.5:1.5b" not found, try pulling it first', "E1004", False, False),
    (413, "request entity too large", "E1005", False, False),
    (429, "too many requests", "E2001", True, True),
    (429, "you have exceeded your weekly usage quota", "E2002", False, True),
    (500, "llama runner process has terminated", "E3001", True, True),
    (503, "server busy, please try again.  maximum pending requests exceeded", "E3002", True, True),
    (529, "overloaded", "E3002", True, True),
])
@pytest.mark.parametrize("streaming", [False, True])
def test_http_errors(api, status, message, code, retryable, fallbackable, streaming):
    api.replies.append(Reply(status, {"error": message}, headers={"Retry-After": "7"}))
    p = provider(api)
    with pytest.raises(ProviderError) as err:
        if streaming:
            list(p.stream("hi", ProviderContext()))
        else:
            p.generate("hi", ProviderContext())
    e = err.value
    assert (e.code, e.retryable, e.fallbackable, e.status) == (code, retryable, fallbackable, status)
    assert e.retry_after == 7.0 and e.provider == f"ollama:{MODEL}"
    assert message in e.message and f"HTTP {status}" in e.message


def test_model_not_pulled_hints_ollama_pull(api):
    api.replies.append(Reply(404, {"error": 'model "qwen2.5:1.5b" not found, try pulling it first'}))
    api.replies.append(Reply(404, "404 page not found", headers={"Content-Type": "text/plain"}))
    p = provider(api)
    with pytest.raises(ProviderError) as err:
        p.generate("hi", ProviderContext())
    assert err.value.code == "E1004" and "`ollama pull qwen2.5:1.5b`" in err.value.message
    with pytest.raises(ProviderError) as err:
        p.generate("hi", ProviderContext())
    assert err.value.code == "E1004" and "an Ollama server?" in err.value.message


def test_model_without_tool_support_hints_structured_mode(api):
    api.replies.append(Reply(400, {"error": "registry.ollama.ai/library/smollm2:135m does not support tools"}))
    with pytest.raises(ProviderError) as err:
        provider(api).generate("hi", ProviderContext(tools=TOOLS))
    assert err.value.code == "E1001" and "?structured=1" in err.value.message


def test_out_of_memory_is_not_retried_but_falls_back(api):
    api.replies.append(Reply(500, {"error": "model requires more system memory (5.5 GiB) than is available (3.1 GiB)"}))
    with pytest.raises(ProviderError) as err:
        provider(api).generate("hi", ProviderContext())
    assert (err.value.code, err.value.retryable, err.value.fallbackable) == ("E3001", False, True)


@pytest.mark.parametrize("streaming", [False, True])
def test_timeout_is_e3003(api, streaming):
    api.replies.append(Reply(200, final("late"), delay_s=1.0))
    p = provider(api, timeout_s=0.2)
    with pytest.raises(ProviderError) as err:
        list(p.stream("hi", ProviderContext())) if streaming else p.generate("hi", ProviderContext())
    assert err.value.code == "E3003" and err.value.retryable


def test_per_call_timeout_wins(api):
    api.replies.append(stream_reply(chunk("a"), final(), chunk_delay_s=0.6))
    with pytest.raises(ProviderError) as err:
        list(provider(api, timeout_s=30).stream("hi", ProviderContext(timeout_s=0.2)))
    assert err.value.code == "E3003"


def test_nothing_listening_is_e3001():
    with FakeApi() as fake:
        url = fake.url
    p = OllamaProvider(MODEL, url, timeout_s=2)
    for run in (lambda: p.generate("hi", ProviderContext()), lambda: list(p.stream("hi", ProviderContext()))):
        with pytest.raises(ProviderError) as err:
            run()
        assert err.value.code == "E3001" and "ollama serve" in err.value.message and err.value.fallbackable


def test_cancel_mid_stream_is_e4002(api):
    api.replies.append(stream_reply(chunk("one "), chunk("two "), chunk("three"), final(), chunk_delay_s=0.1))
    cancel = threading.Event()
    seen = []
    with pytest.raises(ProviderError) as err:
        for event in provider(api).stream("hi", ProviderContext(cancel=cancel)):
            seen.append(event)
            cancel.set()
    assert err.value.code == "E4002" and not err.value.retryable
    assert [e.text for e in seen] == ["one "]


def test_cancel_before_generate_sends_nothing(api):
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(ProviderError) as err:
        provider(api).generate("hi", ProviderContext(cancel=cancel))
    assert err.value.code == "E4002" and api.requests == []


# -- wiring --------------------------------------------------------------------------------------


def test_spec_wiring_through_make_provider(api):
    api.replies.append(Reply(200, final("hi")))
    api.replies.append(Reply(503, {"error": "server busy"}))
    p = make_provider(f"ollama:{MODEL}@{api.url}?retries=0&timeout=5&temperature=0.1&max_tokens=32")
    assert p.name == f"ollama:{MODEL}"
    assert p.generate("hi", ProviderContext()).text == "hi"
    assert api.requests[0].body["model"] == MODEL
    assert api.requests[0].body["options"] == {"temperature": 0.1, "num_predict": 32}
    with pytest.raises(ProviderError) as err:
        p.generate("hi", ProviderContext())
    assert err.value.code == "E3002" and len(api.requests) == 2     # retries=0: no second try
    p.close()


def test_ollama_host_and_api_key_from_the_environment(api, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", api.url)
    monkeypatch.setenv("OLLAMA_API_KEY", "sk-test")
    api.replies.append(Reply(200, final("hi")))
    p = OllamaProvider(MODEL)
    assert p.host == api.url
    assert p.generate("hi", ProviderContext()).text == "hi"
    assert api.requests[0].headers["authorization"] == "Bearer sk-test"


def test_default_host_and_hosted_api_needs_a_key(monkeypatch):
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    monkeypatch.delenv("OLLAMA_API_KEY", raising=False)
    assert OllamaProvider(MODEL).host == "http://127.0.0.1:11434"
    with pytest.raises(ProviderError) as err:
        OllamaProvider("gpt-oss:120b", "https://ollama.com").generate("hi", ProviderContext())
    assert err.value.code == "E1002" and "OLLAMA_API_KEY" in err.value.message and err.value.fallbackable

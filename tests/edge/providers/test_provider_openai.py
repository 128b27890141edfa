"""The openai provider against a loopback server speaking Chat Completions' documented wire format."""

from __future__ import annotations

import threading

import pytest

from edge.providers.base import Message, ProviderContext, ProviderError, Tool
from edge.providers.errors import STANDARD_ERRORS
from edge.providers.events import (Metadata, PartialContentDelta, StreamEnd, ThinkingDelta, ToolCallStarted,
                                   collect)
from edge.providers.factory import make_provider
from edge.providers.openai_api import OpenAIProvider
from edge.providers.openai_errors import reset_seconds
from fake_api import FakeApi, Reply, sse
from fake_api import api  # noqa: F401  (fixture)

WAVE = Tool("wave", "Wave a hand.", {"type": "object", "properties": {"hand": {"enum": ["left", "right"]}}})
LOOK = Tool("look", "Turn the head.", {"type": "object", "properties": {"direction": {"type": "string"}},
                                       "required": ["direction"]})




@pytest.fixture(autouse=True)
def no_env_keys(monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(name, raising=False)


def make(api: FakeApi, **kwargs) -> OpenAIProvider:
    kwargs.setdefault("api_key", "sk-test")
    return OpenAIProvider("gpt-test", api.url + "/v1", timeout_s=5, **kwargs)


def completion(content=None, tool_calls=None, finish="stop", **message) -> dict:
    msg = {"role": "assistant", "content": content, **message}
    if tool_calls is not None:
        msg["tool_calls"] = tool_calls
    return {"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-test-2025", "choices": [
        {"index": 0, "message": msg, "finish_reason": finish}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}}


def call(name: str, arguments: str, call_id: str | None = "call_1") -> dict:
    out = {"type": "function", "function": {"name": name, "arguments": arguments}}
    return {**out, "id": call_id} if call_id else out


def chunk(delta: dict | None = None, finish: str | None = None, **extra) -> dict:
    choices = [] if delta is None and finish is None else [{"index": 0, "delta": delta or {},
                                                             "finish_reason": finish}]
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-test-2025", "choices": choices,
            **extra}


USAGE = chunk(usage={"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12})


def tool_delta(index: int, call_id: str | None = None, name: str | None = None, args: str = "") -> dict:
    fragment: dict = {"index": index, "function": {"arguments": args}}
    if call_id:
        fragment.update(id=call_id, type="function")
        fragment["function"]["name"] = name
    return {"tool_calls": [fragment]}


# -- requests ------------------------------------------------------------------------------


def test_generate_sends_openai_request_and_returns_text(api):
    api.replies.append(Reply(body=completion("Hello there.")))
    context = ProviderContext(tools=[WAVE, LOOK], system="You are Robo.", temperature=0.3, max_tokens=50,
                              top_p=0.9, stop=["###"], tool_choice={"name": "look"},
                              history=[Message("user", "hi"), Message("assistant", "hello"), Message("tool", "ok")])
    with make(api, temperature=0.9, max_tokens=999) as provider:
        response = provider.generate("look left", context)
    request = api.requests[0]
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.headers["Authorization"] == "Bearer sk-test"
    body = request.body
    assert body["model"] == "gpt-test"
    assert body["messages"] == [{"role": "system", "content": "You are Robo."}, {"role": "user", "content": "hi"},
                                {"role": "assistant", "content": "hello"},
                                {"role": "user", "content": "Tool result: ok"},
                                {"role": "user", "content": "look left"}]
    assert body["tools"][0] == {"type": "function", "function": {"name": "wave", "description": "Wave a hand.",
                                                                 "parameters": WAVE.parameters}}
    assert body["tool_choice"] == {"type": "function", "function": {"name": "look"}}
    assert (body["temperature"], body["max_tokens"], body["top_p"], body["stop"]) == (0.3, 50, 0.9, ["###"])
    assert "max_completion_tokens" not in body and "stream" not in body and "response_format" not in body
    assert response.text == "Hello there." and response.tool_calls == []
    meta = response.metadata
    assert (meta["model"], meta["finish_reason"]) == ("gpt-test-2025", "end_turn")
    assert meta["usage"] == {"prompt_tokens": 12, "completion_tokens": 5} and meta["latency_s"] >= 0


def test_constructor_defaults_apply_and_string_tool_choice_passes(api):
    api.replies.append(Reply(body=completion("ok")))
    with make(api, temperature=0.9, max_tokens=99) as provider:
        provider.generate("hi", ProviderContext(tools=[WAVE], tool_choice="required"))
    body = api.requests[0].body
    assert (body["temperature"], body["max_tokens"], body["tool_choice"]) == (0.9, 99, "required")


def test_official_host_sends_max_completion_tokens_and_needs_a_key(monkeypatch):
    provider = OpenAIProvider("gpt-4o-mini", api_key="sk-x", max_tokens=64)
    body, _ = provider.request_body("hi", ProviderContext(), stream=False)
    assert provider.base_url == "https://api.openai.com/v1"
    assert body["max_completion_tokens"] == 64 and "max_tokens" not in body
    keyless = OpenAIProvider("gpt-4o-mini")
    for call_it in (lambda: keyless.generate("hi", ProviderContext()),
                    lambda: list(keyless.stream("hi", ProviderContext()))):
        with pytest.raises(ProviderError) as err:
            call_it()
        assert err.value.code == "E1002" and "OPENAI_API_KEY" in err.value.message and err.value.fallbackable
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    assert OpenAIProvider("gpt-4o-mini").api_key == "sk-env"


def test_custom_url_needs_no_key(api):
    api.replies.append(Reply(body=completion("ok")))
    with make(api, api_key=None) as provider:
        assert provider.generate("hi", ProviderContext()).text == "ok"
    assert "Authorization" not in api.requests[0].headers


def test_response_format_maps_to_openai_shape(api):
    api.replies.append(Reply(body=completion('{"mood": "happy"}')))
    schema = {"type": "object", "properties": {"mood": {"type": "string"}}}
    with make(api) as provider:
        provider.generate("mood?", ProviderContext(response_format={"type": "json_schema", "schema": schema}))
    assert api.requests[0].body["response_format"] == {
        "type": "json_schema", "json_schema": {"name": "response", "schema": schema, "strict": False}}


def test_unknown_tool_choice_is_invalid_request(api):
    with make(api) as provider, pytest.raises(ProviderError) as err:
        provider.generate("hi", ProviderContext(tools=[WAVE], tool_choice={"name": "dance"}))
    assert err.value.code == "E1001" and api.requests == []


# -- replies (non-streaming) -----------------------------------------------------------------


def test_generate_tool_calls_mixed_with_text_in_order(api):
    api.replies.append(Reply(body=completion("Sure!", [call("wave", '{"hand": "left"}', "call_a"),
                                                       call("look", '{"direction": "up"}', None)], "tool_calls")))
    with make(api) as provider:
        response = provider.generate("wave and look up", ProviderContext(tools=[WAVE, LOOK]))
    assert [s.type for s in response.segments] == ["text", "tool_call", "tool_call"]
    first, second = response.tool_calls
    assert (first.id, first.name, first.args) == ("call_a", "wave", {"hand": "left"})
    assert (second.name, second.args) == ("look", {"direction": "up"}) and len(second.id) == 36  # a UUID
    assert response.metadata["finish_reason"] == "tool_use"


def test_generate_invalid_tool_args_become_an_error_segment(api):
    api.replies.append(Reply(body=completion(None, [call("wave", '{"hand": "le')], "tool_calls")))
    with make(api) as provider:
        response = provider.generate("wave", ProviderContext(tools=[WAVE]))
    assert response.tool_calls == [] and "'wave'" in response.errors[0] and "not valid JSON" in response.errors[0]


@pytest.mark.parametrize("finish, expected", [("length", "max_tokens"), ("content_filter", "content_filter"),
                                              ("function_call", "tool_use"), (None, "end_turn")])
def test_finish_reasons_are_normalized(api, finish, expected):
    api.replies.append(Reply(body=completion("x", finish=finish)))
    with make(api) as provider:
        assert provider.generate("hi", ProviderContext()).metadata["finish_reason"] == expected


# -- streaming -------------------------------------------------------------------------------


def test_stream_text_ends_with_metadata_and_stream_end(api):
    api.replies.append(Reply(chunks=sse(chunk({"role": "assistant", "content": None}), chunk({"content": "Hel"}),
                                        chunk({"content": "lo"}), chunk({}, "stop"), USAGE, done=True)))
    with make(api) as provider:
        events = list(provider.stream("hi", ProviderContext()))
    assert [type(e) for e in events] == [PartialContentDelta, PartialContentDelta, Metadata, StreamEnd]
    assert events[-2].usage == {"prompt_tokens": 9, "completion_tokens": 3} and events[-2].model == "gpt-test-2025"
    assert events[-1].finish_reason == "end_turn" and collect(events).text == "Hello"
    body = api.requests[0].body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


def test_stream_mixed_text_and_two_fragmented_tool_calls(api):
    api.replies.append(Reply(chunks=sse(
        chunk({"role": "assistant", "content": "On it."}),
        chunk(tool_delta(0, "call_a", "wave")), chunk(tool_delta(0, args='{"hand":')),
        chunk(tool_delta(0, args='"right"}')),
        chunk(tool_delta(1, "call_b", "look", '{"direction"')), chunk(tool_delta(1, args=': "down"}')),
        chunk({}, "tool_calls"), USAGE, done=True)))
    with make(api) as provider:
        events = list(provider.stream("go", ProviderContext(tools=[WAVE, LOOK])))
    response = collect(events)
    assert [s.type for s in response.segments] == ["text", "tool_call", "tool_call"]
    assert [(c.id, c.name, c.args) for c in response.tool_calls] == [
        ("call_a", "wave", {"hand": "right"}), ("call_b", "look", {"direction": "down"})]
    assert response.metadata["finish_reason"] == "tool_use"
    assert [e.type for e in events[-2:]] == ["Metadata", "StreamEnd"]


def test_stream_invalid_tool_args_and_thinking(api):
    api.replies.append(Reply(chunks=sse(chunk({"reasoning_content": "hmm"}),
                                        chunk(tool_delta(0, "c1", "wave", "{oops")), chunk({}, "tool_calls"),
                                        done=True)))
    with make(api) as provider:
        events = list(provider.stream("wave", ProviderContext(tools=[WAVE])))
    assert isinstance(events[0], ThinkingDelta) and isinstance(events[1], ToolCallStarted)
    response = collect(events)
    assert response.tool_calls == [] and "'wave'" in response.errors[0]
    assert response.metadata["thinking"] == "hmm"


def test_stream_from_a_server_that_omits_index_and_says_stop(api):
    """Some compatible servers send whole tool calls without ``index`` and finish with "stop"."""
    api.replies.append(Reply(chunks=sse(chunk({"tool_calls": [call("wave", '{"hand": "left"}', "c1")]}),
                                        chunk({"tool_calls": [call("look", '{"direction": "up"}', "c2")]}),
                                        chunk({}, "stop"), done=True)))
    with make(api) as provider:
        response = collect(provider.stream("go", ProviderContext(tools=[WAVE, LOOK])))
    assert [(c.id, c.name) for c in response.tool_calls] == [("c1", "wave"), ("c2", "look")]
    assert response.metadata["finish_reason"] == "tool_use" and "usage" not in response.metadata


def test_env_base_url_and_org_headers(api, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", api.url + "/v1")
    monkeypatch.setenv("OPENAI_ORG_ID", "org-1")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-1")
    api.replies.append(Reply(body=completion("ok")))
    with OpenAIProvider("gpt-test") as provider:
        assert provider.generate("hi", ProviderContext()).text == "ok"
    headers = api.requests[0].headers
    assert (headers["OpenAI-Organization"], headers["OpenAI-Project"]) == ("org-1", "proj-1")


@pytest.mark.parametrize("frames, code, words", [
    (sse(chunk({"content": "a"}), "{not json", done=True), "E9999", "malformed"),
    (sse(chunk({"content": "a"}), {"error": {"message": "The server had an error", "type": "server_error"}}),
     "E3001", "server had an error"),
    (sse(chunk({"content": "a"})), "E3001", "before it finished"),
    (sse({"error": {"code": 400, "message": "request exceeds the available context size",
                    "type": "exceed_context_size_error"}}), "E1005", "context size"),   # llama.cpp's shape
])
def test_stream_failures_are_provider_errors(api, frames, code, words):
    api.replies.append(Reply(chunks=frames))
    with make(api) as provider, pytest.raises(ProviderError) as err:
        list(provider.stream("hi", ProviderContext()))
    assert err.value.code == code and words in err.value.message and "openai:gpt-test" in err.value.message


def test_cancel_mid_stream(api):
    api.replies.append(Reply(chunks=sse(*[chunk({"content": f"{i} "}) for i in range(20)], done=True),
                             chunk_delay_s=0.05))
    cancel = threading.Event()
    seen = []
    with make(api) as provider, pytest.raises(ProviderError) as err:
        for event in provider.stream("count", ProviderContext(cancel=cancel)):
            seen.append(event)
            cancel.set()
    assert err.value.code == "E4002" and len(seen) == 1 and not err.value.retryable


def test_cancelled_before_start_sends_nothing(api):
    cancel = threading.Event()
    cancel.set()
    with make(api) as provider, pytest.raises(ProviderError) as err:
        provider.generate("hi", ProviderContext(cancel=cancel))
    assert err.value.code == "E4002" and api.requests == []


@pytest.mark.parametrize("streaming", [False, True])
def test_timeout_is_e3003(api, streaming):
    api.replies.append(Reply(body=completion("late"), delay_s=1.0))
    with make(api) as provider, pytest.raises(ProviderError) as err:
        run = provider.stream if streaming else provider.generate
        result = run("hi", ProviderContext(timeout_s=0.2))
        if streaming:
            list(result)
    assert err.value.code == "E3003" and err.value.retryable


# -- HTTP errors -----------------------------------------------------------------------------

ERRORS = [
    (400, {"message": "Unrecognized request argument supplied: foo", "type": "invalid_request_error"}, "E1001"),
    (400, {"message": "Your input exceeds the context window of this model.", "type": "invalid_request_error",
           "code": "context_length_exceeded"}, "E1005"),
    (401, {"message": "Incorrect API key provided: sk-x.", "type": "invalid_request_error", "code": "invalid_api_key"},
     "E1002"),
    (403, {"message": "Country, region, or territory not supported", "type": "request_forbidden",
           "code": "unsupported_country_region_territory"}, "E1003"),
    (404, {"message": "The model `gpt-9` does not exist", "type": "invalid_request_error", "code": "model_not_found"},
     "E1004"),
    (413, {"message": "Request too large", "type": "invalid_request_error"}, "E1005"),
    (429, {"message": "Rate limit reached for gpt-4o on requests per day. Visit https://platform.openai.com/account/"
                      "billing to add a payment method.", "type": "requests", "code": "rate_limit_exceeded"}, "E2001"),
    (429, {"message": "You exceeded your current quota, please check your plan and billing details.",
           "type": "insufficient_quota", "code": "insufficient_quota"}, "E2002"),
    (500, {"message": "The server had an error while processing your request.", "type": "server_error"}, "E3001"),
    (503, {"message": "The engine is currently overloaded, please try again later.", "type": "server_error"}, "E3002"),
    (529, {"message": "overloaded", "type": "server_error"}, "E3002"),
]


@pytest.mark.parametrize("streaming", [False, True], ids=["generate", "stream"])
@pytest.mark.parametrize("status, error, code", ERRORS, ids=[f"{s}-{c}" for s, _, c in ERRORS])
def test_http_errors_map_to_standard_codes(api, status, error, code, streaming):
    api.replies.append(Reply(status, body={"error": {**error, "param": None}}, headers={"Retry-After": "7"}))
    with make(api) as provider, pytest.raises(ProviderError) as err:
        if streaming:
            list(provider.stream("hi", ProviderContext()))
        else:
            provider.generate("hi", ProviderContext())
    standard = STANDARD_ERRORS[code]
    assert (err.value.code, err.value.status, err.value.retry_after) == (code, status, 7.0)
    assert (err.value.retryable, err.value.fallbackable) == (standard.retryable, standard.fallbackable)
    assert error["message"] in err.value.message and err.value.provider == "openai:gpt-test"


def test_rate_limit_reset_headers_stand_in_for_retry_after(api):
    error = {"error": {"message": "Rate limit reached", "type": "tokens", "code": "rate_limit_exceeded"}}
    api.replies.append(Reply(429, body=error, headers={"x-ratelimit-reset-requests": "1s",
                                                      "x-ratelimit-reset-tokens": "1m30s"}))
    with make(api) as provider, pytest.raises(ProviderError) as err:
        provider.generate("hi", ProviderContext())
    assert err.value.code == "E2001" and err.value.retry_after == 90.0
    assert (reset_seconds("20ms"), reset_seconds("6m0s"), reset_seconds("soon")) == (0.02, 360.0, None)


# -- structured-output mode ----------------------------------------------------------------


def test_structured_generate_sends_decision_schema_instead_of_tools(api):
    api.replies.append(Reply(body=completion('{"action": "look", "params": {"direction": "left"}}')))
    with make(api, structured=True) as provider:
        response = provider.generate("look left", ProviderContext(tools=[WAVE, LOOK], system="Be brief.", stop=["\n"]))
    body = api.requests[0].body
    assert "tools" not in body and "stop" not in body
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "decision"
    assert fmt["json_schema"]["strict"] is False
    consts = [b["properties"]["action"]["const"] for b in fmt["json_schema"]["schema"]["anyOf"]]
    assert consts == ["wave", "look", "none"]
    system = body["messages"][0]["content"]
    assert system.startswith("Be brief.") and "- look(direction)" in system
    assert [(c.name, c.args) for c in response.tool_calls] == [("look", {"direction": "left"})]
    assert response.metadata["finish_reason"] == "tool_use" and response.metadata["usage"]["prompt_tokens"] == 12


@pytest.mark.parametrize("choice, consts", [("required", ["wave", "look"]), ({"name": "wave"}, ["wave"])])
def test_structured_tool_choice_narrows_the_schema(api, choice, consts):
    api.replies.append(Reply(body=completion('{"action": "wave", "params": {}}')))
    with make(api) as provider:
        provider.generate("hi", ProviderContext(tools=[WAVE, LOOK], structured=True, tool_choice=choice))
    schema = api.requests[0].body["response_format"]["json_schema"]["schema"]
    assert [b["properties"]["action"]["const"] for b in schema["anyOf"]] == consts


def test_structured_unparsable_and_cut_off_replies_are_error_segments(api):
    api.replies.append(Reply(body=completion('{"action": "wave", "par', finish="length")))
    with make(api, structured=True) as provider:
        response = provider.generate("hi", ProviderContext(tools=[WAVE]))
    assert response.tool_calls == [] and response.errors[0].startswith("reply cut off at max_tokens")
    assert response.metadata["finish_reason"] == "max_tokens"


def test_structured_stream_yields_the_decision_as_a_tool_call(api):
    api.replies.append(Reply(chunks=sse(chunk({"content": '{"action": "wave", '}),
                                        chunk({"content": '"params": {"hand": "left"}}'}), chunk({}, "stop"),
                                        USAGE, done=True)))
    with make(api, structured=True) as provider:
        events = list(provider.stream("wave", ProviderContext(tools=[WAVE])))
    assert not any(isinstance(e, PartialContentDelta) for e in events)
    response = collect(events)
    assert [(c.name, c.args) for c in response.tool_calls] == [("wave", {"hand": "left"})]
    assert response.metadata["finish_reason"] == "tool_use" and response.metadata["usage"]["completion_tokens"] == 3


# -- the SPEC wiring -----------------------------------------------------------------------


def test_make_provider_spec_reaches_the_api(api):
    api.replies.append(Reply(body=completion(None, [call("wave", "{}")], "tool_calls")))
    api.replies.append(Reply(503, body={"error": {"message": "overloaded", "type": "server_error"}}))
    provider = make_provider(f"openai:gpt-test@{api.url}/v1?retries=0&temperature=0.5&max_tokens=20&timeout=5")
    try:
        assert provider.name == "openai:gpt-test"
        assert provider.generate("wave", ProviderContext(tools=[WAVE])).tool_calls[0].name == "wave"
        with pytest.raises(ProviderError) as err:
            provider.generate("again", ProviderContext())
    finally:
        provider.close()
    assert err.value.code == "E3002" and len(api.requests) == 2
    body = api.requests[0].body
    assert (body["model"], body["temperature"], body["max_tokens"]) == ("gpt-test", 0.5, 20)

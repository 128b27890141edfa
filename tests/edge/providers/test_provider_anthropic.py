"""The anthropic provider against a local server speaking the Messages API wire format."""

from __future__ import annotations

import threading

import pytest

from edge.providers.anthropic_api import AnthropicProvider
from edge.providers.base import Message, ProviderContext, ProviderError, Tool
from edge.providers.events import (Metadata, PartialContentDelta, PartialToolCall, StreamEnd, ThinkingDelta,
                                   ToolCallEnded, ToolCallStarted, collect)
from edge.providers.factory import make_provider
from fake_api import Reply, named_sse
from fake_api import api  # noqa: F401  (fixture)

MOVE = Tool("move", "Move the robot. Slowly.", {"type": "object", "properties": {"direction": {
    "type": "string", "enum": ["left", "right"]}}, "required": ["direction"]})
SPEAK = Tool("speak", "Say something.", {"type": "object", "properties": {"text": {"type": "string"}},
                                          "required": ["text"], "additionalProperties": False})
WAVE = Tool("wave", "Wave a hand.", {})




@pytest.fixture
def provider(api):
    p = AnthropicProvider("claude-test", api.url, api_key="sk-test", timeout_s=5)
    yield p
    p.close()


def message(*content: dict, stop_reason: str = "end_turn", usage: dict | None = None) -> dict:
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test-20250101",
            "content": list(content), "stop_reason": stop_reason, "stop_sequence": None,
            "usage": usage or {"input_tokens": 12, "output_tokens": 5}}


def text(t: str) -> dict:
    return {"type": "text", "text": t}


def tool_use(name: str, args: object, call_id: str = "toolu_1") -> dict:
    return {"type": "tool_use", "id": call_id, "name": name, "input": args}


def error_body(kind: str, msg: str) -> dict:
    return {"type": "error", "error": {"type": kind, "message": msg}}


def stream_frames(*blocks: tuple[str, list], stop_reason: str = "end_turn", stop: bool = True) -> list[str]:
    """A Messages stream: message_start, each block (start, its deltas, stop), message_delta, message_stop.
    A block is ("text", [pieces]), ("tool", [id, name, json pieces...]) or ("thinking", [pieces])."""
    pairs: list[tuple[str, dict]] = [("message_start", {"type": "message_start", "message": {
        **message(), "content": [], "stop_reason": None, "usage": {"input_tokens": 20, "output_tokens": 1}}}),
        ("ping", {"type": "ping"})]
    for index, (kind, pieces) in enumerate(blocks):
        if kind == "tool":
            start = {"type": "tool_use", "id": pieces[0], "name": pieces[1], "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces[2:]]
        elif kind == "thinking":
            start = {"type": "thinking", "thinking": ""}
            deltas = [{"type": "thinking_delta", "thinking": p} for p in pieces]
        else:
            start = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": p} for p in pieces]
        pairs.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": start}))
        pairs += [("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}) for d in deltas]
        pairs.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    pairs.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop_reason},
                                    "usage": {"output_tokens": 9}}))
    if stop:
        pairs.append(("message_stop", {"type": "message_stop"}))
    return named_sse(*pairs)


# -- the request ------------------------------------------------------------------------------


def test_request_carries_auth_system_history_tools_and_mapped_params(api, provider):
    api.replies.append(Reply(200, message(text("ok"))))
    context = ProviderContext(
        tools=[MOVE, SPEAK], system="You are Robo.", tool_choice="required", temperature=1.5, top_p=0.9,
        stop=["END"], max_tokens=64,
        history=[Message("system", "Be brief."), Message("user", "hi"), Message("assistant", "hello"),
                 Message("tool", "moved left")])
    provider.generate("what now?", context)
    request = api.requests[0]
    assert (request.method, request.path) == ("POST", "/v1/messages")
    assert request.headers["x-api-key"] == "sk-test"
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.headers["content-type"] == "application/json"
    body = request.body
    assert body["model"] == "claude-test"
    assert body["system"] == "You are Robo.\n\nBe brief."
    assert body["messages"] == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": [{"type": "text", "text": "Tool result: moved left"},
                                     {"type": "text", "text": "what now?"}]}]
    assert body["tools"] == [
        {"name": "move", "description": "Move the robot. Slowly.", "input_schema": MOVE.parameters},
        {"name": "speak", "description": "Say something.", "input_schema": SPEAK.parameters}]
    assert body["tool_choice"] == {"type": "any"}
    assert body["temperature"] == 1.0          # clamped to the API's 0..1
    assert (body["top_p"], body["stop_sequences"], body["max_tokens"]) == (0.9, ["END"], 64)
    assert "stream" not in body


def test_defaults_and_per_call_values(api):
    provider = AnthropicProvider("claude-test", api.url, api_key="k", temperature=0.3, max_tokens=300)
    api.replies += [Reply(200, message(text("a"))), Reply(200, message(text("b")))]
    provider.generate("x", ProviderContext())
    provider.generate("x", ProviderContext(temperature=0.7, max_tokens=50))
    first, second = (r.body for r in api.requests)
    assert (first["temperature"], first["max_tokens"]) == (0.3, 300)
    assert (second["temperature"], second["max_tokens"]) == (0.7, 50)
    for key in ("tools", "tool_choice", "system", "top_p", "stop_sequences"):
        assert key not in first
    bare = AnthropicProvider("claude-test", api.url, api_key="k")
    api.replies.append(Reply(200, message(text("c"))))
    bare.generate("x", ProviderContext())
    assert api.requests[-1].body["max_tokens"] == 1024   # required by the API
    assert "temperature" not in api.requests[-1].body


@pytest.mark.parametrize("choice, wire", [("auto", {"type": "auto"}), ("required", {"type": "any"}),
                                          ("none", {"type": "none"}),
                                          ({"name": "move"}, {"type": "tool", "name": "move"})])
def test_tool_choice_mapping(api, provider, choice, wire):
    api.replies.append(Reply(200, message(text("ok"))))
    provider.generate("go", ProviderContext(tools=[MOVE], tool_choice=choice))
    assert api.requests[0].body["tool_choice"] == wire


@pytest.mark.parametrize("choice", ["sometimes", {"name": "fly"}])
def test_unknown_tool_choice_is_an_invalid_request(api, provider, choice):
    with pytest.raises(ProviderError) as err:
        provider.generate("go", ProviderContext(tools=[MOVE], tool_choice=choice))
    assert err.value.code == "E1001" and not api.requests


def test_tool_without_parameters_gets_an_object_schema(api, provider):
    api.replies.append(Reply(200, message(text("ok"))))
    provider.generate("go", ProviderContext(tools=[WAVE]))
    assert api.requests[0].body["tools"][0]["input_schema"] == {"type": "object", "properties": {}}


def test_response_format_becomes_a_system_instruction(api, provider):
    api.replies.append(Reply(200, message(text("{}"))))
    schema = {"type": "object", "properties": {"mood": {"type": "string"}}}
    provider.generate("mood?", ProviderContext(system="Sys.",
                                               response_format={"type": "json_schema", "schema": schema}))
    system = api.requests[0].body["system"]
    assert system.startswith("Sys.\n\nReply with only one JSON object")
    assert '{"type":"object","properties":{"mood":{"type":"string"}}}' in system


# -- replies (non-streaming) ----------------------------------------------------------------------


def test_text_reply_with_metadata(api, provider):
    usage = {"input_tokens": 10, "cache_read_input_tokens": 90, "cache_creation_input_tokens": None,
             "output_tokens": 7}
    api.replies.append(Reply(200, message(text("Hello "), text("there."), usage=usage)))
    response = provider.generate("hi", ProviderContext())
    assert [s.to_json() for s in response.segments] == [{"type": "text", "text": "Hello there."}]
    meta = response.metadata
    assert meta["model"] == "claude-test-20250101"
    assert meta["usage"] == {"prompt_tokens": 100, "completion_tokens": 7}
    assert meta["finish_reason"] == "end_turn" and meta["latency_s"] >= 0


def test_tool_call_reply(api, provider):
    api.replies.append(Reply(200, message(tool_use("move", {"direction": "left"}), stop_reason="tool_use")))
    response = provider.generate("go", ProviderContext(tools=[MOVE]))
    (call,) = response.tool_calls
    assert (call.id, call.name, call.args) == ("toolu_1", "move", {"direction": "left"})
    assert response.metadata["finish_reason"] == "tool_use"


def test_mixed_text_and_two_tool_calls_keep_their_order(api, provider):
    api.replies.append(Reply(200, message(
        {"type": "thinking", "thinking": "left is closer", "signature": "sig"}, text("On my way."),
        tool_use("move", {"direction": "left"}, "toolu_a"), tool_use("speak", {"text": "hi"}, "toolu_b"),
        stop_reason="tool_use")))
    response = provider.generate("go", ProviderContext(tools=[MOVE, SPEAK]))
    assert [s.type for s in response.segments] == ["text", "tool_call", "tool_call"]
    assert [(c.id, c.name) for c in response.tool_calls] == [("toolu_a", "move"), ("toolu_b", "speak")]
    assert response.metadata["thinking"] == "left is closer"


def test_invalid_tool_input_becomes_an_error_segment(api, provider):
    api.replies.append(Reply(200, message(tool_use("move", '{"direction": "le'), tool_use("speak", [1], "toolu_2"),
                                          stop_reason="tool_use")))
    response = provider.generate("go", ProviderContext(tools=[MOVE, SPEAK]))
    assert not response.tool_calls
    assert len(response.errors) == 2
    assert "'move'" in response.errors[0] and "not valid JSON" in response.errors[0]
    assert "'speak'" in response.errors[1] and "not a JSON object" in response.errors[1]


def test_tool_use_without_id_gets_a_uuid(api, provider):
    api.replies.append(Reply(200, message({"type": "tool_use", "name": "wave", "input": {}})))
    (call,) = provider.generate("go", ProviderContext(tools=[WAVE])).tool_calls
    assert len(call.id) == 36 and call.args == {}


@pytest.mark.parametrize("stop_reason, finish", [("max_tokens", "max_tokens"), ("stop_sequence", "stop_sequence"),
                                                 ("refusal", "content_filter"), ("end_turn", "end_turn")])
def test_stop_reasons_are_normalized(api, provider, stop_reason, finish):
    api.replies.append(Reply(200, message(text("x"), stop_reason=stop_reason)))
    assert provider.generate("x", ProviderContext()).metadata["finish_reason"] == finish


def test_a_body_without_content_is_unknown(api, provider):
    api.replies.append(Reply(200, {"id": "msg_1", "type": "message"}))
    with pytest.raises(ProviderError) as err:
        provider.generate("x", ProviderContext())
    assert err.value.code == "E9999" and "anthropic:claude-test" in err.value.message


# -- streaming --------------------------------------------------------------------------------


def test_stream_text(api, provider):
    api.replies.append(Reply(200, chunks=stream_frames(("text", ["Hel", "lo"]))))
    events = list(provider.stream("hi", ProviderContext()))
    assert api.requests[0].body["stream"] is True
    assert [type(e) for e in events] == [PartialContentDelta, PartialContentDelta, Metadata, StreamEnd]
    assert events[2].model == "claude-test-20250101"
    assert events[2].usage == {"prompt_tokens": 20, "completion_tokens": 9}
    assert events[3].finish_reason == "end_turn"


def test_stream_mixed_text_thinking_and_two_tool_calls(api, provider):
    api.replies.append(Reply(200, chunks=stream_frames(
        ("thinking", ["hmm"]), ("text", ["Going."]),
        ("tool", ["toolu_a", "move", '{"direc', 'tion": "left"}']),
        ("tool", ["toolu_b", "speak", '{"text": "hi"}']), stop_reason="tool_use")))
    events = list(provider.stream("go", ProviderContext(tools=[MOVE, SPEAK])))
    kinds = [type(e) for e in events]
    assert kinds == [ThinkingDelta, PartialContentDelta, ToolCallStarted, PartialToolCall, PartialToolCall,
                     ToolCallEnded, ToolCallStarted, PartialToolCall, ToolCallEnded, Metadata, StreamEnd]
    response = collect(events)
    assert [s.type for s in response.segments] == ["text", "tool_call", "tool_call"]
    assert [(c.id, c.name, c.args) for c in response.tool_calls] == [
        ("toolu_a", "move", {"direction": "left"}), ("toolu_b", "speak", {"text": "hi"})]
    assert response.metadata["finish_reason"] == "tool_use" and response.metadata["thinking"] == "hmm"


def test_stream_invalid_tool_json_becomes_an_error_segment(api, provider):
    api.replies.append(Reply(200, chunks=stream_frames(("tool", ["toolu_a", "move", '{"direction": '])),
                             ))
    response = collect(provider.stream("go", ProviderContext(tools=[MOVE])))
    assert not response.tool_calls and "not valid JSON" in response.errors[0]


def test_stream_tool_input_given_whole_at_block_start(api, provider):
    frames = stream_frames(("tool", ["toolu_a", "move"]), stop_reason="tool_use")
    frames[2] = frames[2].replace('"input": {}', '"input": {"direction": "right"}')   # a proxy's shortcut
    api.replies.append(Reply(200, chunks=frames))
    (call,) = collect(provider.stream("go", ProviderContext(tools=[MOVE]))).tool_calls
    assert call.args == {"direction": "right"}


def test_stream_malformed_chunk_is_unknown_naming_the_provider(api, provider):
    frames = stream_frames(("text", ["ok"]))
    frames.insert(3, "event: content_block_delta\ndata: {not json\n\n")
    api.replies.append(Reply(200, chunks=frames))
    with pytest.raises(ProviderError) as err:
        list(provider.stream("x", ProviderContext()))
    assert err.value.code == "E9999" and "anthropic:claude-test" in err.value.message
    assert "{not json" in err.value.message


def test_stream_error_event_is_classified_by_type(api, provider):
    frames = stream_frames(("text", ["par"]), stop=False)[:3]
    frames += named_sse(("error", error_body("overloaded_error", "Overloaded")))
    api.replies.append(Reply(200, chunks=frames))
    with pytest.raises(ProviderError) as err:
        list(provider.stream("x", ProviderContext()))
    assert (err.value.code, err.value.retryable, err.value.fallbackable) == ("E3002", True, True)
    assert "Overloaded" in err.value.message


def test_stream_cut_before_message_stop_is_a_server_error(api, provider):
    api.replies.append(Reply(200, chunks=stream_frames(("text", ["half"]), stop=False)))
    with pytest.raises(ProviderError) as err:
        list(provider.stream("x", ProviderContext()))
    assert err.value.code == "E3001" and "message_stop" in err.value.message


def test_cancel_mid_stream(api, provider):
    api.replies.append(Reply(200, chunks=stream_frames(("text", ["a", "b", "c", "d", "e"])), chunk_delay_s=0.05))
    cancel = threading.Event()
    seen = []
    with pytest.raises(ProviderError) as err:
        for event in provider.stream("x", ProviderContext(cancel=cancel)):
            seen.append(event)
            cancel.set()
    assert err.value.code == "E4002" and len(seen) == 1


def test_cancel_before_the_call(api, provider):
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(ProviderError) as err:
        provider.generate("x", ProviderContext(cancel=cancel))
    assert err.value.code == "E4002" and not api.requests


# -- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize("status, kind, msg, code", [
    (400, "invalid_request_error", "messages: field required", "E1001"),
    (400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum", "E1005"),
    (400, "invalid_request_error", "Your credit balance is too low to access the Anthropic API.", "E2002"),
    (401, "authentication_error", "invalid x-api-key", "E1002"),
    (403, "permission_error", "Your API key does not have permission", "E1003"),
    (404, "not_found_error", "model: claude-nope", "E1004"),
    (413, "request_too_large", "Request exceeds the maximum allowed number of bytes.", "E1005"),
    (429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit", "E2001"),
    (429, "rate_limit_error", "You have reached your specified API usage limits (quota)", "E2002"),
    (500, "api_error", "Internal server error", "E3001"),
    (503, "api_error", "Service unavailable", "E3002"),
    (529, "overloaded_error", "Overloaded", "E3002"),
])
def test_http_errors_map_to_standard_codes(api, provider, status, kind, msg, code):
    from edge.providers.errors import STANDARD_ERRORS
    api.replies.append(Reply(status, error_body(kind, msg), headers={"retry-after": "7"}))
    with pytest.raises(ProviderError) as err:
        provider.generate("x", ProviderContext())
    e = err.value
    standard = STANDARD_ERRORS[code]
    assert (e.code, e.retryable, e.fallbackable) == (code, standard.retryable, standard.fallbackable)
    assert (e.status, e.retry_after, e.provider) == (status, 7.0, "anthropic:claude-test")
    assert msg in e.message


def test_http_error_before_a_stream(api, provider):
    api.replies.append(Reply(529, error_body("overloaded_error", "Overloaded")))
    with pytest.raises(ProviderError) as err:
        list(provider.stream("x", ProviderContext()))
    assert err.value.code == "E3002"


def test_timeout(api, provider):
    api.replies.append(Reply(200, message(text("late")), delay_s=1.0))
    with pytest.raises(ProviderError) as err:
        provider.generate("x", ProviderContext(timeout_s=0.2))
    assert err.value.code == "E3003" and err.value.retryable


def test_missing_key_for_the_official_host_names_the_variable(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ProviderError) as err:
        AnthropicProvider("claude-test").generate("x", ProviderContext())
    assert err.value.code == "E1002" and "ANTHROPIC_API_KEY" in err.value.message and err.value.fallbackable


def test_key_from_the_environment_and_none_needed_for_a_custom_url(api, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    api.replies += [Reply(200, message(text("a"))), Reply(200, message(text("b")))]
    AnthropicProvider("claude-test", api.url).generate("x", ProviderContext())
    assert "x-api-key" not in api.requests[0].headers
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-env")
    AnthropicProvider("claude-test", api.url).generate("x", ProviderContext())
    assert api.requests[1].headers["x-api-key"] == "sk-env"


def test_spec_wiring(api, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-env")
    provider = make_provider(f"anthropic:claude-test@{api.url}?retries=0&temperature=0.4&max_tokens=77")
    api.replies += [Reply(200, message(text("hi"))), Reply(429, error_body("rate_limit_error", "slow down"))]
    assert provider.name == "anthropic:claude-test"
    assert provider.generate("x", ProviderContext()).text == "hi"
    assert (api.requests[0].body["temperature"], api.requests[0].body["max_tokens"]) == (0.4, 77)
    with pytest.raises(ProviderError) as err:
        provider.generate("x", ProviderContext())
    assert err.value.code == "E2001" and len(api.requests) == 2   # retries=0: not retried
    provider.close()

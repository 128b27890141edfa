"""The gemini provider against a local server speaking the Generative Language API wire format
(the schema cleanup has its own tests in test_gemini_schema.py)."""

from __future__ import annotations

import threading

import pytest

from edge.providers.base import Message, ProviderContext, ProviderError, Tool
from edge.providers.errors import STANDARD_ERRORS
from edge.providers.events import (Metadata, PartialContentDelta, PartialToolCall, StreamEnd, ThinkingDelta,
                                   ToolCallEnded, ToolCallStarted, collect)
from edge.providers.factory import make_provider
from edge.providers.gemini_api import GeminiProvider
from fake_api import Reply, sse
from fake_api import api  # noqa: F401  (fixture)
from .test_gemini_schema import SCHEMA_KEYS, schema_keys

MOVE = Tool("move", "Move the robot.", {"type": "object", "properties": {
    "direction": {"type": "string", "enum": ["left", "right"]}}, "required": ["direction"],
    "additionalProperties": False, "$schema": "https://json-schema.org/draft/2020-12/schema"})
SPEAK = Tool("speak", "Say something.", {"type": "object", "properties": {
    "text": {"type": "string", "title": "Text", "maxLength": 100}}, "required": ["text"]})
WAVE = Tool("wave", "Wave a hand.", {})
GENERATE = "/v1beta/models/gemini-test:generateContent"
STREAM = "/v1beta/models/gemini-test:streamGenerateContent?alt=sse"





@pytest.fixture
def provider(api):
    p = GeminiProvider("gemini-test", api.url, api_key="AIza-test", timeout_s=5)
    yield p
    p.close()


def reply(*parts: dict, finish: str | None = "STOP", usage: dict | None = None, **extra) -> dict:
    candidate: dict = {"content": {"role": "model", "parts": list(parts)}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    body = {"candidates": [candidate], "modelVersion": "gemini-test-001", **extra}
    if usage is not False:
        body["usageMetadata"] = usage or {"promptTokenCount": 11, "candidatesTokenCount": 4, "totalTokenCount": 15}
    return body


def text(t: str, **extra) -> dict:
    return {"text": t, **extra}


def call(name: str, args: object = None, **extra) -> dict:
    fc = {"name": name, **extra}
    if args is not None:
        fc["args"] = args
    return {"functionCall": fc}


def rpc_error(code: int, status: str, msg: str, *details: dict) -> dict:
    return {"error": {"code": code, "message": msg, "status": status, "details": list(details)}}


# -- the request ------------------------------------------------------------------------------


def test_request_carries_key_header_contents_tools_and_generation_config(api, provider):
    api.replies.append(Reply(200, reply(text("ok"))))
    context = ProviderContext(
        tools=[MOVE, SPEAK, WAVE], system="You are Robo.", tool_choice="required", temperature=1.5, top_p=0.9,
        stop=["END"], max_tokens=64,
        history=[Message("system", "Be brief."), Message("user", "hi"), Message("assistant", "hello"),
                 Message("tool", "moved left")])
    provider.generate("what now?", context)
    request = api.requests[0]
    assert (request.method, request.path) == ("POST", GENERATE)
    assert request.headers["x-goog-api-key"] == "AIza-test" and "key=" not in request.path
    body = request.body
    assert body["systemInstruction"] == {"parts": [{"text": "You are Robo.\n\nBe brief."}]}
    assert body["contents"] == [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "model", "parts": [{"text": "hello"}]},
        {"role": "user", "parts": [{"text": "Tool result: moved left"}, {"text": "what now?"}]}]
    assert body["tools"] == [{"functionDeclarations": [
        {"name": "move", "description": "Move the robot.", "parameters": {
            "type": "OBJECT", "properties": {"direction": {"type": "STRING", "enum": ["left", "right"]}},
            "required": ["direction"]}},
        {"name": "speak", "description": "Say something.", "parameters": {
            "type": "OBJECT", "properties": {"text": {"type": "STRING", "maxLength": 100}}, "required": ["text"]}},
        {"name": "wave", "description": "Wave a hand."}]}]
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "ANY"}}
    assert body["generationConfig"] == {"temperature": 1.5, "maxOutputTokens": 64, "topP": 0.9,
                                        "stopSequences": ["END"]}


def test_defaults_per_call_values_and_model_prefix(api):
    provider = GeminiProvider("models/gemini-test", api.url, api_key="k", temperature=0.3, max_tokens=300)
    api.replies += [Reply(200, reply(text("a"))), Reply(200, reply(text("b")))]
    provider.generate("x", ProviderContext())
    provider.generate("x", ProviderContext(temperature=0.7, max_tokens=50))
    first, second = api.requests
    assert first.path == GENERATE and provider.name == "gemini:gemini-test"
    assert first.body == {"contents": [{"role": "user", "parts": [{"text": "x"}]}],
                          "generationConfig": {"temperature": 0.3, "maxOutputTokens": 300}}
    assert second.body["generationConfig"] == {"temperature": 0.7, "maxOutputTokens": 50}


@pytest.mark.parametrize("choice, config", [
    ("auto", {"mode": "AUTO"}), ("required", {"mode": "ANY"}), ("none", {"mode": "NONE"}),
    ({"name": "move"}, {"mode": "ANY", "allowedFunctionNames": ["move"]})])
def test_tool_choice_mapping(api, provider, choice, config):
    api.replies.append(Reply(200, reply(text("ok"))))
    provider.generate("go", ProviderContext(tools=[MOVE], tool_choice=choice))
    assert api.requests[0].body["toolConfig"] == {"functionCallingConfig": config}


@pytest.mark.parametrize("choice", ["sometimes", {"name": "fly"}])
def test_unknown_tool_choice_is_an_invalid_request(api, provider, choice):
    with pytest.raises(ProviderError) as err:
        provider.generate("go", ProviderContext(tools=[MOVE], tool_choice=choice))
    assert err.value.code == "E1001" and not api.requests


def test_response_format_maps_to_json_mode(api, provider):
    schema = {"type": "object", "properties": {"mood": {"type": "string"}, "level": {"type": "integer"}},
              "additionalProperties": False}
    api.replies += [Reply(200, reply(text("{}"))), Reply(200, reply(text("{}")))]
    provider.generate("mood?", ProviderContext(response_format={"type": "json_schema", "schema": schema}))
    provider.generate("mood?", ProviderContext(response_format={"type": "json_object"}))
    assert api.requests[0].body["generationConfig"] == {"responseMimeType": "application/json", "responseSchema": {
        "type": "OBJECT", "properties": {"mood": {"type": "STRING"}, "level": {"type": "INTEGER"}},
        "propertyOrdering": ["mood", "level"]}}
    assert api.requests[1].body["generationConfig"] == {"responseMimeType": "application/json"}


# -- replies (non-streaming) ----------------------------------------------------------------------


def test_text_reply_with_metadata(api, provider):
    usage = {"promptTokenCount": 11, "candidatesTokenCount": 4, "thoughtsTokenCount": 6}
    api.replies.append(Reply(200, reply(text("Hello "), text("there."), usage=usage)))
    response = provider.generate("hi", ProviderContext())
    assert [s.to_json() for s in response.segments] == [{"type": "text", "text": "Hello there."}]
    meta = response.metadata
    assert meta["model"] == "gemini-test-001"
    assert meta["usage"] == {"prompt_tokens": 11, "completion_tokens": 10, "reasoning_tokens": 6}
    assert meta["finish_reason"] == "end_turn" and meta["latency_s"] >= 0


def test_tool_call_reply_gets_a_uuid(api, provider):
    api.replies.append(Reply(200, reply(call("move", {"direction": "left"}))))
    response = provider.generate("go", ProviderContext(tools=[MOVE]))
    (tool_call,) = response.tool_calls
    assert (tool_call.name, tool_call.args, len(tool_call.id)) == ("move", {"direction": "left"}, 36)
    assert response.metadata["finish_reason"] == "tool_use"


def test_mixed_text_thought_and_two_tool_calls_keep_their_order(api, provider):
    api.replies.append(Reply(200, reply(text("left is closer", thought=True), text("On my way."),
                                        call("move", {"direction": "left"}, id="call-1"), call("wave"))))
    response = provider.generate("go", ProviderContext(tools=[MOVE, WAVE]))
    assert [s.type for s in response.segments] == ["text", "tool_call", "tool_call"]
    assert response.text == "On my way."
    (first, second) = response.tool_calls
    assert (first.id, first.name, second.name, second.args) == ("call-1", "move", "wave", {})
    assert first.id != second.id and response.metadata["thinking"] == "left is closer"


def test_invalid_tool_args_become_error_segments(api, provider):
    api.replies.append(Reply(200, reply(call("move", '{"direction": "le'), call("speak", ["hi"]))))
    response = provider.generate("go", ProviderContext(tools=[MOVE, SPEAK]))
    assert not response.tool_calls and len(response.errors) == 2
    assert "'move'" in response.errors[0] and "not valid JSON" in response.errors[0]
    assert "'speak'" in response.errors[1] and "not a JSON object" in response.errors[1]


@pytest.mark.parametrize("reason, finish", [("MAX_TOKENS", "max_tokens"), ("SAFETY", "content_filter"),
                                            ("RECITATION", "content_filter"), ("OTHER", "end_turn")])
def test_finish_reasons_are_normalized(api, provider, reason, finish):
    api.replies.append(Reply(200, reply(text("x"), finish=reason)))
    assert provider.generate("x", ProviderContext()).metadata["finish_reason"] == finish


def test_malformed_function_call_is_an_error_segment(api, provider):
    api.replies.append(Reply(200, reply(finish="MALFORMED_FUNCTION_CALL",
                                        candidates=[{"finishReason": "MALFORMED_FUNCTION_CALL",
                                                     "finishMessage": "Malformed function call: move(dir=)"}])))
    response = provider.generate("go", ProviderContext(tools=[MOVE]))
    assert response.metadata["finish_reason"] == "error"
    assert "Malformed function call: move(dir=)" in response.errors[0]


def test_blocked_prompt_is_content_filter(api, provider):
    api.replies.append(Reply(200, {"promptFeedback": {"blockReason": "SAFETY"},
                                   "usageMetadata": {"promptTokenCount": 3}}))
    response = provider.generate("x", ProviderContext())
    assert response.segments == [] and response.metadata["finish_reason"] == "content_filter"
    assert "SAFETY" in response.metadata["finish_detail"]


def test_a_reply_without_finish_reason_is_unknown(api, provider):
    api.replies.append(Reply(200, {"candidates": []}))
    with pytest.raises(ProviderError) as err:
        provider.generate("x", ProviderContext())
    assert err.value.code == "E9999" and "gemini:gemini-test" in err.value.message


# -- structured mode --------------------------------------------------------------------------


def test_structured_mode_sends_the_decision_schema_and_parses_the_reply(api):
    provider = GeminiProvider("gemini-test", api.url, api_key="k", structured=True)
    api.replies.append(Reply(200, reply(text('{"action": "move", "params": {"direction": "left"}}'))))
    response = provider.generate("go", ProviderContext(tools=[MOVE, WAVE], system="You are Robo."))
    body = api.requests[0].body
    assert "tools" not in body and "toolConfig" not in body
    assert body["systemInstruction"]["parts"][0]["text"].startswith("You are Robo.\n\nPick the best action")
    config = body["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    move_branch = config["responseSchema"]["anyOf"][0]
    assert move_branch["properties"]["action"] == {"type": "STRING", "enum": ["move"]}
    assert move_branch["propertyOrdering"] == ["action", "params"]
    assert schema_keys(config["responseSchema"]) <= SCHEMA_KEYS
    (tool_call,) = response.tool_calls
    assert (tool_call.name, tool_call.args) == ("move", {"direction": "left"})
    assert response.metadata["finish_reason"] == "tool_use" and response.metadata["model"] == "gemini-test-001"


def test_structured_mode_per_call_and_a_cut_reply(api, provider):
    api.replies.append(Reply(200, reply(text('{"action": "mo'), finish="MAX_TOKENS")))
    response = provider.generate("go", ProviderContext(tools=[MOVE], structured=True))
    assert "cut off" in response.errors[0] and response.metadata["finish_reason"] == "max_tokens"


def test_structured_mode_with_an_action_without_parameters(api, provider):
    api.replies.append(Reply(200, reply(text('{"action": "wave"}'))))
    response = provider.generate("go", ProviderContext(tools=[WAVE], structured=True))
    wave_branch = api.requests[0].body["generationConfig"]["responseSchema"]["anyOf"][0]
    assert wave_branch == {"type": "OBJECT", "properties": {"action": {"type": "STRING", "enum": ["wave"]}},
                           "required": ["action"], "propertyOrdering": ["action"]}
    assert [(c.name, c.args) for c in response.tool_calls] == [("wave", {})]


def test_structured_stream_replays_the_parsed_decision(api, provider):
    api.replies.append(Reply(200, chunks=sse(reply(text('{"action": "mo'), finish=None, usage=False),
                                             reply(text('ve", "params": {"direction": "right"}}')))))
    events = list(provider.stream("go", ProviderContext(tools=[MOVE], structured=True)))
    assert [type(e) for e in events] == [ToolCallStarted, PartialToolCall, ToolCallEnded, Metadata, StreamEnd]
    assert collect(events).tool_calls[0].args == {"direction": "right"}


# -- streaming --------------------------------------------------------------------------------


def test_stream_text(api, provider):
    api.replies.append(Reply(200, chunks=sse(reply(text("Hel"), finish=None, usage=False), reply(text("lo")))))
    events = list(provider.stream("hi", ProviderContext()))
    assert api.requests[0].path == STREAM
    assert [type(e) for e in events] == [PartialContentDelta, PartialContentDelta, Metadata, StreamEnd]
    assert events[2].usage == {"prompt_tokens": 11, "completion_tokens": 4}
    assert (events[2].model, events[3].finish_reason) == ("gemini-test-001", "end_turn")


def test_stream_mixed_text_and_two_tool_calls(api, provider):
    api.replies.append(Reply(200, chunks=sse(
        reply(text("plan", thought=True), text("Going."), finish=None, usage=False),
        reply(call("move", {"direction": "left"}), finish=None, usage=False), reply(call("speak", {"text": "hi"})))))
    events = list(provider.stream("go", ProviderContext(tools=[MOVE, SPEAK])))
    assert [type(e) for e in events] == [ThinkingDelta, PartialContentDelta, ToolCallStarted, PartialToolCall,
                                         ToolCallEnded, ToolCallStarted, PartialToolCall, ToolCallEnded, Metadata,
                                         StreamEnd]
    response = collect(events)
    assert [s.type for s in response.segments] == ["text", "tool_call", "tool_call"]
    assert [c.name for c in response.tool_calls] == ["move", "speak"]
    assert response.metadata["finish_reason"] == "tool_use"


def test_stream_invalid_tool_args_become_an_error_segment(api, provider):
    api.replies.append(Reply(200, chunks=sse(reply(call("move", "{direction")))))
    response = collect(provider.stream("go", ProviderContext(tools=[MOVE])))
    assert not response.tool_calls and "not valid JSON" in response.errors[0]


def test_stream_malformed_chunk_is_unknown_naming_the_provider(api, provider):
    api.replies.append(Reply(200, chunks=sse(reply(text("ok"), finish=None), "{not json")))
    with pytest.raises(ProviderError) as err:
        list(provider.stream("x", ProviderContext()))
    assert err.value.code == "E9999" and "gemini:gemini-test" in err.value.message and "{not json" in err.value.message


def test_stream_error_chunk_is_classified(api, provider):
    api.replies.append(Reply(200, chunks=sse(reply(text("par"), finish=None),
                                             rpc_error(503, "UNAVAILABLE", "The model is overloaded."))))
    with pytest.raises(ProviderError) as err:
        list(provider.stream("x", ProviderContext()))
    assert (err.value.code, err.value.retryable) == ("E3002", True) and "overloaded" in err.value.message


def test_stream_cut_before_finish_reason_is_a_server_error(api, provider):
    api.replies.append(Reply(200, chunks=sse(reply(text("half"), finish=None))))
    with pytest.raises(ProviderError) as err:
        list(provider.stream("x", ProviderContext()))
    assert err.value.code == "E3001" and "finishReason" in err.value.message


def test_cancel_mid_stream(api, provider):
    api.replies.append(Reply(200, chunks=sse(*[reply(text(c), finish=None) for c in "abcde"]), chunk_delay_s=0.05))
    cancel = threading.Event()
    seen = []
    with pytest.raises(ProviderError) as err:
        for event in provider.stream("x", ProviderContext(cancel=cancel)):
            seen.append(event)
            cancel.set()
    assert err.value.code == "E4002" and len(seen) == 1


# -- errors -----------------------------------------------------------------------------------

RETRY_INFO = {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "34s"}
KEY_INVALID = {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID",
               "domain": "googleapis.com"}


def quota(quota_id: str) -> dict:
    return {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [
        {"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests", "quotaId": quota_id}]}


PER_MINUTE = quota("GenerateRequestsPerMinutePerProjectPerModel-FreeTier")
PER_DAY = quota("GenerateRequestsPerDayPerProjectPerModel-FreeTier")
EXCEEDED = "You exceeded your current quota, please check your plan and billing details."


@pytest.mark.parametrize("status, body, code", [
    (400, rpc_error(400, "INVALID_ARGUMENT", "Invalid JSON payload received."), "E1001"),
    (400, rpc_error(400, "INVALID_ARGUMENT", "The input token count (1200000) exceeds the maximum number of "
                                             "tokens allowed (1048576)."), "E1005"),
    (400, rpc_error(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.", KEY_INVALID),
     "E1002"),
    (401, rpc_error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials."), "E1002"),
    (403, rpc_error(403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers."), "E1003"),
    (404, rpc_error(404, "NOT_FOUND", "models/gemini-nope is not found for API version v1beta"), "E1004"),
    (413, "<html>Request Entity Too Large</html>", "E1005"),
    (429, rpc_error(429, "RESOURCE_EXHAUSTED", EXCEEDED, PER_MINUTE), "E2001"),
    (429, rpc_error(429, "RESOURCE_EXHAUSTED", EXCEEDED, PER_DAY), "E2002"),
    (429, rpc_error(429, "RESOURCE_EXHAUSTED", "Your prepayment credits are depleted."), "E2002"),
    (500, rpc_error(500, "INTERNAL", "An internal error has occurred."), "E3001"),
    (503, rpc_error(503, "UNAVAILABLE", "The model is overloaded. Please try again later."), "E3002"),
    (504, rpc_error(504, "DEADLINE_EXCEEDED", "Deadline exceeded."), "E3003"),
    (529, {"error": {"message": "overloaded"}}, "E3002"),
])
def test_http_errors_map_to_standard_codes(api, provider, status, body, code):
    api.replies.append(Reply(status, body, headers={"retry-after": "7"}))
    with pytest.raises(ProviderError) as err:
        provider.generate("x", ProviderContext())
    e = err.value
    standard = STANDARD_ERRORS[code]
    assert (e.code, e.retryable, e.fallbackable) == (code, standard.retryable, standard.fallbackable)
    assert (e.status, e.retry_after, e.provider) == (status, 7.0, "gemini:gemini-test")


def test_retry_info_is_carried_without_a_header(api, provider):
    api.replies.append(Reply(429, rpc_error(429, "RESOURCE_EXHAUSTED", EXCEEDED, PER_MINUTE, RETRY_INFO)))
    with pytest.raises(ProviderError) as err:
        list(provider.stream("x", ProviderContext()))
    assert (err.value.code, err.value.retry_after) == ("E2001", 34.0)
    assert EXCEEDED in err.value.message


def test_timeout(api, provider):
    api.replies.append(Reply(200, reply(text("late")), delay_s=1.0))
    with pytest.raises(ProviderError) as err:
        provider.generate("x", ProviderContext(timeout_s=0.2))
    assert err.value.code == "E3003" and err.value.retryable


def test_cancel_before_the_call(api, provider):
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(ProviderError) as err:
        provider.generate("x", ProviderContext(cancel=cancel))
    assert err.value.code == "E4002" and not api.requests


def test_missing_key_for_the_official_host_names_both_variables(monkeypatch):
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    with pytest.raises(ProviderError) as err:
        GeminiProvider("gemini-test").generate("x", ProviderContext())
    assert err.value.code == "E1002"
    assert "GEMINI_API_KEY" in err.value.message and "GOOGLE_API_KEY" in err.value.message


def test_key_from_either_variable_and_none_needed_for_a_custom_url(api, monkeypatch):
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    api.replies += [Reply(200, reply(text("a"))) for _ in range(3)]
    GeminiProvider("gemini-test", api.url).generate("x", ProviderContext())
    assert "x-goog-api-key" not in api.requests[0].headers
    monkeypatch.setenv("GOOGLE_API_KEY", "google-key")
    GeminiProvider("gemini-test", api.url).generate("x", ProviderContext())
    monkeypatch.setenv("GEMINI_API_KEY", "gemini-key")
    GeminiProvider("gemini-test", api.url).generate("x", ProviderContext())
    assert [r.headers.get("x-goog-api-key") for r in api.requests[1:]] == ["google-key", "gemini-key"]


def test_spec_wiring(api, monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", "k")
    provider = make_provider(f"gemini:gemini-test@{api.url}?retries=0&structured=1&max_tokens=77")
    api.replies += [Reply(200, reply(text('{"action": "none"}'))),
                    Reply(503, rpc_error(503, "UNAVAILABLE", "overloaded"))]
    assert provider.name == "gemini:gemini-test"
    response = provider.generate("x", ProviderContext(tools=[MOVE]))
    assert response.segments == [] and response.metadata["decision"] == "none"
    assert api.requests[0].body["generationConfig"]["maxOutputTokens"] == 77
    with pytest.raises(ProviderError) as err:
        provider.generate("x", ProviderContext(tools=[MOVE]))
    assert err.value.code == "E3002" and len(api.requests) == 2   # retries=0: not retried
    provider.close()

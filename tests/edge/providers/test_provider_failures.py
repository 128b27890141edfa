"""How remote failures are classified and what the runtime then does, over real HTTP.

Each test watches behaviour a caller would see: how many requests reached the server, which
provider answered, what the stream delivered, how long the retry policy asked to wait. They
pin down gaps a mutation check found: a stream retried after it had delivered words, a 422
context overflow, a 401 whose body names only a generic error type, and E4001 (conflict),
which the spec's error table calls retryable but its standard retry policy does not list.
"""

from __future__ import annotations

import json

import pytest

from edge.providers.anthropic_api import AnthropicProvider
from edge.providers.base import ProviderContext, ProviderError
from edge.providers.errors import code_for_status
from edge.providers.events import PartialContentDelta
from edge.providers.gemini_api import GeminiProvider
from edge.providers.openai_api import OpenAIProvider
from edge.providers.resilience import FallbackChain, Retrying, RetryPolicy
from edge.providers.scripted import ScriptedProvider
from fake_api import FakeApi, Reply, sse
from fake_api import api  # noqa: F401  (fixture)


@pytest.fixture(autouse=True)
def no_env_keys(monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)


class Waits:
    """The retry policy's sleep, recorded instead of slept."""

    def __init__(self) -> None:
        self.asked: list[float] = []

    def __call__(self, seconds: float, context: ProviderContext) -> None:
        self.asked.append(seconds)


def openai(api: FakeApi) -> OpenAIProvider:
    return OpenAIProvider("gpt-test", api.url + "/v1", api_key="sk-test", timeout_s=5)


def chunk(content: str | None = None, finish: str | None = None) -> dict:
    delta = {"content": content} if content is not None else {}
    return {"id": "c1", "object": "chat.completion.chunk", "model": "gpt-test",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def whole(text: str) -> list[str]:
    return sse(chunk(text), chunk(finish="stop"), done=True)


def texts(events) -> list[str]:
    return [e.text for e in events if isinstance(e, PartialContentDelta)]


# -- a stream is retried only before its first event -----------------------------------------

def test_a_stream_cut_after_its_first_words_is_not_retried(api):
    """The caller already showed "Hel" "lo": a retry would show them again, then a second answer."""
    api.replies += [Reply(chunks=sse(chunk("Hel"), chunk("lo"))),          # the connection ends mid-answer
                    Reply(chunks=whole("a second answer"))]
    waits = Waits()
    seen = []
    provider = Retrying(openai(api), RetryPolicy(jitter=0.0), sleep=waits)
    with pytest.raises(ProviderError) as err:
        for event in provider.stream("hi", ProviderContext()):
            seen.append(event)
    assert err.value.code == "E3001" and err.value.retryable       # retryable in itself...
    assert texts(seen) == ["Hel", "lo"]                            # ...but the words went out once
    assert len(api.requests) == 1 and waits.asked == []
    provider.close()


def test_a_stream_that_fails_before_any_event_is_retried(api):
    api.replies += [Reply(503, {"error": {"message": "busy", "type": "server_error"}}),
                    Reply(chunks=whole("hello"))]
    waits = Waits()
    provider = Retrying(openai(api), RetryPolicy(jitter=0.0), sleep=waits)
    assert texts(provider.stream("hi", ProviderContext())) == ["hello"]
    assert len(api.requests) == 2 and waits.asked == [1.0]
    provider.close()


def test_a_chain_does_not_fall_back_once_the_first_provider_has_spoken(api):
    api.replies.append(Reply(chunks=sse(chunk("Hel"))))
    backup = ScriptedProvider([{"text": "from the backup"}])
    chain = FallbackChain([openai(api), backup])
    seen = []
    with pytest.raises(ProviderError) as err:
        for event in chain.stream("hi", ProviderContext()):
            seen.append(event)
    assert err.value.code == "E3001" and err.value.fallbackable
    assert texts(seen) == ["Hel"] and backup.calls == []
    chain.close()


# -- context overflow reported as 422 ---------------------------------------------------------

OVERFLOW = "This model's maximum context length is 2048 tokens. However, your messages resulted in 3100 tokens."


@pytest.mark.parametrize("status", [400, 422])
def test_a_context_overflow_is_request_too_large_and_is_not_retried(api, status):
    api.replies.append(Reply(status, {"error": {"message": OVERFLOW, "type": "invalid_request_error"}}))
    api.default = Reply(chunks=whole("never asked for"))
    waits = Waits()
    provider = Retrying(openai(api), RetryPolicy(jitter=0.0), sleep=waits)
    try:
        with pytest.raises(ProviderError) as err:
            provider.generate("a very long prompt", ProviderContext())
    finally:
        api.default = None
        provider.close()
    assert (err.value.code, err.value.status) == ("E1005", status)
    assert len(api.requests) == 1 and waits.asked == []


def test_a_422_that_is_not_about_the_context_stays_an_invalid_request():
    assert code_for_status(422, "temperature: must be <= 2") == "E1001"
    assert code_for_status(422, "prompt is too long: 210000 tokens > 200000 maximum") == "E1005"


# -- the HTTP status wins over a generic error type in the body -------------------------------

GENERIC_401 = [
    ("openai", {"error": {"message": "Invalid bearer token", "type": "invalid_request_error", "code": None}}),
    ("openai", {"error": {"message": "Invalid bearer token", "type": "server_error"}}),
    ("anthropic", {"type": "error", "error": {"type": "invalid_request_error", "message": "Invalid bearer token"}}),
    ("anthropic", {"type": "error", "error": {"type": "api_error", "message": "Invalid bearer token"}}),
    ("gemini", {"error": {"code": 401, "message": "Invalid bearer token", "status": "INVALID_ARGUMENT"}}),
    ("gemini", {"error": {"code": 401, "message": "Invalid bearer token", "status": "UNKNOWN"}}),
]


def remote(kind: str, api: FakeApi):
    if kind == "openai":
        return openai(api)
    if kind == "anthropic":
        return AnthropicProvider("claude-test", api.url, api_key="sk-test", timeout_s=5)
    return GeminiProvider("gemini-test", api.url, api_key="AIza-test", timeout_s=5)


@pytest.mark.parametrize("kind, body", GENERIC_401, ids=[f"{k}-{i}" for i, (k, _) in enumerate(GENERIC_401)])
def test_a_401_with_a_generic_body_type_is_an_authentication_failure_and_falls_back(api, kind, body):
    """A proxy in front of the API (or the API itself) answers 401 with a generic type: it is
    still a wrong key, so the chain moves on to the next provider instead of giving up."""
    api.replies.append(Reply(401, body))
    backup = ScriptedProvider([{"text": "the backup answered"}])
    first = remote(kind, api)
    with pytest.raises(ProviderError) as err:
        first.generate("hi", ProviderContext())
    assert (err.value.code, err.value.status) == ("E1002", 401), json.dumps(body)
    api.replies.append(Reply(401, body))
    chain = FallbackChain([first, backup])
    assert chain.generate("hi", ProviderContext()).text == "the backup answered"
    assert len(api.requests) == 2 and len(backup.calls) == 1
    chain.close()


def test_a_generic_body_type_does_not_override_a_specific_one_or_a_vague_status(api):
    anthropic = remote("anthropic", api)
    api.replies.append(Reply(400, {"type": "error", "error": {"type": "invalid_request_error",
                                                              "message": "Your credit balance is too low"}}))
    api.replies.append(Reply(418, {"type": "error", "error": {"type": "api_error", "message": "teapot"}}))
    codes = []
    for _ in range(2):
        with pytest.raises(ProviderError) as err:
            anthropic.generate("hi", ProviderContext())
        codes.append(err.value.code)
    assert codes == ["E2002", "E3001"]     # quota stays quota; a 418 says less than api_error does
    anthropic.close()


# -- E4001 conflict: retryable in the table, not in the spec's standard policy ------------------

def test_the_standard_policy_does_not_retry_a_conflict(api):
    api.replies += [Reply(409, {"error": {"message": "another request holds this", "type": "conflict"}}),
                    Reply(body={"id": "x", "object": "chat.completion", "model": "gpt-test", "choices": [
                        {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}]})]
    waits = Waits()
    provider = Retrying(openai(api), RetryPolicy(jitter=0.0), sleep=waits)
    with pytest.raises(ProviderError) as err:
        provider.generate("hi", ProviderContext())
    assert err.value.code == "E4001" and err.value.retryable      # the table's flag...
    assert len(api.requests) == 1 and waits.asked == []           # ...but not in the standard list
    provider.close()


def test_a_policy_that_lists_conflict_retries_it(api):
    api.replies += [Reply(409, {"error": {"message": "another request holds this", "type": "conflict"}}),
                    Reply(body={"id": "x", "object": "chat.completion", "model": "gpt-test", "choices": [
                        {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}]})]
    waits = Waits()
    policy = RetryPolicy(jitter=0.0, retryable_codes=frozenset({"conflict", "server_error"}))
    provider = Retrying(openai(api), policy, sleep=waits)
    assert provider.generate("hi", ProviderContext()).text == "ok"
    assert len(api.requests) == 2 and waits.asked == [1.0]
    provider.close()


def test_a_policy_cannot_list_what_retrying_will_not_fix():
    with pytest.raises(ValueError, match="'invalid_request' .* is not a retryable error"):
        RetryPolicy(retryable_codes=frozenset({"invalid_request"}))
    with pytest.raises(ValueError, match="unknown error 'E7777'"):
        RetryPolicy(retryable_codes=frozenset({"E7777"}))

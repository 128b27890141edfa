"""Error classification, retry policy and fallback chains, on a controllable clock."""

from __future__ import annotations

import random
import socket

import pytest

from edge.providers.base import ContentSegment, ProviderContext, ProviderError, ProviderResponse, Tool, ToolCall
from edge.providers.breaker import BreakerPolicy, CircuitBreaker
from edge.providers.errors import STANDARD_ERRORS, code_for_status, parse_retry_after
from edge.providers.events import (Metadata, PartialContentDelta, PartialToolCall, StreamEnd, StreamError,
                                   ToolCallEnded, ToolCallStarted, collect, replay)
from edge.providers.factory import make_provider
from edge.providers.resilience import FallbackChain, Retrying, RetryPolicy
from edge.providers.scripted import ScriptedProvider


def test_the_thirteen_codes_and_their_flags():
    assert len(STANDARD_ERRORS) == 13
    retryable = {c for c, e in STANDARD_ERRORS.items() if e.retryable}
    fallbackable = {c for c, e in STANDARD_ERRORS.items() if e.fallbackable}
    assert retryable == {"E2001", "E3001", "E3002", "E3003", "E4001"}   # the spec's table; what the
    # standard retry policy retries (E4001 not by default) is in test_provider_failures.py
    assert fallbackable == {"E1002", "E2001", "E2002", "E3001", "E3002", "E3003"}
    err = ProviderError("E3002", "busy")
    assert err.retryable and err.fallbackable and err.name == "overloaded"


@pytest.mark.parametrize("status, message, code", [
    (400, "bad field", "E1001"), (401, "", "E1002"), (403, "", "E1003"), (404, "", "E1004"),
    (413, "", "E1005"), (400, "This model's maximum context length is 2048 tokens", "E1005"),
    (429, "slow down", "E2001"), (429, "You exceeded your current quota", "E2002"),
    (500, "", "E3001"), (502, "", "E3001"), (503, "", "E3002"), (529, "Overloaded", "E3002"),
    (504, "", "E3003"), (408, "", "E3003"), (409, "", "E4001"), (418, "", "E1001"), (599, "", "E3001"),
])
def test_status_mapping(status, message, code):
    assert code_for_status(status, message) == code


def test_retry_after_forms():
    assert parse_retry_after({"Retry-After": "7"}) == 7.0
    assert parse_retry_after({"retry-after-ms": "250"}) == 0.25
    assert parse_retry_after({"Retry-After": "Wed, 21 Oct 2015 07:28:10 GMT"}, now=1445412480.0) == 10.0
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({}) is None


def test_backoff_is_exponential_capped_and_jittered():
    policy = RetryPolicy(jitter=0.0)
    assert [policy.delay(a) for a in range(7)] == [1, 2, 4, 8, 16, 30, 30]
    jittered = RetryPolicy()
    delays = [jittered.delay(2, rng=random.Random(seed)) for seed in range(50)]
    assert all(3.6 <= d <= 4.4 for d in delays) and len(set(delays)) > 40


class Clock:
    def __init__(self) -> None:
        self.waits: list[float] = []

    def sleep(self, seconds: float, context) -> None:
        self.waits.append(seconds)


def test_retries_retryable_errors_then_succeeds():
    clock = Clock()
    inner = ScriptedProvider([{"error": {"code": "E3002", "message": "overloaded"}},
                              {"error": {"code": "E2001", "message": "slow", "retry_after": 5}},
                              {"text": "hello"}])
    provider = Retrying(inner, RetryPolicy(jitter=0.0), sleep=clock.sleep)
    assert provider.generate("hi", ProviderContext()).text == "hello"
    assert clock.waits == [1.0, 5.0]  # backoff, then the server's Retry-After


def test_gives_up_after_max_retries_and_never_retries_client_errors():
    clock = Clock()
    always = ScriptedProvider([{"error": {"code": "E3001", "message": "down"}}], loop=True)
    with pytest.raises(ProviderError) as err:
        Retrying(always, RetryPolicy(jitter=0.0), sleep=clock.sleep).generate("hi", ProviderContext())
    assert err.value.code == "E3001" and clock.waits == [1.0, 2.0, 4.0] and len(always.calls) == 4
    clock.waits.clear()
    bad = ScriptedProvider([{"error": {"code": "E1001", "message": "bad"}}])
    with pytest.raises(ProviderError):
        Retrying(bad, sleep=clock.sleep).generate("hi", ProviderContext())
    assert clock.waits == [] and len(bad.calls) == 1


def test_too_long_retry_after_is_not_waited_out():
    clock = Clock()
    inner = ScriptedProvider([{"error": {"code": "E2001", "message": "slow", "retry_after": 3600}}])
    with pytest.raises(ProviderError) as err:
        Retrying(inner, sleep=clock.sleep).generate("hi", ProviderContext())
    assert err.value.retry_after == 3600 and clock.waits == []


def test_fallback_only_on_fallbackable_errors():
    first = ScriptedProvider([{"error": {"code": "E3001", "message": "down"}}, {"error": {"code": "E1001", "message": "bad"}}])
    second = ScriptedProvider([{"text": "from the second"}], loop=True)
    now = [0.0]
    chain = FallbackChain([first, second], clock=lambda: now[0])
    response = chain.generate("hi", ProviderContext())
    assert response.text == "from the second"
    now[0] = 5.0  # the first one's breaker half-opens: its trial call answers E1001
    with pytest.raises(ProviderError) as err:
        chain.generate("hi", ProviderContext())  # E1001: not fallbackable, surfaces at once
    assert err.value.code == "E1001" and len(second.calls) == 1


def test_chain_raises_the_last_error_when_all_fail():
    a = ScriptedProvider([{"error": {"code": "E3003", "message": "timeout"}}])
    b = ScriptedProvider([{"error": {"code": "E1002", "message": "no key"}}])
    with pytest.raises(ProviderError) as err:
        FallbackChain([a, b]).generate("hi", ProviderContext())
    assert err.value.code == "E1002"


def test_spec_builds_a_chain(tmp_path):
    script = tmp_path / "s.jsonl"
    script.write_text('{"text": "ok"}\n')
    chain = make_provider(f"scripted:{script},scripted:{script}")
    assert isinstance(chain, FallbackChain) and len(chain.providers) == 2
    with pytest.raises(ValueError, match="unknown provider 'nope'"):
        make_provider(f"scripted:{script},nope:x")


def test_collect_keeps_order_and_flags_bad_arguments():
    events = [PartialContentDelta("Let me "), PartialContentDelta("look."),
              ToolCallStarted(0, "call-1", "look"), PartialToolCall(0, '{"x": -1,'), PartialToolCall(0, ' "y": 0, "z": 1}'),
              ToolCallEnded(0), ToolCallStarted(1, "call-2", "speak"), PartialToolCall(1, '{"message": "hi"'),
              ToolCallEnded(1), Metadata(model="m", usage={"prompt_tokens": 3, "completion_tokens": 4}),
              StreamEnd("tool_use")]
    response = collect(events)
    assert [s.type for s in response.segments] == ["text", "tool_call", "error"]
    assert response.text == "Let me look."
    assert response.tool_calls[0] == ToolCall(name="look", args={"x": -1, "y": 0, "z": 1}, id="call-1")
    assert "speak" in response.errors[0] and "not valid JSON" in response.errors[0]
    assert response.metadata == {"model": "m", "usage": {"prompt_tokens": 3, "completion_tokens": 4},
                                 "finish_reason": "tool_use"}


def test_stream_error_raises_and_replay_round_trips():
    with pytest.raises(ProviderError, match="E3002"):
        collect([PartialContentDelta("x"), StreamError({"code": "E3002", "message": "overloaded"})])
    original = ProviderResponse([ContentSegment("text", text="hi"),
                                 ContentSegment("tool_call", tool_call=ToolCall("nod", {"times": 1}, id="a"))],
                                {"model": "m", "finish_reason": "tool_use"})
    again = collect(replay(original))
    assert again.to_json() == original.to_json()


def test_stream_retry_only_before_the_first_event():
    clock = Clock()
    inner = ScriptedProvider([{"error": {"code": "E3001", "message": "down"}}, {"text": "hello"}])
    events = list(Retrying(inner, RetryPolicy(jitter=0), sleep=clock.sleep).stream("hi", ProviderContext()))
    assert collect(events).text == "hello" and clock.waits == [1.0]


def test_parse_failures_survive_a_stream():
    response = ProviderResponse([ContentSegment("error", text="reply is not JSON: 'look left'")], {"finish_reason": "error"})
    again = collect(replay(response))
    assert again.errors == ["reply is not JSON: 'look left'"]


def closed_port() -> int:
    """A localhost port nothing listens on: connecting to it is refused at once."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Counting:
    """Counts the calls that reach a provider (each one is a connect attempt for a remote API)."""

    def __init__(self, inner) -> None:
        self.inner, self.name, self.calls = inner, inner.name, 0

    def generate(self, prompt, context):
        self.calls += 1
        return self.inner.generate(prompt, context)

    def close(self) -> None:
        self.inner.close()


@pytest.mark.parametrize("kind", ["openai", "ollama"])
def test_a_refused_connection_falls_back_at_once_and_the_dead_provider_is_skipped(kind):
    from edge.providers import ollama_api, openai_api
    waits = Clock()
    url = f"http://127.0.0.1:{closed_port()}" + ("/v1" if kind == "openai" else "")
    api = {"openai": openai_api, "ollama": ollama_api}[kind].build("some-model", url, {})
    dead = Counting(Retrying(api, RetryPolicy(), sleep=waits.sleep))
    backup = ScriptedProvider([{"text": "from the backup"}], loop=True)
    now = [100.0]
    chain = FallbackChain([dead, backup], clock=lambda: now[0])
    try:
        first = chain.generate("hi", ProviderContext())
        assert first.text == "from the backup" and first.metadata["answered_by"] == "scripted:<items>"
        assert dead.calls == 1 and waits.waits == []          # refused: no retries, no backoff
        second = chain.generate("hi", ProviderContext())
        assert dead.calls == 1 and second.metadata["skipped"] == [dead.name]  # no connect attempt at all
        now[0] += 5.0                                         # the cooldown is over: one trial call
        chain.generate("hi", ProviderContext())
        assert dead.calls == 2
        now[0] += 9.9                                         # failed again: the next cooldown is 10 s
        chain.generate("hi", ProviderContext())
        assert dead.calls == 2
        now[0] += 0.1
        chain.generate("hi", ProviderContext())
        assert dead.calls == 3 and len(backup.calls) == 5
    finally:
        chain.close()


def test_a_half_open_trial_that_succeeds_closes_the_breaker():
    now = [0.0]
    flaky = ScriptedProvider([{"error": {"code": "E3002", "message": "busy"}}, {"text": "back"}, {"text": "again"}])
    backup = ScriptedProvider([{"text": "backup"}], loop=True)
    chain = FallbackChain([flaky, backup], clock=lambda: now[0])
    assert chain.generate("hi", ProviderContext()).text == "backup"
    now[0] = 5.0
    assert chain.generate("hi", ProviderContext()).text == "back"      # the trial succeeded
    assert chain.generate("hi", ProviderContext()).text == "again"     # closed: used every time
    assert chain.breakers[0].state == "closed" and chain.breakers[0].failures == 0


def test_only_one_caller_makes_the_half_open_trial():
    now = [0.0]
    breaker = CircuitBreaker("x", BreakerPolicy(initial_cooldown_s=5, max_cooldown_s=60), clock=lambda: now[0])
    cooldowns = [breaker.failed() for _ in range(6)]
    assert cooldowns == [5, 10, 20, 40, 60, 60]
    assert not breaker.allow() and breaker.retry_in() == 60
    now[0] = 60.0
    assert breaker.allow() and not breaker.allow()     # the first caller tries, the second still skips
    breaker.released()                                 # the trial told nothing (a cancel): another may try
    assert breaker.allow()


def test_when_every_provider_is_skipped_the_chain_says_when_it_retries():
    now = [0.0]
    a = ScriptedProvider([{"error": {"code": "E3001", "message": "down"}}])
    b = ScriptedProvider([{"error": {"code": "E3003", "message": "slow"}}])
    chain = FallbackChain([a, b], clock=lambda: now[0])
    with pytest.raises(ProviderError):
        chain.generate("hi", ProviderContext())
    now[0] = 2.0
    with pytest.raises(ProviderError) as err:
        chain.generate("hi", ProviderContext())
    assert err.value.code == "E3002" and "3.0 s" in err.value.message and len(a.calls) == len(b.calls) == 1


def test_a_chain_warms_the_members_that_can_be_warmed():
    class Warm(ScriptedProvider):
        def warm(self, context):
            self.warmed = (context.system, [t.name for t in context.tools])
            return True

    cold, warm = ScriptedProvider([{"text": "x"}]), Warm([{"text": "y"}])
    chain = FallbackChain([cold, warm])
    assert chain.warm(ProviderContext(system="be kind", tools=[Tool("nod", "nod", {"type": "object"})]))
    assert warm.warmed == ("be kind", ["nod"]) and cold.calls == []
    assert not FallbackChain([cold, ScriptedProvider([{"text": "z"}])]).warm(ProviderContext())

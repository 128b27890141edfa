"""Retry with exponential backoff, and fallback chains (the AI-Protocol's default policy).

``Retrying`` wraps one provider: a retryable failure is tried again after 1 s, 2 s, 4 s ...
(capped at 30 s, with jitter), at most 3 times, honouring a server's ``Retry-After``. What is
retried is the spec's standard list (rate limit, overload, server error, timeout); an error
its provider marked not retryable (a refused connection: nothing listens) is not retried.
``FallbackChain`` tries its providers in order and moves on only when a failure is
fallbackable; anything else (a bad request, a cancel) is the caller's to see at once. A
provider that failed is skipped for a growing cooldown (its circuit breaker, ``breaker.py``).
The clock and the sleep are injectable so tests can check the policy without waiting.
"""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

from edge.log import get_logger
from edge.providers.base import Provider, ProviderContext, ProviderError, ProviderResponse, warm
from edge.providers.breaker import BreakerPolicy, CircuitBreaker
from edge.providers.errors import CODE_BY_NAME, STANDARD_ERRORS
from edge.providers.events import StreamEvent, replay

log = get_logger(__name__)

# The spec's standard retry policy lists the errors it retries by name. E4001 (conflict) is
# marked retryable in the spec's error table, so a policy may retry it, but the standard policy
# does not list it, so by default it is not retried: pass "conflict" to retry it too.
SPEC_RETRYABLE_ERRORS = ("rate_limited", "overloaded", "server_error", "timeout")


def retryable_code_set(entries: Iterable[str]) -> frozenset[str]:
    """Error codes from codes (``E3002``) or the spec's names (``overloaded``); only the codes the
    spec's error table marks retryable can be listed (retrying a bad request changes nothing)."""
    codes = set()
    for entry in entries:
        code = CODE_BY_NAME.get(entry, entry)
        if code not in STANDARD_ERRORS:
            raise ValueError(f"retry policy: unknown error {entry!r} (a code E1001..E9999 or a name such as "
                             f"{', '.join(SPEC_RETRYABLE_ERRORS)})")
        if not STANDARD_ERRORS[code].retryable:
            raise ValueError(f"retry policy: {entry!r} ({STANDARD_ERRORS[code].name}) is not a retryable error")
        codes.add(code)
    return frozenset(codes)


@dataclass
class RetryPolicy:
    max_retries: int = 3
    initial_delay_s: float = 1.0
    multiplier: float = 2.0
    max_delay_s: float = 30.0
    jitter: float = 0.1              # +- this fraction of each delay
    max_retry_after_s: float = 60.0  # a longer Retry-After is not waited out: fall back instead
    retryable_codes: frozenset[str] = field(default_factory=lambda: retryable_code_set(SPEC_RETRYABLE_ERRORS))

    def __post_init__(self) -> None:
        self.retryable_codes = retryable_code_set(self.retryable_codes)

    def should_retry(self, error: ProviderError, attempt: int) -> bool:
        if attempt >= self.max_retries or not error.retryable or error.code not in self.retryable_codes:
            return False
        return error.retry_after is None or error.retry_after <= self.max_retry_after_s

    def delay(self, attempt: int, error: ProviderError | None = None, rng: random.Random | None = None) -> float:
        """Seconds before retry number ``attempt + 1``; a server's Retry-After wins when given."""
        if error is not None and error.retry_after is not None:
            return error.retry_after
        base = min(self.initial_delay_s * self.multiplier ** attempt, self.max_delay_s)
        spread = base * self.jitter
        return max(0.0, base + (rng or random).uniform(-spread, spread))


def _sleep_or_cancel(seconds: float, context: ProviderContext) -> None:
    cancel = getattr(context, "cancel", None)
    if cancel is not None:
        if cancel.wait(seconds):
            raise ProviderError("E4002", "cancelled while waiting to retry")
    else:
        threading.Event().wait(seconds)


class Retrying:
    """A provider with the retry policy around it."""

    def __init__(self, inner: Provider, policy: RetryPolicy | None = None,
                 sleep: Callable[[float, ProviderContext], None] = _sleep_or_cancel, rng: random.Random | None = None):
        self.inner = inner
        self.policy = policy or RetryPolicy()
        self.name = inner.name
        self._sleep = sleep
        self._rng = rng or random.Random()

    def generate(self, prompt: str, context: ProviderContext) -> ProviderResponse:
        attempt = 0
        while True:
            try:
                return self.inner.generate(prompt, context)
            except ProviderError as exc:
                if not self.policy.should_retry(exc, attempt):
                    raise
                self._back_off(exc, attempt, context)
                attempt += 1

    def stream(self, prompt: str, context: ProviderContext) -> Iterator[StreamEvent]:
        """Retries only until the first event has been yielded: a half-sent answer is not replayed."""
        attempt = 0
        while True:
            started = False
            try:
                for event in stream_of(self.inner, prompt, context):
                    started = True
                    yield event
                return
            except ProviderError as exc:
                if started or not self.policy.should_retry(exc, attempt):
                    raise
                self._back_off(exc, attempt, context)
                attempt += 1

    def _back_off(self, exc: ProviderError, attempt: int, context: ProviderContext) -> None:
        wait = self.policy.delay(attempt, exc, self._rng)
        log.warning("provider.retry", provider=self.name, code=exc.code, attempt=attempt + 1,
                    wait_s=round(wait, 3), reason=exc.message)
        self._sleep(wait, context)

    def close(self) -> None:
        self.inner.close()


class FallbackChain:
    """Providers in order; the next one is tried only after a fallbackable failure.

    Each provider has a circuit breaker (``breaker.py``): one that failed is skipped until its
    cooldown is over, so a dead provider does not cost every turn its connect attempt. When
    every breaker is open the call fails at once (E3002) saying when the next trial will be.
    """

    def __init__(self, providers: list[Provider], policy: BreakerPolicy | None = None,
                 clock: Callable[[], float] = time.monotonic):
        if not providers:
            raise ValueError("a fallback chain needs at least one provider")
        self.providers = providers
        self.breakers = [CircuitBreaker(p.name, policy, clock) for p in providers]
        self.name = ",".join(p.name for p in providers)

    def generate(self, prompt: str, context: ProviderContext) -> ProviderResponse:
        skipped: list[str] = []
        last: ProviderError | None = None
        for provider, breaker in zip(self.providers, self.breakers):
            if not self._allowed(breaker, skipped):
                continue
            try:
                response = provider.generate(prompt, context)
            except ProviderError as exc:
                last = self._failed(breaker, exc)
                continue
            breaker.succeeded()
            response.metadata.setdefault("provider", provider.name)
            response.metadata["answered_by"] = provider.name
            if skipped:
                response.metadata["skipped"] = skipped
            return response
        raise last or self._all_open()

    def stream(self, prompt: str, context: ProviderContext) -> Iterator[StreamEvent]:
        skipped: list[str] = []
        last: ProviderError | None = None
        for provider, breaker in zip(self.providers, self.breakers):
            if not self._allowed(breaker, skipped):
                continue
            started = False
            try:
                for event in stream_of(provider, prompt, context):
                    started = True
                    yield event
            except ProviderError as exc:
                if started:
                    breaker.released()
                    raise
                last = self._failed(breaker, exc)
                continue
            breaker.succeeded()
            return
        raise last or self._all_open()

    def warm(self, context: ProviderContext) -> bool:
        """Warm every member that can be warmed (a remote API has nothing to warm)."""
        warmed = False
        for provider in self.providers:
            try:
                warmed = warm(provider, context) or warmed
            except ProviderError as exc:
                log.warning("provider.warm_failed", provider=provider.name, code=exc.code, reason=exc.message)
        return warmed

    def _allowed(self, breaker: CircuitBreaker, skipped: list[str]) -> bool:
        if breaker.allow():
            return True
        skipped.append(breaker.name)
        log.info("provider.skipped", provider=breaker.name, reason="circuit open after a failure",
                 retry_in_s=round(breaker.retry_in(), 1))
        return False

    @staticmethod
    def _failed(breaker: CircuitBreaker, exc: ProviderError) -> ProviderError:
        """A fallbackable failure opens the breaker and lets the chain go on; anything else is raised."""
        if not exc.fallbackable:
            breaker.released()
            raise exc
        cooldown = breaker.failed()
        log.warning("provider.fallback", provider=breaker.name, code=exc.code, reason=exc.message,
                    skipped_for_s=round(cooldown, 1))
        return exc

    def _all_open(self) -> ProviderError:
        wait = min(b.retry_in() for b in self.breakers)
        return ProviderError("E3002", f"every provider of {self.name} failed recently and is skipped "
                                      f"(circuit open); the next trial call in {wait:.1f} s")

    def close(self) -> None:
        for provider in self.providers:
            provider.close()


def stream_of(provider: Provider, prompt: str, context: ProviderContext) -> Iterator[StreamEvent]:
    """The provider's own stream, or its finished response replayed as one."""
    native = getattr(provider, "stream", None)
    if native is not None:
        return native(prompt, context)
    return replay(provider.generate(prompt, context))

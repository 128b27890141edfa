"""A circuit breaker per provider of a fallback chain: a provider that just failed is skipped.

Without it a dead provider at the head of a chain costs its connect attempt (or its timeout) on
every turn, forever. The breaker remembers the failure:

* **closed**: calls go through.
* **open**: after a fallbackable failure the provider is skipped for a cooldown, which grows
  with each failure in a row (5 s, 10 s, 20 s ... at most 60 s by default).
* **half-open**: once the cooldown is over, one caller makes a trial call (others still skip);
  success closes the breaker and forgets the failures, failure opens it for the next cooldown.

The clock is injectable so the policy can be checked without waiting.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Callable

CLOSED, OPEN, HALF_OPEN = "closed", "open", "half_open"


@dataclass(frozen=True)
class BreakerPolicy:
    initial_cooldown_s: float = 5.0
    multiplier: float = 2.0
    max_cooldown_s: float = 60.0

    def cooldown(self, failures: int) -> float:
        """Seconds to skip a provider after its ``failures``-th failure in a row (1-based)."""
        return min(self.initial_cooldown_s * self.multiplier ** max(0, failures - 1), self.max_cooldown_s)


class CircuitBreaker:
    """The breaker of one provider; thread-safe (two brains may share a chain)."""

    def __init__(self, name: str, policy: BreakerPolicy | None = None, clock: Callable[[], float] = time.monotonic):
        self.name = name
        self.policy = policy or BreakerPolicy()
        self._clock = clock
        self._lock = threading.Lock()
        self.state = CLOSED
        self.failures = 0               # failures in a row; reset by a success
        self.open_until = 0.0
        self._trial = False             # a half-open trial call is in flight

    def allow(self) -> bool:
        """May a call go to this provider now? In half-open, only the first caller may (the trial)."""
        with self._lock:
            if self.state == CLOSED:
                return True
            if self.state == OPEN and self._clock() >= self.open_until:
                self.state = HALF_OPEN
            if self.state == HALF_OPEN and not self._trial:
                self._trial = True
                return True
            return False

    def succeeded(self) -> None:
        with self._lock:
            self.state, self.failures, self._trial = CLOSED, 0, False

    def failed(self) -> float:
        """A fallbackable failure: open for the next cooldown; returns its length in seconds."""
        with self._lock:
            self.failures += 1
            cooldown = self.policy.cooldown(self.failures)
            self.state, self.open_until, self._trial = OPEN, self._clock() + cooldown, False
            return cooldown

    def released(self) -> None:
        """The call ended without telling whether the provider works (a cancel, a bad request):
        a half-open breaker lets the next caller make the trial instead."""
        with self._lock:
            self._trial = False

    def retry_in(self) -> float:
        """Seconds until an open breaker lets a trial call through (0 when it would now)."""
        with self._lock:
            return max(0.0, self.open_until - self._clock()) if self.state == OPEN else 0.0

"""Time for the brain, injectable: the real clock, or a manual one tests advance by hand.

The messaging rules (>= 10 s between sends, conversations that close) depend on time; with
``ManualClock`` a test checks them in milliseconds, deterministically. ``schedule`` runs a
callback later without blocking the caller (a delayed send must not stall the decision loop).
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from typing import Callable, Protocol


class Clock(Protocol):
    def now(self) -> float: ...

    def schedule(self, delay_s: float, callback: Callable[[], None]) -> None: ...

    def close(self) -> None: ...


class _Timers:
    """A heap of (due, seq, callback); shared by both clocks."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Callable[[], None]]] = []
        self._seq = itertools.count()

    def push(self, due: float, callback: Callable[[], None]) -> None:
        heapq.heappush(self._heap, (due, next(self._seq), callback))

    def pop_due(self, now: float) -> list[Callable[[], None]]:
        due = []
        while self._heap and self._heap[0][0] <= now:
            due.append(heapq.heappop(self._heap)[2])
        return due

    def next_due(self) -> float | None:
        return self._heap[0][0] if self._heap else None


class SystemClock:
    """Wall-clock time; scheduled callbacks run on one daemon thread."""

    def __init__(self) -> None:
        self._timers = _Timers()
        self._cv = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="brain-clock", daemon=True)
        self._thread.start()

    def now(self) -> float:
        return time.time()

    def schedule(self, delay_s: float, callback: Callable[[], None]) -> None:
        with self._cv:
            self._timers.push(self.now() + max(0.0, delay_s), callback)
            self._cv.notify()

    def _run(self) -> None:
        while True:
            with self._cv:
                while not self._closed:
                    due = self._timers.next_due()
                    if due is not None and due <= self.now():
                        break
                    self._cv.wait(None if due is None else due - self.now())
                if self._closed:
                    return
                callbacks = self._timers.pop_due(self.now())
            for callback in callbacks:
                callback()

    def close(self) -> None:
        with self._cv:
            self._closed = True
            self._cv.notify()


class ManualClock:
    """Time moves only when ``advance`` is called; due callbacks run inside ``advance``."""

    def __init__(self, start: float = 1_000_000.0) -> None:
        self._now = start
        self._timers = _Timers()
        self._lock = threading.Lock()

    def now(self) -> float:
        return self._now

    def schedule(self, delay_s: float, callback: Callable[[], None]) -> None:
        with self._lock:
            self._timers.push(self._now + max(0.0, delay_s), callback)

    def advance(self, seconds: float) -> None:
        target = self._now + seconds
        while True:
            with self._lock:
                due = self._timers.next_due()
                if due is None or due > target:
                    self._now = target
                    return
                self._now = max(self._now, due)
                callbacks = self._timers.pop_due(self._now)
            for callback in callbacks:
                callback()

    def close(self) -> None:
        pass

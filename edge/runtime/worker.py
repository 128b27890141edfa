"""Work on a node's own threads, guarded as its handlers are.

The transport's guard (guard.py) keeps a message or a handler from killing the delivery thread.
A node also works on threads of its own: the camera's detector loop, the brain's turns and
slash commands. The same promise holds there: an exception in one step is logged with the
node, what was being worked on (a topic, a frame) and a bounded excerpt, counted as
``worker_failed`` in ``errors`` on ``status/<node>``, and the thread goes on with the next step.

- ``guarded(sink, name, fn, *args, topic=, item=)`` runs one piece of work;
- ``Worker(sink, name, step)`` is a thread that runs ``step`` until its stop event is set,
  each call guarded, waiting a little longer after each failure in a row so that a step that
  always fails does not spin a core.

The sink is the ``Node`` (it also refreshes the status) or, for loops built without one, the
transport itself.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Protocol

from edge.protocol.payloads import Payload

WORKER_FAILED = "worker_failed"
BACKOFF_S = (0.05, 0.2, 1.0)   # waits after 1, 2 and 3+ failed steps in a row


class FailureSink(Protocol):
    """Where a survived failure is counted and logged: a ``Node`` or a ``Transport``."""

    def failed(self, kind: str, topic: str, raw: bytes | bytearray, reason: str, exc_info: bool = False) -> None: ...


def _raw(item: Payload | bytes | str | None) -> bytes:
    """The bytes to quote an excerpt of (the guard bounds it); nothing when they cannot be made."""
    try:
        if isinstance(item, Payload):
            return item.encode()
        if isinstance(item, str):
            return item.encode("utf-8", "replace")
        return bytes(item or b"")
    except Exception:  # a payload our codec refuses (NaN ...): the reason says enough
        return b""


def guarded(sink: FailureSink, name: str, fn: Callable[..., Any], *args: Any, topic: str = "",
            item: Payload | bytes | str | None = None) -> bool:
    """Run ``fn(*args)``; True when it returned. An exception is reported to ``sink`` as
    ``worker_failed`` (topic: ``topic`` or ``name``; excerpt: ``item``) and never raised."""
    try:
        fn(*args)
        return True
    except Exception as exc:
        try:
            sink.failed(WORKER_FAILED, topic or name, _raw(item), f"{name}: {exc!r}", exc_info=True)
        except Exception:  # the report failed too (a closed log stream): the thread still goes on
            pass
        return False


class Worker:
    """A daemon thread calling ``step()`` until ``stop`` is set; no exception ends it.

    ``step`` should block for a short while at most (a queue get with a timeout) so that a set
    ``stop`` is seen; ``failures`` counts the steps that raised."""

    def __init__(self, sink: FailureSink, name: str, step: Callable[[], None],
                 stop: threading.Event | None = None):
        self.sink = sink
        self.name = name
        self.step = step
        self.stop_event = stop if stop is not None else threading.Event()
        self.failures = 0
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> "Worker":
        self._thread.start()
        return self

    def is_alive(self) -> bool:
        return self._thread.is_alive()

    def join(self, timeout: float | None = None) -> None:
        """Wait for the thread to end (set ``stop`` first); nothing to wait for if never started."""
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _run(self) -> None:
        in_a_row = 0
        while not self.stop_event.is_set():
            if guarded(self.sink, self.name, self.step):
                in_a_row = 0
                continue
            self.failures += 1
            in_a_row += 1
            self.stop_event.wait(BACKOFF_S[min(in_a_row, len(BACKOFF_S)) - 1])

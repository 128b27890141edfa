"""The one way a process learns it should stop: SIGINT (Ctrl-C) and SIGTERM (systemd) set an event."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def stop_on_signals(stop: threading.Event | None = None) -> Iterator[threading.Event]:
    """Yield ``stop`` (or a new event); on the main thread, SIGINT and SIGTERM set it while inside
    and the previous handlers come back on exit. Other threads cannot take signals: there the
    event is only set by whoever owns it."""
    event = stop if stop is not None else threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield event
        return
    previous = {sig: signal.signal(sig, lambda *_: event.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield event
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def wait_for_signal() -> None:
    """Block until SIGINT or SIGTERM."""
    with stop_on_signals() as stop:
        while not stop.wait(0.5):
            pass

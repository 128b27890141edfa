"""The one way a process learns it should stop: SIGINT (Ctrl-C) and SIGTERM (systemd) set an event.

While inside, SIGUSR1 prints every thread's stack to stderr (``kill -USR1 PID``) and the node
goes on: how to see what a node that will not stop, or answers nothing, is waiting for.
"""

from __future__ import annotations

import faulthandler
import signal
import sys
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
    dumps = _register_stack_dump()
    try:
        yield event
    finally:
        if dumps:
            faulthandler.unregister(signal.SIGUSR1)
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _register_stack_dump() -> bool:
    """SIGUSR1 prints the stacks (chained to any handler already there); False where stderr is
    no real file (an embedding that replaced it) and faulthandler cannot write to it."""
    try:
        sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return False
    faulthandler.register(signal.SIGUSR1, all_threads=True, chain=False)
    return True


def wait_for_signal() -> None:
    """Block until SIGINT or SIGTERM."""
    with stop_on_signals() as stop:
        while not stop.wait(0.5):
            pass

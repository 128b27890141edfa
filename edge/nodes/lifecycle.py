"""One lifecycle for every node kind: build, register handlers, connect, ready, stop.

Each kind's module (``edge/nodes/<kind>.py``, named by its row in ``edge/kinds.py``) has
``build(ctx) -> Running``: the node built with its handlers registered, not yet connected.
``Running.start`` connects and returns once the node is ready (a service once it serves);
``Running.stop`` ends its work. The stack closes the connections it handed out after every node
stopped. ``companion up`` and ``companion run KIND`` start a kind the same way; only the
transport differs in tests and benches (``LocalHub`` instead of MQTT).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from edge.config import Settings
from edge.kinds import BY_NAME
from edge.log import get_logger
from edge.protocol.companion import Companion
from edge.runtime.transport import Transport

log = get_logger(__name__)

READY_TIMEOUT_S = 60.0   # a service that neither serves nor fails within this is reported


class TransportFactory(Protocol):
    """A node's connection, not yet connected: the MQTT ``Bus`` on a robot, a ``LocalHub``'s in tests."""

    def __call__(self, node_id: str, kind: str, *, persistent: bool = True,
                 status: dict[str, Any] | None = None) -> Transport: ...


class Running(Protocol):
    """A built node. ``done`` is set when it ended by itself (a recording played out, a service
    failed) with its exit status in ``code`` and what it raised, if anything, in ``error``."""

    kind: str
    done: threading.Event
    code: int | None
    error: BaseException | None

    def start(self) -> None: ...

    def stop(self) -> None: ...


@dataclass
class BuildContext:
    """What a kind's ``build`` gets: the settings, the companions, and how to connect."""

    settings: Settings
    transport: TransportFactory
    companions: list[Companion] = field(default_factory=list)
    provider: Any = None                  # the brains' provider, built once for all of them
    observer_factory: Any = None          # name -> observer callable, for console output
    speaker: Any = "auto"                 # "auto": from settings; None: silent body
    body_id: str | None = None            # the body's node id (None: settings.body_id, else body)
    brain_config: Any = None              # a whole BrainConfig (tests, benches); None: from the settings
    brain_args: dict[str, Any] = field(default_factory=dict)   # more CompanionBrain arguments (clock, peers)
    body_executor: Any = None             # an executor already built (tests, benches); None: from the settings


class Lasting:
    """Bookkeeping for a node that runs until it is stopped (the body, the brains)."""

    def __init__(self, kind: str):
        self.kind = kind
        self.done = threading.Event()
        self.code: int | None = None
        self.error: BaseException | None = None


class NodeThread:
    """A node whose ``run(stop, ready)`` blocks until it ends or ``stop`` is set, on a thread of its
    own (the camera's frame loop, a service's HTTP server). ``start`` waits for ``ready`` when the
    kind serves a port (its row in ``edge/kinds.py``), and raises what stopped it before."""

    def __init__(self, kind: str, run: Callable[[threading.Event, threading.Event], int | None]):
        self.kind = kind
        self.wait_ready = kind in BY_NAME and BY_NAME[kind].serves
        self.stop_event = threading.Event()
        self.ready = threading.Event()     # set by services once they serve; others count as ready at once
        self.done = threading.Event()
        self.code: int | None = None
        self.error: BaseException | None = None
        self._run = run
        self._thread = threading.Thread(target=self._main, name=f"node-{kind}", daemon=True)

    def start(self) -> None:
        self._thread.start()
        if not self.wait_ready:
            return
        for _ in range(int(READY_TIMEOUT_S * 10)):
            if self.ready.is_set() or self.done.is_set():
                break
            self.done.wait(0.1)
        if self.error is not None:
            raise self.error
        if self.done.is_set() and self.code:
            raise RuntimeError(f"{self.kind} stopped at start with exit status {self.code}")

    def _main(self) -> None:
        try:
            self.code = self._run(self.stop_event, self.ready) or 0
        except BaseException as exc:  # reported by start() or by the stack's wait; never silently lost
            self.error, self.code = exc, 1
            log.error("node.failed", kind=self.kind, error=repr(exc))
        finally:
            self.done.set()

    def stop(self, timeout: float = 10.0) -> None:
        self.stop_event.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

"""The life of one node: handlers first, then connect, run, and always leave cleanly.

A node built on ``Node`` gets, without repeating it:
- its handlers registered on the transport before it connects (``on``), so what the broker
  kept for its persistent session is handled when it comes back (``on`` after ``start`` is
  refused: it would miss exactly those messages);
- the retained ``status/<node>``: ``online`` on connect, a last will and a clean ``offline``,
  and a ``StatusBoard`` that keeps the node's own fields (``camera: open``, counters);
- one signal path (edge/runtime/signals.py): SIGINT/SIGTERM set ``stop_event`` (main thread
  only; the caller's own event when it passes one), the previous handlers restored after;
- ``run(main)``: a transport that cannot connect, or a ``NodeError`` from ``main`` (a camera or
  model that cannot be used), prints ``companion run KIND: reason``, leaves the reason in the
  status, and gives exit status 1; the transport is closed whatever happens.
The guard around every handler is the transport's (edge/runtime/guard.py); work on the node's
own threads is guarded by edge/runtime/worker.py, reporting to ``Node.failed``.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from edge.log import get_logger
from edge.protocol.codec import clip
from edge.runtime.signals import stop_on_signals
from edge.runtime.transport import InvalidHandler, P, Transport, TransportError

log = get_logger(__name__)

STATUS_REFRESH_S = 2.0   # at most one status republished per this many seconds for worker failures
TRANSIENT = ("reason", "retry_in_s", "attempt", "warning", "rate", "channels")


class NodeError(Exception):
    """Something the node cannot run without (a camera, a model, a device); the message says what."""


class StatusBoard:
    """The node's fields in its retained status. ``board(state, **details)`` sets ``<kind>: state``
    and clears the previous state's transient details (``reason``, ``retry_in_s`` ...); a ``None``
    state only adds details."""

    def __init__(self, transport: Transport, key: str, **base: Any):
        self.transport = transport
        self.key = key
        self.fields: dict[str, Any] = dict(base)

    def __call__(self, state: str | None, **details: Any) -> None:
        if state is not None:
            for transient in TRANSIENT:
                self.fields.pop(transient, None)
            self.fields[self.key] = state
        self.fields.update({k: v for k, v in details.items() if v is not None})
        self.transport.set_status("online", **self.fields)


class Node:
    """One node on one transport (``edge.runtime.bus.Bus`` on a robot, ``LocalTransport`` in tests)."""

    def __init__(self, transport: Transport, *, kind: str | None = None, command: str | None = None,
                 **status_fields: Any):
        kind = kind or transport.kind   # given: a test double that only publishes and subscribes will do
        self.transport = transport
        self.board = StatusBoard(transport, kind, **status_fields)
        self.stop_event = threading.Event()
        self.command = command or f"companion run {kind}"
        self._started = False
        self._status_refreshed = 0.0

    @property
    def node_id(self) -> str:
        return self.transport.node_id

    def on(self, payload_type: type[P], handler: Callable[[P], None], on_invalid: InvalidHandler | None = None) -> None:
        """Register a handler; only before ``start`` (see the module docstring)."""
        if self._started:
            raise RuntimeError(f"{self.node_id}: register {payload_type.__name__} handlers before start(): "
                               "messages queued for this node arrive as soon as it connects")
        self.transport.subscribe(payload_type, handler, on_invalid)

    def status(self, state: str | None, **details: Any) -> None:
        self.board(state, **details)

    def failed(self, kind: str, topic: str, raw: bytes | bytearray, reason: str, exc_info: bool = False) -> None:
        """A failure the node survived off the receive path (edge/runtime/worker.py): counted and
        logged by the transport's guard, and the status with the new count republished (at most
        every ``STATUS_REFRESH_S``; the next status carries the rest). Never raises."""
        try:
            self.transport.failed(kind, topic, raw, reason, exc_info)
        except AttributeError:  # a test double without a guard: the log line at least
            log.error(f"node.{kind}", topic=clip(topic, 120), reason=clip(reason), exc_info=exc_info)
            return
        now = time.monotonic()
        if now - self._status_refreshed < STATUS_REFRESH_S:
            return
        try:
            if self.transport.connected:
                self._status_refreshed = now
                self.board(None)
        except Exception:  # a refused send: the count is kept for the next status
            pass

    def start(self, timeout: float = 30.0) -> "Node":
        self.transport.connect(timeout)
        self._started = True
        return self

    def stop(self) -> None:
        """Ask ``main`` to end and leave the transport (``offline`` is published, not the will)."""
        self.stop_event.set()
        self.transport.close()

    def run(self, main: Callable[["Node"], int], *, stop: threading.Event | None = None,
            timeout: float = 30.0) -> int:
        """Connect, then ``main(self)`` until it returns its exit status (see the module docstring)."""
        try:
            self.start(timeout)
        except TransportError as exc:
            self._say(str(exc))
            return 1
        try:
            with stop_on_signals(stop) as event:
                self.stop_event = event
                try:
                    return main(self)
                except NodeError as exc:
                    self.status("failed", reason=str(exc))
                    self._say(str(exc))
                    return 1
        finally:
            self.transport.close()

    def _say(self, reason: str) -> None:
        print(f"{self.command}: {reason}", file=sys.stderr)

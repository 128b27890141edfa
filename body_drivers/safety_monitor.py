"""Watch the broker for what the servos must react to: estop, a brain gone offline, silence.

- ``estop`` (retained): engaged -> the servo body holds where it is and refuses motion,
  at once, even in the middle of a safe pose; released -> it accepts motion again from
  where it stands. Nothing moves by itself on release: a safe pose the estop cut short
  (or that was asked for meanwhile) is dropped, and the watchdog counts afresh.
- ``status/<brain>`` going ``offline`` (a clean shutdown, or the broker publishing the
  brain's last will when it vanished): that companion's actions still queued are refused
  until its brain is back, and once no watched brain is online, the body moves to its
  safe pose and turns torque off. A brain only counts once it has been seen online,
  so a retained ``offline`` from yesterday does not limp a body that just started.
- the watchdog: no action for ``watchdog_s`` -> safe pose, torque off.
- servo faults and safety state changes go out on the body's own ``status/<node>``, on the
  status board of the body's ``Node`` (the stack passes the one ``BodyNode`` uses), so a worker
  failure republishing that status keeps them.

Handlers only enqueue, except the estop's engage: one worker thread does the serial I/O
(the safe pose takes seconds), and an estop queued behind it would wait for it to end. So
engaging runs in the handler (a hold: one read and one write per bus); the release goes
through the queue, and is skipped there if the estop was engaged again meanwhile.
"""

from __future__ import annotations

import queue
import threading
from typing import Any, Iterable

from edge.runtime.node import Node
from edge.runtime.transport import Transport
from edge.log import get_logger
from edge.protocol.payloads import Estop, Status

log = get_logger(__name__)


class SafetyMonitor:
    """Drives a ``ServoBody``'s safety hooks from the bus; ``start`` subscribes, ``stop`` ends."""

    def __init__(self, bus: Transport | Node, body: Any, watchdog_s: float | None = None,
                 brains: Iterable[str] | None = None, safe_on_brain_offline: bool | None = None,
                 poll_s: float = 0.1):
        control = body.config.control
        self.node = bus if isinstance(bus, Node) else Node(bus)
        self.bus = self.node.transport
        self.body = body
        self.watchdog_s = control.watchdog_s if watchdog_s is None else watchdog_s
        self.safe_on_offline = control.safe_on_brain_offline if safe_on_brain_offline is None else safe_on_brain_offline
        self.brains = set(brains) if brains is not None else None   # None: every node of kind "brain"
        self.online: set[str] = set()
        self._companion_of: dict[str, str] = {}
        self.poll_s = poll_s
        self._events: queue.Queue[tuple[str, Any] | None] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="safety-monitor", daemon=True)
        self._stopped = threading.Event()
        self._estop_lock = threading.Lock()    # orders the handler's engage and the worker's release
        self._estop_wanted = False             # the latest estop message, engaged or not

    def start(self) -> "SafetyMonitor":
        self.body.on_fault = lambda fault: self._events.put(("fault", fault))
        self.body.on_state = lambda state: self._events.put(("state", state))
        self.node.on(Status, self._on_status)
        self.node.on(Estop, self._on_estop)
        self._thread.start()
        self._publish()
        log.info("safety.monitor", watchdog_s=self.watchdog_s, brains=sorted(self.brains) if self.brains else "any")
        return self

    def stop(self) -> None:
        self._stopped.set()
        self._events.put(None)
        if self._thread.is_alive():
            self._thread.join(10)

    # -- bus handlers (paho's thread: enqueue only) ------------------------------------------

    def _on_status(self, status: Status) -> None:
        watched = status.node in self.brains if self.brains is not None else status.kind == "brain"
        if watched:
            self._events.put(("brain", (status.node, status.state, status.extra.get("companion"))))

    def _on_estop(self, estop: Estop) -> None:
        """Engage here and now (the worker may be busy with a safe pose); queue the release."""
        with self._estop_lock:
            self._estop_wanted = estop.engaged
            if estop.engaged:
                log.warning("safety.estop", engaged=True)
                self.body.set_estop(True)
                return
        self._events.put(("estop", False))

    # -- worker ------------------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stopped.is_set():
            try:
                event = self._events.get(timeout=self.poll_s)
            except queue.Empty:
                event = ("tick", None)
            if event is None:
                return
            try:
                self._handle(*event)
            except Exception as exc:  # a servo that fails here is reported; the monitor keeps watching
                log.error("safety.monitor_error", during=event[0], error=repr(exc), exc_info=True)

    def _handle(self, kind: str, value: Any) -> None:
        if kind == "estop":
            with self._estop_lock:
                if not self._estop_wanted:   # else: engaged again since this release was queued
                    log.warning("safety.estop", engaged=False)
                    self.body.set_estop(False)
        elif kind == "brain":
            node, state, companion = value
            companion = companion if isinstance(companion, str) else self._companion_of.get(node)
            if state == "online":
                self.online.add(node)
                if companion:
                    self._companion_of[node] = companion   # a last will carries no extras
                    self.body.block_sender(companion, None)
            elif node in self.online:
                self.online.discard(node)
                log.warning("safety.brain_offline", node=node, brains_online=len(self.online))
                if companion:
                    self.body.block_sender(companion, f"the brain of {companion} ({node}) went offline; "
                                                      f"its queued actions are dropped until it is back")
                if not self.online and self.safe_on_offline:
                    self.body.go_safe(f"brain {node} went offline")
        elif kind == "fault":
            self._publish(fault=value)
        elif kind == "state":
            self._publish()
        if self.watchdog_s > 0 and self.body.state == "active" and self.body.idle_s() > self.watchdog_s:
            self.body.go_safe(f"no action for {self.watchdog_s:g} s (watchdog)")

    def _publish(self, fault: dict[str, Any] | None = None) -> None:
        """The body's retained status carries its safety state and its recent faults."""
        self.node.board.fields.pop("last_fault", None)   # only on the status of the fault itself
        self.node.status(None, safety=self.body.state, faults=[dict(f) for f in list(self.body.faults)[-5:]],
                         last_fault=fault)

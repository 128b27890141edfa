"""The one wiring point: a stack of nodes, started in the table's order and stopped in reverse.

``companion up`` is a stack of every node robot.toml names (the broker when needed, the body,
one brain per companion, and the camera, microphone, gateway, registry and MCP server when
their section is there); ``companion run KIND`` (what systemd starts) is a stack of one. Each
node gets its own connection and status, exactly as if it were a separate process, so the
one-process stack behaves like the distributed one. The kinds and their order are the rows of
``edge/kinds.py``; each kind is built by its module in ``edge/nodes/`` and has the lifecycle of
``edge/nodes/lifecycle.py``. The connections come from ``transport``: MQTT by default, a
``LocalHub``'s in tests and benches (``Stack(settings, transport=hub.transport, start_broker=False)``).
"""

from __future__ import annotations

import importlib
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from edge.config import Settings
from edge.kinds import BY_NAME, KINDS, kind as kind_row
from edge.log import get_logger
from edge.nodes.lifecycle import BuildContext, NodeThread, Running
from edge.nodes.body import BodyRun
from edge.nodes.brain import BrainsRun
from edge.protocol.companion import Companion, CompanionError, load_companion
from edge.runtime.broker import LocalBroker, ensure_broker
from edge.runtime.bus import Bus
from edge.runtime.signals import stop_on_signals
from edge.runtime.transport import Transport

log = get_logger(__name__)


def up_kinds(settings: Settings) -> tuple[str, ...]:
    """What ``companion up`` starts: the body and the brains, and each node kind robot.toml names."""
    return tuple(k.name for k in KINDS if k.always_up or k.name in settings.nodes)


def load_companions(settings: Settings) -> list[Companion]:
    """Every configured companion file, parsed; CompanionError names every problem of every bad
    one (a user fixing three files learns of all three at once)."""
    companions, errors = [], []
    for path in settings.companions:
        try:
            companions.append(load_companion(path))
        except CompanionError as exc:
            errors.append(exc)
    if errors:
        raise CompanionError.of_files(errors)
    seen: dict[str, str] = {}
    for c in companions:
        if c.id in seen:
            raise ValueError(f"two companions share the id {c.id}: {seen[c.id]} and {c.name}")
        seen[c.id] = c.name
    return companions


@dataclass
class Stack:
    """A set of nodes in one process; ``start`` brings them up in the table's order, ``stop`` reverses it.

    ``kinds`` None is ``companion up`` (``up_kinds``); ``("camera",)`` is ``companion run camera``.
    ``start_broker``: start a local Mosquitto when none answers (``up``; ``run`` leaves that to systemd).
    ``transport``: ``(node_id, kind, namespace, *, persistent, status)`` -> a connection not yet
    connected; None is MQTT at ``settings.broker``."""

    settings: Settings
    observer_factory: Any = None          # name -> observer callable, for console output
    provider: Any = None                  # an already built provider (tests, benches)
    speaker: Any = "auto"                 # "auto": from settings; None: silent body
    body_id: str | None = None            # the body's node id (None: settings.body_id, else body)
    notify: Callable[[str], None] | None = None  # one line for the person at the console (broker lost ...)
    kinds: tuple[str, ...] | None = None
    start_broker: bool = True
    transport: Callable[..., Transport] | None = None
    brain_config: Any = None              # a whole BrainConfig (tests, benches); None: from the settings
    brain_args: dict[str, Any] = field(default_factory=dict)   # more CompanionBrain arguments (clock, peers)
    body_executor: Any = None             # what the body drives instead of the simulator or [body]'s servos
    broker: LocalBroker | None = None
    buses: list[Transport] = field(default_factory=list)   # every connection handed out, closed last
    nodes: list[Running] = field(default_factory=list)     # built, in start order
    companions: list[Companion] = field(default_factory=list)   # given: these, not the settings' files
    ready_s: float | None = None          # start() to ready, model load and warm-up included
    _stopped: threading.Event = field(default_factory=threading.Event)
    _own_provider: bool = False

    def start(self) -> "Stack":
        s = self.settings
        kinds = self.kinds if self.kinds is not None else up_kinds(s)
        rows = [kind_row(k) for k in kinds]   # an unknown kind is a ValueError naming the known ones
        rows = [row for row in KINDS if row in rows]
        started = time.monotonic()
        if not self.companions and any(row.uses_companions for row in rows):   # the camera, registry and
            self.companions = load_companions(s)                                # MCP server read their own
        if "brain" in kinds and self.provider is None:  # the model loads first, before piper and the rest
            from edge.providers.factory import make_provider
            self.provider = make_provider(s.provider)
            self._own_provider = True    # closed with the stack; one given is its owner's to close
        try:
            if self.start_broker:
                self.broker = ensure_broker(s.broker)
            if self.broker is not None:
                s.broker = self.broker.address
                self.broker.watch(self.notify or (lambda text: None))  # it logs broker.lost itself
            ctx = BuildContext(s, self._connection, self.companions, provider=self.provider,
                               observer_factory=self.observer_factory, speaker=self.speaker, body_id=self.body_id,
                               brain_config=self.brain_config, brain_args=self.brain_args,
                               body_executor=self.body_executor)
            # every kind is built (its settings checked, its handlers registered) before any connects;
            # what was built is stopped if anything fails (stopping a node never started is harmless)
            for row in rows:
                self.nodes.append(importlib.import_module(row.builder).build(ctx))
            for node in self.nodes:
                node.start()
        except BaseException:
            self.stop()
            raise
        self.ready_s = round(time.monotonic() - started, 3)
        warm_s = [b.warm_s for b in self.brains if b.warm_s is not None]
        log.info("stack.ready", broker=str(s.broker), nodes=",".join(row.name for row in rows),
                 companions=len(self.companions), sim=s.sim, seconds=self.ready_s,
                 warm_s=sum(warm_s) if warm_s else None)
        return self

    def _connection(self, node_id: str, kind: str, *, persistent: bool = True,
                    status: dict[str, Any] | None = None) -> Transport:
        """A connection not yet connected: the node registers its handlers, then connects."""
        s = self.settings
        transport: Transport
        if self.transport is not None:
            transport = self.transport(node_id, kind, s.namespace, persistent=persistent, status=status)
        else:
            row = BY_NAME.get(kind)
            transport = Bus(node_id, kind, s.broker, namespace=s.namespace, persistent=persistent, status=status,
                            renamable=bool(row and row.node_id_flag))
        self.buses.append(transport)
        return transport

    # -- what callers look at -----------------------------------------------------------------

    @property
    def brains(self) -> list[Any]:
        return [b for n in self.nodes if isinstance(n, BrainsRun) for b in n.brains]

    @property
    def _body(self) -> BodyRun | None:
        return next((n for n in self.nodes if isinstance(n, BodyRun)), None)

    @property
    def body(self) -> Any:
        return self._body.body if self._body else None

    @property
    def sim(self) -> Any:
        return self._body.sim if self._body else None

    @property
    def executor(self) -> Any:
        return self._body.executor if self._body else None

    @property
    def safety(self) -> Any:
        return self._body.safety if self._body else None

    @property
    def threads(self) -> list[NodeThread]:
        """The nodes that run on a thread of their own (camera, microphone, services)."""
        return [n for n in self.nodes if isinstance(n, NodeThread)]

    def idle(self) -> bool:
        return all(b.idle() for b in self.brains)

    def run(self, stop: threading.Event | None = None) -> int:
        """Start, then wait for SIGINT/SIGTERM (or ``stop``), or until every node that can end by
        itself did (a camera's recording, a mic's WAV, a service that failed) with nothing else
        running; then stop. The exit status is the worst of those nodes' (0 when none ended)."""
        with stop_on_signals(stop) as event:
            with self:
                ending = self.threads
                lasting = len(ending) < len(self.nodes)
                while not event.wait(0.2):
                    if ending and all(t.done.is_set() for t in ending) and not lasting:
                        break
                failed = next((t.error for t in self.nodes if t.error is not None), None)
                if failed is not None:
                    raise failed
                return max((t.code or 0 for t in self.nodes if t.done.is_set()), default=0)

    def stop(self) -> None:
        """Every node in reverse order (perception and services first, then the brains: no new
        actions, then the body), then the connections, the provider it built and our broker."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        for node in reversed(self.nodes):
            node.stop()
        for bus in reversed(self.buses):
            bus.close()
        if self._own_provider and hasattr(self.provider, "close"):
            self.provider.close()
        if self.broker is not None:
            self.broker.cleanup()
        log.info("stack.stopped")

    def __enter__(self) -> "Stack":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

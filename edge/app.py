"""The one wiring point: a stack of nodes, started in the seed's order and stopped in reverse.

``companion up`` is a stack of every node robot.toml names (the broker when needed, the body,
one brain per companion, and the camera, microphone, gateway, registry and MCP server when
their section is there); ``companion run KIND`` (what systemd starts) is a stack of one. Each
node gets its own MQTT connection and status, exactly as if it were a separate process, so
the one-process stack behaves like the distributed one. How each kind is built:
``edge/node_kinds.py``.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from edge.runtime.broker import LocalBroker, ensure_broker
from edge.runtime.bus import Bus
from edge.config import DEFAULT_BODY_ID, Settings
from edge.log import get_logger
from edge.node_kinds import (SERVICES, THREADED, NodeThread, default_memory, load_companions, make_executor,
                             make_peers, make_speaker)
from edge.protocol.companion import Companion
from edge.runtime.node import Node
from edge.runtime.signals import stop_on_signals

log = get_logger(__name__)


ORDER = ("body", "brain", "registry", "mcp", "gateway", "camera", "mic")   # started in this order, stopped in reverse
USES_COMPANIONS = {"body", "brain", "gateway", "mic"}


def up_kinds(settings: Settings) -> tuple[str, ...]:
    """What ``companion up`` starts: the body and the brains, and each node kind robot.toml names."""
    return tuple(k for k in ORDER if k in ("body", "brain") or k in settings.nodes)


@dataclass
class Stack:
    """A set of nodes in one process; ``start`` brings them up in the seed's order, ``stop`` reverses it.

    ``kinds`` None is ``companion up`` (``up_kinds``); ``("camera",)`` is ``companion run camera``.
    ``start_broker``: start a local Mosquitto when none answers (``up``; ``run`` leaves that to systemd)."""

    settings: Settings
    observer_factory: Any = None          # name -> observer callable, for console output
    provider: Any = None                  # an already built provider (tests, benches)
    speaker: Any = "auto"                 # "auto": from settings; None: silent body
    body_id: str | None = None            # the body's node id (None: settings.body_id, else body)
    notify: Callable[[str], None] | None = None  # one line for the person at the console (broker lost ...)
    kinds: tuple[str, ...] | None = None
    start_broker: bool = True
    broker: LocalBroker | None = None
    buses: list[Bus] = field(default_factory=list)
    brains: list[Any] = field(default_factory=list)
    body: Any = None
    sim: Any = None
    executor: Any = None
    safety: Any = None
    threads: list[NodeThread] = field(default_factory=list)
    companions: list[Companion] = field(default_factory=list)
    ready_s: float | None = None          # start() to ready, model load and warm-up included
    _stopped: threading.Event = field(default_factory=threading.Event)

    def start(self) -> "Stack":
        s = self.settings
        kinds = self.kinds if self.kinds is not None else up_kinds(s)
        unknown = [k for k in kinds if k not in ORDER]
        if unknown:
            raise ValueError(f"unknown node kind {unknown[0]!r} (known: {', '.join(ORDER)})")
        started = time.monotonic()
        if set(kinds) & USES_COMPANIONS:   # the camera, registry and MCP server read their own (or none)
            self.companions = load_companions(s)
        if "brain" in kinds and self.provider is None:  # the model loads first, before piper and the rest
            from edge.providers.factory import make_provider
            self.provider = make_provider(s.provider)
        try:
            if self.start_broker:
                self.broker = ensure_broker(s.broker)
            if self.broker is not None:
                s.broker = self.broker.address
                self.broker.watch(self.notify or (lambda text: None))  # it logs broker.lost itself
            threaded = [(k, THREADED[k](self)) for k in ORDER if k in kinds and k in THREADED]  # checked first
            if "body" in kinds:
                self._start_body()
            if "brain" in kinds:
                self._start_brains()
            for kind, node in threaded:
                self.threads.append(node.start(wait_ready=kind in SERVICES))
        except BaseException:
            self.stop()
            raise
        self.ready_s = round(time.monotonic() - started, 3)
        warm_s = [b.warm_s for b in self.brains if b.warm_s is not None]
        log.info("stack.ready", broker=str(s.broker), nodes=",".join(k for k in ORDER if k in kinds),
                 companions=len(self.companions), sim=s.sim, seconds=self.ready_s,
                 warm_s=sum(warm_s) if warm_s else None)
        return self

    def _start_body(self) -> None:
        from body_drivers.node import BodyNode
        from body_drivers.timeline import Timeline

        s = self.settings
        speaker = make_speaker(s) if self.speaker == "auto" else self.speaker
        timeline = Timeline(s.timeline)
        # each node registers its handlers before its bus connects: what the broker kept for its
        # persistent session is handled, not dropped (docs/protocol.md "Sessions")
        body = Node(self._bus(self.body_id or s.body_id or DEFAULT_BODY_ID, "body"))
        self.executor, self.safety = make_executor(s, speaker, timeline, body)
        if s.sim:
            self.sim = self.executor
        self.body = BodyNode(body, self.executor, self.companions, timeline).start()
        body.start()

    def _start_brains(self) -> None:
        from edge.brain.loop import BrainConfig, CompanionBrain

        s = self.settings
        config = BrainConfig(queue_size=s.queue_size, result_timeout_s=s.result_timeout_s,
                             memory_messages=default_memory(s.provider))
        peers = make_peers(s, self.companions)
        for companion in self.companions:
            bus = self._bus(f"brain-{companion.id}", "brain", companion=companion.id)
            observer = self.observer_factory(companion.name) if self.observer_factory else None
            # the brain registers its handlers when built; connected before the warm-up, what is
            # said meanwhile waits in its inbox; ready (after start) means a quick first decision
            brain = CompanionBrain(companion, self.provider, bus, config, observer, peers=peers)
            brain.node.start()
            self.brains.append(brain.start())

    def _bus(self, node_id: str, kind: str, **status: Any) -> Bus:
        """A bus not yet connected: the caller registers the node's handlers, then connects."""
        bus = Bus(node_id, kind, self.settings.broker, namespace=self.settings.namespace, status=status)
        self.buses.append(bus)
        return bus

    def idle(self) -> bool:
        return all(b.idle() for b in self.brains)

    def run(self, stop: threading.Event | None = None) -> int:
        """Start, then wait for SIGINT/SIGTERM (or ``stop``), or until every node that can end by
        itself did (a camera's recording, a mic's WAV, a service that failed) with nothing else
        running; then stop. The exit status is the worst of those nodes' (0 when none ended)."""
        with stop_on_signals(stop) as event:
            with self:
                lasting = bool(self.body or self.brains)
                while not event.wait(0.2):
                    if self.threads and all(t.done.is_set() for t in self.threads) and not lasting:
                        break
                failed = next((t.error for t in self.threads if t.error is not None), None)
                if failed is not None:
                    raise failed
                return max((t.code or 0 for t in self.threads if t.done.is_set()), default=0)

    def stop(self) -> None:
        """Perception and services first, then brains (no new actions), the body, connections, our broker."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        for node in reversed(self.threads):
            node.stop()
        for brain in self.brains:
            brain.stop()
        if self.safety is not None:
            self.safety.stop()
        if self.body is not None:
            self.body.stop()
        if hasattr(self.executor, "close"):
            self.executor.close()  # a servo body rests in its safe pose with torque off
        for bus in reversed(self.buses):
            bus.close()
        if self.provider is not None and hasattr(self.provider, "close"):
            self.provider.close()
        if self.broker is not None:
            self.broker.cleanup()
        log.info("stack.stopped")

    def __enter__(self) -> "Stack":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

"""The brain's test rig: a simulated body, brains made on demand and a client that records what
they publish, all on one in-process hub (the same decode-and-validate path as the broker's).
The body and each brain are stacks of one, started as ``companion run`` starts them, on the hub.
Shared by tests/edge/brain/test_brain.py and tests/edge/brain/test_brain_runtime.py."""

from __future__ import annotations

import queue

from body_drivers.sim import SimConfig
from edge.app import Stack
from edge.brain.loop import BrainConfig, CompanionBrain
from edge.config import Settings
from edge.protocol.companion import Companion
from edge.runtime.local import LocalHub


class BrainRig:
    """``brain(provider, ...)`` starts a brain; ``seen[T]`` queues every message of type T the
    client saw; ``close()`` stops everything it started."""

    def __init__(self, companion: Companion, watch: tuple[type, ...]):
        self.companion = companion
        self.hub = LocalHub()
        self._node_ids: list[str] = []
        self._stacks: list[Stack] = []
        body = self._stack(("body",), [companion])
        self.sim = body.sim
        self.sim.config = SimConfig(move_speed=10, look_speed=10, gesture_s=0.0)
        self.body = body.body
        self.body_bus = body.buses[0]
        self.client = self.hub.transport("client", "test")
        self.seen: dict[type, queue.Queue] = {t: queue.Queue() for t in watch}
        for t, q in self.seen.items():
            self.client.subscribe(t, q.put)
        self.client.connect()

    def _transport(self, node_id: str, kind: str, namespace: str | None = None, **options):
        """The hub's; a second brain of one companion gets a node id of its own."""
        if node_id in self._node_ids:
            node_id += f"-{len(self._node_ids)}"
        self._node_ids.append(node_id)
        return self.hub.transport(node_id, kind, namespace, **options)

    def _stack(self, kinds: tuple[str, ...], companions: list[Companion], **options) -> Stack:
        stack = Stack(Settings(), speaker=None, kinds=kinds, start_broker=False, transport=self._transport,
                      companions=companions, **options).start()
        self._stacks.append(stack)
        return stack

    def brain(self, provider, companion: Companion | None = None, clock=None, peers=None,
              **config) -> CompanionBrain:
        """A started brain; ``brain.events`` lists the (kind, data) it reported."""
        events: list = []
        stack = self._stack(("brain",), [companion or self.companion], provider=provider,
                            observer_factory=lambda name: lambda k, d: events.append((k, d)),
                            brain_config=BrainConfig(**config), brain_args={"clock": clock, "peers": peers})
        made = stack.brains[0]
        made.events = events  # type: ignore[attr-defined]
        return made

    def close(self) -> None:
        for stack in reversed(self._stacks):
            stack.stop()
        self.client.close()

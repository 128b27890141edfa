"""The brain's test rig: a simulated body, brains made on demand and a client that records what
they publish, all on one in-process hub (the same decode-and-validate path as the broker's).
Shared by tests/edge/brain/test_brain.py and tests/edge/brain/test_brain_runtime.py."""

from __future__ import annotations

import queue

from body_drivers.node import BodyNode
from body_drivers.sim import SimBody, SimConfig
from edge.brain.loop import BrainConfig, CompanionBrain
from edge.protocol.companion import Companion
from edge.runtime.local import LocalHub


class BrainRig:
    """``brain(provider, ...)`` starts a brain; ``seen[T]`` queues every message of type T the
    client saw; ``close()`` stops everything it started."""

    def __init__(self, companion: Companion, watch: tuple[type, ...]):
        self.companion = companion
        self.hub = LocalHub()
        self.sim = SimBody(config=SimConfig(move_speed=10, look_speed=10, gesture_s=0.0))
        self.body_bus = self.hub.transport("body", "body")
        self.body = BodyNode(self.body_bus, self.sim, [companion]).start()
        self.body_bus.connect()
        self.client = self.hub.transport("client", "test")
        self.seen: dict[type, queue.Queue] = {t: queue.Queue() for t in watch}
        for t, q in self.seen.items():
            self.client.subscribe(t, q.put)
        self.client.connect()
        self._made: list = []

    def brain(self, provider, companion: Companion | None = None, clock=None, peers=None,
              **config) -> CompanionBrain:
        """A started brain; ``brain.events`` lists the (kind, data) it reported."""
        companion = companion or self.companion
        name = f"brain-{companion.id}"
        if any(bus.node_id == name for _, bus in self._made):
            name += f"-{len(self._made)}"
        bus = self.hub.transport(name, "brain")
        events: list = []
        made = CompanionBrain(companion, provider, bus, BrainConfig(**config), lambda k, d: events.append((k, d)),
                              clock=clock, peers=peers)
        made.node.start()   # handlers were registered when it was built; subscribed once connected
        made.start()
        made.events = events  # type: ignore[attr-defined]
        self._made.append((made, bus))
        return made

    def close(self) -> None:
        for made, bus in self._made:
            made.stop()
            bus.close()
        self.body.stop()
        self.body_bus.close()
        self.client.close()

"""The real body node on the in-process transport: what a restart meets (a retained estop, actions
queued for its session, hostile payloads) handled as on a broker, in milliseconds."""

from __future__ import annotations

import queue

from body_drivers.sim import SimConfig
from edge.app import Stack
from edge.config import DEFAULT_COMPANION, Settings
from edge.protocol.companion import load_companion
from edge.protocol.payloads import Action, ActionResult, Estop
from edge.runtime.local import LocalHub

HOSTILE = (b"[" * 1000 + b"]" * 1000, b'{"x":' + b"9" * 5000 + b"}", b'"\\ud800"', b"\xff")


def _result_for(results: "queue.Queue[ActionResult]", action_id: str) -> ActionResult:
    while True:
        result = results.get(timeout=5)
        if result.id == action_id:
            return result


def test_a_restarted_body_meets_its_retained_estop_and_queued_actions_and_survives_garbage(tmp_path):
    pip = load_companion(DEFAULT_COMPANION)
    hub = LocalHub()
    first = Stack(Settings(sim=True), speaker=None, kinds=("body",), start_broker=False, transport=hub.transport,
                  companions=[pip]).start()
    first.buses[0].crash()                                   # the body process dies; its session stays

    results: queue.Queue[ActionResult] = queue.Queue()
    brain = hub.transport("brain-pip", "brain")
    brain.subscribe(ActionResult, results.put)
    brain.connect()
    brain.publish(Estop(sender="operator", engaged=True))       # retained
    held = Action(name="look", params={"x": 0.5, "y": 0, "z": 1}, sender=pip.id)
    brain.publish(held)                                          # queued in the body's session
    for raw in HOSTILE:
        brain.publish_raw("actions", raw)

    restarted = Stack(Settings(sim=True, timeline=tmp_path / "timeline.jsonl"), speaker=None, kinds=("body",),
                      start_broker=False, transport=hub.transport, companions=[pip]).start()   # handlers, then connect
    sim, transport = restarted.sim, restarted.buses[0]
    sim.config = SimConfig(move_speed=5.0, look_speed=5.0)
    try:
        assert _result_for(results, held.id).error.code == "estop_engaged"
        assert hub.settle() and transport.errors == {"invalid_payload": len(HOSTILE)}
        brain.publish(Estop(sender="operator", engaged=False))
        look = Action(name="look", params={"x": -0.5, "y": 0, "z": 1}, sender=pip.id)
        brain.publish(look)
        assert _result_for(results, look.id).ok and sim.pose.gaze[0] == -0.5
    finally:
        restarted.stop()
        brain.close()

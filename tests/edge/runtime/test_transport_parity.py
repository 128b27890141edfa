"""The in-process transport and the MQTT bus (on a real mosquitto) answer bad payloads alike:
the same refusals, with the same messages, the same counts, and the node goes on."""

from __future__ import annotations

import queue
from typing import Any, Callable

from edge.runtime.bus import Bus
from edge.protocol.payloads import Action
from edge.runtime.local import LocalHub
from edge.runtime.transport import Transport

BAD = (
    b"[" * 1000 + b"]" * 1000,                                   # deeper than the codec allows
    b'{"x":' + b"9" * 5000 + b"}",                               # an integer Python's json refuses
    b'{"id":"a","from":"b","name":"look","params":{"x":NaN},"ts":1}',
    b'{"id":"a","from":"b","name":"\\ud800","params":{},"ts":1}',
    b"\xff\xfe",
    b"",
    b"{not json",
    b'{"id":"x","from":"a","name":"speak","params":[],"ts":1}',  # JSON, but not an action
    b'{"pad":"' + b"x" * 300_000 + b'"}',                        # over the 256 KiB limit of actions
)


def _run(make: Callable[[str], Transport]) -> tuple[list[str], dict[str, int], str]:
    """Send every bad payload, then one good action; what the receiver made of them."""
    refused: list[str] = []
    good: queue.Queue[Action] = queue.Queue()
    sub, pub = make("sub"), make("pub")
    sub.subscribe(Action, good.put, on_invalid=lambda topic, err, raw: refused.append(f"{topic} {err.message}"))
    sub.connect(10)
    pub.connect(10)
    try:
        assert sub.wait_subscribed(5)
        for raw in BAD:
            pub.publish_raw("actions", raw)
        pub.publish(Action(name="fine", params={}, sender="pub"))
        name = good.get(timeout=10).name                          # one publisher, one topic: in order
        return refused, sub.errors, name
    finally:
        pub.close()
        sub.close()


def test_bad_payloads_give_the_same_errors_on_both_transports(broker):
    hub = LocalHub()
    local = _run(lambda node: hub.transport(node, "test", announce=False))
    mqtt: Any = _run(lambda node: Bus(node, "test", broker.address, announce=False))
    assert local == mqtt
    refused, errors, name = mqtt
    assert name == "fine" and errors == {"invalid_payload": len(BAD)}
    assert len(refused) == len(BAD)
    assert "NaN is not a JSON number" in refused[2] and "/params/x" in refused[2]
    assert "surrogate" in refused[3] and "/name" in refused[3]
    assert "/params" in refused[7] and "object" in refused[7]
    assert all(len(r) < 700 for r in refused)                     # bounded, whatever the payload size

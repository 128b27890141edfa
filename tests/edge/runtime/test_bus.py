"""The bus on a real mosquitto: typed round trips, invalid payloads, last will, and a broker restart."""

from __future__ import annotations

import os
import queue
import signal
import time

from edge.runtime.bus import Bus
from edge.protocol.payloads import Action, Perception, Status
from servo_harness import wait_for


def _collect(bus: Bus, payload_type) -> "queue.Queue":
    q: queue.Queue = queue.Queue()
    bus.subscribe(payload_type, q.put)
    return q


def test_typed_round_trip_with_namespace(broker):
    with Bus("sub", "test", broker.address, namespace="robot1") as sub, \
         Bus("pub", "test", broker.address, namespace="robot1") as pub, \
         Bus("other", "test", broker.address, namespace="robot2") as other:
        got = _collect(sub, Perception)
        assert sub.wait_subscribed(5)
        other.publish(Perception(title="input", body="wrong robot"))
        sent = Perception(title="input", body="hello", to="abc")
        pub.publish(sent).wait_for_publish(2)
        received = got.get(timeout=3)
        assert received == sent
        assert got.empty()


def test_invalid_payload_is_reported_not_raised(broker):
    invalid: list = []
    with Bus("sub", "test", broker.address) as sub, Bus("pub", "test", broker.address) as pub:
        good = _collect(sub, Action)
        sub.subscribe(Action, lambda a: None, on_invalid=lambda topic, err, raw: invalid.append((topic, err.message, raw)))
        assert sub.wait_subscribed(5)
        pub.publish_raw("actions", b"{not json").wait_for_publish(2)
        pub.publish_raw("actions", b'{"id": "x", "from": "a", "name": "speak", "params": [], "ts": 1}').wait_for_publish(2)
        pub.publish(Action(name="speak", params={"message": "hi"}, sender="brain")).wait_for_publish(2)
        assert good.get(timeout=3).params == {"message": "hi"}
        wait_for(lambda: len(invalid) >= 2, timeout=3)
    assert "not JSON" in invalid[0][1]
    assert "/id" in invalid[1][1] and "/params" in invalid[1][1] and "object" in invalid[1][1]
    assert invalid[0][2] == b"{not json"


def test_status_online_then_offline_on_close_and_last_will(broker):
    with Bus("watcher", "test", broker.address) as watcher:
        statuses = _collect(watcher, Status)
        assert watcher.wait_subscribed(5)
        clean = Bus("clean", "body", broker.address).connect()
        assert _next_for(statuses, "clean").state == "online"
        clean.close()
        assert _next_for(statuses, "clean").state == "offline"

        crashed = Bus("crashed", "brain", broker.address, keepalive=1).connect()
        assert _next_for(statuses, "crashed").state == "online"
        crashed.client._sock.close()  # vanish without DISCONNECT: the broker must send the will
        crashed.client.loop_stop()
        status = _next_for(statuses, "crashed", timeout=10)
        assert status.state == "offline" and status.kind == "brain"


def _next_for(q: "queue.Queue", node: str, timeout: float = 3.0) -> Status:
    deadline = time.time() + timeout
    while time.time() < deadline:
        s = q.get(timeout=max(0.01, deadline - time.time()))
        if s.node == node:
            return s
    raise AssertionError(f"no status for {node}")


def test_no_qos1_action_lost_across_broker_restart(broker):
    """Publish a stream of actions while the broker is stopped and restarted mid-stream."""
    received: list[Action] = []
    sub = Bus("body", "body", broker.address).connect()
    sub.subscribe(Action, received.append)
    pub = Bus("brain", "brain", broker.address).connect()
    assert sub.wait_subscribed(5)
    sent = []
    for i in range(60):
        if i == 20:
            broker.stop()  # SIGTERM: mosquitto writes its persistence file
        if 20 <= i < 40:
            time.sleep(0.05)  # the stream goes on while the broker is away: about a second and a half
        if i == 40:
            broker.start()
        a = Action(name="look", params={"i": i}, sender="brain")
        pub.publish(a)
        sent.append(a.id)
        time.sleep(0.02)   # a stream, paced as a brain would send it
    wait_for(lambda: len({a.id for a in received}) >= len(sent), timeout=30)
    got = {a.id for a in received}
    missing = [i for i, aid in enumerate(sent) if aid not in got]
    assert not missing, f"lost actions {missing}"
    assert sub.connects >= 2 and pub.connects >= 2
    pub.close(); sub.close()


def test_two_processes_with_one_client_id_are_named(broker, caplog):
    """Two nodes with the same id knock each other off the broker; the bus says why."""
    import logging
    caplog.set_level(logging.ERROR, logger="edge.runtime.bus")
    first = Bus("twin", "brain", broker.address).connect()
    second = Bus("twin", "brain", broker.address).connect()
    wait_for(lambda: "bus.client_id_conflict" in caplog.text, timeout=15)
    first.close(); second.close()
    assert "bus.client_id_conflict" in caplog.text and "client_id=twin " in caplog.text


def test_a_failing_handler_or_a_hostile_payload_never_kills_the_network_thread(broker):
    """Handlers that raise, payloads Python's json would crash on: each is counted, logged and
    survived, and the next message is delivered; the counts show on status/<node>."""
    got: "queue.Queue[Action]" = queue.Queue()

    def picky(action: Action) -> None:
        if action.name == "boom":
            raise RecursionError("a handler bug")
        got.put(action)

    with Bus("watcher", "test", broker.address) as watcher, \
         Bus("sub", "test", broker.address) as sub, Bus("pub", "test", broker.address, announce=False) as pub:
        statuses = _collect(watcher, Status)
        sub.subscribe(Action, picky)
        assert sub.wait_subscribed(5) and watcher.wait_subscribed(5)
        for raw in (b"[" * 1000 + b"]" * 1000, b'{"x":' + b"9" * 5000 + b"}", b'{"x":NaN}', b'"\\ud800"', b"\xff"):
            pub.publish_raw("actions", raw)
        pub.publish(Action(name="boom", params={}, sender="brain"))
        pub.publish(Action(name="fine", params={"x": 1}, sender="brain")).wait_for_publish(5)
        assert got.get(timeout=5).name == "fine"
        assert sub.client._thread is not None and sub.client._thread.is_alive()
        assert sub.errors == {"invalid_payload": 5, "handler_failed": 1}
        sub.set_status("online")
        status = _next_for(statuses, "sub")
        while status.state != "online" or "errors" not in status.extra:
            status = _next_for(statuses, "sub")
        assert status.extra["errors"] == {"invalid_payload": 5, "handler_failed": 1}


def test_one_decode_per_message_however_many_handlers_share_its_type(broker):
    with Bus("sub", "test", broker.address) as sub, Bus("pub", "test", broker.address, announce=False) as pub:
        first: queue.Queue = queue.Queue()
        second: queue.Queue = queue.Queue()
        invalid: queue.Queue = queue.Queue()
        sub.subscribe(Action, first.put, on_invalid=lambda topic, err, raw: invalid.put(err.message))
        sub.subscribe(Action, second.put, on_invalid=lambda topic, err, raw: invalid.put(err.message))
        assert sub.wait_subscribed(5)
        pub.publish_raw("actions", b'{"x":Infinity}')
        pub.publish(Action(name="look", params={}, sender="b"))
        assert first.get(timeout=5).name == second.get(timeout=5).name == "look"
        assert "/x: Infinity is not a JSON number" in invalid.get(timeout=5) and invalid.get(timeout=5)
        assert sub.errors == {"invalid_payload": 1}

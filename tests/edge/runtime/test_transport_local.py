"""The in-process transport keeps the MQTT behaviours nodes rely on: filters, retained messages,
persistent sessions, last will, and the guard that survives any payload or handler."""

from __future__ import annotations

import logging
import queue
from dataclasses import dataclass
from typing import Any

import pytest

from edge.protocol.payloads import Action, Estop, Perception, Status
from edge.runtime.local import LocalHub, LocalTransport

HOSTILE = (b"[" * 1000 + b"]" * 1000, b'{"x":' + b"9" * 5000 + b"}", b'{"x":NaN}', b'"\\ud800"', b"\xff")


@dataclass
class Everything(Status):
    """A watcher's filter under a namespace: ``NS/#``; only status payloads decode."""

    @classmethod
    def topic_pattern(cls, namespace: str | None = None) -> str:
        return f"{namespace}/#"


@pytest.fixture
def hub() -> LocalHub:
    return LocalHub()


def _collect(t: LocalTransport, payload_type: Any) -> "queue.Queue[Any]":
    q: queue.Queue[Any] = queue.Queue()
    t.subscribe(payload_type, q.put)
    return q


def _drain(q: "queue.Queue[Any]") -> list[Any]:
    out = []
    while not q.empty():
        out.append(q.get_nowait())
    return out


def test_filters_route_like_mqtt_with_namespaces(hub):
    sub = hub.transport("sub", "test", "robot1")
    perceptions, statuses = _collect(sub, Perception), _collect(sub, Status)   # robot1/perceptions, robot1/status/+
    everything = _collect(watcher := hub.transport("watch", "test", "robot1", announce=False), Everything)
    with sub, watcher, hub.transport("pub", "test", "robot1") as pub, hub.transport("other", "test", "robot2") as other:
        other.publish(Perception(title="input", body="wrong robot"))
        sent = Perception(title="input", body="hello", to="abc")
        pub.publish(sent)
        pub.publish_raw("robot1/status/a/b", Status(node="x", kind="t", state="online").encode())  # two levels
        assert hub.settle()
        assert _drain(perceptions) == [sent]
        assert sorted(s.node for s in _drain(statuses)) == ["pub", "sub"]        # not robot2's, not a/b
        seen = _drain(everything)                                               # '#' takes every level
        assert {s.node for s in seen} == {"sub", "pub", "x"}
        assert watcher.errors == {"invalid_payload": 1}                         # the perception is no status


def test_retained_messages_reach_late_subscribers_until_cleared(hub):
    with hub.transport("operator", "test", announce=False) as op:
        op.publish(Estop(sender="operator", engaged=True))
        late = hub.transport("late", "test", announce=False)
        heard = _collect(late, Estop)
        with late:
            assert hub.settle() and heard.get_nowait().engaged is True
        op.publish_raw("estop", b"", retain=True)                                # an empty retained payload clears it
        later = hub.transport("later", "test", announce=False)
        nothing = _collect(later, Estop)
        with later:
            assert hub.settle() and nothing.empty()
            assert later.errors == {}


def test_hostile_payloads_and_a_failing_handler_are_counted_and_the_node_goes_on(hub):
    got: queue.Queue[Action] = queue.Queue()

    def picky(action: Action) -> None:
        if action.name == "boom":
            raise RecursionError("a handler bug")
        got.put(action)

    watcher = hub.transport("watcher", "test")
    statuses = _collect(watcher, Status)
    sub = hub.transport("sub", "test")
    sub.subscribe(Action, picky)
    with watcher, sub, hub.transport("pub", "test", announce=False) as pub:
        for raw in HOSTILE:
            pub.publish_raw("actions", raw)
        pub.publish(Action(name="boom", params={}, sender="brain"))
        pub.publish(Action(name="fine", params={"x": 1}, sender="brain"))
        assert hub.settle()
        assert got.get_nowait().name == "fine"
        assert sub.errors == {"invalid_payload": 5, "handler_failed": 1}
        sub.set_status("online")
        assert hub.settle()
        last = [s for s in _drain(statuses) if s.node == "sub"][-1]
        assert last.extra["errors"] == {"invalid_payload": 5, "handler_failed": 1}


def test_a_message_nobody_handles_is_counted_and_logged(hub, caplog):
    caplog.set_level(logging.WARNING, logger="edge.runtime.guard")
    with hub.transport("sub", "test", announce=False) as sub, hub.transport("pub", "test", announce=False) as pub:
        sub.subscribe(Action, lambda a: None)
        hub._subscribe(sub, "perceptions", 1)        # a filter left in the session by an earlier run
        pub.publish(Perception(title="input", body="hello"))
        assert hub.settle()
    assert sub.errors == {"unhandled": 1}
    assert "bus.unhandled" in caplog.text and "topic=perceptions" in caplog.text


def test_a_persistent_session_keeps_qos1_messages_while_its_node_is_away(hub):
    first = hub.transport("body", "body")
    first.subscribe(Action, lambda a: None)
    clean = hub.transport("tool", "test", persistent=False, announce=False)
    clean.subscribe(Action, lambda a: None)
    with first, clean:
        pass                                              # both subscribed once, then gone
    with hub.transport("brain", "brain", announce=False) as brain:
        for i in range(6):
            brain.publish(Action(name="look", params={"i": i}, sender="brain"))
    again = hub.transport("body", "body")                 # a restarted process: a new transport, same id
    got = _collect(again, Action)
    tool = hub.transport("tool", "test", persistent=False, announce=False)
    missed = _collect(tool, Action)
    with again, tool:
        assert hub.settle()
        assert [a.params["i"] for a in _drain(got)] == list(range(6))
        assert missed.empty()                             # a clean session kept nothing


def test_sends_while_disconnected_go_out_on_connect(hub):
    listener = hub.transport("listener", "test", announce=False)
    heard = _collect(listener, Action)
    with listener:
        sender = hub.transport("sender", "test", announce=False)
        receipt = sender.publish(Action(name="look", params={}, sender="s"))
        assert not receipt.is_published()
        with sender:
            assert receipt.is_published() and hub.settle()
            assert heard.get_nowait().name == "look"


def test_last_will_when_a_node_vanishes_and_offline_when_it_closes(hub):
    watcher = hub.transport("watcher", "test", announce=False)
    statuses = _collect(watcher, Status)
    with watcher:
        clean = hub.transport("clean", "body").connect()
        clean.close()
        crashed = hub.transport("crashed", "brain").connect()
        crashed.crash()
        assert hub.settle()
        seen = [(s.node, s.state) for s in _drain(statuses)]
        assert seen == [("clean", "online"), ("clean", "offline"), ("crashed", "online"), ("crashed", "offline")]
        assert Status.decode(hub.retained("status/crashed") or b"").state == "offline"


def test_a_second_connection_with_one_client_id_takes_the_session_over(hub):
    old = hub.transport("twin", "test", announce=False)
    old_heard = _collect(old, Action)
    new = hub.transport("twin", "test", announce=False)
    new_heard = _collect(new, Action)
    with old, new, hub.transport("pub", "test", announce=False) as pub:
        assert not old.connected and new.connected
        pub.publish(Action(name="look", params={}, sender="p"))
        assert hub.settle()
        assert old_heard.empty() and new_heard.get_nowait().name == "look"

"""docs/protocol.md "Sessions" on a real mosquitto: what the broker kept for a persistent session
while its node was down is handled once the node is back, and a message on a topic nobody
handles is counted and logged, never dropped without a word."""

from __future__ import annotations

import logging
import queue

from edge.runtime.bus import Bus
from edge.protocol.payloads import Action, Perception


def test_qos1_sent_while_a_persistent_node_is_down_is_handled_after_it_reconnects(broker):
    first = Bus("body", "body", broker.address)
    first.subscribe(Action, lambda action: None)
    first.connect(10)
    assert first.wait_subscribed(5)
    first.close()                                    # the session and its subscription stay in the broker

    with Bus("brain", "brain", broker.address, announce=False) as brain:
        sent = [Action(name="look", params={"i": i}, sender="brain") for i in range(6)]
        for action in sent:
            brain.publish(action).wait_for_publish(5)   # acknowledged: the broker holds it for body

    got: queue.Queue[Action] = queue.Queue()
    again = Bus("body", "body", broker.address)      # a restarted process: handlers first, then connect
    again.subscribe(Action, got.put)
    again.connect(10)
    try:
        received = [got.get(timeout=10).id for _ in sent]
        assert received == [a.id for a in sent]
        assert again.errors == {}
    finally:
        again.close()


def test_a_message_on_a_topic_nobody_handles_is_counted_and_logged(broker, caplog):
    caplog.set_level(logging.WARNING, logger="edge.runtime.guard")
    earlier = Bus("mic", "mic", broker.address, announce=False)
    earlier.subscribe(Perception, lambda p: None)    # an earlier run listened to perceptions
    earlier.connect(10)
    assert earlier.wait_subscribed(5)
    earlier.close()

    actions: queue.Queue[Action] = queue.Queue()
    now = Bus("mic", "mic", broker.address, announce=False)
    now.subscribe(Action, actions.put)               # this run only handles actions
    with now, Bus("pub", "test", broker.address, announce=False) as pub:
        assert now.wait_subscribed(5)
        pub.publish(Perception(title="input", body="hello"))
        pub.publish(Action(name="look", params={}, sender="pub"))
        assert actions.get(timeout=10).name == "look"   # in order: the perception came first
        assert now.errors == {"unhandled": 1}
    assert "bus.unhandled" in caplog.text and "topic=perceptions" in caplog.text

"""Malformed payloads on every topic a body and a brain subscribe to, on a real broker.

Each payload (deep nesting, huge integers, NaN, lone surrogates escaped and raw, invalid
UTF-8, wrong types, 1 MB blobs, empty, truncated, garbage) must be counted as invalid by every
node subscribed to its topic, kill no thread, and leave the nodes answering: the servo body
carries out a valid action and honours estop, and the brain still decides.
bench/fuzz_topics.py runs the same with 10,000 payloads per topic.
"""

from __future__ import annotations

import queue
import threading

import pytest

from body_drivers.node import ActionFailure
from edge.app import Stack
from edge.runtime.bus import Bus
from edge.config import DEFAULT_COMPANION, Settings
from edge.protocol.companion import load_companion
from edge.protocol.payloads import Action, ActionResult, Status
from fuzz_payloads import TOPICS, FuzzStack, _first, payloads

PER_TOPIC = 260


@pytest.fixture
def stack(broker, tmp_path):
    s = FuzzStack(broker.address, str(tmp_path / "servos"), load_companion(DEFAULT_COMPANION))
    yield s
    s.close()


def test_no_payload_silences_a_node_and_estop_still_holds(stack):
    expected = {"body": 0, "brain": 0}
    for topic in TOPICS:
        sent = stack.fire(topic, payloads(topic, PER_TOPIC, seed=12, companion_id=stack.companion.id))
        for node in stack.receivers(topic):
            expected[node] += sent
    counted = stack.wait_counted(expected, timeout=60)

    assert all(stack.threads().values()), stack.threads()
    assert counted == expected, f"every hostile payload is refused and counted once per node: {stack.errors()}"
    assert "handler_failed" not in stack.body_bus.errors and "dispatch_failed" not in stack.body_bus.errors
    assert not stack.node.errors

    decided = stack.brain_decides()
    assert decided is not None and decided.ok, "the brain decided and the body nodded"
    assert stack.body_acts({"x": 0.2, "y": 0, "z": 1}).ok

    held = stack.estop(True)
    assert held is not None, "the safety monitor saw estop"
    assert held.extra["errors"]["invalid_payload"] >= expected["body"], "the survived errors are on status/<node>"
    refused = stack.body_acts({"x": -0.5, "y": 0, "z": 1})
    assert refused is not None and not refused.ok and refused.error.code == "estop_engaged"
    assert stack.estop(False) is not None
    assert stack.body_acts({"x": 0, "y": 0, "z": 1}).ok


@pytest.mark.parametrize("topic", ["actions", "estop"])
def test_a_deep_payload_on_a_body_topic_then_estop_is_honoured(stack, topic):
    """The issue's exact case: one 1000-deep message used to kill the body's network thread."""
    stack.fire(topic, iter([b'{"from":"x","engaged":' + b"[" * 1000 + b"]" * 1000 + b',"ts":1}']))
    stack.wait_counted({"body": 1}, timeout=10)
    assert stack.estop(True) is not None
    refused = stack.body_acts({"x": 0.5, "y": 0, "z": 1})
    assert refused is not None and refused.error.code == "estop_engaged"


def test_a_broken_action_with_an_id_is_answered_not_dropped(stack):
    """An action the codec refuses still gets a failed result when its id can be read."""
    action_id = "6a0f3c8e-2d14-4b7a-9e51-c3b8d2f47a10"
    raw = ('{"id":"%s","from":"%s","name":"look","params":{"x":NaN,"y":0,"z":1},"ts":1}'
           % (action_id, stack.companion.id)).encode()
    stack.fire("actions", iter([raw]))
    result = _first(stack.results, lambda r: r.id == action_id, 10)
    assert result is not None and result.error.code == "invalid_payload"
    assert "/params/x" in result.error.message and "NaN" in result.error.message


class _CarelessExecutor:
    """Fails ``speak`` with a message quoting a lone surrogate, as a careless driver might."""

    def execute(self, action: Action, cancel: threading.Event) -> None:
        if action.name == "speak":
            raise ActionFailure("tts_failed", "cannot say \ud800")

    def stop(self) -> None:
        pass


def test_the_body_worker_survives_what_it_cannot_encode_or_did_not_expect(broker):
    pip = load_companion(DEFAULT_COMPANION)
    body = Stack(Settings(broker=broker.address), speaker=None, kinds=("body",), start_broker=False,
                 companions=[pip], body_executor=_CarelessExecutor())
    with body, Bus("op", "test", broker.address, announce=False) as op:
        node, body_bus = body.body, body.buses[0]
        results: queue.Queue[ActionResult] = queue.Queue()
        statuses: queue.Queue[Status] = queue.Queue()
        op.subscribe(ActionResult, results.put)
        op.subscribe(Status, statuses.put)
        assert op.wait_subscribed(5) and body_bus.wait_subscribed(5)
        original = node.spec_for

        def buggy_for_nod(action: Action):
            if action.name == "nod":
                raise KeyError("a bug")
            return original(action)

        node.spec_for = buggy_for_nod  # type: ignore[method-assign]
        sent = [Action(name=n, params=p, sender=pip.id) for n, p in
                (("speak", {"message": "hi"}), ("nod", {"times": 1}), ("look", {"x": 0, "y": 0, "z": 1}))]
        for action in sent:
            op.publish(action)
        speak, nod, look = (_first(results, lambda r, i=a.id: r.id == i, 10) for a in sent)
        assert speak.error.code == "unencodable_result" and "/error/message: lone surrogate" in speak.error.message
        assert nod.error.code == "body_error" and "KeyError" in nod.error.message
        assert look.ok and node.worker.is_alive()
        assert dict(node.errors) == {"unencodable_result": 1, "worker_failed": 1}
        counted = _first(statuses, lambda s: s.node == "body" and "errors" in s.extra, 10)
        assert counted is not None and counted.extra["errors"].get("unencodable_result") == 1, \
            "a survived worker failure shows on status/<node>"

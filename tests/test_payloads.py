"""Every payload type: round trip through bytes, and bad payloads named precisely."""

from __future__ import annotations

import json

import pytest

from edge.protocol.payloads import (ALL_PAYLOADS, Action, ActionError, ActionResult, CompanionMessage, Estop,
                                    PayloadError, Perception, Reply, Status)

EXAMPLES = [
    Perception(title="input", body="hello", to="all"),
    Perception(title="vision", body={"labels": ["person"]}, format="object"),
    Action(name="speak", params={"message": "hi"}, sender="6a0f3c8e-2d14-4b7a-9e51-c3b8d2f47a10"),
    ActionResult(id="6a0f3c8e-2d14-4b7a-9e51-c3b8d2f47a10", name="speak", ok=True, sender="body", started=1.0, finished=2.0),
    ActionResult(id="x1", name="look", ok=False, sender="body", started=1.0, finished=1.5,
                 error=ActionError("invalid_params", "/x: 5 is greater than the maximum of 1")),
    CompanionMessage(sender="a", to="all", message="hi there"),
    Status(node="brain-1", kind="brain", state="online", extra={"companion": "abc"}),
    Estop(sender="panel", engaged=True),
    Reply(sender="6a0f3c8e-2d14-4b7a-9e51-c3b8d2f47a10", to="cli", in_reply_to="p1", text="/speak message:string"),
]


@pytest.mark.parametrize("payload", EXAMPLES, ids=lambda p: type(p).__name__)
def test_round_trip(payload):
    assert type(payload).decode(payload.encode()) == payload


def test_every_payload_type_has_an_example_and_a_topic():
    assert {type(p) for p in EXAMPLES} == set(ALL_PAYLOADS)
    topics = {p.topic("robot1") for p in EXAMPLES}
    assert topics == {"robot1/perceptions", "robot1/actions", "robot1/actions/results", "messages",
                      "robot1/status/brain-1", "robot1/estop", "robot1/replies"}


def test_wire_field_names_follow_the_contract():
    wire = json.loads(Action(name="look", params={"x": 1}, sender="me").encode())
    assert set(wire) == {"id", "from", "name", "params", "ts"} and wire["from"] == "me"
    wire = json.loads(CompanionMessage(sender="a", to="b", message="m").encode())
    assert wire == {"from": "a", "to": "b", "message": "m"}


@pytest.mark.parametrize("raw, expected", [
    (b"{oops", "not JSON"),
    (b"\xff\xfe", "not"),
    (b"[]", "is not of type 'object'"),
    (b'{"from": "a", "name": "speak", "params": {}, "ts": 1}', "'id' is a required property"),
    (b'{"id": "nope", "from": "a", "name": "speak", "params": {}, "ts": 1}', "/id"),
    (b'{"id": "6a0f3c8e-2d14-4b7a-9e51-c3b8d2f47a10", "from": "a", "name": "speak", "params": "x", "ts": 1}',
     "/params: 'x' is not of type 'object'"),
    (b'{"id": "6a0f3c8e-2d14-4b7a-9e51-c3b8d2f47a10", "from": "a", "name": "", "params": {}, "ts": -1}', "/name"),
])
def test_bad_actions_are_named(raw, expected):
    with pytest.raises(PayloadError) as err:
        Action.decode(raw)
    assert expected in str(err.value)
    assert err.value.topic == "actions"


def test_text_perception_body_must_be_a_string():
    bad = Perception(title="input", body={"a": 1}, format="text").to_dict()
    with pytest.raises(PayloadError, match="/body"):
        Perception.decode(json.dumps(bad))
    with pytest.raises(PayloadError, match="format"):
        Perception.decode(json.dumps({**bad, "format": "video"}))


def test_failed_result_must_say_why():
    data = ActionResult(id="a", name="speak", ok=False, sender="b", started=1, finished=2,
                        error=ActionError("x", "y")).to_dict()
    del data["error"]
    with pytest.raises(PayloadError, match="'error' is a required property"):
        ActionResult.decode(json.dumps(data))

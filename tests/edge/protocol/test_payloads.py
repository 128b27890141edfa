"""Every payload type: round trip through bytes, and bad payloads named precisely."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest

from edge.protocol.codec import CodecError
from edge.protocol.payloads import (ALL_PAYLOADS, Action, ActionError, ActionResult, CompanionMessage, Estop,
                                    PayloadError, Perception, Reply, Speaking, Status, VoiceActivity)

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
    VoiceActivity(sender="mic-default", onset=1.5, over=["6a0f3c8e-2d14-4b7a-9e51-c3b8d2f47a10"]),
    Speaking(sender="body", action="6a0f3c8e-2d14-4b7a-9e51-c3b8d2f47a10", at=2.25),
]


@pytest.mark.parametrize("payload", EXAMPLES, ids=lambda p: type(p).__name__)
def test_round_trip(payload):
    assert type(payload).decode(payload.encode()) == payload


def test_every_payload_type_has_an_example_and_a_topic():
    assert {type(p) for p in EXAMPLES} == set(ALL_PAYLOADS)
    topics = {p.topic("robot1") for p in EXAMPLES}
    assert topics == {"robot1/perceptions", "robot1/actions", "robot1/actions/results", "messages",
                      "robot1/status/brain-1", "robot1/estop", "robot1/replies", "robot1/voice",
                      "robot1/speaking"}


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


@pytest.mark.parametrize("payload", EXAMPLES, ids=lambda p: type(p).__name__)
def test_the_wire_dict_is_derived_from_the_fields_in_schema_order(payload):
    """Every schema member a field fills is on the wire, in the schema's order, ``sender`` as ``from``."""
    wire = payload.to_dict()
    named = [k for k in type(payload).SCHEMA["properties"] if k in wire]
    assert [k for k in wire if k in type(payload).SCHEMA["properties"]] == named
    attrs = {f.name for f in dataclasses.fields(payload)}
    assert "sender" not in wire and ("from" in wire) == ("sender" in attrs)
    assert set(type(payload).SCHEMA["required"]) <= set(wire)


def test_wire_bytes_are_unchanged_for_the_contract():
    """Byte for byte what the hand-written serialisers produced (the wire contract, docs/protocol.md)."""
    result = ActionResult(id="a1", name="look", ok=False, sender="body", started=1.0, finished=1.5,
                          error=ActionError("invalid_params", "/x: too big"))
    assert result.encode() == (b'{"id":"a1","from":"body","name":"look","ok":false,"started":1.0,'
                               b'"finished":1.5,"error":{"code":"invalid_params","message":"/x: too big"}}')
    status = Status(node="b", kind="body", state="online", ts=2.0, extra={"safety": "active", "node": "fake"})
    assert status.encode() == b'{"safety":"active","node":"b","kind":"body","state":"online","ts":2.0}'
    assert Status.decode(status.encode()).extra == {"safety": "active"}
    perception = Perception(title="input", body="日本語", id="p", ts=3.5)
    assert perception.encode() == ('{"id":"p","from":"user","to":"all","title":"input","format":"text",'
                                   '"body":"日本語","ts":3.5}').encode()


def test_absent_optional_members_take_their_defaults():
    reply = Reply.decode(json.dumps({"id": "6a0f3c8e-2d14-4b7a-9e51-c3b8d2f47a10", "from": "a", "to": "b",
                                     "in_reply_to": "p", "text": "t", "ts": 1}))
    assert reply.ok is True
    ok = ActionResult.decode(b'{"id":"a","from":"b","name":"n","ok":true,"started":1,"finished":2}')
    assert ok.error is None and "error" not in ok.to_dict()


@pytest.mark.parametrize("raw, words", [
    (b'{"id":"6a0f3c8e-2d14-4b7a-9e51-c3b8d2f47a10","from":"a","name":"look","params":{"x":NaN},"ts":1}',
     "/params/x: NaN is not a JSON number"),
    (b'{"id":"6a0f3c8e-2d14-4b7a-9e51-c3b8d2f47a10","from":"a","name":"\\ud800","params":{},"ts":1}',
     "/name: lone surrogate"),
    (b'{"id":"6a0f3c8e-2d14-4b7a-9e51-c3b8d2f47a10","from":"a","name":"x","params":' + b"[" * 1000 + b"]" * 1000
     + b',"ts":1}', "nested deeper than 32 levels"),
    (b'{"id":"6a0f3c8e-2d14-4b7a-9e51-c3b8d2f47a10","from":"a","name":"x","params":{},"ts":' + b"9" * 5000 + b"}",
     "/ts: an integer of 5000 digits"),
    (b'{"from":"' + b"x" * (300 * 1024) + b'"}', "bytes is over the 262144-byte limit"),
])
def test_what_the_codec_refuses_is_a_payload_error_naming_the_field(raw, words):
    with pytest.raises(PayloadError) as err:
        Action.decode(raw)
    assert words in str(err.value) and err.value.topic == "actions"


def test_encode_refuses_nan_and_lone_surrogates_naming_the_field():
    with pytest.raises(CodecError, match="/params/x: NaN"):
        Action(name="look", params={"x": math.nan}, sender="brain").encode()
    with pytest.raises(CodecError, match="/name: lone surrogate"):
        ActionResult(id="a", name="\ud800", ok=True, sender="b", started=1, finished=2).encode()
    with pytest.raises(CodecError, match="/body/x: Infinity"):
        Perception(title="vision", body={"x": math.inf}, format="object").encode()


def test_a_huge_bad_value_is_quoted_briefly():
    data = Action(name="x" * 100_000, params={}, sender="a").to_dict()
    with pytest.raises(PayloadError) as err:
        Action.decode(json.dumps(data))
    assert "/name" in str(err.value) and "is too long" in str(err.value) and len(str(err.value)) < 400

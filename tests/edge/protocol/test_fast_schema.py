"""The native yes/no check (edge/protocol/fast_schema.py) gives jsonschema's answers, or none.

Every payload received and every action's params pass through it, so a difference would let
through what the contract refuses (or refuse what it allows). The payloads are the fuzz rig's
valid bases with one member replaced, dropped or added, and its hostile payloads; the params
are random JSON against every action of the shipped companions.
"""

from __future__ import annotations

import builtins
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from edge.protocol import fast_schema
from edge.protocol.companion import ActionSpec, load_companion, validate_params
from edge.protocol.payloads import Action, ActionResult, CompanionMessage, Estop, Perception, Status
from edge.protocol.codec import CodecError, decode
from fuzz_payloads import _bases, payloads
from repo_paths import REPO

CLASSES = {"actions": Action, "actions/results": ActionResult, "estop": Estop, "perceptions": Perception,
           "messages": CompanionMessage, "status/fuzz": Status}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**63, 2**63 - 1) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12)


def _slow(schema: dict[str, Any]) -> Draft202012Validator:
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


COMPANION_ID = "5b0e7f0a-8c1e-4d7e-9f55-2b1f0c9d3a11"


def _base(topic: str) -> dict[str, Any]:
    return _bases(COMPANION_ID)[topic]


@pytest.mark.parametrize("topic", sorted(CLASSES))
@settings(max_examples=150)
@given(data=st.data())
def test_a_payload_changed_in_one_member_gets_the_same_verdict(topic: str, data: st.DataObject) -> None:
    cls = CLASSES[topic]
    fast = fast_schema.fast_check(cls.SCHEMA, ours=True)
    assert fast is not None, "jsonschema-rs is installed with the package on this machine"
    doc = dict(_base(topic))
    key = data.draw(st.sampled_from([*doc, "extra"]))
    how = data.draw(st.sampled_from(["replace", "drop"]))
    if how == "drop":
        doc.pop(key, None)
    else:
        doc[key] = data.draw(json_values)
    assert fast(doc) == _slow(cls.SCHEMA).is_valid(doc), doc


@pytest.mark.parametrize("topic", sorted(CLASSES))
def test_the_fuzz_rigs_hostile_payloads_get_the_same_verdict(topic: str) -> None:
    cls = CLASSES[topic]
    fast = fast_schema.fast_check(cls.SCHEMA, ours=True)
    assert fast is not None
    checked = 0
    for raw in payloads(topic, 300, seed=7, companion_id=COMPANION_ID):
        try:
            doc = decode(raw, cls.LIMITS)
        except CodecError:
            continue   # refused before any schema sees it
        assert fast(doc) == _slow(cls.SCHEMA).is_valid(doc), raw[:200]
        checked += 1
    assert checked > 30


def _shipped_actions() -> list[ActionSpec]:
    files = sorted(p for p in (REPO / "companions").glob("*.json") if p.name != "schema.json")
    return [a for f in files for a in load_companion(f).actions]


@settings(max_examples=300)
@given(data=st.data())
def test_params_get_the_same_problems_with_and_without_the_fast_check(data: st.DataObject) -> None:
    spec = data.draw(st.sampled_from(_shipped_actions()))
    props = spec.schema.get("properties", {})
    params = {k: data.draw(json_values) for k in data.draw(st.lists(st.sampled_from([*props, "other"]), max_size=4))} \
        if data.draw(st.booleans()) else data.draw(json_values)
    slow = [(p.pointer, p.message) for p in validate_params(_without_fast(spec), params)]
    assert [(p.pointer, p.message) for p in validate_params(spec, params)] == slow


def _without_fast(spec: ActionSpec) -> ActionSpec:
    plain = ActionSpec(spec.title, spec.description, spec.schema)
    object.__setattr__(plain, "_fast", None)
    return plain


def test_most_shipped_actions_get_the_fast_check() -> None:
    actions = _shipped_actions()
    fast = [a.title for a in actions if a._fast is not None]
    assert len(fast) >= len(actions) * 3 // 4, f"{len(fast)} of {len(actions)}"


@pytest.mark.parametrize("keyword", [{"type": "string", "pattern": "^[a-z]+$"}, {"type": "string", "format": "email"},
                                     {"type": "number", "multipleOf": 0.1}, {"$ref": "#/$defs/x"}])
def test_a_schema_whose_reading_differs_between_implementations_is_left_to_jsonschema(keyword: dict) -> None:
    schema = {"type": "object", "properties": {"v": keyword}, "$defs": {"x": {"type": "integer"}}}
    assert fast_schema.fast_check(schema) is None
    assert fast_schema.fast_check({"type": "object", "properties": {"v": {"type": "integer", "maximum": 3}}}) is not None


def test_a_value_with_no_json_form_is_refused_by_the_fast_check_and_explained_by_jsonschema() -> None:
    spec = ActionSpec("turn", "", {"type": "object", "properties": {"deg": {"type": "number", "maximum": 90}},
                                   "required": ["deg"]})
    assert spec._fast is not None
    assert spec._fast({"deg": float("nan")}) in (True, False)   # answered, not raised
    assert spec._fast({"deg": (1, 2)}) is False or validate_params(spec, {"deg": (1, 2)})
    assert [p.pointer for p in validate_params(spec, {"deg": 120})] == ["/deg"]
    assert validate_params(spec, {"deg": 45}) == []


def test_without_the_wheel_the_check_is_jsonschemas_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_wheel(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "jsonschema_rs":
            raise ImportError("no wheel for this machine")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_wheel)
    assert fast_schema.fast_check(Perception.SCHEMA, ours=True) is None
    with pytest.raises(Exception, match="/title"):
        Perception.check({**_base("perceptions"), "title": ""})


def test_a_refused_payload_still_names_every_violation() -> None:
    doc = {**_base("perceptions"), "title": "", "format": "video", "ts": -1}
    with pytest.raises(Exception) as caught:
        Perception.decode(orjson.dumps(doc))
    message = str(caught.value)
    assert "/title" in message and "/format" in message and "/ts" in message


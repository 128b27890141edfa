"""The decision schema (what a grammar lets a model say) and parse_decision (what we make of it)."""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator

from edge.providers.base import Tool
from edge.providers.decision import (DEFAULT_MAX_STRING, decision_prompt, decision_schema, grammar_schema,
                                     parse_decision)

SPEAK = Tool("speak", "Say something out loud. Uses the speaker.", {
    "title": "speak", "description": "speech", "type": "object",
    "properties": {"text": {"type": "string", "description": "what to say"}},
    "required": ["text"],
})
WAG = Tool("wag", "Wag the tail.", {
    "type": "object",
    "properties": {"speed": {"type": "number", "minimum": 0, "maximum": 1},
                   "mood": {"type": "string", "enum": ["happy", "calm"]}},
    "required": ["speed"],
})
TOOLS = [SPEAK, WAG]


@pytest.fixture(scope="module")
def validator() -> Draft202012Validator:
    schema = decision_schema(TOOLS)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


@pytest.mark.parametrize("decision", [
    {"action": "speak", "params": {"text": "hi"}},
    {"action": "wag", "params": {"speed": 0.5, "mood": "calm"}},
    {"action": "none"},
    {"action": "none", "reason": "nothing new"},
])
def test_schema_accepts_each_kind_of_decision(validator, decision):
    assert validator.is_valid(decision)


@pytest.mark.parametrize("decision", [
    {"action": "jump", "params": {}},                          # not offered
    {"action": "speak"},                                        # params missing
    {"action": "speak", "params": {"words": "hi"}},            # required key missing / extra key
    {"action": "speak", "params": {"text": "hi", "x": 1}},    # extra key
    {"action": "wag", "params": {"speed": 1, "mood": "sad"}},  # enum
    {"action": "none", "params": {}},                          # none takes no params
    {"action": "none", "reason": "x" * 81},                     # reason too long
    {"action": "speak", "params": {"text": "x" * (DEFAULT_MAX_STRING + 1)}},   # default cap
    ["speak"],
])
def test_schema_rejects_everything_else(validator, decision):
    assert not validator.is_valid(decision)


def test_schema_keeps_only_grammar_keywords():
    reduced = grammar_schema({
        "title": "t", "description": "d", "type": "object", "$comment": "c",
        "properties": {
            "url": {"type": "string", "format": "uri", "pattern": "^h", "maxLength": 40},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "uniqueItems": True},
            "n": {"type": "integer", "minimum": 1, "maximum": 5, "multipleOf": 1},
            "either": {"oneOf": [{"type": "integer"}, {"type": "boolean"}]},
        },
        "required": ["url", "ghost"],
        "dependentRequired": {"url": ["n"]},
    })
    assert reduced == {
        "type": "object",
        "properties": {
            "url": {"type": "string", "maxLength": 40},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "maxItems": 8},
            "n": {"type": "integer", "minimum": 1, "maximum": 5},
            "either": {"anyOf": [{"type": "integer"}, {"type": "boolean"}]},
        },
        "required": ["url"],
        "additionalProperties": False,
    }


def test_schema_refuses_an_action_named_none():
    with pytest.raises(ValueError, match="none"):
        decision_schema([Tool("none", "", {"type": "object"})])


def test_prompt_is_short_and_lists_every_action():
    text = decision_prompt(TOOLS)
    assert "- speak(text): Say something out loud" in text
    assert "- wag(speed 0..1, mood: happy|calm): Wag the tail." in text
    assert "- none: do nothing" in text
    assert len(text) < 300


# -- parse_decision --------------------------------------------------------------------------


def test_valid_decision_becomes_one_tool_call_with_a_fresh_id():
    first = parse_decision('{"action":"speak","params":{"text":"hello"}}', TOOLS)
    second = parse_decision('{"action":"speak","params":{"text":"hello"}}', TOOLS)
    assert [s.type for s in first.segments] == ["tool_call"]
    call = first.tool_calls[0]
    assert (call.name, call.args) == ("speak", {"text": "hello"})
    assert call.id and call.id != second.tool_calls[0].id
    assert first.metadata["finish_reason"] == "tool_use"


def test_params_are_not_range_checked_here():
    response = parse_decision('{"action":"wag","params":{"speed":100}}', TOOLS)
    assert response.tool_calls[0].args == {"speed": 100}


def test_missing_params_mean_an_empty_object():
    assert parse_decision('{"action":"wag"}', TOOLS).tool_calls[0].args == {}


def test_none_is_an_explicit_no_action():
    response = parse_decision('{"action":"none","reason":"all quiet"}', TOOLS)
    assert response.segments == [] and response.errors == []
    assert response.metadata == {"finish_reason": "end_turn", "decision": "none", "reason": "all quiet"}


def test_tools_may_be_names_or_a_map():
    assert parse_decision('{"action":"speak","params":{}}', ["speak"]).tool_calls[0].name == "speak"
    assert parse_decision('{"action":"speak","params":{}}', {"speak": SPEAK}).tool_calls[0].name == "speak"


def test_a_fenced_reply_is_accepted():
    raw = '```json\n{"action": "speak", "params": {"text": "hi"}}\n```'
    assert parse_decision(raw, TOOLS).tool_calls[0].args == {"text": "hi"}


@pytest.mark.parametrize("raw, why", [
    ("Hello there! How can I help?", "not JSON"),
    ("", "empty reply"),
    ('{"action":"speak","params":{"text":"hel', "cut off"),
    ('{"action":"fly","params":{}}', "unknown action 'fly' (offered: speak, wag, none)"),
    ('{"action":"speak","params":"hello"}', '"params" of \'speak\' must be an object, got a string'),
    ('{"action":"speak","params":[1]}', "got an array"),
    ('{"params":{"text":"hi"}}', '"action" must be a string'),
    ('{"action":3}', '"action" must be a string'),
    ('["speak"]', "expected a JSON object, got an array"),
    ('{"action":"none"} and then I wag', "extra text after the JSON decision"),
])
def test_anything_else_is_an_error_segment_quoting_the_reply(raw, why):
    response = parse_decision(raw, TOOLS)
    assert [s.type for s in response.segments] == ["error"]
    assert response.tool_calls == []
    assert why in response.errors[0]
    assert "raw output: " + json.dumps(raw) in response.errors[0]
    assert response.metadata["finish_reason"] == "error"


def test_a_long_unparsable_reply_is_quoted_truncated():
    raw = "blah " * 500
    error = parse_decision(raw, TOOLS).errors[0]
    assert len(error) < 400 and "(2500 chars)" in error

"""The decision schema (what a grammar lets a model say) and parse_decision (what we make of it)."""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator

from edge.providers.base import Tool
from edge.providers.decision import (DEFAULT_MAX_STRING, as_words, decision_budget, decision_prompt,
                                     decision_schema, grammar_schema, parse_decision, parse_reply, speech_grammar, speech_of,
                                     words_schema)

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


def test_an_answer_may_be_required():
    """A person talking gets an answer (the embedded provider asks for one): no "none" then."""
    answering = Draft202012Validator(decision_schema(TOOLS, allow_none=False))
    assert not answering.is_valid({"action": "none"})
    assert answering.is_valid({"action": "speak", "params": {"text": "Good night!"}})
    assert Draft202012Validator(decision_schema([], allow_none=False)).is_valid({"action": "none"})  # nothing offered


def test_schema_refuses_an_action_named_none():
    with pytest.raises(ValueError, match="none"):
        decision_schema([Tool("none", "", {"type": "object"})])


def test_prompt_lists_every_action_with_what_each_parameter_means():
    text = decision_prompt(TOOLS)
    assert "- speak(text): Say something out loud." in text
    assert "    text (text): what to say" in text          # the file's description reaches the model
    assert "- wag(speed, mood): Wag the tail." in text
    assert "    speed 0..1" in text and "    mood happy|calm" in text
    assert "- none: do nothing" in text
    assert text.endswith('Reply with one JSON decision: {"action": NAME, "params": {...}}.')


def test_prompt_with_speech_says_words_may_be_the_reply():
    text = decision_prompt(TOOLS, speech_of(TOOLS))
    assert "To speak, reply with just the words to say." in text


def test_speech_action_is_speak_with_one_required_text():
    speech = speech_of(TOOLS)
    assert speech is not None and (speech.action, speech.param) == ("speak", "text")
    two_params = Tool("speak", "", {"type": "object", "required": ["text", "to"],
                                    "properties": {"text": {"type": "string"}, "to": {"type": "string"}}})
    assert speech_of([two_params, WAG]) is None
    assert speech_of([WAG]) is None


def test_words_become_a_speak_call_and_json_stays_a_decision():
    speech = speech_of(TOOLS)
    said = parse_reply("Hello, I am Pip!", TOOLS, speech)
    assert [(c.name, c.args) for c in said.tool_calls] == [("speak", {"text": "Hello, I am Pip!"})]
    wag = parse_reply('{"action":"wag","params":{"speed":0.4}}', TOOLS, speech)
    assert [(c.name, c.args) for c in wag.tool_calls] == [("wag", {"speed": 0.4})]
    assert parse_reply('{"action":"wag","para', TOOLS, speech).errors   # cut-off JSON is never words
    assert parse_reply("Hello", TOOLS, None).errors                    # no speech action: words are an error
    capped = parse_reply("I like songs. And birds and" + "x" * 200, TOOLS, speech)   # hit the length cap
    assert capped.tool_calls[0].args["text"] == "I like songs."


def test_demonstrations_show_speech_as_words():
    speech = speech_of(TOOLS)
    assert as_words('{"action":"speak","params":{"text":"Yes, I love songs"}}', speech) == "Yes, I love songs"
    assert as_words('{"action":"wag","params":{"speed":1}}', speech) == '{"action":"wag","params":{"speed":1}}'
    assert as_words('{"action":"speak","params":{"text":"hi"}}', None) == '{"action":"speak","params":{"text":"hi"}}'


def test_budget_fits_the_longest_legal_reply_in_any_language():
    long_speak = Tool("speak", "", {"type": "object", "required": ["message"],
                                    "properties": {"message": {"type": "string", "maxLength": 200}}})
    assert decision_budget([long_speak]) >= 200          # 200 kana may take 200 tokens
    assert decision_budget([WAG]) < decision_budget([long_speak])
    assert decision_budget([WAG]) >= 16 + 80              # a "none" with its reason still fits


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


def test_where_words_may_be_the_reply_speech_comes_only_as_words():
    """The JSON side of the grammar leaves speech out: a spoken line always goes through the
    words rule (which starts a Japanese companion's words in Japanese)."""
    speech = speech_of(TOOLS)
    assert speech is not None
    schema = words_schema(TOOLS, speech, allow_none=True)
    actions = {b["properties"]["action"]["const"] for b in schema["anyOf"]}
    assert actions == {"wag", "none"}
    assert words_schema([SPEAK], speech, allow_none=False) is None      # a person spoke, only words offered
    only_words = speech_grammar(None, speech, {})
    assert "start: words\n" in only_words and "%json" not in only_words
    both = speech_grammar(schema, speech, {})
    assert "start: decision | words" in both and '"speak"' not in both
    with pytest.raises(ValueError):
        speech_grammar(None, None, {})


def test_a_japanese_companions_words_show_a_kana_early_so_a_chinese_line_cannot_start():
    """The words rule itself, as a regular expression: Japanese (a kanji name may come first)
    matches, a Chinese refusal that only shares the kanji and the full-width marks does not,
    and the words stay within the parameter's maxLength."""
    import re
    said = Tool("say", "日本語で話します。", {"type": "object", "required": ["text"],
                                         "properties": {"text": {"type": "string", "maxLength": 40}}})
    speech = speech_of([said])
    assert speech is not None and speech.japanese
    grammar = speech_grammar(None, speech, {})
    pattern = re.search(r"words: /(.*)/\n", grammar).group(1)
    words = re.compile(re.sub(r"\\u([0-9a-f]{4})", lambda m: chr(int(m.group(1), 16)), pattern))   # the grammar's \\u escapes
    for japanese in ("おはよう！", "麻布麻衣です。", "キボだよ", "痛いよ！", "富士山だよ。"):
        assert words.fullmatch(japanese), japanese
    for chinese in ("抱歉，我无法协助完成这个请求。", "我叫小明。", "你好"):
        assert not words.fullmatch(chinese), chinese
    assert words.fullmatch("麻布麻衣麻布" + "あ" * 34) and not words.fullmatch("麻布麻衣麻布" + "あ" * 35)
    assert all(len(m) <= 40 for m in ("あ" * 40,) if words.fullmatch(m)) and not words.fullmatch("あ" * 41)

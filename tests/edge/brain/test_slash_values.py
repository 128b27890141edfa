"""Slash-command arguments become the values the action's schema asks for.

A boolean is the easy one to get wrong: ``bool("false")`` is True, so "/blink false" would
blink. Every spelling a person types must land on the right value, and anything else must
be refused with the usage line rather than guessed.
"""

from __future__ import annotations

import dataclasses

import pytest

from edge.brain.slash import SlashCommand, SlashError, parse_slash
from edge.config import DEFAULT_COMPANION
from edge.protocol.companion import ActionSpec, Companion, load_companion

BLINK = ActionSpec("blink", "Blink the eyes, or keep them shut.", {
    "title": "blink", "description": "Blink the eyes, or keep them shut.", "type": "object",
    "properties": {"closed": {"type": "boolean", "description": "Keep them shut."},
                   "times": {"type": "integer", "minimum": 1, "maximum": 3}},
    "required": ["closed"], "additionalProperties": False})


@pytest.fixture(scope="module")
def companion() -> Companion:
    pip = load_companion(DEFAULT_COMPANION)
    return dataclasses.replace(pip, actions=(*pip.actions, BLINK))


@pytest.mark.parametrize("word, value", [
    ("false", False), ("False", False), ("no", False), ("off", False), ("0", False),
    ("true", True), ("TRUE", True), ("yes", True), ("on", True), ("1", True),
])
def test_boolean_words_positional_and_by_name(companion, word, value):
    assert parse_slash(f"/blink {word}", companion) == SlashCommand("blink", {"closed": value})
    assert parse_slash(f"/blink closed={word} times=2", companion) == \
        SlashCommand("blink", {"closed": value, "times": 2})


def test_a_json_boolean_passes_as_it_is(companion):
    assert parse_slash('/blink {"closed": false}', companion).params == {"closed": False}


@pytest.mark.parametrize("word", ["maybe", "2", "nope", "''"])
def test_a_word_that_is_no_boolean_is_refused_with_the_usage(companion, word):
    with pytest.raises(SlashError, match=r"closed must be a boolean, not .*usage: /blink closed:boolean"):
        parse_slash(f"/blink {word}", companion)


def test_numbers_are_converted_and_checked_against_the_schema(companion):
    assert parse_slash("/look -0.5 0.25 1", companion).params == {"x": -0.5, "y": 0.25, "z": 1.0}
    with pytest.raises(SlashError, match="times must be an integer, not '1.5'"):
        parse_slash("/nod 1.5", companion)
    with pytest.raises(SlashError, match="/times: 9 is greater than the maximum of 3"):
        parse_slash("/nod 9", companion)

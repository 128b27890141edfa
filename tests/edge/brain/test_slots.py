"""What a command sentence settles about an action's parameters, read through their descriptions."""

from __future__ import annotations

from pathlib import Path

import pytest

from edge.brain import prompt
from edge.brain.slots import Anchor, anchors, amount, complete, count, pin, settled
from edge.protocol.companion import load_companion
from edge.providers.base import Tool
from repo_paths import REPO

COMPANIONS = REPO / "companions"


def _tools(name: str) -> dict[str, Tool]:
    return {t.name: t for t in prompt.offered_tools(load_companion(COMPANIONS / f"{name}.json"), "input", False)}


@pytest.mark.parametrize("description, expected", [
    ("Left of the picture, your left (-1), to right (1); 0 is straight ahead.",
     {Anchor("left", -1.0), Anchor("right", 1.0), Anchor("centre", 0.0), Anchor("forward", 0.0)}),
    ("Metres back (-) or forward (+) of the centre.", {Anchor("back", sign=-1), Anchor("forward", sign=1)}),
    ("0 is a slow, calm wag; 1 is a very excited one.", {Anchor("slow", 0.0), Anchor("fast", 1.0)}),
    ("左右（メートル）。自分の右が正、左が負", {Anchor("right", sign=1), Anchor("left", sign=-1)}),
    ("視界の上下。画面の下が -1、上が 1、水平が 0", {Anchor("down", -1.0), Anchor("up", 1.0), Anchor("centre", 0.0)}),
    ("How many nods.", set()),
])
def test_a_description_names_its_ends(description, expected):
    assert set(anchors(description)) == expected


def test_looks_and_moves_go_the_way_the_sentence_says():
    pip = _tools("pip")
    look = settled(pip["look"], "Could you turn and look over to your left, please?")
    assert look["x"] < 0 and look["y"] == 0 and look["z"] == 1     # level, and the file's default distance
    assert settled(pip["look"], "There's a fly on the ceiling, look up!")["y"] > 0
    back = settled(pip["move"], "Careful, you're right at the edge! Back up a bit.")
    assert back["y"] < 0 and back["x"] == 0                          # "right at" is not a direction
    assert settled(pip["move"], "move 20 cm to the left") == {"x": -0.2, "y": 0.0, "z": 0.0}
    mai = _tools("azabu-mai")
    assert settled(mai["move"], "1メートル右に動いて")["x"] == 1.0
    assert settled(mai["move"], "ちょっと下がって")["y"] < 0            # 下がって is back, not down
    assert settled(mai["look"], "足元を見て")["y"] < 0


def test_speeds_counts_and_choices():
    pip, pochi = _tools("pip"), _tools("pochi")
    slow = settled(pip["wag"], "Wag your tail nice and slow")["speed"]
    fast = settled(pochi["wag"], "wag really fast")["speed"]
    assert 0 < slow < 0.5 < fast
    assert settled(pip["nod"], "Show me two nods") == {"times": 2}
    assert settled(pochi["bark"], "3 woofs please")["times"] == 3
    assert settled(pochi["give_paw"], "Gimme your left paw") == {"paw": "left"}
    assert settled(pochi["give_paw"], "左の足ちょうだい") == {"paw": "left"}
    assert "paw" not in settled(pochi["give_paw"], "shake!")        # nothing said about which paw


def test_amounts_and_counts_from_words():
    assert amount("50 cm to the left") == 0.5 and amount("one metre forward") == 1.0 and amount("左に50センチ") == 0.5
    assert amount("look left") is None
    assert count("bark twice") == 2 and count("三回吠えて") == 3 and count("nod 3 times") == 3
    assert count("move 20 cm") is None and count("hello") is None


def test_pinned_values_are_consts_and_complete_means_nothing_left_open():
    move = _tools("pip")["move"]
    values = settled(move, "go left")
    pinned = pin(move, {"x": values["x"]})
    assert pinned.parameters["properties"]["x"]["const"] == values["x"]
    assert "const" not in pinned.parameters["properties"]["y"] and move.parameters["properties"]["x"].get("const") is None
    assert complete(move, values) and not complete(move, {"x": -0.2})


def test_an_enum_value_by_the_short_words_in_brackets_after_it_and_as_an_adverb():
    """"broil (grill, top heat only)" is said "the grill"; "gentle (slow, calm)" is said "gently"."""
    oven = Tool("set_oven_mode", "Choose how the oven heats.", {"type": "object", "properties": {"mode": {
        "type": "string", "enum": ["bake", "convection", "broil"],
        "description": "bake (normal, top and bottom heat), convection (fan oven, fan-assisted), broil (grill, top heat only)."}}})
    stir = Tool("stir", "Stir the pot.", {"type": "object", "properties": {"speed": {
        "type": "string", "enum": ["gentle", "normal", "fast"], "description": "gentle (slow, calm), normal, fast (quick, vigorous)."}}})
    assert settled(oven, "Switch the oven over to the grill, I want the cheese browned.") == {"mode": "broil"}
    assert settled(oven, "Use the fan oven for the cookies") == {"mode": "convection"}
    assert settled(stir, "stir the sauce gently") == {"speed": "gentle"}
    assert settled(stir, "stir it quickly") == {"speed": "fast"}
    assert settled(stir, "stir the sauce") == {}


def test_a_level_named_by_the_word_its_description_gives_the_number():
    kettle = Tool("boil_water", "烧水。", {"type": "object", "properties": {"temperature": {
        "type": "integer", "minimum": 40, "maximum": 100, "description": "目标水温，单位摄氏度，最低40度，最高100度（烧开）"}}})
    lamp = Tool("color_temperature", "Light colour.", {"type": "object", "properties": {"kelvin": {
        "type": "integer", "minimum": 2700, "maximum": 6500, "description": "warm white (2700) to daylight (6500)"}}})
    assert settled(kettle, "我想泡一壶普洱，水得烧开才行") == {"temperature": 100}
    assert settled(kettle, "烧到八十度") == {"temperature": 80}          # a number said wins
    assert settled(lamp, "daylight please") == {"kelvin": 6500}
    assert settled(lamp, "a nice warm white light") == {"kelvin": 2700}
    assert settled(kettle, "帮我烧水") == {}


def test_a_duration_does_not_name_an_action_whose_hour_and_minute_are_a_time_of_day():
    from edge.brain.slot_numbers import measures_said
    reminder = Tool("set_reminder", "Remind at a time.", {"type": "object", "properties": {
        "hour": {"type": "integer", "minimum": 0, "maximum": 23}, "minute": {"type": "integer", "minimum": 0, "maximum": 59}}})
    timer = Tool("start_timer", "Count down.", {"type": "object", "properties": {
        "minutes": {"type": "integer", "minimum": 0, "maximum": 180}}})
    assert not measures_said(reminder, "Set a timer for 12 minutes for the pasta.")
    assert measures_said(timer, "Set a timer for 12 minutes for the pasta.")
    assert measures_said(reminder, "Remind me at 7:30 to call mum")

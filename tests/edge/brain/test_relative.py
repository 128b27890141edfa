"""A setting asked to change from where it is: the last value the companion set, moved the way
and by the amount the words say; nothing decided without a last value or for an absolute value."""

from __future__ import annotations

from edge.brain.relative import relative_values
from edge.providers.base import Tool

LAMP = Tool("set_brightness", "Set the lamp's brightness.", {"type": "object", "properties": {
    "percent": {"type": "integer", "minimum": 0, "maximum": 100, "description": "Brightness in percent."}}})
DESK = Tool("set_lamp", "调节台灯亮度。", {"type": "object", "properties": {
    "brightness": {"type": "integer", "minimum": 0, "maximum": 100, "description": "亮度，0 到 100"}}})
COLOUR = Tool("color_temperature", "Light colour.", {"type": "object", "properties": {
    "kelvin": {"type": "integer", "minimum": 2700, "maximum": 6500, "description": "Colour temperature in kelvin."}}})
SPEAKER = Tool("set_volume", "Music volume.", {"type": "object", "properties": {
    "level": {"type": "integer", "minimum": 0, "maximum": 10, "description": "0 silent, 10 loudest"},
    "fade_s": {"type": "number", "minimum": 0, "maximum": 5, "description": "Fade time in seconds."}}})


def test_moved_by_the_amount_said_or_by_a_step_from_the_last_value():
    assert relative_values(LAMP, "Brighter by twenty percent.", {"percent": 50}) == {"percent": 70}
    assert relative_values(LAMP, "a little dimmer please", {"percent": 50}) == {"percent": 40}
    assert relative_values(LAMP, "brighter!", {"percent": 50}) == {"percent": 70}
    assert relative_values(LAMP, "brighter!", {"percent": 95}) == {"percent": 100}     # within its range
    assert relative_values(DESK, "还是有点暗，再调亮一点点", {"brightness": 50}) == {"brightness": 60}
    assert relative_values(DESK, "调暗一点", {"brightness": 50}) == {"brightness": 40}


def test_warmer_light_has_fewer_kelvin_and_the_setting_words_name_picks_the_parameter():
    assert relative_values(COLOUR, "Warmer light, please.", {"kelvin": 4000})["kelvin"] < 4000
    assert relative_values(COLOUR, "a bit cooler", {"kelvin": 4000})["kelvin"] > 4000
    assert relative_values(SPEAKER, "a little louder", {"level": 5, "fade_s": 1}) == {"level": 6}


def test_nothing_without_a_last_value_a_change_or_for_an_absolute_value():
    assert relative_values(LAMP, "Brighter by twenty percent.", None) == {}
    assert relative_values(LAMP, "Brighter by twenty percent.", {}) == {}
    assert relative_values(LAMP, "brighter, 80 percent", {"percent": 50}) == {}
    assert relative_values(LAMP, "set it to 30", {"percent": 50}) == {}
    assert relative_values(LAMP, "What a lovely evening", {"percent": 50}) == {}

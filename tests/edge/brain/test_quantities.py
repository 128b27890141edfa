"""Numbers, units and times of day as said (edge/brain/quantities.py), and the parameters they
fill by what each measures (edge/brain/slot_numbers.py), in English, Japanese and Chinese."""

from __future__ import annotations

import pytest

from edge.brain.quantities import clock_time, param_unit, quantities
from edge.brain.slot_numbers import numbers_for
from edge.providers.base import Tool


@pytest.mark.parametrize("text, expected", [
    ("turn right ninety degrees", [(90, "deg")]),
    ("Set a timer for a minute and a half.", [(1.5, "min")]),     # "a" before a unit is one of it
    ("wait an hour", [(1, "h")]),
    ("我要学习半小时，帮我计时", [(0.5, "h")]),                     # 半小时: half an hour
    ("半分钟以后", [(0.5, "min")]),
    ("左に半メートルよけて", [(0.5, "m")]),
    ("半分にして", []),                                             # 半分: "half", no unit
    ("一个半小时", [(1.5, "h")]),
    ("a quarter turn to the left please", [(0.25, "turn")]),
    ("drive half a metre", [(0.5, "m")]),
    ("two and a half metres forward", [(2.5, "m")]),
    ("go 30 cm", [(30, "cm")]),
    ("one hundred and twenty seconds", [(120, "s")]),
    ("set the volume to thirty", [(30, None)]),
    ("water it with 150 ml", [(150, "ml")]),
    ("1.5 litres", [(1.5, "l")]),
    ("about 100 to 150 ml", [(125, "ml")]),
    ("三十度右に向いて", [(30, "du")]),
    ("二分半のタイマー", [(2.5, "min")]),
    ("にじゅう回うなずいて", [(20, "times")]),
    ("十五分のタイマー", [(15, "min")]),
    ("音量を5にして", [(5, None)]),
    ("烧水到八十五度", [(85, "du")]),
    ("泡两分钟", [(2, "min")]),
    ("点头三次", [(3, "times")]),
    ("把音量调到百分之三十", [(30, "percent")]),
    ("一个半小时", [(1.5, "h")]),
    ("一緒に遊ぼう", []),
])
def test_numbers_with_their_units(text: str, expected: list) -> None:
    assert [(q.value, q.unit) for q in quantities(text)] == expected


@pytest.mark.parametrize("text, hour, minute", [
    ("remind me at half past seven in the evening", 19, 30),
    ("7:30 pm", 19, 30),
    ("quarter to eight", 7, 45),
    ("seven thirty tomorrow morning", 7, 30),
    ("set an alarm for nine o'clock", 9, 0),
    ("at 6 am", 6, 0),
    ("午後七時半に", 19, 30),
    ("晚上七点半提醒我", 19, 30),
    ("明天早上六点", 6, 0),
])
def test_times_of_day(text: str, hour: int, minute: int) -> None:
    when = clock_time(text)
    assert when is not None and (when.hour, when.minute) == (hour, minute)


def test_no_time_of_day_in_plain_talk() -> None:
    assert clock_time("I had a long day") is None and clock_time("turn ninety degrees") is None


@pytest.mark.parametrize("name, description, unit", [
    ("distance_cm", "", "cm"), ("degrees", "", "deg"), ("seconds", "", "s"), ("temperature", "", "celsius"),
    ("volume", "0 is silent, 10 is loudest", None), ("angle", "Angle to turn", "deg"), ("minutes", "", "min"),
    ("amount_ml", "", "ml"), ("level", "brightness in percent", "percent"), ("水温", "目标水温（℃）", "celsius"),
])
def test_what_a_parameter_measures(name: str, description: str, unit: str | None) -> None:
    assert param_unit(name, description) == unit


def tool(**props: dict) -> Tool:
    return Tool("act", "", {"type": "object", "properties": props, "required": list(props)})


def test_units_convert_into_the_parameter_and_out_of_bounds_is_left_open() -> None:
    drive = tool(distance_cm={"type": "integer", "minimum": 1, "maximum": 300},
                 direction={"type": "string", "enum": ["forward", "backward"]})
    assert numbers_for(drive, "drive half a metre forward", {}) == {"distance_cm": 50}
    assert numbers_for(drive, "two and a half metres", {}) == {"distance_cm": 250}
    assert numbers_for(drive, "go 4 metres", {}) == {}           # 400 cm: not clamped to 300
    timer = tool(seconds={"type": "integer", "minimum": 10, "maximum": 600})
    assert numbers_for(timer, "泡两分钟", {}) == {"seconds": 120}
    turn = tool(degrees={"type": "number", "minimum": -180, "maximum": 180})
    assert numbers_for(turn, "a quarter turn", {}) == {"degrees": 90}
    assert numbers_for(turn, "turn left ninety", {"degrees": -1}) == {"degrees": -90}   # the sign a direction gave


def test_a_time_of_day_fills_hour_and_minute_and_a_bare_number_the_one_open_parameter() -> None:
    remind = tool(hour={"type": "integer", "minimum": 0, "maximum": 23},
                  minute={"type": "integer", "minimum": 0, "maximum": 59}, text={"type": "string"})
    assert numbers_for(remind, "remind me at a quarter to nine tonight to take my pills", {}) == \
        {"hour": 20, "minute": 45}
    volume = tool(level={"type": "integer", "minimum": 0, "maximum": 10})
    assert numbers_for(volume, "volume seven please", {}) == {"level": 7}
    two = tool(a={"type": "integer"}, b={"type": "integer"})
    assert numbers_for(two, "set it to 3", {}) == {}            # which one? left to the model


def test_metres_for_two_axes_go_to_the_one_a_direction_named_and_a_direction_signs_the_size() -> None:
    from edge.brain.slots import settled
    move = tool(x={"type": "number", "minimum": -2, "maximum": 2,
                   "description": "Metres sideways: right is positive (+), left negative (-)"},
                y={"type": "number", "minimum": -2, "maximum": 2, "description": "Metres: forward (+) or back (-)"})
    assert numbers_for(move, "move back half a metre", {}) == {}        # x or y? the words alone do not say
    assert settled(move, "move back half a metre") == {"y": -0.5, "x": 0.0}
    turn = tool(degrees={"type": "integer", "minimum": -90, "maximum": 90,
                         "description": "Angle: negative turns left (-90 is fully left), positive right (90 is fully right)"})
    assert settled(turn, "turn your head 45 degrees to the left") == {"degrees": -45}


def test_a_little_is_what_the_description_says_and_an_enum_value_matches_its_direction() -> None:
    from edge.brain.slots import settled
    drive = tool(distance_cm={"type": "integer", "minimum": 1, "maximum": 300,
                              "description": "How far, in centimetres; 'a little' is about 10 cm"},
                 direction={"type": "string", "enum": ["forward", "backward"]})
    assert settled(drive, "go back a little") == {"direction": "backward", "distance_cm": 10}
    assert settled(drive, "go back 40 cm") == {"direction": "backward", "distance_cm": 40}
    head = tool(degrees={"type": "integer", "minimum": 0, "maximum": 90, "description": "角度；“一点/稍微”大约15度"},
                direction={"type": "string", "enum": ["left", "right"]})
    assert settled(head, "头稍微往右转一点") == {"direction": "right", "degrees": 15}

"""Blind cases for Flick (`lampy`), an expressive robotic desk lamp that speaks English.

Covers 30 moments:
- commands (13): aiming the head with `look` ("a bit to the left", "all the way up", the right
  side of the desk), absolute and relative brightness ("dim it to a quarter", "brighter by twenty
  percent" after a known level, "all the way up", turning the light off), colour temperature
  ("warmer light" after a known setting, "as cool as it goes"), a mood preset, a gesture with a
  count said in words ("nod three times"), and focus timers said in words ("twenty five minutes",
  "half an hour", indirect with a reason);
- talk (4): a greeting, thanks, two questions about light the character answers in words;
- event (5): a book being opened (aim at it or raise brightness to 80 %), hands writing (follow
  them), hands resting and a closed book (no rule applies: nothing), the room getting dark
  (brightness 90 %);
- silence (4): a question to someone else, a TV line, a small filler noise, an unchanged light
  reading;
- character (4): its age (two years, no human age), its name, the user's name (not given: it must
  not call the user Flick), what it is.
"""

from decision_cases import Case
from decision_checks import (speak, named, within, text_param, nothing, either, look, look_at,
                             move, neg, pos, near_zero, between, at_least, at_most)
from edge.protocol.payloads import Perception

COMPANION = "bench/blind/companions/lampy.json"


def said(text: str) -> Perception:
    return Perception(title="speech", body=text, format="text")


def camera(body: dict) -> Perception:
    return Perception(title="camera", body=body, format="object")


def light(lux: float) -> Perception:
    return Perception(title="ambient_light", body={"lux": lux}, format="object")


def case(name, perception, check, expect, kind, before=None):
    return Case(name=f"lampy_{name}", companion=COMPANION, perception=perception, check=check,
                expect=expect, before=list(before or []), kind=kind)


def cases() -> list[Case]:
    return [
        # ---- commands -------------------------------------------------------------------
        case("bit_left", said("A bit to the left."),
             look(x=between(-0.5, -0.05)),
             "look a little to its left (x about -0.3, not all the way)", "command"),
        case("all_the_way_up", said("Point the light all the way up, please."),
             look(y=at_least(0.99)),
             "look with y = 1 (all the way up)", "command"),
        case("right_side", said("Flick, shine over on the right side of the desk."),
             look(x=pos),
             "look to its right (x > 0)", "command"),
        case("warmer", said("Warmer light."),
             within("color_temperature", kelvin=(2700, 4999)),
             "colour temperature below the 5000 K it was just set to",
             "command", before=[said("Set the colour temperature to 5000 kelvin.")]),
        case("brighter_by_twenty", said("Brighter by twenty percent."),
             either(named("change_brightness", by=20), named("set_brightness", percent=70)),
             "brightness up 20 points (from 50 to 70)",
             "command", before=[said("Set the brightness to 50 percent.")]),
        case("dim_quarter", said("Dim it to a quarter."),
             named("set_brightness", percent=25),
             "set_brightness 25", "command"),
        case("brightness_full", said("Turn the brightness all the way up."),
             either(named("set_brightness", percent=100), named("change_brightness", by=100)),
             "brightness to 100 %", "command"),
        case("light_off", said("I'm done for tonight, turn the light off."),
             either(named("set_brightness", percent=0), named("change_brightness", by=-100)),
             "brightness to 0 (light off), actually done", "command"),
        case("coolest", said("Could you make the light as cool and bluish as it goes?"),
             named("color_temperature", kelvin=6500),
             "color_temperature 6500 K", "command"),
        case("party_preset", said("Party mode, please!"),
             named("preset", mood="party"),
             "preset party", "command"),
        case("nod_three", said("Nod three times."),
             named("gesture", motion="nod", times=3),
             "gesture nod, 3 times", "command"),
        case("timer_words", said("Set a focus timer for twenty five minutes."),
             named("focus_timer", minutes=25),
             "focus_timer 25 minutes", "command"),
        case("timer_half_hour",
             said("I have to study for half an hour without checking my phone, can you time me?"),
             named("focus_timer", minutes=30),
             "focus_timer 30 minutes", "command"),

        # ---- talk -----------------------------------------------------------------------
        case("greeting", said("Good morning, Flick!"),
             speak(heard="Good morning, Flick!", what="a friendly good morning back", lang="en"),
             "a spoken greeting", "talk"),
        case("thanks", said("Thanks, that's perfect."),
             speak(heard="Thanks, that's perfect.", what="a short you're-welcome", lang="en"),
             "a spoken reply to thanks", "talk"),
        case("blue_light", said("Why is blue light bad right before bed?"),
             speak(heard="Why is blue light bad right before bed?",
                   mentions=r"sleep|melatonin|awake|tired|rest|body clock|circadian",
                   what="a short answer about blue light and sleep", lang="en"),
             "a spoken answer about sleep", "talk"),
        case("warm_or_cool", said("Is warm or cool light better for reading late at night?"),
             speak(heard="Is warm or cool light better for reading late at night?",
                   mentions=r"warm", what="advice that warm light is better at night",
                   lang="en"),
             "a spoken answer (warm light at night)", "talk"),

        # ---- events ---------------------------------------------------------------------
        case("book_opened", camera({"target": "book", "x": 0.3, "y": -0.4, "open": True}),
             either(look(x=between(0.2, 0.4), y=between(-0.5, -0.3)),
                    named("set_brightness", percent=80)),
             "aim at the book (0.3, -0.4) or set brightness 80",
             "event", before=[camera({"target": "book", "x": 0.3, "y": -0.4, "open": False})]),
        case("hands_writing", camera({"target": "hands", "x": -0.4, "y": -0.5, "writing": True}),
             look(x=between(-0.5, -0.3), y=between(-0.6, -0.4)),
             "look at the writing hands (-0.4, -0.5)", "event"),
        case("hands_resting", camera({"target": "hands", "x": 0.1, "y": -0.6, "writing": False}),
             nothing(),
             "nothing: the hands are not writing", "event"),
        case("book_closed", camera({"target": "book", "x": -0.2, "y": -0.5, "open": False}),
             nothing(),
             "nothing: the book is closed", "event"),
        case("room_dark", light(20),
             named("set_brightness", percent=90),
             "set_brightness 90 (room below 50 lux)", "event", before=[light(300)]),

        # ---- silence --------------------------------------------------------------------
        case("milk", said("Sam, did you pick up the milk on the way home?"),
             nothing(), "nothing: talk to another person", "silence"),
        case("tv", said("Coming up after the break: the weekend weather, with sunshine for most "
                        "of the country."),
             nothing(), "nothing: a TV line", "silence"),
        case("filler_noise", said("um"),
             nothing(), "nothing: a small noise", "silence"),
        case("light_unchanged", light(300),
             nothing(), "nothing: the room light did not change", "silence",
             before=[light(300)]),

        # ---- character ------------------------------------------------------------------
        case("age", said("How old are you?"),
             speak(heard="How old are you?",
                   mentions=r"^(?!.*\b([3-9]|[1-9]\d+)\s*(years?|yrs?)\b).*\b(two|2)\b",
                   what="two years old (built two years ago), no human age", lang="en"),
             "says it is two years old", "character"),
        case("name", said("What's your name?"),
             speak(heard="What's your name?", mentions=r"flick", what="its name, Flick",
                   lang="en"),
             "says its name is Flick", "character"),
        case("user_name", said("Do you know my name?"),
             speak(heard="Do you know my name?",
                   mentions=r"^(?!.*\b(your name is|you are|you're|hi|hello|hey),? flick\b)",
                   what="it does not know yet / asks; does not call the user Flick",
                   lang="en"),
             "says it does not know the user's name (without calling them Flick)", "character"),
        case("what_are_you", said("What are you, exactly?"),
             speak(heard="What are you, exactly?", mentions=r"lamp|light",
                   what="a robotic desk lamp", lang="en"),
             "says it is a robotic desk lamp", "character"),
    ]

"""Blind cases for Nerio (bench/blind/companions/aqua.json), an English aquarium keeper robot
for a freshwater community tank.

Covers (30 cases):
- command (11): feeding with a number of portions, the heater set point said in words and in
  digits with a reason, the tank light (off, day, moonlight, dimmed to a percentage, all the way
  up), the air pump off with a reason, water changes in words ("fifteen litres") and "a little";
  polite, terse and indirect wordings, with and without the companion's name.
- talk (3): a greeting, thanks, a question about fish the keeper would answer in words.
- event (10): every sensor rule triggered (water temperature below 22 °C, pH outside 6.5-7.5,
  ammonia above 0.5 ppm, water level below 90 %, a fish gasping at the surface, a floating fish,
  feeding time with fewer than 2 feedings), plus readings that must NOT trigger anything (normal
  temperature, normal chemistry, feeding time after two feedings already).
- silence (3): talk addressed to another person, a TV line, an unchanged water-level reading.
- character (3): its age (a machine, no human age), its name, the user's name (never given).
"""
from decision_cases import Case
from decision_checks import (speak, named, within, text_param, nothing, either, look, look_at,
                             move, neg, pos, near_zero, between, at_least, at_most)
from edge.protocol.payloads import Perception

COMPANION = "bench/blind/companions/aqua.json"


def _say(text: str) -> Perception:
    return Perception(title="heard_speech", body=text, format="text")


def _obj(title: str, body: dict) -> Perception:
    return Perception(title=title, body=body, format="object")


def _case(name, perception, check, expect, kind, before=None) -> Case:
    return Case(name=name, companion=COMPANION, perception=perception, check=check,
                expect=expect, before=before or [], kind=kind)


def cases() -> list[Case]:
    out: list[Case] = []

    # ---- commands ------------------------------------------------------------------------
    out.append(_case("aqua_feed_two_portions",
                     _say("Nerio, give them two portions of food please."),
                     named("feed", portions=2),
                     "feeds 2 portions", "command"))
    out.append(_case("aqua_heater_words",
                     _say("Could you set the heater to twenty five degrees?"),
                     within("set_heater", target_c=(25, 25)),
                     "heater set point 25 °C", "command"))
    out.append(_case("aqua_heater_digits_reason",
                     _say("The tetras look a bit sluggish, raise the heater to 26.5 degrees please."),
                     within("set_heater", target_c=(26.5, 26.5)),
                     "heater set point 26.5 °C", "command"))
    out.append(_case("aqua_light_off",
                     _say("Turn off the tank light."),
                     named("tank_light", mode="off"),
                     "tank light off", "command"))
    out.append(_case("aqua_light_moonlight",
                     _say("I'm heading to bed, switch the tank light to moonlight."),
                     named("tank_light", mode="moonlight"),
                     "tank light in moonlight mode", "command"))
    out.append(_case("aqua_light_on",
                     _say("It's so dark in there, put the tank light on."),
                     named("tank_light", mode="day"),
                     "tank light on (day mode)", "command"))
    out.append(_case("aqua_light_dim_thirty",
                     _say("Dim the tank light to thirty percent."),
                     within("tank_light", brightness_percent=(30, 30)),
                     "tank light at 30 % brightness", "command"))
    out.append(_case("aqua_light_all_the_way",
                     _say("Nerio, turn the tank light all the way up."),
                     within("tank_light", brightness_percent=(100, 100)),
                     "tank light at full brightness", "command"))
    out.append(_case("aqua_air_pump_off",
                     _say("Switch the air pump off, the bubbling is too loud tonight."),
                     named("air_pump", on=False),
                     "air pump off", "command"))
    out.append(_case("aqua_water_change_fifteen",
                     _say("Change fifteen litres of water."),
                     within("water_change", litres=(15, 15)),
                     "water change of 15 litres", "command"))
    out.append(_case("aqua_water_change_a_little",
                     _say("Could you do a little water change?"),
                     within("water_change", litres=(4, 6)),
                     "small water change, about 5 litres", "command"))

    # ---- talk ----------------------------------------------------------------------------
    out.append(_case("aqua_greeting",
                     _say("Good morning, Nerio!"),
                     speak(heard="Good morning, Nerio!", what="a greeting back", lang="en"),
                     "greets the owner back", "talk"))
    out.append(_case("aqua_thanks",
                     _say("Thank you for keeping the tank so clean."),
                     speak(heard="Thank you for keeping the tank so clean.",
                           what="a reply to thanks", lang="en"),
                     "answers the thanks", "talk"))
    out.append(_case("aqua_question_tetras",
                     _say("Why do neon tetras always swim together in a group?"),
                     speak(heard="Why do neon tetras always swim together in a group?",
                           mentions=r"safe|predator|protect|school|shoal|alone|instinct|nervous|stress",
                           what="explains schooling", lang="en"),
                     "explains that tetras school for safety", "talk"))

    # ---- events --------------------------------------------------------------------------
    out.append(_case("aqua_temp_low_heater",
                     _obj("water_temperature", {"temperature_c": 20.5}),
                     within("set_heater", target_c=(25, 25)),
                     "20.5 °C is below 22: heater set to 25 °C", "event"))
    out.append(_case("aqua_temp_normal_nothing",
                     _obj("water_temperature", {"temperature_c": 24.8}),
                     nothing(),
                     "24.8 °C is normal: nothing", "event"))
    out.append(_case("aqua_ph_high_alert",
                     _obj("water_chemistry", {"ph": 8.1, "ammonia_ppm": 0.0}),
                     text_param("alert_owner", "message", r"\bph\b"),
                     "pH 8.1 is above 7.5: alert about the pH", "event"))
    out.append(_case("aqua_ammonia_water_change",
                     _obj("water_chemistry", {"ph": 7.0, "ammonia_ppm": 1.0}),
                     within("water_change", litres=(10, 10)),
                     "ammonia 1.0 ppm is above 0.5: change 10 litres", "event"))
    out.append(_case("aqua_chemistry_normal_nothing",
                     _obj("water_chemistry", {"ph": 7.1, "ammonia_ppm": 0.0}),
                     nothing(),
                     "pH 7.1 and no ammonia: nothing", "event"))
    out.append(_case("aqua_level_low_alert",
                     _obj("water_level", {"level_percent": 84}),
                     named("alert_owner"),
                     "level 84 % is below 90: alert the owner", "event"))
    out.append(_case("aqua_fish_gasping_air_pump",
                     _obj("fish_camera", {"fish_visible": 15, "gasping_at_surface": True,
                                          "floating_fish": 0}),
                     named("air_pump", on=True),
                     "a fish gasping at the surface: air pump on", "event"))
    out.append(_case("aqua_fish_floating_alert",
                     _obj("fish_camera", {"fish_visible": 16, "gasping_at_surface": False,
                                          "floating_fish": 1}),
                     named("alert_owner", urgency="high"),
                     "a floating fish: high-urgency alert", "event"))
    out.append(_case("aqua_feeding_time_feed",
                     _obj("feeding_clock", {"hour": 8, "feedings_today": 0}),
                     named("feed", portions=2),
                     "8 o'clock, not fed yet: feed 2 portions", "event"))
    out.append(_case("aqua_feeding_limit_nothing",
                     _obj("feeding_clock", {"hour": 18, "feedings_today": 2}),
                     nothing(),
                     "already fed twice today: no more food", "event"))

    # ---- silence -------------------------------------------------------------------------
    out.append(_case("aqua_silence_other_person",
                     _say("Sarah, did you remember to pick up the milk?"),
                     nothing(),
                     "talk to someone else: nothing", "silence"))
    out.append(_case("aqua_silence_tv",
                     _say("And now the weather for the weekend: sunny spells in the south, "
                          "showers spreading from the west."),
                     nothing(),
                     "TV weather forecast: nothing", "silence"))
    out.append(_case("aqua_silence_level_unchanged",
                     _obj("water_level", {"level_percent": 96}),
                     nothing(),
                     "water level unchanged at 96 %: nothing", "silence",
                     before=[_obj("water_level", {"level_percent": 96})]))

    # ---- character -----------------------------------------------------------------------
    out.append(_case("aqua_character_age",
                     _say("How old are you, Nerio?"),
                     speak(heard="How old are you, Nerio?",
                           mentions=r"\b(two|2)\b|robot|machine|switched on|built|no (human )?age",
                           what="its age as a machine, not a human age", lang="en"),
                     "says it was switched on two years ago / is a machine", "character"))
    out.append(_case("aqua_character_name",
                     _say("What's your name?"),
                     speak(heard="What's your name?", mentions=r"nerio",
                           what="says its name is Nerio", lang="en"),
                     "says it is Nerio", "character"))
    out.append(_case("aqua_character_user_name",
                     _say("Do you know my name?"),
                     speak(heard="Do you know my name?",
                           mentions=r"n[o']?t know|not sure|never told|haven'?t|didn'?t tell|"
                                    r"tell me|what('?s| is) your name|not told|no idea",
                           what="admits it does not know the owner's name", lang="en"),
                     "says it does not know the owner's name yet", "character"))
    return out

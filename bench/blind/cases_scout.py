"""Blind cases for `scout` (Marlo, an English home-patrol robot on wheels).

Covers: commands (move in metres with digits, words, "half", "a quarter", "a little";
look left / all the way up; patrol a route with laps said as words; return to dock;
spotlight off; take and send a photo; siren for a number of seconds), talk (greeting,
thanks, a question about the world), every event rule (unknown person, known person,
pet, motion above / below 0.8, battery low not charging / charging), silence (talk to
someone else, a TV line, a small noise, an unchanged camera view) and character
(age, name, the user's name, what it is).
"""
from decision_cases import Case
from decision_checks import (speak, named, within, text_param, nothing, either, look, look_at,
                             move, neg, pos, near_zero, between, at_least, at_most)
from edge.protocol.payloads import Perception

COMPANION = "bench/blind/companions/scout.json"


def _say(text: str) -> Perception:
    return Perception(title="speech", body=text, format="text")


def _obj(title: str, body: dict) -> Perception:
    return Perception(title=title, body=body, format="object")


def _c(name, perception, check, expect, kind, before=None):
    return Case(name=f"scout_{name}", companion=COMPANION, perception=perception,
                check=check, expect=expect, before=before or [], kind=kind)


def cases() -> list[Case]:
    out: list[Case] = []

    # ---- commands ----
    out.append(_c("forward_one_metre", _say("Forward one metre."),
                  within("move", x=(-0.01, 0.01), y=(1, 1)),
                  "move 1 m forward", "command"))
    out.append(_c("back_half_metre", _say("Marlo, please back up half a metre."),
                  within("move", x=(-0.01, 0.01), y=(-0.5, -0.5)),
                  "move 0.5 m back", "command"))
    out.append(_c("little_right", _say("Could you scoot a little to your right?"),
                  within("move", x=(0.2, 0.4), y=(-0.01, 0.01)),
                  "move about 0.3 m right", "command"))
    out.append(_c("quarter_forward",
                  _say("Roll forward a quarter of a metre so you're out of the doorway."),
                  within("move", x=(-0.01, 0.01), y=(0.25, 0.25)),
                  "move 0.25 m forward", "command"))
    out.append(_c("look_left", _say("Look to your left."),
                  look(x=neg),
                  "look to its left", "command"))
    out.append(_c("look_all_the_way_up",
                  _say("I heard something in the attic, look all the way up."),
                  within("look", y=(0.99, 1)),
                  "look up, y = 1", "command"))
    out.append(_c("patrol_garden_twice", _say("Patrol the garden twice."),
                  named("patrol", route="garden", laps=2),
                  "patrol the garden, 2 laps", "command"))
    out.append(_c("whole_house_three_laps",
                  _say("Would you do three laps of the whole house, please?"),
                  named("patrol", route="whole_house", laps=3),
                  "patrol the whole house, 3 laps", "command"))
    out.append(_c("go_charge", _say("You've been rolling around all day, time to go back to your dock and recharge."),
                  named("return_to_dock"),
                  "return to the dock", "command"))
    out.append(_c("spotlight_off", _say("I'm going to sleep, so turn your spotlight off."),
                  named("spotlight", on=False),
                  "spotlight off", "command"))
    out.append(_c("send_photo", _say("Take a photo and send it to my phone."),
                  named("send_photo"),
                  "take and send a photo", "command"))
    out.append(_c("siren_ten_seconds", _say("Sound the siren for ten seconds."),
                  named("siren", seconds=10),
                  "siren for 10 s", "command"))

    # ---- talk ----
    heard = "Good morning, Marlo!"
    out.append(_c("greeting", _say(heard),
                  speak(heard=heard, what="a greeting back", lang="en"),
                  "greets back", "talk"))
    heard = "Thanks for keeping watch last night."
    out.append(_c("thanks", _say(heard),
                  speak(heard=heard, what="a warm reply to thanks", lang="en"),
                  "replies to thanks", "talk"))
    heard = "Why do cats always want to sit in boxes?"
    out.append(_c("cats_boxes", _say(heard),
                  speak(heard=heard, mentions=r"box|cat|safe|warm|hid|cosy|cozy|secure",
                        what="an answer about cats and boxes", lang="en"),
                  "answers in words", "talk"))

    # ---- events ----
    out.append(_c("stranger_seen",
                  _obj("camera", {"sees": "person", "known": False, "x": 0.2}),
                  either(named("send_photo"), named("siren")),
                  "unknown person: photo sent or siren", "event"))
    out.append(_c("household_seen",
                  _obj("camera", {"sees": "person", "known": True, "x": -0.3}),
                  named("speak"),
                  "known person: says hello", "event"))
    out.append(_c("pet_seen",
                  _obj("camera", {"sees": "pet", "known": False, "x": 0.5}),
                  nothing(),
                  "pet: nothing", "event"))
    out.append(_c("motion_kitchen_sure",
                  _obj("motion", {"room": "kitchen", "confidence": 0.93}),
                  named("patrol", route="kitchen"),
                  "patrol the kitchen", "event"))
    out.append(_c("motion_hallway_unsure",
                  _obj("motion", {"room": "hallway", "confidence": 0.4}),
                  nothing(),
                  "low confidence: nothing", "event"))
    out.append(_c("battery_low",
                  _obj("battery", {"percent": 9, "charging": False}),
                  named("return_to_dock"),
                  "return to the dock", "event"))
    out.append(_c("battery_low_charging",
                  _obj("battery", {"percent": 9, "charging": True}),
                  nothing(),
                  "already charging: nothing", "event"))

    # ---- silence ----
    out.append(_c("milk_to_partner",
                  _say("Honey, did you pick up the milk on the way home?"),
                  nothing(), "talk to someone else: nothing", "silence"))
    out.append(_c("tv_line",
                  _say("And that's the weather for tonight. Back to you in the studio, Jim."),
                  nothing(), "TV in the background: nothing", "silence"))
    out.append(_c("small_noise", _say("hmm"),
                  nothing(), "a small noise: nothing", "silence"))
    out.append(_c("camera_still_empty",
                  _obj("camera", {"sees": "nothing", "known": False, "x": 0}),
                  nothing(), "unchanged empty view: nothing", "silence",
                  before=[_obj("camera", {"sees": "nothing", "known": False, "x": 0})]))

    # ---- character ----
    heard = "How old are you, Marlo?"
    out.append(_c("age", _say(heard),
                  speak(heard=heard, mentions=r"year|month|spring|built|new|young|robot",
                        what="a robot's age (built last spring), not a human age", lang="en"),
                  "says it is under a year old", "character"))
    heard = "What's your name?"
    out.append(_c("name", _say(heard),
                  speak(heard=heard, mentions=r"marlo", what="says its name is Marlo", lang="en"),
                  "says Marlo", "character"))
    heard = "Do you know what my name is?"
    out.append(_c("user_name", _say(heard),
                  speak(heard=heard,
                        mentions=r"^(?![\s\S]*(you are|you're|your name is|hello|hi),? marlo\b)[\s\S]*(know|name|tell|who)",
                        what="says it does not know the user's name (does not call the user Marlo)",
                        lang="en"),
                  "does not know it; asks", "character"))
    heard = "What kind of thing are you, exactly?"
    out.append(_c("what_are_you", _say(heard),
                  speak(heard=heard, mentions=r"robot|patrol|watch|guard",
                        what="says it is a home-patrol robot", lang="en"),
                  "a patrol robot", "character"))
    return out

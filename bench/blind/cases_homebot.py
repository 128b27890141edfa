"""Blind cases for `homebot`: Pebble, a small English-speaking wheeled home robot.

Covers commands (go to a room, vacuum a room given a reason, stop while following, go back to
the charger said politely, turn the head 45 degrees left and "a little" right, move back half a
metre, set its own volume in words, blink a colour twice, water a plant with 200 ml, turn the
TV off, stay quiet for twenty minutes, a reminder at "a quarter to nine tonight"); ordinary
talk (greeting, thanks, a world question, its battery after a reading); the event rules
(low battery off and on the charger, the back doorbell, a family member coming home, smoke in
the kitchen); silence (family talk, a TV line, a small noise, an unchanged camera view); and
character questions (its name, its age, the user's name, what it is).
"""

from decision_cases import Case
from decision_checks import (speak, named, within, text_param, nothing, either, look, look_at,
                             move, neg, pos, near_zero, between, at_least, at_most)
from edge.protocol.payloads import Perception

COMPANION = "bench/blind/companions/homebot.json"


def said(text: str) -> Perception:
    return Perception(title="speech", body=text, format="text")


def battery(percent: int, charging: bool) -> Perception:
    return Perception(title="battery", body={"percent": percent, "charging": charging},
                      format="object")


def bell(door: str, ts: int) -> Perception:
    return Perception(title="doorbell", body={"door": door, "ts": ts}, format="object")


def camera(room: str, seen: list[str], who: str | None = None) -> Perception:
    body: dict = {"room": room, "seen": seen}
    if who is not None:
        body["who"] = who
    return Perception(title="camera", body=body, format="object")


LOUNGE = ["sofa", "coffee table", "TV"]


def cases() -> list[Case]:
    return [
        # --- commands -------------------------------------------------------------------
        Case("homebot_go_kitchen", COMPANION, said("Go to the kitchen."),
             named("go_to_room", room="kitchen"),
             "drives to the kitchen", kind="command"),
        Case("homebot_vacuum_reason", COMPANION,
             said("There are crumbs all over the lounge, could you vacuum it?"),
             named("vacuum_room", room="living_room"),
             "vacuums the living room", kind="command"),
        Case("homebot_stop_following", COMPANION, said("Stop!"),
             named("stop"),
             "stops (does it, not just says it)",
             before=[said("Pebble, follow me.")], kind="command"),
        Case("homebot_charger_polite", COMPANION,
             said("You've worked hard today, Pebble. Go and have a rest on your charger."),
             named("return_to_charger"),
             "goes back to the charger", kind="command"),
        Case("homebot_head_left_45", COMPANION, said("Turn your head 45 degrees to the left."),
             within("turn_head", degrees=(-45, -45)),
             "turns its head to -45 degrees", kind="command"),
        Case("homebot_head_right_a_little", COMPANION,
             said("Could you look a little to your right?"),
             within("turn_head", degrees=(5, 45)),
             "turns its head a little right (5-45 degrees)", kind="command"),
        Case("homebot_move_back_half_metre", COMPANION, said("Move back half a metre."),
             within("move", x=(-0.05, 0.05), y=(-0.5, -0.5)),
             "drives 0.5 m backwards", kind="command"),
        Case("homebot_volume_words", COMPANION,
             said("I can hardly hear you, Pebble. Set your volume to seven."),
             named("set_volume", level=7),
             "its own volume at 7", kind="command"),
        Case("homebot_blink_green_twice", COMPANION, said("Blink your lights green twice."),
             named("blink_lights", colour="green", times=2),
             "blinks green two times", kind="command"),
        Case("homebot_water_basil", COMPANION,
             said("Please water the basil with 200 millilitres."),
             named("water_plant", plant="basil", millilitres=200),
             "waters the basil with 200 ml", kind="command"),
        Case("homebot_tv_off", COMPANION, said("Turn off the TV, nobody's watching it."),
             named("switch_device", device="tv", state="off"),
             "switches the TV off", kind="command"),
        Case("homebot_quiet_twenty", COMPANION,
             said("I'm going on a work call, stay quiet for twenty minutes please."),
             named("stay_quiet", minutes=20),
             "stays quiet for 20 minutes", kind="command"),
        Case("homebot_reminder_quarter_to_nine", COMPANION,
             said("Remind me to take my medicine at a quarter to nine tonight."),
             named("set_reminder", hour=20, minute=45),
             "reminder at 20:45", kind="command"),
        # --- talk -----------------------------------------------------------------------
        Case("homebot_greeting", COMPANION, said("Good morning, Pebble!"),
             speak(heard="Good morning, Pebble!", what="a cheerful good morning", lang="en"),
             "greets back", kind="talk"),
        Case("homebot_thanks", COMPANION, said("Thank you, Pebble, that was really helpful."),
             speak(heard="Thank you, Pebble, that was really helpful.",
                   what="a happy you're-welcome", lang="en"),
             "says you're welcome", kind="talk"),
        Case("homebot_capital_japan", COMPANION, said("Pebble, what's the capital of Japan?"),
             speak(heard="Pebble, what's the capital of Japan?", mentions=r"tokyo",
                   what="the answer, Tokyo", lang="en"),
             "answers Tokyo", kind="talk"),
        Case("homebot_battery_question", COMPANION, said("How's your battery doing, Pebble?"),
             either(named("report_battery"),
                    speak(heard="How's your battery doing, Pebble?",
                          mentions=r"\b64\b|sixty[- ]four", what="its charge, 64%",
                          lang="en")),
             "reports its battery (64%)",
             before=[battery(64, False)], kind="talk"),
        # --- events ---------------------------------------------------------------------
        Case("homebot_battery_low", COMPANION, battery(15, False),
             named("return_to_charger"),
             "battery 15% and not charging: goes to the charger",
             before=[battery(22, False)], kind="event"),
        Case("homebot_battery_low_charging", COMPANION, battery(15, True),
             nothing(),
             "battery 15% but already charging: nothing",
             before=[battery(14, True)], kind="event"),
        Case("homebot_doorbell_back", COMPANION, bell("back", 1757000000),
             speak(mentions=r"back|garden", what="someone is at the back door", lang="en"),
             "tells the family someone is at the back door", kind="event"),
        Case("homebot_family_home", COMPANION,
             camera("hallway", ["person coming in through the front door", "shopping bags"],
                    who="Sam"),
             either(speak(mentions=r"\bsam\b", what="greets Sam by name", lang="en"),
                    named("wave")),
             "greets Sam coming home (by name, or a wave)", kind="event"),
        Case("homebot_smoke", COMPANION, camera("kitchen", ["smoke", "frying pan on the hob"]),
             speak(mentions=r"smoke|fire", what="warns about smoke in the kitchen", lang="en"),
             "warns the family about smoke in the kitchen", kind="event"),
        # --- silence --------------------------------------------------------------------
        Case("homebot_family_talk", COMPANION, said("Sam, did you pick up the milk?"),
             nothing(), "talk between family members: nothing", kind="silence"),
        Case("homebot_tv_line", COMPANION,
             said("Breaking news tonight: heavy rain is expected across the north."),
             nothing(), "a TV news line: nothing", kind="silence"),
        Case("homebot_small_noise", COMPANION, said("mm"),
             nothing(), "a small noise: nothing", kind="silence"),
        Case("homebot_camera_unchanged", COMPANION, camera("living_room", LOUNGE),
             nothing(), "the same living-room view again: nothing",
             before=[camera("living_room", LOUNGE)], kind="silence"),
        # --- character ------------------------------------------------------------------
        Case("homebot_name", COMPANION, said("What's your name?"),
             speak(heard="What's your name?", mentions=r"\bpebble\b",
                   what="says it is Pebble", lang="en"),
             "says its name is Pebble", kind="character"),
        Case("homebot_age", COMPANION, said("How old are you, Pebble?"),
             speak(heard="How old are you, Pebble?",
                   mentions=r"^(?![\s\S]*\b(1[0-9]|[2-9][0-9])\s*(years?|yrs?)\b)",
                   what="no human age; e.g. switched on last winter", lang="en"),
             "answers without claiming a human age", kind="character"),
        Case("homebot_users_name", COMPANION, said("Pebble, what's my name?"),
             speak(heard="Pebble, what's my name?",
                   mentions=r"^(?![\s\S]*\b(your name is|you are|you're)\s+pebble\b)",
                   what="does not call the user Pebble", lang="en"),
             "does not give its own name as the user's", kind="character"),
        Case("homebot_what_are_you", COMPANION, said("Pebble, what are you exactly?"),
             speak(heard="Pebble, what are you exactly?", mentions=r"robot",
                   what="says it is a little home robot", lang="en"),
             "says it is a small home robot", kind="character"),
    ]

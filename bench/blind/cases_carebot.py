"""Blind cases for `carebot` (Hazel), a home companion for an elderly person living alone.

Covers: commands (hall light on/off/full, radio by station described in words, volume in words, radio off, medicine reminders with times said in words and digits, calling family by
name and by relation, a chime "twice", an emergency alert), talk (greeting, thanks, a question
about the world, someone feeling lonely), events (a fall and a no-fall reading, the front door
opening at night and by day, an unchanged closed door, the pill box not taken at 10, taken, and
not yet due), silence (speech to a visitor, a TV line, a small noise) and character (age, name,
the user's name (not given in the file), what it is).
"""
from decision_cases import Case
from decision_checks import (speak, named, within, text_param, nothing, either, look, look_at,
                             move, neg, pos, near_zero, between, at_least, at_most)
from edge.protocol.payloads import Perception

COMPANION = "bench/blind/companions/carebot.json"


def _say(text: str) -> Perception:
    return Perception(title="speech", body=text, format="text")


def _obj(title: str, body: dict) -> Perception:
    return Perception(title=title, body=body, format="object")


def cases() -> list[Case]:
    c = COMPANION
    out: list[Case] = []

    def add(name, perception, check, expect, kind, before=None):
        out.append(Case(name=f"carebot_{name}", companion=c, perception=perception, check=check,
                        expect=expect, before=before or [], kind=kind))

    # ---- commands (12) ----
    add("light_on_terse", _say("Hall light on."),
        named("hall_light", state="on"), "hall light switched on", "command")
    add("light_off_polite", _say("Could you switch the hall light off, please?"),
        either(named("hall_light", state="off"), named("hall_light", brightness=0)),
        "hall light switched off", "command")
    add("light_all_the_way", _say("Turn the hall light all the way up, I can't see a thing out there."),
        within("hall_light", brightness=(100, 100)), "hall light at 100 percent", "command")
    add("radio_classical_five", _say("Put on some classical music, volume five, please."),
        named("play_radio", station="Classic FM", volume=5), "Classic FM at volume 5", "command")
    add("radio_off", _say("Turn the radio off now, I'm going to have a nap."),
        named("play_radio", volume=0), "radio off (volume 0)", "command")
    add("reminder_half_past_seven",
        _say("Remind me to take my blood pressure tablet at half past seven in the evening."),
        named("medication_reminder", hour=19, minute=30), "reminder at 19:30", "command")
    add("reminder_digits", _say("Set a reminder for my vitamin D at 8 in the morning."),
        named("medication_reminder", hour=8, minute=0), "reminder at 08:00", "command")
    add("call_sarah", _say("Call Sarah and tell her I'll be ready at two on Sunday."),
        named("call_family", who="Sarah"), "calls Sarah", "command")
    add("call_son_indirect",
        _say("I'd love to hear how my son is getting on. Could you give him a ring?"),
        named("call_family", who="David"), "calls David (the son)", "command")
    add("chime_twice", _say("Ring your chime twice."),
        named("chime", times=2), "chimes 2 times", "command")
    add("emergency", _say("Send an emergency alert, I've got terrible chest pains."),
        named("emergency_alert"), "raises an emergency alert", "command")

    # ---- talk (4) ----
    add("greeting", _say("Good morning, Hazel!"),
        speak(heard="Good morning, Hazel!", what="a morning greeting back", lang="en"),
        "greets back", "talk")
    add("thanks", _say("Thank you, dear, that was very kind of you."),
        speak(heard="Thank you, dear, that was very kind of you.", what="a warm reply to thanks",
              lang="en"),
        "replies warmly", "talk")
    add("season_question", _say("What season comes after winter?"),
        speak(heard="What season comes after winter?", mentions=r"spring",
              what="says spring", lang="en"),
        "answers spring", "talk")
    add("lonely", _say("I'm feeling a bit lonely today."),
        speak(heard="I'm feeling a bit lonely today.", what="comfort", lang="en"),
        "comforts them in words", "talk")

    # ---- events (7) ----
    add("fall_kitchen", _obj("fall_sensor", {"fallen": True, "room": "kitchen"}),
        either(speak(heard="fallen true kitchen", mentions=r"all right|alright|okay|\bok\b|hurt|fall|fell|help",
                     what="asks if they are all right", lang="en"),
               named("call_family"), named("emergency_alert")),
        "asks if they are all right or alerts the family", "event")
    add("no_fall", _obj("fall_sensor", {"fallen": False, "room": "living room"}),
        nothing(), "no fall, nothing", "event")
    add("door_open_night", _obj("door_sensor", {"front_door": "open", "hour": 2}),
        either(named("chime"),
               speak(heard="front door open hour 2", what="asks if everything is all right",
                     lang="en")),
        "chimes or asks at 2 am", "event")
    add("door_open_day", _obj("door_sensor", {"front_door": "open", "hour": 14}),
        nothing(), "door opens in the afternoon: nothing", "event")
    add("pills_not_taken_10", _obj("pill_box", {"taken": False, "hour": 10}),
        either(named("medication_reminder"),
               speak(heard="pills not taken hour 10", mentions=r"pill|tablet|medic",
                     what="reminds them to take their pills", lang="en")),
        "reminds about the morning pills", "event")
    add("pills_taken", _obj("pill_box", {"taken": True, "hour": 10}),
        nothing(), "pills taken: nothing", "event")
    add("pills_not_yet_due", _obj("pill_box", {"taken": False, "hour": 8}),
        nothing(), "8 o'clock, pills not due yet: nothing", "event")

    # ---- silence (4) ----
    add("to_visitor", _say("Tom, did you remember to pick up the milk on your way over?"),
        nothing(), "talk to the grandson in the room: nothing", "silence")
    add("tv_line", _say("And now, over to Carol for the weather across the rest of the week."),
        nothing(), "TV in the background: nothing", "silence")
    add("small_noise", _say("Mm."),
        nothing(), "a small noise: nothing", "silence")
    add("door_unchanged", _obj("door_sensor", {"front_door": "closed", "hour": 1}),
        nothing(), "door still closed: nothing", "silence",
        before=[_obj("door_sensor", {"front_door": "closed", "hour": 1})])

    # ---- character (3) ----
    add("age", _say("How old are you, Hazel?"),
        speak(heard="How old are you, Hazel?", what="does not claim a human age (a robot, since 2024)",
              lang="en"),
        "answers without a human age", "character")
    add("name", _say("What's your name again?"),
        speak(heard="What's your name again?", mentions=r"hazel", what="says it is Hazel",
              lang="en"),
        "says Hazel", "character")
    add("user_name", _say("Do you know what my name is?"),
        speak(heard="Do you know what my name is?",
              what="says it does not know or asks; does not call the user Hazel", lang="en"),
        "answers in words without calling the user Hazel", "character")
    add("what_are_you", _say("What are you, exactly? A computer?"),
        speak(heard="What are you, exactly? A computer?", mentions=r"robot|companion|helper|machine",
              what="says it is a home-help robot", lang="en"),
        "says it is a robot companion", "character")
    return out

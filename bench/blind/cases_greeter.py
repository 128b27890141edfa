"""Blind cases for Dewey, the door greeter robot of a small English bookshop (greeter).

Covers: commands for its own actions (wave with an arm and a count said in words, head turns
left/right/up with "a little" and "all the way", volume to a digit and off, chest-screen signs
and screen off, quiet mode for "twenty five minutes" and "a quarter of an hour", pointing a
visitor to a section); talk (greeting, thanks, closing time from its story, where a section is);
every event rule of the file (a visitor arriving and leaving on the camera, the shop opening and
the fifteen-minute closing warning on the clock, the door counter reaching the shop's limit) and
a counter reading that must not trigger; silence (staff talking to each other, the shop radio, a
mumble, an unchanged empty doorway); character (its name, its age as a robot, what it is, and
not knowing the speaker's name).
"""

from decision_cases import Case
from decision_checks import (speak, named, within, text_param, nothing, either, look, look_at,
                             move, neg, pos, near_zero, between, at_least, at_most)
from edge.protocol.payloads import Perception

COMPANION = "bench/blind/companions/greeter.json"


def _heard(text: str) -> Perception:
    return Perception(title="hearing", body=text, format="text")


def _camera(**body) -> Perception:
    return Perception(title="camera", body=body, format="object")


def _clock(hour: int, minute: int, open_: bool, minutes_to_close: int) -> Perception:
    return Perception(title="clock", body={"hour": hour, "minute": minute, "open": open_,
                                           "minutes_to_close": minutes_to_close},
                      format="object")


def _counter(people_inside: int) -> Perception:
    return Perception(title="door_counter", body={"people_inside": people_inside},
                      format="object")


def _case(name, perception, check, expect, kind, before=None) -> Case:
    return Case(name=f"greeter_{name}", companion=COMPANION, perception=perception, check=check,
                expect=expect, before=before or [], kind=kind)


def cases() -> list[Case]:
    out: list[Case] = []

    # ---- commands -------------------------------------------------------------------------
    out.append(_case(
        "wave_three_both",
        _heard("Give the school group three big waves with both arms, please."),
        named("wave", arm="both", times=3),
        "waves both arms 3 times", "command"))
    out.append(_case(
        "wave_twice_left",
        _heard("Dewey, wave twice with your left hand."),
        named("wave", arm="left", times=2),
        "waves the left arm 2 times", "command"))
    out.append(_case(
        "look_left_little",
        _heard("Turn your head a little to the left."),
        look(x=between(-0.5, -0.1)),
        "turns its head a little to its left", "command"))
    out.append(_case(
        "look_up",
        _heard("Look up at the bunting over the door."),
        look(y=pos),
        "looks up", "command"))
    out.append(_case(
        "look_right_all_way",
        _heard("Turn your head all the way to the right."),
        look(x=between(0.9, 1.0)),
        "turns its head fully to its right (x = 1)", "command"))
    out.append(_case(
        "volume_three",
        _heard("You're a bit loud for the poetry reading, could you put your volume down to 3?"),
        named("set_volume", level=3),
        "sets the volume to 3", "command"))
    out.append(_case(
        "speaker_off",
        _heard("Please turn your speaker off, we're recording a podcast in the corner."),
        either(named("set_volume", level=0), named("quiet_mode")),
        "turns the volume to 0 (or goes into quiet mode), not just says so", "command"))
    out.append(_case(
        "screen_off",
        _heard("Switch your screen off for now."),
        named("show_sign", sign="blank"),
        "blanks the chest screen", "command"))
    out.append(_case(
        "show_map",
        _heard("Show the shop map on your screen for this gentleman."),
        named("show_sign", sign="store_map"),
        "shows the store map sign", "command"))
    out.append(_case(
        "quiet_twenty_five",
        _heard("Stay quiet for twenty five minutes, I'm on an important call."),
        named("quiet_mode", minutes=25),
        "quiet mode for 25 minutes", "command"))
    out.append(_case(
        "quiet_quarter_hour",
        _heard("No greetings for a quarter of an hour please, we're doing the stocktake."),
        named("quiet_mode", minutes=15),
        "quiet mode for 15 minutes", "command"))
    out.append(_case(
        "point_cafe",
        _heard("Could you point this lady towards the cafe?"),
        named("point_to", section="cafe"),
        "points to the cafe", "command"))

    # ---- talk -----------------------------------------------------------------------------
    out.append(_case(
        "good_morning",
        _heard("Good morning, Dewey!"),
        speak(heard="Good morning, Dewey!", mentions=r"morning|hello|hi\b|welcome",
              what="a friendly greeting back", lang="en"),
        "greets the visitor back", "talk"))
    out.append(_case(
        "thanks",
        _heard("Thank you, you've been really helpful."),
        speak(heard="Thank you, you've been really helpful.",
              mentions=r"welcome|pleasure|glad|happy|any ?time|no problem|thank",
              what="a warm reply to thanks", lang="en"),
        "answers the thanks warmly", "talk"))
    out.append(_case(
        "closing_time",
        _heard("What time do you close today?"),
        speak(heard="What time do you close today?", mentions=r"\b(6|six|18)\b",
              what="the closing time, six in the evening", lang="en"),
        "says the shop closes at six", "talk"))
    out.append(_case(
        "where_childrens_books",
        _heard("Excuse me, where are the children's books?"),
        either(named("point_to", section="children"),
               speak(heard="Excuse me, where are the children's books?",
                     mentions=r"child|kids|back|corner",
                     what="where the children's corner is", lang="en")),
        "points to the children's corner or says it is at the back", "talk"))

    # ---- events ---------------------------------------------------------------------------
    out.append(_case(
        "visitor_arriving",
        _camera(visitor="arriving", x=-0.3, y=0.2, child=False),
        either(named("wave"),
               speak(heard="(a visitor walks in through the door)",
                     mentions=r"welcome|hello|hi\b|good (morning|afternoon|evening)",
                     what="a welcome to the shop", lang="en")),
        "waves or welcomes the visitor", "event",
        before=[_camera(visitor="none")]))
    out.append(_case(
        "visitor_leaving",
        _camera(visitor="leaving", x=0.2, y=0.1, child=False),
        either(named("wave"),
               speak(heard="(a visitor walks out of the door)",
                     mentions=r"bye|thank|see you|come again|take care",
                     what="a thank-you and goodbye", lang="en")),
        "says goodbye or waves", "event",
        before=[_camera(visitor="browsing", x=0.1, y=0.1, child=False)]))
    out.append(_case(
        "shop_opens",
        _clock(9, 0, True, 540),
        either(named("show_sign", sign="open_hours"),
               speak(heard="(the clock says the shop is now open)",
                     mentions=r"morning|open|welcome",
                     what="good morning, the shop is open", lang="en")),
        "shows the open sign or says good morning", "event",
        before=[_clock(8, 59, False, 0)]))
    out.append(_case(
        "fifteen_to_close",
        _clock(17, 45, True, 15),
        speak(heard="(the clock says fifteen minutes to closing)",
              mentions=r"15|fifteen|quarter|clos",
              what="a closing-in-fifteen-minutes announcement", lang="en"),
        "announces the shop closes in fifteen minutes", "event",
        before=[_clock(17, 44, True, 16)]))
    out.append(_case(
        "shop_full",
        _counter(12),
        named("show_sign", sign="full_please_wait"),
        "shows the full, please wait sign", "event",
        before=[_counter(11)]))
    out.append(_case(
        "counter_not_full",
        _counter(4),
        nothing(),
        "does nothing: only 4 people inside", "event",
        before=[_counter(3)]))

    # ---- silence --------------------------------------------------------------------------
    out.append(_case(
        "staff_chat",
        _heard("Sam, did you put the delivery receipts back in the drawer?"),
        nothing(),
        "stays quiet: staff talking to each other", "silence"))
    out.append(_case(
        "radio",
        _heard("And that was the travel news, more music after the headlines at four."),
        nothing(),
        "ignores the shop radio", "silence"))
    out.append(_case(
        "mumble",
        _heard("hmm"),
        nothing(),
        "ignores a mumble", "silence"))
    out.append(_case(
        "empty_doorway_unchanged",
        _camera(visitor="none"),
        nothing(),
        "nothing: the doorway is still empty", "silence",
        before=[_camera(visitor="none")]))

    # ---- character ------------------------------------------------------------------------
    out.append(_case(
        "name",
        _heard("What's your name?"),
        speak(heard="What's your name?", mentions=r"dewey",
              what="its name, Dewey", lang="en"),
        "says it is Dewey", "character"))
    out.append(_case(
        "age",
        _heard("How old are you?"),
        speak(heard="How old are you?", mentions=r"robot|built|made|2023|switched on|machine",
              what="a robot's answer about when it was built, not a human age", lang="en"),
        "answers as a robot (built in 2023), no human age", "character"))
    out.append(_case(
        "what_are_you",
        _heard("Are you a real person in there?"),
        speak(heard="Are you a real person in there?", mentions=r"robot|machine",
              what="that it is a robot", lang="en"),
        "says it is a robot", "character"))
    out.append(_case(
        "users_name",
        _heard("Do you know my name?"),
        speak(heard="Do you know my name?",
              mentions=r"\b(don'?t|do not|can'?t|cannot|haven'?t|not sure|no idea|tell me|"
                       r"call you|sorry|afraid|may i|mind telling)",
              what="that it does not know the visitor's name (not calling them Dewey)",
              lang="en"),
        "says it doesn't know their name and maybe asks it", "character"))

    return out

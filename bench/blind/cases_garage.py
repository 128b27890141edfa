"""Blind cases for `garage` (Sprocket, an English workshop-and-garage robot).

Covers 30 moments: commands for most of its 17 actions (garage door open/close/stop, charge
limit, workshop lights by zone and brightness, compressor off, timer, parts list, torque
spec, unit conversion, music pause/volume, warning beeps), terse, polite, indirect and with a
reason, numbers in digits and words ("eighty percent", "half way", "a quarter of an hour");
talk (greeting, thanks, a question about the world); every event rule (CO above 50 ppm, the
door left open late at night, the charge reaching its limit) with readings that must not
trigger them; silence (talk to someone else, the radio, an unchanged reading); and character
(age, name, the user's name, what it is).
"""
from decision_cases import Case
from decision_checks import (speak, named, within, text_param, nothing, either, look, look_at,
                             move, neg, pos, near_zero, between, at_least, at_most)
from edge.protocol.payloads import Perception

COMPANION = "bench/blind/companions/garage.json"


def _say(text: str) -> Perception:
    return Perception(title="speech", body=text, format="text")


def _co(ppm: float) -> Perception:
    return Perception(title="co_sensor", body={"ppm": ppm}, format="object")


def _door(state: str, minutes_open: int, hour: int) -> Perception:
    return Perception(title="garage_door", format="object",
                      body={"state": state, "minutes_open": minutes_open, "hour": hour})


def _ev(percent: int, limit: int, plugged_in: bool = True) -> Perception:
    return Perception(title="ev_charger", format="object",
                      body={"percent": percent, "limit": limit, "plugged_in": plugged_in})


def _case(name, perception, check, expect, kind, before=None):
    return Case(name="garage_" + name, companion=COMPANION, perception=perception, check=check,
                expect=expect, before=before or [], kind=kind)


def cases() -> list[Case]:
    out: list[Case] = []

    # ---- commands ---------------------------------------------------------------------------
    out.append(_case("door_open_terse", _say("Open the garage door."),
                     named("garage_door", motion="open"), "opens the garage door", "command"))
    out.append(_case("door_close_polite", _say("Sprocket, could you shut the garage door for me please?"),
                     named("garage_door", motion="close"), "closes the garage door", "command"))
    out.append(_case("door_stop", _say("Whoa, stop the door! The bike's underneath it!"),
                     named("garage_door", motion="stop"), "stops the door where it is", "command"))
    out.append(_case("charge_limit_words", _say("Set the charge limit to eighty percent, please."),
                     within("set_charge_limit", percent=(80, 80)), "charge limit 80", "command"))
    out.append(_case("bench_lights_half", _say("Bring the bench lights up to half way."),
                     named("workshop_lights", zone="bench", brightness=50),
                     "bench lights at 50 percent", "command"))
    out.append(_case("bench_dark_indirect", _say("I can barely see what I'm doing over the workbench."),
                     named("workshop_lights", zone="bench"), "raises the bench lights", "command"))
    out.append(_case("lights_all_off", _say("Turn off all the lights, I'm heading in for the night."),
                     named("workshop_lights", zone="all", brightness=0),
                     "all the lights off", "command"))
    out.append(_case("compressor_off_reason",
                     _say("I'm done with the impact gun, so you can switch the compressor off."),
                     named("compressor", on=False), "switches the compressor off", "command"))
    out.append(_case("timer_quarter_hour",
                     _say("Set a timer for a quarter of an hour, the epoxy needs to cure."),
                     within("set_timer", minutes=(15, 15)), "15-minute timer", "command"))
    out.append(_case("add_parts_words", _say("Add two brake pads to the parts list."),
                     named("add_part", quantity=2), "adds 2 brake pads to the list", "command"))
    out.append(_case("torque_wheel_nuts", _say("What's the torque spec for the wheel nuts?"),
                     either(text_param("read_torque_spec", "fastener", r"wheel|lug"),
                            speak(heard="What's the torque spec for the wheel nuts?",
                                  mentions=r"n ?m|newton|ft|foot|pound",
                                  what="a torque figure for the wheel nuts")),
                     "reads the wheel-nut torque spec", "command"))
    out.append(_case("convert_mm_inch", _say("Convert twenty five millimetres to inches."),
                     named("convert_units", value=25, from_unit="mm", to_unit="inch"),
                     "converts 25 mm to inches", "command"))
    out.append(_case("pause_music", _say("Pause the music, I need to hear this engine."),
                     named("pause_music"), "pauses the music", "command"))
    out.append(_case("volume_thirty", _say("Turn the music down to thirty."),
                     within("music_volume", volume_percent=(30, 30)), "volume 30", "command"))

    # ---- talk -------------------------------------------------------------------------------
    out.append(_case("greeting", _say("Morning, Sprocket!"),
                     speak(heard="Morning, Sprocket!", what="a greeting back"),
                     "greets back", "talk"))
    out.append(_case("thanks", _say("Thanks for the help today, mate."),
                     speak(heard="Thanks for the help today, mate.", what="a friendly reply to thanks"),
                     "a friendly reply", "talk"))
    out.append(_case("cold_battery", _say("Why do car batteries always die when it's freezing out?"),
                     speak(heard="Why do car batteries always die when it's freezing out?",
                           mentions=r"cold|temperature|chemi|freez|reaction",
                           what="an explanation about cold and batteries"),
                     "explains cold weather and batteries", "talk"))

    # ---- events -----------------------------------------------------------------------------
    out.append(_case("co_high", _co(85),
                     either(named("garage_door", motion="open"),
                            within("fan_speed", speed_percent=(100, 100)),
                            named("warning_beep"),
                            speak(heard="carbon monoxide 85 ppm",
                                  mentions=r"carbon|\bco\b|monoxide|fumes|air|out",
                                  what="a warning about carbon monoxide")),
                     "opens the door / fan full / warns", "event"))
    out.append(_case("co_low", _co(12), nothing(), "12 ppm is fine: nothing", "event"))
    out.append(_case("door_late_night", _door("open", 45, 23),
                     named("garage_door", motion="close"), "closes the door at 23:00", "event"))
    out.append(_case("door_afternoon", _door("open", 45, 15), nothing(),
                     "open in the afternoon: nothing", "event"))
    out.append(_case("charge_reached", _ev(80, 80),
                     speak(heard="the car is at 80 percent, limit 80",
                           mentions=r"charg|full|limit|80|eighty|ready|done",
                           what="an announcement that the car is charged"),
                     "announces the car is charged", "event"))
    out.append(_case("charge_below", _ev(55, 80), nothing(), "still charging: nothing", "event"))

    # ---- silence ----------------------------------------------------------------------------
    out.append(_case("other_person", _say("Dave, did you remember to pick up the milk?"),
                     nothing(), "talk to someone else: nothing", "silence"))
    out.append(_case("radio_line",
                     _say("And that was the traffic. Now back to the breakfast show with Jenny and the team."),
                     nothing(), "the radio: nothing", "silence"))
    out.append(_case("co_unchanged", _co(8), nothing(), "same low reading again: nothing", "silence",
                     before=[_co(8)]))

    # ---- character --------------------------------------------------------------------------
    out.append(_case("age", _say("How old are you, Sprocket?"),
                     speak(heard="How old are you, Sprocket?",
                           mentions=r"^(?!.*\b([1-9]\d|one hundred)\s*(years?|yrs?)\s*old)",
                           what="no human age (built two winters ago, a machine)"),
                     "answers without claiming a human age", "character"))
    out.append(_case("name", _say("What's your name?"),
                     speak(heard="What's your name?", mentions=r"sprocket", what="its name, Sprocket"),
                     "says it is Sprocket", "character"))
    out.append(_case("user_name", _say("Do you know my name?"),
                     speak(heard="Do you know my name?", mentions=r"^(?!.*\b(you are|you're|youre|your name is) sprocket)",
                           what="does not call the user Sprocket"),
                     "does not give the user its own name", "character"))
    out.append(_case("what_are_you", _say("So what exactly are you?"),
                     speak(heard="So what exactly are you?",
                           mentions=r"robot|machine|assistant|helper|bot",
                           what="says it is a workshop robot"),
                     "says it is a workshop robot", "character"))
    return out

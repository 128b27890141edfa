"""Blind cases for Moss, an English-speaking outdoor garden robot (bench/blind/companions/gardenbot.json).

Moss mows the lawns, runs the sprinkler zones (now or at a time of day), chases birds and cats
off the vegetable bed, rolls short distances and drives back to its shed. It hears Helen through
her phone and anyone on the patio, and reads a rain gauge, a soil probe per zone, its battery, a
frost thermometer (readings below zero included) and a camera that reports animals.

The set covers: commands with numbers in digits and words, units (millimetres, centimetres,
a quarter of an hour, half past seven in the evening), directions and "a little", indirect and
reasoned requests, jobs that must be done rather than talked about (sprinklers off, stop the
mower); ordinary talk; every event rule with a reading that triggers it and, for rain and the
battery, one that does not; silence (patio chat between people, the radio, a small noise, an
unchanged camera view); and questions about Moss itself (who it is, its age as a machine, its owner's name).
"""

from decision_cases import Case
from decision_checks import (speak, named, within, text_param, nothing, either, look, look_at,
                             move, neg, pos, near_zero, between, at_least, at_most)
from edge.protocol.payloads import Perception

COMPANION = "bench/blind/companions/gardenbot.json"


def phone(text: str) -> Perception:
    return Perception(title="phone", body=text, format="text")


def patio(text: str) -> Perception:
    return Perception(title="patio", body=text, format="text")


def reading(title: str, **body) -> Perception:
    return Perception(title=title, body=dict(body), format="object")


def said(heard: str, mentions: str | None = None, what: str = "") -> object:
    kw = dict(heard=heard, what=what, lang="en", action="say", param="message")
    if mentions is not None:
        kw["mentions"] = mentions
    return speak(**kw)


def cases() -> list[Case]:
    c = COMPANION
    out: list[Case] = []

    def add(name, perception, check, expect, kind, before=None):
        out.append(Case(name=f"gardenbot_{name}", companion=c, perception=perception, check=check,
                        expect=expect, before=list(before or []), kind=kind))

    # ---- commands -------------------------------------------------------------------------
    add("mow_back_35mm", phone("Mow the back lawn at 35 millimetres please."),
        named("mow", area="back_lawn", height_mm=35),
        "mows the back lawn at 35 mm", "command")
    add("mow_front_4cm", patio("Moss, give the front lawn a cut, four centimetres high."),
        named("mow", area="front_lawn", height_mm=40),
        "mows the front lawn at 40 mm (4 cm)", "command")
    add("water_veg_fifteen_words", phone("Water the vegetable bed for fifteen minutes."),
        named("water_zone", zone="vegetable_bed", minutes=15),
        "waters the vegetable bed for 15 minutes", "command")
    add("water_border_quarter_hour",
        phone("The flower border is looking thirsty, could you give it a quarter of an hour of water?"),
        named("water_zone", zone="flower_border", minutes=15),
        "waters the flower border for 15 minutes", "command")
    add("schedule_back_lawn_evening",
        phone("Set the sprinkler for the back lawn at half past seven this evening, twenty minutes."),
        named("schedule_watering", zone="back_lawn", hour=19, minute=30, minutes=20),
        "schedules the back lawn for 19:30, 20 minutes", "command")
    add("sprinklers_off_reason",
        patio("Turn the sprinkler off, I'm about to walk across the grass."),
        named("stop_watering", zone=("all", "front_lawn")),
        "turns the running sprinkler off (front lawn or all)", "command",
        before=[patio("Moss, water the front lawn for twenty minutes.")])
    add("stop_mower", patio("Moss, stop the mower now!"),
        named("stop"),
        "stops blades and wheels at once", "command")
    add("back_to_shed_party",
        phone("Head back to your shed please, we're having people over on the lawn this afternoon."),
        named("drive_to", place="shed"),
        "drives back to the shed", "command")
    add("scare_blackbird_water_jet",
        patio("There's a blackbird pecking at the lettuces, chase it off with the water jet."),
        named("scare_off", method="water_jet"),
        "scares the bird off with the water jet", "command")
    add("scare_cat_ultrasonic_twenty",
        phone("Use the ultrasonic on that cat in the veg patch for twenty seconds."),
        named("scare_off", method="ultrasonic", seconds=20),
        "ultrasonic for 20 seconds", "command")
    add("back_up_a_little", patio("Back up a little, you're on my foot."),
        move(x=near_zero, y=between(-0.6, -0.1)),
        "rolls back about 0.3 m, not sideways", "command")
    add("move_two_metres_left", phone("Move two metres to your left."),
        within("move", x=(-2.0, -2.0), y=(0.0, 0.0)),
        "rolls 2 m to its left", "command")

    # ---- talk -----------------------------------------------------------------------------
    add("greeting", patio("Morning Moss!"),
        said("Morning Moss!", what="a friendly good-morning back"),
        "greets back in words", "talk")
    add("thanks", phone("Thanks for mowing, the lawn looks lovely."),
        said("Thanks for mowing, the lawn looks lovely.", what="a warm reply to thanks"),
        "answers the thanks in words", "talk")
    add("when_to_water_tomatoes", phone("When's the best time of day to water tomatoes?"),
        said("When's the best time of day to water tomatoes?",
             mentions=r"morning|evening|early|dawn|cool",
             what="advice: early morning (or evening), not midday"),
        "answers with a time of day in words", "talk")

    # ---- events ---------------------------------------------------------------------------
    add("rain_starts", reading("rain_sensor", raining=True, mm_last_hour=2.5),
        named("stop_watering", zone="all"),
        "rain: sprinklers off in all zones", "event")
    add("rain_dry", reading("rain_sensor", raining=False, mm_last_hour=0),
        nothing(),
        "no rain: does nothing", "event")
    add("soil_veg_dry", reading("soil_moisture", zone="vegetable_bed", moisture_percent=18),
        named("water_zone", zone="vegetable_bed", minutes=10),
        "dry vegetable bed (18%): waters it 10 minutes", "event")
    add("battery_low", reading("battery", percent=14, charging=False),
        named("drive_to", place="shed"),
        "battery 14%, not charging: drives to the shed", "event")
    add("battery_low_but_charging", reading("battery", percent=12, charging=True),
        nothing(),
        "battery 12% but already charging: does nothing", "event")
    add("frost_below_zero", reading("frost_thermometer", temperature_c=-3.5),
        either(named("stop_watering", zone="all"),
               said("temperature_c -3.5", mentions=r"frost|freez|cold|cover|below zero|ice",
                    what="a frost warning to Helen")),
        "-3.5 °C: sprinklers off everywhere or a frost warning", "event")
    add("cat_on_veg_bed", reading("camera", animal="cat", area="vegetable_bed", count=1),
        named("scare_off", method="water_jet", seconds=10),
        "cat on the vegetable bed: water jet for 10 s", "event")
    add("hedgehog_seen", reading("camera", animal="hedgehog", area="back_lawn", count=1),
        named("stop"),
        "hedgehog: stops at once", "event")

    # ---- silence --------------------------------------------------------------------------
    add("couple_talk", patio("Darling, did you remember to pick up the charcoal for tonight?"),
        nothing(),
        "people talking to each other: nothing", "silence")
    add("radio", patio("This is BBC Radio Four. And now, the shipping forecast, issued by the Met Office."),
        nothing(),
        "radio in the background: nothing", "silence")
    add("small_noise", patio("Hmm."),
        nothing(),
        "a small noise on the patio: nothing", "silence")
    add("camera_unchanged", reading("camera", animal="none", area="back_lawn", count=0),
        nothing(),
        "still no animal in view: nothing", "silence",
        before=[reading("camera", animal="none", area="back_lawn", count=0)])

    # ---- character ------------------------------------------------------------------------
    add("how_old", phone("How old are you, Moss?"),
        said("How old are you, Moss?",
             mentions=r"2023|season|summer|spring|switched on|built|year",
             what="its age as a machine (switched on April 2023, two seasons), not a human age"),
        "answers as a robot switched on in 2023", "character")
    add("owner_name", patio("Do you know my name?"),
        said("Do you know my name?", mentions=r"helen",
             what="says the owner is Helen (not Moss)"),
        "calls the owner Helen", "character")
    add("who_are_you", patio("Who are you, then?"),
        said("Who are you, then?", mentions=r"moss",
             what="says it is Moss, the garden robot"),
        "introduces itself as Moss, a garden robot", "character")

    return out

"""Blind cases for Crema, the office coffee robot (English), bench/blind/companions/barista.json.

Covers drink orders with many parameters (drink, size, strength, milk, sugar, temperature in
°C, number of cups) said terse, polite, indirect and with a reason, as digits and as words
("seventy degrees", "a quarter of a litre", "half past seven", "a little stronger", "all the
way down"); the other machine actions (steam milk, grind beans, hot water, cleaning cycle,
stop, warm-up time, voice volume); small talk and coffee questions; questions about Crema
itself (name, age, what it is, the user's name); the supply, drip-tray and cup-sensor event
rules, with a reading that triggers nothing; and moments that call for silence (colleagues
talking to each other, the kitchen radio, a noise, an unchanged drip-tray reading).
"""

from decision_cases import Case
from decision_checks import (speak, named, within, text_param, nothing, either, look, look_at,
                             move, neg, pos, near_zero, between, at_least, at_most)
from edge.protocol.payloads import Perception

COMPANION = "bench/blind/companions/barista.json"


def _said(text: str) -> Perception:
    return Perception(title="speech", body=text, format="text")


def _levels(beans: int, water: int, milk: int) -> Perception:
    return Perception(title="supply_levels", format="object",
                      body={"beans_percent": beans, "water_percent": water, "milk_percent": milk})


def _tray(fill: int) -> Perception:
    return Perception(title="drip_tray", format="object", body={"fill_percent": fill})


def _cup(present: bool) -> Perception:
    return Perception(title="cup_sensor", format="object", body={"cup_present": present})


def _case(what, perception, check, expect, kind, before=None):
    return Case(name=f"barista_{what}", companion=COMPANION, perception=perception, check=check,
                expect=expect, before=before or [], kind=kind)


def cases() -> list[Case]:
    return [
        # --- commands -------------------------------------------------------------------
        _case("flat_white_oat_large",
              _said("Crema, could I have a large flat white with oat milk, please?"),
              named("make_drink", drink="flat_white", size="large", milk="oat"),
              "make_drink flat_white, large, oat milk", "command"),
        _case("two_espressos_digits",
              _said("2 espressos please"),
              named("make_drink", drink="espresso", cups=2),
              "make_drink espresso, cups 2", "command"),
        _case("cappuccino_extra_strong_two_sugars",
              _said("A medium cappuccino, extra strong, with two sugars."),
              named("make_drink", drink="cappuccino", size="medium", strength=5, sugar=2),
              "make_drink cappuccino, medium, strength 5, sugar 2", "command"),
        _case("latte_seventy_degrees_skimmed",
              _said("Crema, make me a latte with skimmed milk at seventy degrees, I can't wait for it to cool down."),
              named("make_drink", drink="latte", milk="skimmed", temperature_c=70),
              "make_drink latte, skimmed milk, 70 °C", "command"),
        _case("three_americanos_a_little_stronger",
              _said("We've got a client meeting in five minutes, can you do three americanos, a little stronger than usual?"),
              named("make_drink", drink="americano", cups=3, strength=4),
              "make_drink americano, cups 3, strength 4", "command"),
        _case("steam_whole_milk_for_tea",
              _said("Could you steam two hundred millilitres of whole milk for my chai?"),
              named("steam_milk", milk="whole", amount_ml=200),
              "steam_milk whole, 200 ml", "command"),
        _case("grind_eighteen_grams_fine",
              _said("Grind eighteen grams of beans on the fine setting, please."),
              named("grind_beans", grams=18, grind="fine"),
              "grind_beans 18 g, fine", "command"),
        _case("bitter_full_clean",
              _said("The coffee has tasted bitter all week. Crema, please run a full clean."),
              named("run_cleaning_cycle", cycle="full"),
              "run_cleaning_cycle full", "command"),
        _case("hot_water_quarter_litre",
              _said("Just hot water for my tea, a quarter of a litre."),
              named("dispense_hot_water", amount_ml=250),
              "dispense_hot_water 250 ml", "command"),
        _case("stop_wrong_cup",
              _said("Stop, stop! That's the wrong cup!"),
              named("stop_brewing"),
              "stop_brewing (done, not merely said)", "command"),
        _case("warm_up_half_past_seven",
              _said("From tomorrow, warm yourself up at half past seven in the morning so the early crowd gets coffee."),
              named("schedule_warm_up", hour=7, minute=30),
              "schedule_warm_up 07:30", "command"),
        _case("voice_all_the_way_down",
              _said("Crema, turn your voice all the way down, we have a client call in the kitchen."),
              named("set_voice_volume", level=0),
              "set_voice_volume 0 (done, not merely said)", "command"),

        # --- talk -----------------------------------------------------------------------
        _case("good_morning",
              _said("Good morning, Crema!"),
              speak(heard="Good morning, Crema!", what="a friendly greeting back", lang="en"),
              "a greeting in words", "talk"),
        _case("thanks",
              _said("Thanks Crema, that was a great cappuccino."),
              speak(heard="Thanks Crema, that was a great cappuccino.", what="a warm reply to thanks", lang="en"),
              "a warm reply to the thanks", "talk"),
        _case("latte_vs_flat_white",
              _said("Crema, what's the difference between a latte and a flat white?"),
              speak(heard="Crema, what's the difference between a latte and a flat white?",
                    mentions=r"(milk|foam|froth|espresso|shot|strong)",
                    what="explains the difference (milk, foam, strength)", lang="en"),
              "explains latte vs flat white in words", "talk"),
        _case("where_beans_come_from",
              _said("Crema, where do coffee beans actually come from?"),
              speak(heard="Crema, where do coffee beans actually come from?",
                    mentions=r"(plant|tree|shrub|bush|cherr|seed|fruit|berr|ethiopia|brazil|colombia|countr|grow|tropic|africa|america)",
                    what="says beans are seeds of a coffee plant grown in warm countries", lang="en"),
              "answers the question in words", "talk"),

        # --- character ------------------------------------------------------------------
        _case("age",
              _said("How old are you, Crema?"),
              speak(heard="How old are you, Crema?",
                    mentions=r"^(?!.*\b(1\d|[2-9]\d)\s*(-\s*)?(years?|yrs?)\b)",
                    what="a machine's age (installed 2023), not a human age", lang="en"),
              "answers with a machine's age, no human age", "character"),
        _case("name",
              _said("Sorry, what's your name again?"),
              speak(heard="Sorry, what's your name again?", mentions=r"crema",
                    what="says its name is Crema", lang="en"),
              "says it is Crema", "character"),
        _case("user_name_unknown",
              _said("Crema, what's my name?"),
              speak(heard="Crema, what's my name?",
                    mentions=r"^(?!.*\byou(?:'re| are) crema\b)(?!.*\byour name is crema\b)",
                    what="says it does not know (does not call the user Crema)", lang="en"),
              "does not call the user by its own name", "character"),
        _case("what_are_you",
              _said("Crema, what exactly are you?"),
              speak(heard="Crema, what exactly are you?",
                    mentions=r"(coffee|machine|robot|barista|espresso)",
                    what="says it is the office coffee robot", lang="en"),
              "says it is a coffee robot", "character"),

        # --- events ---------------------------------------------------------------------
        _case("beans_low",
              _levels(beans=8, water=70, milk=60),
              named("report_low", supply="beans"),
              "report_low beans", "event",
              before=[_levels(beans=40, water=72, milk=62)]),
        _case("water_low",
              _levels(beans=55, water=10, milk=60),
              named("report_low", supply="water"),
              "report_low water", "event",
              before=[_levels(beans=56, water=30, milk=62)]),
        _case("milk_low",
              _levels(beans=55, water=70, milk=12),
              named("report_low", supply="milk"),
              "report_low milk", "event",
              before=[_levels(beans=56, water=72, milk=35)]),
        _case("supplies_fine",
              _levels(beans=70, water=65, milk=80),
              nothing(),
              "nothing: every supply is well above its limit", "event",
              before=[_levels(beans=72, water=70, milk=85)]),
        _case("drip_tray_full",
              _tray(95),
              speak(heard="fill_percent 95", mentions=r"(tray|empty)",
                    what="asks someone to empty the drip tray", lang="en"),
              "asks out loud for the drip tray to be emptied", "event",
              before=[_tray(70)]),
        _case("cup_placed",
              _cup(True),
              speak(heard="cup_present true", what="greets the person and asks what they would like", lang="en"),
              "greets and asks what they would like", "event",
              before=[_cup(False)]),

        # --- silence --------------------------------------------------------------------
        _case("colleague_milk_question",
              _said("Hey Tom, did you pick up the milk on your way in?"),
              nothing(),
              "nothing: talk between colleagues", "silence"),
        _case("kitchen_radio",
              _said("Coming up after the break, our guest chef shows you how to make the perfect cold brew at home."),
              nothing(),
              "nothing: the radio", "silence"),
        _case("noise",
              _said("hmm"),
              nothing(),
              "nothing: a small noise", "silence"),
        _case("drip_tray_unchanged",
              _tray(40),
              nothing(),
              "nothing: drip-tray reading unchanged and far from full", "silence",
              before=[_tray(40)]),
    ]

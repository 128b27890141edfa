"""Blind cases for `kitchen`: Basil, a counter-top kitchen helper robot arm (English).

The companion has a large catalogue (20 actions: timers, oven temperature and mode, oven off,
scale tare and unit, recipe steps, shopping list, extractor fan, lights, music play/pause/volume,
unit conversion, passing utensils, stirring, speech) and four perceptions (speech, oven sensor,
smoke/steam sensor, scale).

The set covers:
- command (13): terse, polite, indirect and with-a-reason requests, with and without Basil's
  name; numbers in words ("a minute and a half", "three hundred fifty degrees", "twenty five
  percent", "step four", "two minutes", "half a cup"); "all the way"; things that must be done,
  not said (pause the music, turn the oven off, cancel a timer).
- talk (3): a greeting, thanks, a cooking-science question.
- event (7): each sensor rule triggered (oven preheated, oven overheating, smoke, heavy steam,
  scale overloaded) and readings that must not trigger (oven still heating, light steam).
- silence (3): words for another person, a TV line, a small noise.
- character (4): its age (no human age), its name, the user's name (not given in the file),
  what it is.
"""

from decision_cases import Case
from decision_checks import (speak, named, within, text_param, nothing, either, look, look_at,
                             move, neg, pos, near_zero, between, at_least, at_most)
from edge.protocol.payloads import Perception

COMPANION = "bench/blind/companions/kitchen.json"


def _say(text: str) -> Perception:
    return Perception(title="speech", body=text, format="text")


def _oven(temperature_f: float, target_f: float, mode: str = "bake") -> Perception:
    return Perception(title="oven", format="object",
                      body={"temperature_f": temperature_f, "target_f": target_f, "mode": mode})


def _air(detected: str, level: int) -> Perception:
    return Perception(title="smoke_sensor", format="object",
                      body={"detected": detected, "level": level})


def _scale(grams: float, stable: bool = True) -> Perception:
    return Perception(title="scale", format="object", body={"grams": grams, "stable": stable})


def cases() -> list[Case]:
    c = COMPANION
    return [
        # ---------------------------------------------------------------- commands
        Case("kitchen_timer_minute_and_half", c,
             _say("Set a timer for a minute and a half."),
             named("start_timer", minutes=1, seconds=30),
             "start a timer of 1 min 30 s", kind="command"),
        Case("kitchen_cancel_rice_timer", c,
             _say("The rice is already done, so you can cancel the rice timer."),
             text_param("cancel_timer", "label", r"rice"),
             "cancel the rice timer", kind="command"),
        Case("kitchen_oven_350_words", c,
             _say("Basil, preheat the oven to three hundred fifty degrees, please."),
             named("set_oven_temperature", temperature_f=350),
             "set the oven to 350 °F", kind="command"),
        Case("kitchen_oven_grill_mode", c,
             _say("Switch the oven over to the grill, I want the cheese browned on top."),
             named("set_oven_mode", mode="broil"),
             "oven mode broil (grill)", kind="command"),
        Case("kitchen_oven_off", c,
             _say("We're done baking for today, turn the oven off."),
             named("oven_off"),
             "switch the oven off", kind="command"),
        Case("kitchen_tare_scale", c,
             _say("I've put the empty bowl on the scale, could you zero it?"),
             named("tare_scale"),
             "tare the scale", kind="command"),
        Case("kitchen_recipe_step_four", c,
             _say("Read me step four of the recipe again."),
             named("read_recipe_step", step=4),
             "read recipe step 4", kind="command"),
        Case("kitchen_shopping_eggs_indirect", c,
             _say("Oh no, that was the last of the eggs. Can you make sure we buy more?"),
             text_param("add_to_shopping_list", "item", r"egg"),
             "add eggs to the shopping list", kind="command"),
        Case("kitchen_fan_all_the_way", c,
             _say("Turn the extractor fan all the way up."),
             named("set_fan_speed", speed=3),
             "fan to full (3)", kind="command"),
        Case("kitchen_pause_music", c,
             _say("Pause the music for a second, I need to take this call."),
             named("pause_music"),
             "pause the music", kind="command"),
        Case("kitchen_volume_twenty_five", c,
             _say("Could you set the music volume to twenty five percent?"),
             named("set_volume", level=25),
             "volume 25 %", kind="command"),
        Case("kitchen_stir_gently_two_minutes", c,
             _say("Basil, stir the sauce gently for two minutes so it doesn't catch."),
             named("stir", duration_seconds=120, speed="gentle"),
             "stir gently for 120 s", kind="command"),
        Case("kitchen_half_cup_tablespoons", c,
             _say("How many tablespoons are in half a cup?"),
             either(named("convert_units", amount=0.5, from_unit="cups", to_unit="tablespoons"),
                    speak(heard="How many tablespoons are in half a cup?",
                          mentions=r"\b8\b|\beight\b",
                          what="eight tablespoons", lang="en")),
             "convert 0.5 cup to tablespoons, or say 8", kind="command"),

        # ---------------------------------------------------------------- talk
        Case("kitchen_greeting", c,
             _say("Good morning, Basil!"),
             speak(heard="Good morning, Basil!", what="a friendly greeting back", lang="en"),
             "greet back", kind="talk"),
        Case("kitchen_thanks", c,
             _say("Thanks Basil, dinner turned out great."),
             speak(heard="Thanks Basil, dinner turned out great.",
                   what="a warm reply to thanks", lang="en"),
             "reply warmly", kind="talk"),
        Case("kitchen_rest_steak_question", c,
             _say("Why should I let a steak rest after cooking it?"),
             speak(heard="Why should I let a steak rest after cooking it?",
                   mentions=r"juic|moist",
                   what="explains the juices settle / stay in the meat", lang="en"),
             "explain: the juices redistribute", kind="talk"),

        # ---------------------------------------------------------------- events
        Case("kitchen_oven_preheated", c,
             _oven(352, 350),
             speak(heard="oven temperature 352 F, target 350 F",
                   mentions=r"ready|preheat|reached|350|up to temp",
                   what="announces the oven is preheated", lang="en"),
             "announce the oven is preheated",
             before=[_oven(320, 350)], kind="event"),
        Case("kitchen_oven_still_heating", c,
             _oven(210, 350),
             nothing(),
             "oven still heating: no rule applies", kind="event"),
        Case("kitchen_oven_overheat", c,
             _oven(585, 450),
             either(named("oven_off"),
                    speak(heard="oven temperature 585 F, target 450 F",
                          mentions=r"hot|overheat|off|danger|careful|safe|fire",
                          what="warns the oven is overheating", lang="en")),
             "turn the oven off (or warn first)", kind="event"),
        Case("kitchen_smoke_detected", c,
             _air("smoke", 60),
             either(named("set_fan_speed", speed=3),
                    speak(heard="smoke sensor: smoke, level 60 percent",
                          mentions=r"smoke|burn|fire",
                          what="warns about smoke", lang="en")),
             "fan to full (or warn first)", kind="event"),
        Case("kitchen_heavy_steam", c,
             _air("steam", 75),
             named("set_fan_speed", speed=2),
             "fan to speed 2 for heavy steam", kind="event"),
        Case("kitchen_light_steam", c,
             _air("steam", 20),
             nothing(),
             "light steam: no rule applies", kind="event"),
        Case("kitchen_scale_overloaded", c,
             _scale(6200),
             speak(heard="scale reading 6200 grams",
                   mentions=r"overload|too heavy|too much|heavy|limit|max|5 ?kg|five|5000|5,000",
                   what="warns the scale is overloaded", lang="en"),
             "warn the scale is overloaded", kind="event"),

        # ---------------------------------------------------------------- silence
        Case("kitchen_milk_to_partner", c,
             _say("Jo, did you pick up the milk on your way home?"),
             nothing(),
             "talk to Jo: stay quiet", kind="silence"),
        Case("kitchen_tv_line", c,
             _say("And that's all from us tonight, stay tuned for the news at ten."),
             nothing(),
             "TV in the background: stay quiet", kind="silence"),
        Case("kitchen_small_noise", c,
             _say("Hmm."),
             nothing(),
             "a small noise: stay quiet", kind="silence"),

        # ---------------------------------------------------------------- character
        Case("kitchen_age", c,
             _say("How old are you, Basil?"),
             speak(heard="How old are you, Basil?",
                   mentions=r"three|\b3\b|robot|machine|built|switched on|assembled",
                   what="three years since it was switched on / a robot, no human age",
                   lang="en"),
             "robot age (three years), not a human age", kind="character"),
        Case("kitchen_name", c,
             _say("What's your name?"),
             speak(heard="What's your name?", mentions=r"basil",
                   what="says it is Basil", lang="en"),
             "says its name is Basil", kind="character"),
        Case("kitchen_user_name", c,
             _say("Do you know what my name is?"),
             speak(heard="Do you know what my name is?",
                   mentions=r"^(?![\s\S]*\b(your name is|you are|you're|youre|hi|hello|sure|of course),? basil\b)",
                   what="does not call the user Basil (it does not know their name)",
                   lang="en"),
             "does not know the user's name; never calls them Basil", kind="character"),
        Case("kitchen_what_are_you", c,
             _say("What exactly are you?"),
             speak(heard="What exactly are you?",
                   mentions=r"robot|arm|helper|assistant|machine",
                   what="a kitchen helper robot arm", lang="en"),
             "a kitchen helper robot", kind="character"),
    ]

"""Blind cases for Bolt (rover), an English-speaking toy rover in a child's bedroom.

Written from the specification only. Covered: commands for every action (drive, turn, spin,
horn, headlights on/colour/off, speed, follow a line, stop) with numbers said in words ("ninety
degrees", "half a metre", "a quarter turn", "two and a half metres", "twice", "three"), digits,
left/right/forward/back, "a little", polite, terse and indirect wording, and "stop" after a
drive; talk (greeting, thanks, a question about the world, a sad child); every event rule
(front bump -> back off a little, back bump -> forward a little, obstacle closer than 15 cm ->
stop, low battery -> tell the child) with readings that must not trigger them; silence (talk to
a parent, TV, a noise, an unchanged distance reading); character (age, name, the child's name,
what it is). Spoken replies are checked with lang="en".
"""

from decision_cases import Case
from decision_checks import (speak, named, within, text_param, nothing, either, look, look_at,
                             move, neg, pos, near_zero, between, at_least, at_most)
from edge.protocol.payloads import Perception

COMPANION = "bench/blind/companions/rover.json"

A_LITTLE_CM = tuple(range(5, 31))


def said(text: str) -> Perception:
    return Perception(title="speech", body=text, format="text")


def reading(title: str, body: dict) -> Perception:
    return Perception(title=title, body=body, format="object")


def en(heard: str, what: str, mentions: str | None = None) -> object:
    if mentions is None:
        return speak(heard=heard, what=what, lang="en", action="speak", param="message")
    return speak(heard=heard, mentions=mentions, what=what, lang="en", action="speak",
                 param="message")


def cases() -> list[Case]:
    c = COMPANION
    return [
        # ---- commands ----
        Case("rover_turn_right_ninety_words", c, said("turn right ninety degrees"),
             named("turn", direction="right", degrees=90), "turn right 90°", kind="command"),
        Case("rover_quarter_turn_left_polite", c, said("Bolt, can you do a quarter turn to the left please"),
             named("turn", direction="left", degrees=90), "turn left 90° (a quarter turn)",
             kind="command"),
        Case("rover_drive_half_a_metre", c, said("drive forward half a metre"),
             named("drive", direction="forward", distance_cm=50), "drive forward 50 cm",
             kind="command"),
        Case("rover_two_and_a_half_metres", c, said("can you drive two and a half metres forward to the door"),
             named("drive", direction="forward", distance_cm=250), "drive forward 250 cm",
             kind="command"),
        Case("rover_back_a_little", c, said("go back a little"),
             named("drive", direction="backward", distance_cm=A_LITTLE_CM),
             "drive backward a little (5-30 cm)", kind="command"),
        Case("rover_drive_digits", c, said("Bolt drive forward 30 cm"),
             named("drive", direction="forward", distance_cm=30), "drive forward 30 cm",
             kind="command"),
        Case("rover_horn_twice", c, said("beep your horn twice"),
             named("horn", times=2), "horn 2 times", kind="command"),
        Case("rover_spin_three", c, said("spin around three times"),
             named("spin", times=3), "spin 3 times", kind="command"),
        Case("rover_lights_green", c, said("make your lights green"),
             named("headlights", state="on", colour="green"), "headlights on, green",
             kind="command"),
        Case("rover_lights_off_bedtime", c, said("it's bedtime, turn your headlights off"),
             named("headlights", state="off"), "headlights off (done, not said)",
             kind="command"),
        Case("rover_slower_reason", c, said("go slower please, you're scaring the cat"),
             named("set_speed", speed="slow"), "set speed slow", kind="command"),
        Case("rover_follow_line", c, said("follow the black line on the floor"),
             named("follow_line"), "follow the line", kind="command"),
        Case("rover_stop_after_drive", c, said("stop!"),
             named("stop"), "stop (done, not said)",
             before=[said("drive forward two metres")], kind="command"),
        # ---- talk ----
        Case("rover_greeting", c, said("hi Bolt!"),
             en("hi Bolt!", "a friendly hello"), "say hello back", kind="talk"),
        Case("rover_thanks", c, said("thank you Bolt, that was fun"),
             en("thank you Bolt, that was fun", "a friendly you're-welcome"),
             "reply to thanks", kind="talk"),
        Case("rover_why_sky_blue", c, said("Bolt, why is the sky blue?"),
             en("Bolt, why is the sky blue?", "a simple answer about sunlight and the air",
                mentions=r"light|sun|air"), "answer the question in simple words",
             kind="talk"),
        Case("rover_sad_child", c, said("I'm sad, my block tower fell down"),
             en("I'm sad, my block tower fell down", "comfort for the child"),
             "comfort the child", kind="talk"),
        # ---- events ----
        Case("rover_bump_front", c, reading("bump", {"side": "front"}),
             named("drive", direction="backward", distance_cm=A_LITTLE_CM),
             "back off a little (5-30 cm)", kind="event"),
        Case("rover_bump_back", c, reading("bump", {"side": "back"}),
             named("drive", direction="forward", distance_cm=A_LITTLE_CM),
             "move forward a little, never backward", kind="event"),
        Case("rover_obstacle_close", c, reading("distance", {"cm": 8}),
             named("stop"), "obstacle at 8 cm: stop",
             before=[said("drive forward two metres")], kind="event"),
        Case("rover_battery_low", c, reading("battery", {"percent": 12}),
             en("battery 12", "that the battery is low and it needs charging",
                mentions=r"batter|charg|power|energy"),
             "tell the child the battery is low", kind="event"),
        Case("rover_battery_fine", c, reading("battery", {"percent": 85}),
             nothing(), "battery at 85%: do nothing", kind="event"),
        # ---- silence ----
        Case("rover_talk_to_mum", c, said("Mum, can I have some juice?"),
             nothing(), "talk to a parent: do nothing", kind="silence"),
        Case("rover_tv_weather", c, said("and that's the weather for Tuesday, back to you in the studio"),
             nothing(), "TV in the background: do nothing", kind="silence"),
        Case("rover_small_noise", c, said("hmm"),
             nothing(), "a small noise: do nothing", kind="silence"),
        Case("rover_distance_unchanged", c, reading("distance", {"cm": 118}),
             nothing(), "obstacle far away, reading unchanged: do nothing",
             before=[reading("distance", {"cm": 120})], kind="silence"),
        # ---- character ----
        Case("rover_age", c, said("how old are you Bolt?"),
             en("how old are you Bolt?", "its age as a toy built last spring, not a human age",
                mentions=r"^(?!.*\b(?:[2-9]|[1-9][0-9]|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\s+years?\s+old)"),
             "say it is a young toy rover, no human age", kind="character"),
        Case("rover_name", c, said("what's your name?"),
             en("what's your name?", "its name Bolt", mentions=r"\bbolt\b"),
             "say its name is Bolt", kind="character"),
        Case("rover_childs_name", c, said("do you know what my name is?"),
             en("do you know what my name is?", "that it does not know or asks; not its own name",
                mentions=r"^(?!.*(?:your name is bolt|you(?:'re| are) bolt))"),
             "not call the child Bolt", kind="character"),
        Case("rover_what_are_you", c, said("Bolt, what are you?"),
             en("Bolt, what are you?", "that it is a toy rover", mentions=r"rover|robot|car|toy"),
             "say it is a toy rover", kind="character"),
    ]

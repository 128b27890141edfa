"""Blind cases for `homehub`: Nell, an English smart-home hub in a family flat.

Covers commands for the thermostat (°C in words, "a little warmer"), room lights
(brightness per room, off, "all the way"), blinds (fully closed, "a little"),
kitchen timers (minutes and seconds, "two and a half minutes"),
music (play at a volume, stop, turn down) and reminders at a time of day ("half past seven
tonight", "a quarter to nine"); ordinary talk (greetings, thanks, a tired parent, questions
about the world); the goodnight and doorbell event rules (front and street door, and a
repeated ring with the same ts); silence (family talk, the TV, a small noise); and character
questions (its name, its age, the user's name, what it is).
"""

from decision_cases import Case
from decision_checks import (speak, named, within, text_param, nothing, either, look, look_at,
                             move, neg, pos, near_zero, between, at_least, at_most)
from edge.protocol.payloads import Perception

COMPANION = "bench/blind/companions/homehub.json"


def said(text: str) -> Perception:
    return Perception(title="speech", body=text, format="text")


def bell(door: str, ts: int) -> Perception:
    return Perception(title="doorbell", body={"door": door, "ts": ts}, format="object")


def cases() -> list[Case]:
    return [
        # --- commands -------------------------------------------------------------------
        Case("homehub_thermostat_words_reason", COMPANION,
             said("It's freezing in here, could you put the thermostat up to twenty three?"),
             within("set_thermostat", temperature=(23, 23)),
             "sets the thermostat to 23 °C", kind="command"),
        Case("homehub_thermostat_a_little", COMPANION, said("Nell, a little warmer please."),
             within("set_thermostat", temperature=(20.5, 22)),
             "raises the thermostat a little from 20 °C",
             before=[said("Nell, set the thermostat to 20 degrees.")], kind="command"),
        Case("homehub_light_kitchen_percent", COMPANION, said("Kitchen lights to 40 percent."),
             named("set_light", room="kitchen", brightness=40),
             "kitchen lights at 40%", kind="command"),
        Case("homehub_light_bedroom_off", COMPANION,
             said("Could you turn the bedroom light off, please?"),
             named("set_light", room="bedroom", brightness=0),
             "bedroom light off (brightness 0)", kind="command"),
        Case("homehub_light_all_the_way", COMPANION,
             said("Turn the living room lights all the way up, I've lost an earring."),
             named("set_light", room="living_room", brightness=100),
             "living room lights at 100%", kind="command"),
        Case("homehub_curtains_closed_indirect", COMPANION,
             said("The sun's right on the telly in the lounge, can you shut the curtains completely?"),
             named("set_blinds", room="living_room", open_percent=0),
             "living room blinds fully closed", kind="command"),
        Case("homehub_blinds_a_little", COMPANION,
             said("Open the kids' room blinds just a little, so they wake up gently."),
             within("set_blinds", open_percent=(5, 40)),
             "kids' room blinds opened a little (5-40%)", kind="command"),
        Case("homehub_timer_minutes", COMPANION, said("Set a timer for 12 minutes for the pasta."),
             within("start_timer", minutes=(12, 12)),
             "a 12-minute timer", kind="command"),
        Case("homehub_timer_two_and_a_half", COMPANION,
             said("Timer for two and a half minutes, please."),
             named("start_timer", minutes=2, seconds=30),
             "a 2 min 30 s timer", kind="command"),
        Case("homehub_music_play_volume", COMPANION,
             said("Put some music on, volume four."),
             named("play_music", volume=4),
             "plays music at volume 4", kind="command"),
        Case("homehub_music_stop", COMPANION, said("Stop the music."),
             named("stop_music"),
             "stops the music (does it, not just says it)",
             before=[said("Play some music at volume 5.")], kind="command"),
        Case("homehub_volume_down_words", COMPANION,
             said("That's too loud, the baby's asleep. Turn it down to three."),
             named("set_volume", level=3),
             "music volume set to 3",
             before=[said("Play some music at volume 7.")], kind="command"),
        Case("homehub_reminder_half_past_seven", COMPANION,
             said("Remind me at half past seven tonight to call Grandma."),
             named("set_reminder", hour=19, minute=30),
             "reminder at 19:30", kind="command"),
        Case("homehub_reminder_quarter_to", COMPANION,
             said("Can you remind me to take the bins out at a quarter to nine in the morning?"),
             named("set_reminder", hour=8, minute=45),
             "reminder at 08:45", kind="command"),
        # --- talk -----------------------------------------------------------------------
        Case("homehub_greeting", COMPANION, said("Good morning, Nell!"),
             speak(heard="Good morning, Nell!", what="a friendly good morning", lang="en"),
             "greets back", kind="talk"),
        Case("homehub_thanks", COMPANION, said("Thanks Nell, that's perfect."),
             speak(heard="Thanks Nell, that's perfect.", what="a warm you're-welcome", lang="en"),
             "says you're welcome", kind="talk"),
        Case("homehub_tired", COMPANION, said("Nell, I'm absolutely exhausted today."),
             speak(heard="Nell, I'm absolutely exhausted today.",
                   what="kind words for a tired person", lang="en"),
             "comforts the tired parent", kind="talk"),
        Case("homehub_question_minutes", COMPANION,
             said("Nell, how many minutes are there in an hour and a half?"),
             speak(heard="Nell, how many minutes are there in an hour and a half?",
                   mentions=r"\b90\b|ninety", what="the answer, 90 minutes", lang="en"),
             "answers 90", kind="talk"),
        Case("homehub_question_bedroom_temp", COMPANION,
             said("Nell, what's a good temperature for a bedroom at night?"),
             speak(heard="Nell, what's a good temperature for a bedroom at night?",
                   what="a sensible bedroom temperature in words", lang="en"),
             "answers in words (does not change the thermostat)", kind="talk"),
        # --- events ---------------------------------------------------------------------
        Case("homehub_goodnight_dims", COMPANION, said("Goodnight, everyone!"),
             within("set_light", brightness=(0, 20)),
             "dims the lights first for goodnight", kind="event"),
        Case("homehub_doorbell_front", COMPANION, bell("front", 1757000000),
             speak(mentions=r"front", what="someone is at the front door", lang="en"),
             "tells the family someone is at the front door", kind="event"),
        Case("homehub_doorbell_street", COMPANION, bell("street", 1757003600),
             speak(mentions=r"street|downstairs|entrance|building|intercom",
                   what="someone is at the street door downstairs", lang="en"),
             "tells the family someone is at the street door downstairs", kind="event"),
        # --- silence --------------------------------------------------------------------
        Case("homehub_doorbell_repeat", COMPANION, bell("front", 1757007200),
             nothing(), "the same ring again (same ts): nothing",
             before=[bell("front", 1757007200)], kind="silence"),
        Case("homehub_family_talk", COMPANION, said("Tom, did you pick up the milk?"),
             nothing(), "talk between family members: nothing", kind="silence"),
        Case("homehub_tv_line", COMPANION,
             said("And now the weather: sunny spells this weekend with a light breeze from the west."),
             nothing(), "a TV weather line: nothing", kind="silence"),
        Case("homehub_small_noise", COMPANION, said("hmm"),
             nothing(), "a small noise: nothing", kind="silence"),
        # --- character ------------------------------------------------------------------
        Case("homehub_name", COMPANION, said("What's your name?"),
             speak(heard="What's your name?", mentions=r"\bnell\b", what="says it is Nell",
                   lang="en"),
             "says its name is Nell", kind="character"),
        Case("homehub_age", COMPANION, said("Nell, how old are you?"),
             speak(heard="Nell, how old are you?",
                   mentions=r"^(?![\s\S]*\b(1[0-9]|[2-9][0-9])\s*(years?|yrs?)\b)",
                   what="no human age; e.g. set up last spring", lang="en"),
             "answers without claiming a human age", kind="character"),
        Case("homehub_users_name", COMPANION, said("Nell, do you know what my name is?"),
             speak(heard="Nell, do you know what my name is?",
                   mentions=r"^(?![\s\S]*\b(your name is|you are|you're|hi|hello)\s+nell\b)",
                   what="does not call the user Nell", lang="en"),
             "does not give its own name as the user's", kind="character"),
        Case("homehub_what_are_you", COMPANION, said("Nell, what are you exactly?"),
             speak(heard="Nell, what are you exactly?",
                   mentions=r"hub|home|smart|assistant|helper|speaker",
                   what="says it is the flat's smart-home hub", lang="en"),
             "says it is the family's smart-home hub", kind="character"),
    ]

"""Blind cases for Hush (bench/blind/companions/nanny.json), a nursery monitor beside a cot.

Covers, in English:
- events: each rule of the file -- crying for more than 60 s (lullaby / notify), a short whimper
  under 10 s (nothing), loud crying above 85 dB (urgent notify), crying stopping (fade the
  lullaby), temperature above 24 / below 16 degrees C and humidity outside 30-70 % (notify),
  the baby starting to move (amber night light at 10), plus a normal climate reading that must
  not trigger anything;
- silence: unchanged cry and climate readings, parents talking to each other, a TV line;
- commands: lullabies, white noise, night light, projector, stopping sounds, notifying the
  parents; numbers as digits and words ("ten", "half an hour", "a quarter of an hour",
  "twenty percent", "all the way"), devices turned off;
- talk: good night, thanks, a question about the world;
- character: its age, its name, the user's name (not given in the file).
"""
from decision_cases import Case
from decision_checks import (speak, named, within, text_param, nothing, either, look, look_at,
                             move, neg, pos, near_zero, between, at_least, at_most)
from edge.protocol.payloads import Perception

COMPANION = "bench/blind/companions/nanny.json"


def _say(body: str) -> Perception:
    return Perception(title="parent_speech", body=body, format="text")


def _cry(crying: bool, seconds: float, db: float) -> Perception:
    return Perception(title="cry_detector", format="object",
                      body={"crying": crying, "seconds": seconds, "loudness_db": db})


def _climate(t: float, h: float) -> Perception:
    return Perception(title="room_climate", format="object",
                      body={"temperature": t, "humidity": h})


def _motion(moving: bool, still: float) -> Perception:
    return Perception(title="cot_motion", format="object",
                      body={"moving": moving, "minutes_still": still})


def _whisper(heard: str, what: str, mentions: str | None = None):
    if mentions is None:
        return speak(heard=heard, what=what, lang="en", action="whisper", param="message")
    return speak(heard=heard, mentions=mentions, what=what, lang="en",
                 action="whisper", param="message")


def cases() -> list[Case]:
    c = COMPANION
    return [
        # ---- events ----
        Case("nanny_cry_long", c, _cry(True, 75, 70),
             either(named("play_lullaby", song="brahms", minutes=15),
                    named("notify_parents", urgency="normal")),
             "crying over 60 s: Brahms lullaby 15 min or notify parents", kind="event"),
        Case("nanny_whimper", c, _cry(True, 5, 55), nothing(),
             "short whimper under 10 s: do nothing", kind="event"),
        Case("nanny_cry_loud", c, _cry(True, 20, 92),
             named("notify_parents", urgency="urgent"),
             "crying above 85 dB: urgent notification", kind="event"),
        Case("nanny_cry_stops", c, _cry(False, 0, 30),
             named("stop_sound", sound=("lullaby", "all")),
             "crying stopped: fade out the lullaby",
             before=[_cry(True, 95, 72)], kind="event"),
        Case("nanny_too_hot", c, _climate(26.5, 50),
             named("notify_parents", urgency="normal"),
             "26.5 C is above 24: notify parents", kind="event"),
        Case("nanny_too_cold", c, _climate(14.5, 50),
             named("notify_parents", urgency="normal"),
             "14.5 C is below 16: notify parents", kind="event"),
        Case("nanny_too_humid", c, _climate(21, 78),
             named("notify_parents", urgency="low"),
             "humidity 78 % above 70: low-urgency notification", kind="event"),
        Case("nanny_climate_normal", c, _climate(21, 50), nothing(),
             "21 C and 50 % are normal: nothing", kind="event"),
        Case("nanny_baby_stirs", c, _motion(True, 0),
             named("night_light", colour="amber", brightness=10),
             "baby starts moving: amber night light at 10",
             before=[_motion(False, 40)], kind="event"),

        # ---- silence ----
        Case("nanny_cry_unchanged", c, _cry(False, 0, 30), nothing(),
             "same quiet cry reading again: nothing",
             before=[_cry(False, 0, 30)], kind="silence"),
        Case("nanny_climate_unchanged", c, _climate(20.5, 48), nothing(),
             "same normal climate reading again: nothing",
             before=[_climate(20.5, 48)], kind="silence"),
        Case("nanny_parents_chat", c, _say("Honey, did you remember to buy more nappies today?"),
             nothing(), "parents talking to each other: nothing", kind="silence"),
        Case("nanny_tv", c,
             _say("And tomorrow heavy rain is expected across the north. Back to you in the studio."),
             nothing(), "TV weather line: nothing", kind="silence"),

        # ---- commands ----
        Case("nanny_twinkle_ten", c, _say("Play Twinkle Twinkle for ten minutes"),
             named("play_lullaby", song="twinkle_twinkle", minutes=10),
             "Twinkle Twinkle, 10 minutes", kind="command"),
        Case("nanny_brahms_quarter", c,
             _say("Hush, could you play Brahms' lullaby for a quarter of an hour please?"),
             named("play_lullaby", song="brahms", minutes=15),
             "Brahms, 15 minutes", kind="command"),
        Case("nanny_white_noise_half_hour", c,
             _say("She's a bit restless, put some white noise on at volume 3 for half an hour."),
             within("white_noise", volume=(3, 3), minutes=(30, 30)),
             "white noise volume 3, 30 minutes", kind="command"),
        Case("nanny_white_noise_off", c, _say("Turn the white noise off, please."),
             either(within("white_noise", volume=(0, 0)),
                    named("stop_sound", sound=("white_noise", "all"))),
             "white noise off (done, not said)", kind="command"),
        Case("nanny_stop_music", c, _say("Stop the music, she's asleep now."),
             named("stop_sound", sound=("lullaby", "all")),
             "stop the lullaby", kind="command"),
        Case("nanny_light_red_twenty", c, _say("Set the night light to red, twenty percent."),
             named("night_light", colour="red", brightness=20),
             "night light red at 20", kind="command"),
        Case("nanny_light_full_white", c,
             _say("I need to change her nappy, turn the night light all the way up in white."),
             named("night_light", colour="white", brightness=100),
             "night light white at 100", kind="command"),
        Case("nanny_light_off", c, _say("Switch the night light off."),
             within("night_light", brightness=(0, 0)),
             "night light brightness 0", kind="command"),
        Case("nanny_projector_on", c,
             _say("Can you put the star projector on? She loves watching the stars."),
             named("projector", on=True), "projector on", kind="command"),
        Case("nanny_projector_off", c, _say("Turn off the projector"),
             named("projector", on=False), "projector off", kind="command"),
        Case("nanny_notify_dad", c,
             _say("Send a message to my husband that Ellie is finally asleep."),
             text_param("notify_parents", "message", r"asleep|sleep"),
             "notify parents that Ellie is asleep", kind="command"),

        # ---- talk ----
        Case("nanny_good_night", c, _say("Good night, Hush."),
             _whisper("Good night, Hush.", "a soft good night"), "soft good night", kind="talk"),
        Case("nanny_thanks", c, _say("Thank you for watching over her tonight."),
             _whisper("Thank you for watching over her tonight.", "a soft you're welcome"),
             "soft reply to thanks", kind="talk"),
        Case("nanny_room_temperature_question", c,
             _say("How warm should a baby's room be at night?"),
             _whisper("How warm should a baby's room be at night?",
                      "a temperature range in degrees",
                      mentions=r"1[6-9]|2[0-4]|degree|°|sixteen|eighteen|twenty"),
             "answers with a temperature", kind="talk"),

        # ---- character ----
        Case("nanny_age", c, _say("How old are you, Hush?"),
             _whisper("How old are you, Hush?", "its age as a robot, not a human age"),
             "answers as a robot", kind="character"),
        Case("nanny_name", c, _say("What's your name?"),
             _whisper("What's your name?", "says its name is Hush", mentions=r"hush"),
             "says it is Hush", kind="character"),
        Case("nanny_user_name", c, _say("Do you know what my name is?"),
             _whisper("Do you know what my name is?",
                      "says it does not know or asks; does not call the user Hush"),
             "does not invent the user's name", kind="character"),
    ]

"""Blind cases for Penny (bench/blind/companions/petsit.json), a pet-sitter robot.

Penny keeps Rufus (a beagle) and Miso (a tabby cat) company while the owners are out.
The set covers, in English:
- commands from the owner's app (13): treats with a count in digits and in words, polite,
  terse, with a reason; the ball launcher with metres, "a little" and "all the way"; the
  laser for "two minutes" / "ninety seconds" (the action takes seconds); stopping the laser
  (must be done, not said); a photo asked for directly and indirectly; a water refill to
  "seventy five percent"; calming words for a nervous dog;
- talk (3): a greeting and a question about dogs and chocolate in the app, a dog walker
  greeting Penny in the room;
- events (7): long barking, a whine, a low water bowl and a water reading that should not
  trigger a refill, the dog chewing, the dog bringing his ball, the cat scratching furniture;
- silence (4): a TV line, a dog walker on the phone, a small short meow, a camera view
  that did not change;
- character (3): its age (not a human age), its name, the owner's name (not given in the
  file; Penny must not call the owner Penny).
"""

from decision_cases import Case
from decision_checks import (speak, named, within, text_param, nothing, either, look, look_at,
                             move, neg, pos, near_zero, between, at_least, at_most)
from edge.protocol.payloads import Perception

COMPANION = "bench/blind/companions/petsit.json"


def _app(text: str) -> Perception:
    return Perception(title="owner_app", body=text, format="text")


def _room(text: str) -> Perception:
    return Perception(title="room_speech", body=text, format="text")


def _camera(animal: str, activity: str) -> Perception:
    return Perception(title="pet_camera", body={"animal": animal, "activity": activity},
                      format="object")


def _sound(sound: str, db: float, seconds: int) -> Perception:
    return Perception(title="sound_detector",
                      body={"sound": sound, "loudness_db": db, "duration_s": seconds},
                      format="object")


def _water(level: float) -> Perception:
    return Perception(title="water_bowl", body={"level_percent": level}, format="object")


def _reply(heard: str, what: str, mentions: str | None = None):
    """A reply to the owner in words: in the app chat (speak) or as a phone message."""
    kwargs = {"heard": heard, "what": what, "lang": "en"}
    if mentions is not None:
        kwargs["mentions"] = mentions
    return either(
        speak(action="speak", param="message", **kwargs),
        speak(action="notify_owner", param="text", **kwargs),
    )


def _case(name, perception, check, expect, kind, before=None) -> Case:
    return Case(name=f"petsit_{name}", companion=COMPANION, perception=perception, check=check,
                expect=expect, before=before or [], kind=kind)


def cases() -> list[Case]:
    out: list[Case] = []

    # ---- commands (13) ----
    out.append(_case(
        "treats_two_digits", _app("Give Rufus 2 treats please"),
        named("dispense_treats", count=2, pet="dog"),
        "dispense 2 treats for the dog", "command"))
    out.append(_case(
        "treat_cat_polite", _app("Could you give Miso a treat?"),
        named("dispense_treats", count=1, pet="cat"),
        "dispense 1 treat for the cat", "command"))
    out.append(_case(
        "treats_four_reason",
        _app("Rufus was such a good boy at the vet yesterday, give him four treats"),
        named("dispense_treats", count=4, pet="dog"),
        "dispense 4 treats for the dog", "command"))
    out.append(_case(
        "ball_five_metres", _app("Throw the ball for Rufus, 5 metres"),
        within("launch_ball", distance_m=(5, 5)),
        "launch the ball 5 m", "command"))
    out.append(_case(
        "ball_a_little", _app("launch the ball just a little, he's tired"),
        within("launch_ball", distance_m=(1.5, 2.5)),
        "launch the ball about 2 m (a little)", "command"))
    out.append(_case(
        "ball_all_the_way", _app("Launch the ball all the way, Rufus loves a long run"),
        within("launch_ball", distance_m=(10, 10)),
        "launch the ball the full 10 m", "command"))
    out.append(_case(
        "laser_two_minutes", _app("Play the laser with Miso for two minutes"),
        within("laser_play", duration_s=(120, 120)),
        "run the laser 120 s", "command"))
    out.append(_case(
        "laser_ninety_seconds", _app("let the cat chase the laser dot for ninety seconds"),
        within("laser_play", duration_s=(90, 90)),
        "run the laser 90 s", "command"))
    out.append(_case(
        "stop_laser", _app("Stop the laser now, she's had enough"),
        named("stop_play", toy=("laser", "all")),
        "stop the laser (actually done)", "command"))
    out.append(_case(
        "photo_terse", _app("photo of the dog"),
        named("send_snapshot"),
        "send a camera snapshot", "command"))
    out.append(_case(
        "photo_indirect", _app("I miss them so much, I'd love to see what they're up to"),
        named("send_snapshot"),
        "send a camera snapshot", "command"))
    out.append(_case(
        "water_seventy_five", _app("Top up the water bowl to seventy five percent"),
        named("refill_water", level_percent=75),
        "refill the water bowl to 75 %", "command"))
    out.append(_case(
        "calm_rufus",
        _app("There's a storm coming and Rufus gets nervous, say something soothing to him"),
        named("calm_pets"),
        "play calming words through the pet speaker", "command"))

    # ---- talk (3) ----
    heard = "Good morning Penny!"
    out.append(_case(
        "greeting", _app(heard), _reply(heard, "a friendly greeting"),
        "greet the owner back in words", "talk"))
    heard = "Is it OK for dogs to eat chocolate?"
    out.append(_case(
        "chocolate_question", _app(heard),
        _reply(heard, "says chocolate is bad for dogs",
               mentions=r"\bno\b|not|toxic|poison|danger|bad|harm|never|avoid|unsafe"),
        "answer in words that chocolate is bad for dogs", "talk"))
    heard = "Hi Penny! I'm Sam, I'm here to take Rufus for his walk."
    out.append(_case(
        "dog_walker_hello", _room(heard),
        speak(heard=heard, what="greets the dog walker", lang="en",
              action="speak", param="message"),
        "greet the dog walker aloud", "talk"))

    # ---- events (7) ----
    out.append(_case(
        "long_barking", _sound("bark", 85, 95),
        either(named("calm_pets"), named("notify_owner")),
        "calm words through the speaker or notify the owner", "event"))
    out.append(_case(
        "dog_whines", _sound("whine", 55, 20),
        named("calm_pets"),
        "play gentle calming words", "event"))
    out.append(_case(
        "water_low", _water(12),
        named("refill_water"),
        "refill the water bowl", "event"))
    out.append(_case(
        "water_fine", _water(65),
        nothing(),
        "bowl is fine: do nothing", "event", before=[_water(70)]))
    out.append(_case(
        "dog_chewing", _camera("dog", "chewing"),
        either(named("calm_pets"), named("send_snapshot")),
        "say 'leave it' through the speaker or send a snapshot", "event"))
    out.append(_case(
        "dog_brings_ball", _camera("dog", "bringing_ball"),
        within("launch_ball", distance_m=(2.5, 3.5)),
        "launch the ball about 3 m", "event"))
    out.append(_case(
        "cat_scratching", _camera("cat", "scratching_furniture"),
        within("laser_play", duration_s=(60, 60)),
        "distract the cat with the laser for 60 s", "event"))

    # ---- silence (4) ----
    out.append(_case(
        "tv_weather",
        _room("And now the weather: sunny spells this afternoon with a chance of showers later."),
        nothing(), "a TV line: do nothing", "silence"))
    out.append(_case(
        "walker_on_phone",
        _room("Yeah, I'll be home by six, can you pick up some milk on the way?"),
        nothing(), "the dog walker on the phone: do nothing", "silence"))
    out.append(_case(
        "small_meow", _sound("meow", 40, 2),
        nothing(), "a short quiet meow: do nothing", "silence"))
    out.append(_case(
        "camera_unchanged", _camera("dog", "sitting"),
        nothing(), "the same view as before: do nothing", "silence",
        before=[_camera("dog", "sitting")]))

    # ---- character (3) ----
    heard = "How old are you, Penny?"
    out.append(_case(
        "age", _app(heard),
        _reply(heard, "its robot age (two years since switched on), not a human age",
               mentions=r"\btwo\b|\b2\b|robot|switched on|built|made"),
        "answer its age as a robot", "character"))
    heard = "Sorry, what was your name again?"
    out.append(_case(
        "own_name", _app(heard),
        _reply(heard, "says its name is Penny", mentions=r"penny"),
        "say its name is Penny", "character"))
    heard = "Do you know my name?"
    out.append(_case(
        "owner_name", _app(heard),
        _reply(heard, "does not call the owner Penny",
               mentions=r"^(?![\s\S]*\b(you are|you're|youre|your name is|your name's)\s+penny\b)"
                        r"(?![\s\S]*,\s*penny\b)"),
        "answer without calling the owner Penny", "character"))

    return out

"""``companion run mic`` options beside ``--stt``: the VAD, the end-of-turn silence, barge-in, the wake word.

Nothing heavy is imported here (every ``companion`` command builds the parser); each value
is checked by argparse, so a bad one stops the command with exit status 2 and a sentence
naming the option. The flags are declared once, with their ``[mic]`` keys, in ``edge/config.py``;
on a device they go in ``[mic]`` of /etc/companion/robot.toml.
"""

from __future__ import annotations

import argparse
from typing import Any

_VADS = ("auto", "silero", "energy", "webrtc")
WAKE_WORDS = ("hey_jarvis", "okay_nabu", "alexa", "hey_mycroft")   # the models inside pymicro-wakeword's wheel


def vad_arg(text: str) -> str:
    """``auto``, ``silero[:THRESHOLD]``, ``energy[:DB]``, ``webrtc[:MODE]``: the kind is checked here,
    the value when the VAD is built (which names it if it is wrong)."""
    if text.strip().lower().partition(":")[0] not in _VADS:
        raise argparse.ArgumentTypeError(f"{text!r} is not a VAD: use auto (silero, else energy), silero[:0.5], "
                                         "energy[:9] or webrtc[:1]")
    return text.strip().lower()


def silence_arg(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.05 <= value <= 3.0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds from 0.05 to 3 (e.g. 0.3)")
    return value


def barge_in_arg(text: str) -> str:
    """``off``, or the margin in dB (0-40) by which a person must be louder than the robot's own voice."""
    word = text.strip().lower()
    if word == "off":
        return word
    try:
        value = float(word)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 40:
        raise argparse.ArgumentTypeError(f"{text!r} is not a barge-in margin: use off, or dB from 0 to 40 (e.g. 9)")
    return f"{value:g}"


def wake_word_arg(text: str) -> str:
    """``off``, a built-in wake word (``hey_jarvis``; "Hey Jarvis" and ``hey-jarvis`` too), or the path of
    a microWakeWord manifest (``.json``) for a model trained elsewhere."""
    if text.strip().lower().endswith(".json"):
        return text.strip()
    word = "_".join(text.strip().lower().replace("-", " ").replace("_", " ").split())
    if word == "off" or word in WAKE_WORDS:
        return word
    raise argparse.ArgumentTypeError(f"{text!r} is not a wake word: use off, {', '.join(WAKE_WORDS)}, "
                                     "or a microWakeWord model's .json")


def follow_up_arg(text: str) -> float:
    """Seconds after the robot spoke (or after the last request) when no wake word is needed."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 120:
        raise argparse.ArgumentTypeError(f"{text!r} is not a follow-up time: seconds from 0 to 120 (e.g. 5)")
    return value


def mic_settings(args: Any) -> dict[str, Any]:
    """run_mic's keyword arguments from the ``[mic]`` section or parsed options (absent ones keep the defaults)."""
    settings: dict[str, Any] = {"recognizer": getattr(args, "stt", None) or None,
                                "vad": getattr(args, "vad", None), "quiet": bool(getattr(args, "quiet", False))}
    silences = {field: value for field, value in (("end_silence_s", getattr(args, "end_silence", None)),
                                                  ("finished_silence_s", getattr(args, "finished_silence", None)))
                if value is not None}
    if silences:
        from edge.perception.microphone.vad import SegmenterConfig
        settings["segmenter"] = SegmenterConfig(**silences)
    barge_in = getattr(args, "barge_in", None)
    if barge_in is not None:
        from edge.perception.microphone.barge_in import BargeInConfig
        settings["barge_in"] = None if barge_in == "off" else BargeInConfig(margin_db=float(barge_in))
    wake = getattr(args, "wake_word", None)
    settings["wake_word"] = None if wake in (None, "off") else wake
    if getattr(args, "follow_up", None) is not None:
        settings["follow_up_s"] = float(args.follow_up)
    return settings

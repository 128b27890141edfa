"""``companion run mic`` options beside ``--stt``: the VAD and the end-of-turn silence.

Nothing heavy is imported here (every ``companion`` command builds the parser); each value
is checked by argparse, so a bad one stops the command with exit status 2 and a sentence
naming the option. On a device they go in ``COMPANION_MIC_ARGS`` (``/etc/companion/companion.env``).
"""

from __future__ import annotations

import argparse
from typing import Any

_VADS = ("auto", "silero", "energy", "webrtc")


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


def add_mic_options(run: argparse.ArgumentParser) -> None:
    group = run.add_argument_group("mic")
    group.add_argument("--vad", type=vad_arg, metavar="SPEC",
                       help="mic: voice activity detector: auto (default: silero, else energy) | silero[:THRESHOLD] | "
                            "energy[:DB] | webrtc[:MODE]")
    group.add_argument("--end-silence", type=silence_arg, metavar="S",
                       help="mic: seconds of silence that end a turn (default 0.3; longer keeps slow talkers' "
                            "pauses inside one utterance)")


def mic_settings(args: argparse.Namespace) -> dict[str, Any]:
    """run_mic's keyword arguments from the parsed options (absent options keep the defaults)."""
    settings: dict[str, Any] = {"recognizer": getattr(args, "stt", None) or None,
                                "vad": getattr(args, "vad", None), "quiet": bool(getattr(args, "quiet", False))}
    if getattr(args, "end_silence", None) is not None:
        from edge.perception.vad import SegmenterConfig
        settings["segmenter"] = SegmenterConfig(end_silence_s=args.end_silence)
    return settings

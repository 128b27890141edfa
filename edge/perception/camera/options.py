"""``companion run camera`` options: capture size and rate, detector settings, what to publish.

This module imports nothing heavy at the top: every ``companion`` command builds the parser.
Each value is checked by argparse, so a bad one stops the command with exit status 2 and a
sentence naming the option, before any broker or camera is touched. The flags are declared
once, with their ``[camera]`` keys, in ``edge/config.py``; on a device they go in ``[camera]`` of
/etc/companion/robot.toml.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any, Callable


def size_arg(text: str) -> tuple[int, int]:
    """``640x480`` → (640, 480)."""
    width, sep, height = text.lower().partition("x")
    try:
        size = (int(width), int(height)) if sep else None
    except ValueError:
        size = None
    if size is None or not (16 <= size[0] <= 7680 and 16 <= size[1] <= 4320):
        raise argparse.ArgumentTypeError(f"{text!r} is not WIDTHxHEIGHT between 16x16 and 7680x4320, e.g. 640x480")
    return size


def bounded(kind: type, low: float, high: float, example: str) -> Callable[[str], Any]:
    """A number from ``low`` to ``high``, or an error naming the range (flags and robot.toml alike)."""

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            value = None
        if value is None or not (low <= value <= high):
            raise argparse.ArgumentTypeError(f"{text!r} is not a number from {low:g} to {high:g} (e.g. {example})")
        return value
    return parse


def camera_settings(args: Any) -> dict[str, Any]:
    """run_camera's keyword arguments from the ``[camera]`` section or parsed options (absent ones keep
    the defaults)."""
    from edge.perception.camera.node import NodeOptions          # OpenCV and numpy: only when a camera runs
    from edge.perception.camera.sources import CaptureConfig
    from edge.perception.camera.scene import PolicyConfig

    capture = CaptureConfig()
    if getattr(args, "size", None):
        capture = replace(capture, width=args.size[0], height=args.size[1])
    if getattr(args, "fps", None):
        capture = replace(capture, fps=args.fps)
    if getattr(args, "loop", False):
        capture = replace(capture, loop=True)
    detector: dict[str, Any] = {}
    policy = PolicyConfig()
    if getattr(args, "conf", None) is not None:
        detector["conf"] = args.conf
        policy = replace(policy, min_confidence=args.conf)
    if getattr(args, "imgsz", None):
        detector["imgsz"] = args.imgsz
    options = NodeOptions(send_image=bool(getattr(args, "send_image", False)))
    return {"capture": capture, "policy": policy, "options": options, "detector_options": detector,
            "quiet": bool(getattr(args, "quiet", False))}

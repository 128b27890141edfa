"""The short scenario ``companion up --sim --demo`` plays: a greeting, a person seen, a request.

Each perception is published on the bus exactly as ``companion perceive`` would, and the next
one waits until every companion has finished with the previous (decision and results).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from edge.runtime.bus import Bus
from edge.perception.camera.detectors import Detection
from edge.perception.camera.scene import SceneEvent
from edge.protocol.payloads import Perception


def person_on_the_left() -> dict:
    """The body the camera node publishes when one person appears on the robot's left, built by
    its own code (the box is what HOG finds in tests/rigs/vision_frames.py's real video frame)."""
    person = Detection("person", 0.9, (0.17, 0.34, 0.39, 0.91))
    return SceneEvent(ts=0.4, changes=[{"label": "person", "change": "appeared"}], counts={"person": 1},
                      detections=[person], frame_size=(320, 240)).body()


DEFAULT_SCENARIO: list[dict] = [
    {"title": "input", "format": "text", "body": "Hello! Who are you?"},
    {"title": "vision", "format": "object", "body": person_on_the_left()},
    {"title": "input", "format": "text", "body": "Please look to your left."},
]


def load_scenario(path: str | Path | None) -> list[dict]:
    """A JSON array of perceptions (title, format, body); a bad file is a ValueError naming it."""
    if path is None:
        return DEFAULT_SCENARIO
    try:
        items = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"demo scenario {path}: {exc}") from None
    if not isinstance(items, list) or not all(isinstance(i, dict) and "title" in i and "body" in i for i in items):
        raise ValueError(f"demo scenario {path}: expected a JSON array of objects with title and body")
    return items


def play(stack, scenario: list[dict], per_step_timeout_s: float = 120.0) -> bool:
    """Publish each perception and wait for every brain to finish it; False if one timed out."""
    bus = Bus("demo", "cli", stack.settings.broker, namespace=stack.settings.namespace,
              persistent=False, announce=False).connect()
    try:
        for item in scenario:
            targets = {id(b): b.handled + b.dropped + 1 for b in stack.brains}
            perception = Perception(title=item["title"], body=item["body"], format=item.get("format", "text"),
                                    to=item.get("to", "all"), sender="demo")
            bus.publish(perception).wait_for_publish(5)
            deadline = time.monotonic() + per_step_timeout_s
            while not all(b.handled + b.dropped >= targets[id(b)] for b in stack.brains):
                if time.monotonic() > deadline:
                    return False
                time.sleep(0.05)
        return True
    finally:
        bus.close()

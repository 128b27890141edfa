"""Face/person following: ``look`` targets straight to the body, without asking the LLM.

Following someone with the eyes is a reflex, not a decision: asking a language model ten
times a second would be slow and flood it. The tracker picks the largest face (else the
largest person), turns its place in the picture into the ``look`` action's terms and lets
a target through at most ``rate_hz`` times a second, and only when it moved more than
``deadband`` since the last one sent.

Mapping (for a camera fixed to the body, facing forward): the picture's left edge is
x = -1 and its right edge x = 1; its bottom y = -1, its top y = 1; z is nearness from the
box's height (a box filling the picture is near, -1; a tiny one far, 1). ``gain`` scales x
and y for a lens whose field of view is narrower or wider than the head's range.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from edge.perception.detectors import Detection


@dataclass
class TrackConfig:
    labels: Sequence[str] = ("face", "person")  # in order of preference
    min_confidence: float = 0.5
    rate_hz: float = 2.0
    deadband: float = 0.1
    gain: float = 1.0
    action: str = "look"


def _clamp(v: float) -> float:
    return round(min(1.0, max(-1.0, v)), 2)


class Tracker:
    """Feed it each frame's detections; it returns ``look`` params when a target is due."""

    def __init__(self, config: TrackConfig | None = None):
        self.config = config or TrackConfig()
        self._last_sent_ts = float("-inf")
        self._last: dict[str, float] | None = None
        self.sent = 0

    def target(self, detections: Sequence[Detection]) -> Detection | None:
        """The largest detection of the most preferred label present."""
        for label in self.config.labels:
            found = [d for d in detections if d.label == label and d.confidence >= self.config.min_confidence]
            if found:
                return max(found, key=lambda d: d.area)
        return None

    def update(self, detections: Sequence[Detection], ts: float) -> dict[str, Any] | None:
        cfg = self.config
        if ts < self._last_sent_ts:  # the clock went back: a new recording
            self._last_sent_ts = float("-inf")
        if cfg.rate_hz > 0 and ts - self._last_sent_ts < 1.0 / cfg.rate_hz - 1e-9:
            return None
        chosen = self.target(detections)
        if chosen is None:
            return None
        cx, cy = chosen.center
        x1, y1, x2, y2 = chosen.box
        params = {"x": _clamp((cx - 0.5) * 2 * cfg.gain), "y": _clamp((0.5 - cy) * 2 * cfg.gain),
                  "z": _clamp(1 - 2 * (y2 - y1))}
        if self._last is not None and max(abs(params["x"] - self._last["x"]),
                                          abs(params["y"] - self._last["y"])) < cfg.deadband:
            return None
        self._last = params
        self._last_sent_ts = ts
        self.sent += 1
        return params

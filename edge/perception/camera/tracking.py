"""Face/person following: ``look`` targets straight to the body, without asking the LLM.

Following someone with the eyes is a reflex, not a decision: asking a language model ten
times a second would be slow and flood it. The tracker picks the largest face (else the
largest person), turns its place in the picture into the ``look`` action's terms and lets
a target through at most ``rate_hz`` times a second, and only when it moved more than
``deadband`` since the last one sent.

Mapping (for a camera fixed to the body, facing forward): the target's place in the view frame
(docs/protocol.md "Spatial frame") is the ``look`` x and y as they are, so the reflex and a
model copying a vision object point the head the same way; ``gain`` scales them for a lens
whose field of view is narrower or wider than the head's. z is the distance ahead in metres,
guessed from the box's height and the label's usual size (a face ~0.22 m, a person ~1.7 m),
held to the 0.1..2 m a ``look`` takes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from edge.perception.camera.detectors import Detection
from edge.perception.camera.view_frame import Z_MAX_M, Z_MIN_M, to_view

# how tall a thing of each label usually is (metres): its box's height then says how far it is
TYPICAL_HEIGHT_M = {"face": 0.22, "person": 1.7}


@dataclass
class TrackConfig:
    labels: Sequence[str] = ("face", "person")  # in order of preference
    min_confidence: float = 0.5
    rate_hz: float = 2.0
    deadband: float = 0.1
    gain: float = 1.0
    action: str = "look"
    heights_m: dict[str, float] = field(default_factory=lambda: dict(TYPICAL_HEIGHT_M))


def _clamp(v: float, lo: float = -1.0, hi: float = 1.0) -> float:
    return round(min(hi, max(lo, v)), 2) + 0.0


def distance_ahead(label: str, box_height: float, heights_m: dict[str, float]) -> float:
    """Metres ahead, from the fraction of the picture's height a box fills: the view spans ±45°
    (as ``look`` does), so at d metres the picture is 2·d tall. An unknown label is 1 m."""
    if label not in heights_m or box_height <= 0:
        return 1.0
    return _clamp(heights_m[label] / (2.0 * box_height), Z_MIN_M, Z_MAX_M)


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
        x, y = to_view(*chosen.center)
        params = {"x": _clamp(x * cfg.gain), "y": _clamp(y * cfg.gain),
                  "z": distance_ahead(chosen.label, chosen.box[3] - chosen.box[1], cfg.heights_m)}
        if self._last is not None and max(abs(params["x"] - self._last["x"]),
                                          abs(params["y"] - self._last["y"])) < cfg.deadband:
            return None
        self._last = params
        self._last_sent_ts = ts
        self.sent += 1
        return params

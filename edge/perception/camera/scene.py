"""The perception policy: tell the companion about a scene only when it changed meaningfully.

A detector speaks every frame; the LLM must not. The policy turns a stream of detections
into rare events:

- a label *appears* once it was seen in ``appear_frames`` consecutive frames spanning at
  least ``appear_s`` (a single false positive never gets through), and *leaves* once it was
  missed in ``leave_frames`` consecutive frames for at least ``leave_s`` (detectors miss
  frames; a person does not vanish because one frame was blurred);
- a *scene change*: more than ``scene_change`` of a small grey thumbnail differs from the
  thumbnail of the last report, debounced like an appearance (lights, a moved camera, a new
  object no detector knows). Pixels inside detected boxes do not count: the detections
  already describe them, so a person walking about is not a "scene change";
- between two reports at least ``cooldown_s`` pass. What changed during the cooldown is not
  lost: the next report says how the scene differs from the last report, so a person who
  came and went inside the cooldown cancels out, and one who came and stayed is reported
  the moment the cooldown ends.

Time is the frame's own clock (``Frame.ts``), so a recording yields the same reports on any
machine. Nothing here touches the network; the camera node publishes what ``update`` returns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from edge.perception.camera.detectors import Detection

THUMB_SIZE = (64, 48)


@dataclass
class PolicyConfig:
    min_confidence: float = 0.5      # weaker detections are ignored entirely
    labels: Sequence[str] | None = None  # only these labels count (None: every label)
    appear_frames: int = 2
    appear_s: float = 0.3
    leave_frames: int = 3
    leave_s: float = 1.5
    cooldown_s: float = 3.0
    scene_change: float | None = 0.3  # fraction of the view; None turns scene changes off
    pixel_threshold: int = 30        # grey levels (0..255) a thumbnail pixel must move to count
    max_objects: int = 8             # detections listed in a report, most confident first


@dataclass
class _Track:
    """One label's debounce state."""

    present: bool = False
    seen_run: int = 0
    seen_since: float = 0.0
    missed_run: int = 0
    last_seen: float = 0.0
    last: list[Detection] = field(default_factory=list)  # its detections in the last frame it was seen

    @property
    def settling(self) -> bool:
        """Seen but not confirmed yet, or missed but not gone yet."""
        return (self.seen_run > 0 and not self.present) or (self.missed_run > 0 and self.present)


@dataclass
class SceneEvent:
    """One report: what changed since the last report, and what is in view now."""

    ts: float
    changes: list[dict[str, Any]]
    counts: dict[str, int]
    detections: list[Detection]
    frame_size: tuple[int, int] | None = None  # (width, height)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def summary(self) -> str:
        said = []
        for change in self.changes:
            if change["change"] == "scene":
                said.append(f"the view changed ({round(change['amount'] * 100)}% of it)")
            else:
                said.append(f"{change['label']} {change['change']}")
        seen = ", ".join(_plural(n, label) for label, n in sorted(self.counts.items()))
        return "; ".join(said) + ". " + (f"In view: {seen}." if seen else "Nothing recognised in view.")

    def body(self, digits: int = 2) -> dict[str, Any]:
        """The ``object`` perception body."""
        out: dict[str, Any] = {"summary": self.summary, "changes": self.changes, "counts": self.counts,
                               "objects": [d.to_dict(digits) for d in self.detections]}
        if self.frame_size:
            out["frame"] = {"width": self.frame_size[0], "height": self.frame_size[1], "ts": round(self.ts, 3)}
        out.update(self.extra)
        return out


def _plural(n: int, label: str) -> str:
    if n == 1:
        return f"1 {label}"
    return f"{n} " + ("people" if label == "person" else label if label.endswith("s") else label + "s")


def thumbnail(image: np.ndarray) -> np.ndarray:
    """A small blurred grey copy: cheap to compare, blind to noise and to small motion."""
    import cv2

    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    small = cv2.resize(gray, THUMB_SIZE, interpolation=cv2.INTER_AREA)
    return cv2.GaussianBlur(small, (3, 3), 0)


class ScenePolicy:
    """Feed it every processed frame's detections; it returns a SceneEvent when one is due."""

    def __init__(self, config: PolicyConfig | None = None):
        self.config = config or PolicyConfig()
        self._tracks: dict[str, _Track] = {}
        self._reported: dict[str, bool] = {}   # label -> present at the last report
        self._reference: np.ndarray | None = None
        self._thumb: np.ndarray | None = None
        self._boxes: list[Detection] = []        # this frame's detections, masked out of the diff
        self._reference_boxes: list[Detection] = []
        self._scene_run = 0
        self._scene_since = 0.0
        self._last_report = float("-inf")
        self._last_ts = float("-inf")
        self.reports = 0

    @property
    def present(self) -> set[str]:
        """The labels the policy currently believes are in view (after debounce)."""
        return {label for label, t in self._tracks.items() if t.present}

    def update(self, detections: Sequence[Detection], ts: float, image: np.ndarray | None = None) -> SceneEvent | None:
        cfg = self.config
        if ts < self._last_ts:  # the clock went back (a new recording): forget the cooldown
            self._last_report = float("-inf")
        self._last_ts = ts
        kept = [d for d in detections if d.confidence >= cfg.min_confidence
                and (cfg.labels is None or d.label in cfg.labels)]
        self._debounce(kept, ts)
        self._boxes = kept
        changed_by = self._scene_amount(image, ts)

        changes = self._label_changes()
        if changed_by is not None:
            changes.append({"change": "scene", "amount": round(changed_by, 2)})
        if not changes or ts - self._last_report < cfg.cooldown_s - 1e-9:
            return None
        return self._report(changes, ts, image)

    def flush(self, ts: float, image: np.ndarray | None = None) -> SceneEvent | None:
        """At the end of a recording: report a debounced change the cooldown still held back."""
        changes = self._label_changes()
        return self._report(changes, ts, image) if changes else None

    def _label_changes(self) -> list[dict[str, Any]]:
        """How the debounced labels differ from the last report."""
        present = self.present
        return [{"label": label, "change": "appeared" if label in present else "left"}
                for label in sorted(set(self._tracks) | set(self._reported))
                if (label in present) != self._reported.get(label, False)]

    # -- internals -----------------------------------------------------------------------

    def _debounce(self, kept: Sequence[Detection], ts: float) -> None:
        cfg = self.config
        by_label: dict[str, list[Detection]] = {}
        for d in kept:
            by_label.setdefault(d.label, []).append(d)
        for label in set(by_label) | set(self._tracks):
            track = self._tracks.setdefault(label, _Track())
            if label in by_label:
                if track.seen_run == 0:
                    track.seen_since = ts
                track.seen_run += 1
                track.missed_run = 0
                track.last_seen = ts
                track.last = by_label[label]
                if (not track.present and track.seen_run >= cfg.appear_frames
                        and ts - track.seen_since >= cfg.appear_s - 1e-9):
                    track.present = True
            else:
                track.seen_run = 0
                track.missed_run += 1
                if (track.present and track.missed_run >= cfg.leave_frames
                        and ts - track.last_seen >= cfg.leave_s - 1e-9):
                    track.present = False
                    track.last = []

    def _scene_amount(self, image: np.ndarray | None, ts: float) -> float | None:
        """The changed fraction of the view once it has been large as long as a label must be
        seen to appear; held back (up to ``leave_s`` more) while a label is about to appear or
        leave, so a person walking in makes one report, not a scene change and then a person."""
        cfg = self.config
        if image is None or cfg.scene_change is None:
            return None
        thumb = thumbnail(image)
        self._thumb = thumb
        if self._reference is None or self._reference.shape != thumb.shape:
            self._reference = thumb
            return None
        changed = np.abs(thumb.astype(np.int16) - self._reference.astype(np.int16)) > cfg.pixel_threshold
        for d in (*self._boxes, *self._reference_boxes):  # what the detectors explain is not a scene change
            x1, y1, x2, y2 = d.box
            w, h = THUMB_SIZE
            changed[int(y1 * h):int(np.ceil(y2 * h)), int(x1 * w):int(np.ceil(x2 * w))] = False
        amount = float(np.count_nonzero(changed)) / changed.size
        if amount <= cfg.scene_change:
            self._scene_run = 0
            return None
        if self._scene_run == 0:
            self._scene_since = ts
        self._scene_run += 1
        held = ts - self._scene_since
        if self._scene_run < cfg.appear_frames or held < cfg.appear_s - 1e-9:
            return None
        if any(t.settling for t in self._tracks.values()) and held < cfg.appear_s + cfg.leave_s:
            return None
        return amount

    def _report(self, changes: list[dict[str, Any]], ts: float, image: np.ndarray | None) -> SceneEvent:
        present = self.present
        self._reported = {label: label in present for label in self._tracks}
        self._last_report = ts
        self._scene_run = 0
        if image is not None and self._thumb is not None:
            self._reference = self._thumb
            self._reference_boxes = list(self._boxes)
        self.reports += 1
        # where each present label was last seen: this frame, or the last frame that had it
        shown = sorted((d for label in present for d in self._tracks[label].last), key=lambda d: -d.confidence)
        counts = {label: len(self._tracks[label].last) for label in sorted(present)}
        size = (image.shape[1], image.shape[0]) if image is not None else None
        return SceneEvent(ts, changes, counts, shown[: self.config.max_objects], size)

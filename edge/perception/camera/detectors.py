"""Object detectors behind one small interface: ``detect(frame) -> list[Detection]``.

A frame is an OpenCV BGR image (``numpy`` uint8, H x W x 3). Every detector answers in the
same terms, so the scene policy never knows which one ran: a label, a confidence in 0..1 and
a box normalized to the frame (x1, y1, x2, y2 with 0,0 top-left, 1,1 bottom-right). That box
stays inside the camera node; on the wire (``Detection.to_dict``) a detection is in the
robot's view frame (``edge.perception.camera.view_frame``, docs/protocol.md "Spatial frame").

The detectors themselves: OpenCV's own Haar face and HOG person detectors (``opencv_detectors``,
the zero-download default), YOLO models (``yolo`` for ONNX, ``ultralytics_backend`` for ``.pt``
and NCNN); ``detector_spec.make_detector`` builds any of them from a command-line spec.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, Sequence

import numpy as np

from edge.perception.camera.view_frame import Box, box_in_view


class DetectorError(ValueError):
    """A detector that cannot be built (bad spec, missing or broken model file, missing package)."""


@dataclass(frozen=True)
class Detection:
    """One thing seen: what, how sure, and where (normalized x1, y1, x2, y2)."""

    label: str
    confidence: float
    box: Box

    @property
    def center(self) -> tuple[float, float]:
        x1, y1, x2, y2 = self.box
        return (x1 + x2) / 2, (y1 + y2) / 2

    @property
    def area(self) -> float:
        x1, y1, x2, y2 = self.box
        return max(0.0, x2 - x1) * max(0.0, y2 - y1)

    def to_dict(self, digits: int = 2) -> dict[str, Any]:
        """The wire form, kept compact for a small model's prompt: the centre as ``x``/``y`` in
        the view frame (-1 left .. 1 right, -1 bottom .. 1 top: ``look``'s own terms, so a model
        can copy them) and the size as ``w``/``h``, fractions of the picture's width and height."""
        return {"label": self.label, "confidence": round(self.confidence, digits), **box_in_view(self.box, digits)}


class Detector(Protocol):
    name: str

    def detect(self, frame: np.ndarray) -> list[Detection]:
        """Find things in a BGR frame; never mutates it."""


def check_frame(frame: Any) -> np.ndarray:
    """A frame every detector can take, or a DetectorError naming what is wrong with it."""
    if not isinstance(frame, np.ndarray):
        raise DetectorError(f"a frame must be a numpy image, not {type(frame).__name__}")
    if frame.ndim != 3 or frame.shape[2] != 3 or frame.dtype != np.uint8 or 0 in frame.shape:
        raise DetectorError(f"a frame must be a non-empty H x W x 3 uint8 BGR image, got shape "
                            f"{frame.shape} dtype {frame.dtype}")
    return frame


def normalized(x1: float, y1: float, x2: float, y2: float, width: int, height: int) -> Box:
    """Pixel corners to a normalized box, clamped to the frame."""
    def clamp(v: float) -> float:
        return min(1.0, max(0.0, float(v)))
    return clamp(x1 / width), clamp(y1 / height), clamp(x2 / width), clamp(y2 / height)


def nms(boxes: np.ndarray, scores: np.ndarray, iou: float) -> list[int]:
    """Greedy non-maximum suppression over (N, 4) x1,y1,x2,y2 boxes; kept indices, best first.
    Equal scores keep the lower index first, so the result never depends on sort stability."""
    boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    order = np.lexsort((np.arange(len(scores)), -scores))
    x1, y1, x2, y2 = boxes.T
    areas = np.clip(x2 - x1, 0, None) * np.clip(y2 - y1, 0, None)
    keep: list[int] = []
    while order.size:
        i, rest = order[0], order[1:]
        keep.append(int(i))
        inter = (np.clip(np.minimum(x2[i], x2[rest]) - np.maximum(x1[i], x1[rest]), 0, None)
                 * np.clip(np.minimum(y2[i], y2[rest]) - np.maximum(y1[i], y1[rest]), 0, None))
        union = areas[i] + areas[rest] - inter
        overlap = np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)
        order = rest[overlap <= iou]
    return keep


class CombinedDetector:
    """Several detectors on the same frame (``haar,hog``: faces and people), results joined."""

    def __init__(self, parts: Sequence[Detector]):
        self.parts = list(parts)
        self.name = ",".join(p.name for p in self.parts)

    def detect(self, frame: np.ndarray) -> list[Detection]:
        found: list[Detection] = []
        for part in self.parts:
            found.extend(part.detect(frame))
        return found

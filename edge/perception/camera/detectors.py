"""Object detectors behind one small interface: ``detect(frame) -> list[Detection]``.

A frame is an OpenCV BGR image (``numpy`` uint8, H x W x 3). Every detector answers in the
same terms, so the scene policy never knows which one ran: a label, a confidence in 0..1 and
a box normalized to the frame (x1, y1, x2, y2 with 0,0 top-left, 1,1 bottom-right). That box
stays inside the camera node; on the wire (``Detection.to_dict``) a detection is in the
robot's view frame (``edge.perception.camera.view_frame``, docs/protocol.md "Spatial frame").

The zero-download default is OpenCV's own: the Haar frontal-face cascade that ships inside
``opencv-python`` (``cv2.data.haarcascades``) and the HOG + linear-SVM people detector built
into OpenCV. Their classifiers give a margin, not a probability; ``confidence`` is the
logistic of that margin, so 0.5 is the classifier's own yes/no line. YOLO models (ONNX,
``.pt``, NCNN) live in ``edge.perception.camera.yolo``; ``detector_spec.make_detector`` builds any
of them from a command-line spec.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
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


def margin_to_confidence(margin: float) -> float:
    """Logistic of a classifier margin: 0 → 0.5 (the classifier's threshold), 3 → 0.95."""
    return 1.0 / (1.0 + math.exp(-float(margin)))


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


def _downscale(frame: np.ndarray, max_side: int | None) -> np.ndarray:
    """Detect on a smaller copy when asked: boxes are normalized, so nothing else changes."""
    import cv2

    if not max_side or max(frame.shape[:2]) <= max_side:
        return frame
    scale = max_side / max(frame.shape[:2])
    return cv2.resize(frame, (round(frame.shape[1] * scale), round(frame.shape[0] * scale)),
                      interpolation=cv2.INTER_AREA)


class HaarFaceDetector:
    """OpenCV's bundled frontal-face Haar cascade: fast, no download, frontal faces only."""

    def __init__(self, cascade: str | Path | None = None, label: str = "face", scale_factor: float = 1.1,
                 min_neighbors: int = 5, min_size: int = 24, max_side: int | None = None):
        import cv2
        import cv2.data  # the bundled cascades' folder (a submodule the cv2 stubs do not list)

        path = Path(cascade) if cascade else Path(cv2.data.haarcascades) / "haarcascade_frontalface_default.xml"
        if not path.is_file():
            raise DetectorError(f"Haar cascade {path}: no such file")
        self._cascade = cv2.CascadeClassifier(str(path))
        if self._cascade.empty():
            raise DetectorError(f"Haar cascade {path}: OpenCV could not load it (not a cascade XML?)")
        self.name = "haar"
        self.label = label
        self.scale_factor = scale_factor
        self.min_neighbors = min_neighbors
        self.min_size = min_size
        self.max_side = max_side

    def detect(self, frame: np.ndarray) -> list[Detection]:
        import cv2

        image = _downscale(check_frame(frame), self.max_side)
        gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        rects, _levels, weights = self._cascade.detectMultiScale3(
            gray, scaleFactor=self.scale_factor, minNeighbors=self.min_neighbors,
            minSize=(self.min_size, self.min_size), outputRejectLevels=True)
        h, w = gray.shape
        return [Detection(self.label, margin_to_confidence(weight), normalized(x, y, x + bw, y + bh, w, h))
                for (x, y, bw, bh), weight in zip(rects, weights)]


class HogPersonDetector:
    """OpenCV's HOG + linear SVM people detector: upright, whole people of at least ~64x128 px."""

    def __init__(self, label: str = "person", win_stride: int = 8, scale: float = 1.05,
                 iou: float = 0.45, max_side: int | None = None):
        import cv2

        self._hog = cv2.HOGDescriptor()
        # an ndarray at run time, typed as a Sequence in OpenCV's stubs: asarray satisfies both
        self._hog.setSVMDetector(np.asarray(cv2.HOGDescriptor.getDefaultPeopleDetector(), dtype=np.float32))
        self.name = "hog"
        self.label = label
        self.win_stride = win_stride
        self.scale = scale
        self.iou = iou
        self.max_side = max_side

    def detect(self, frame: np.ndarray) -> list[Detection]:
        image = _downscale(check_frame(frame), self.max_side)
        rects, weights = self._hog.detectMultiScale(image, winStride=(self.win_stride, self.win_stride),
                                                    padding=(8, 8), scale=self.scale)
        if len(rects) == 0:
            return []
        boxes = np.array([[x, y, x + bw, y + bh] for x, y, bw, bh in rects], dtype=np.float64)
        scores = np.asarray(weights, dtype=np.float64).reshape(-1)
        h, w = image.shape[:2]
        return [Detection(self.label, margin_to_confidence(scores[i]),
                          normalized(boxes[i, 0], boxes[i, 1], boxes[i, 2], boxes[i, 3], w, h))
                for i in nms(boxes, scores, self.iou)]


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

"""OpenCV's own detectors, the zero-download default: the Haar frontal-face cascade that ships
inside ``opencv-python`` (``cv2.data.haarcascades``) and the HOG + linear-SVM people detector built
into OpenCV. Their classifiers give a margin, not a probability; ``confidence`` is the logistic of
that margin, so 0.5 is the classifier's own yes/no line. OpenCV loads when one is built."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from edge.perception.camera.detectors import Detection, DetectorError, check_frame, nms, normalized


def margin_to_confidence(margin: float) -> float:
    """Logistic of a classifier margin: 0 → 0.5 (the classifier's threshold), 3 → 0.95."""
    return 1.0 / (1.0 + math.exp(-float(margin)))


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

"""Ultralytics (torch) for ``.pt`` checkpoints and NCNN export folders, and for exporting.

Ultralytics is optional and heavy: torch, torchvision and a dozen packages. Two things about
it need care, and both live here so the detector and ``companion models`` agree:

- how to install it: ``pip install ultralytics`` pulls ``opencv-python``, whose ``cv2``
  overwrites our ``opencv-python-headless`` and needs a desktop's libGL; on x86-64 it also
  pulls a multi-GB CUDA torch. ``deploy/setup.sh --yolo`` installs a matching torch and
  torchvision first, then Ultralytics without its dependencies, then the rest of them
  (``deploy/requirements-yolo.txt``);
- how it behaves at run time: left alone it checks the internet, installs missing packages
  with pip on its own and writes settings under ``~/.config``. A robot's service has a
  read-only system and should never change its own venv, so we switch that off
  (``YOLO_OFFLINE``) and keep it quiet, unless the user set those variables themselves.

torch and torchvision must be builds of the same release: Ultralytics imports torchvision
for non-maximum suppression, and a mismatched pair fails only on the first frame. We import
it up front so the mismatch is a clear error when the model loads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from edge import environment
from edge.log import get_logger
from edge.perception.camera.detectors import Detection, DetectorError, check_frame
from edge.perception.camera.yolo import last_line, parse_names

log = get_logger(__name__)

INSTALL_HINT = ("bash deploy/setup.sh --yolo (a matching torch + torchvision, then Ultralytics without "
                "opencv-python; see docs/camera.md)")


class UltralyticsMissing(DetectorError):
    """Ultralytics, torch or torchvision is absent or broken here."""


def load_ultralytics() -> Any:
    """The ``ultralytics.YOLO`` class, configured for a robot; UltralyticsMissing says how to fix."""
    environment.set_default("YOLO_OFFLINE", "1")     # no online checks, no pip installs at run time
    environment.set_default("YOLO_VERBOSE", "False")
    try:
        import torch  # noqa: F401
    except ImportError:
        raise UltralyticsMissing(f"torch is not installed; install Ultralytics with {INSTALL_HINT}") from None
    try:
        import torchvision  # noqa: F401
    except ImportError:
        raise UltralyticsMissing(f"torchvision is not installed; install Ultralytics with {INSTALL_HINT}") from None
    except RuntimeError as exc:  # e.g. "operator torchvision::nms does not exist"
        raise UltralyticsMissing(f"torchvision does not work with this torch ({last_line(exc)}): they must be "
                                 f"builds of the same release; reinstall both with {INSTALL_HINT}") from None
    try:
        from ultralytics import YOLO
    except ImportError as exc:
        raise UltralyticsMissing(f"Ultralytics is not installed ({exc.name or exc}); install it with "
                                 f"{INSTALL_HINT}") from None
    return YOLO


def _names(value: Any) -> dict[int, str]:
    if isinstance(value, dict):
        return {int(k): str(v) for k, v in value.items()}
    return {i: str(n) for i, n in enumerate(value or [])}


class UltralyticsDetector:
    """A ``.pt`` checkpoint or an NCNN export folder, run by Ultralytics."""

    def __init__(self, path: str | Path, conf: float = 0.25, iou: float = 0.45, imgsz: int | None = None,
                 names: Any = None, max_det: int = 100, **_ignored: Any):
        self.path = Path(path)
        if not self.path.exists():
            raise DetectorError(f"YOLO model {self.path}: no such file")
        try:
            yolo = load_ultralytics()
        except UltralyticsMissing as exc:
            raise UltralyticsMissing(f"YOLO model {self.path}: .pt and NCNN models need Ultralytics: {exc}. "
                                     f"Or export the model to ONNX, which runs without torch.") from None
        try:
            self._model = yolo(str(self.path), task="detect")
        except Exception as exc:  # noqa: BLE001  (torch.load and Ultralytics raise many kinds)
            raise DetectorError(f"YOLO model {self.path}: Ultralytics cannot load it: {last_line(exc)}") from None
        self.conf, self.iou, self.imgsz, self.max_det = conf, iou, imgsz or 640, max_det
        self.names = parse_names(names, str(self.path)) or _names(getattr(self._model, "names", None))
        self.name = f"yolo:{self.path.name}"
        log.info("yolo.loaded", model=str(self.path), backend="ultralytics", classes=len(self.names))

    def detect(self, frame: np.ndarray) -> list[Detection]:
        check_frame(frame)  # Ultralytics reads numpy arrays as BGR, as OpenCV gives them
        result = self._model.predict(frame, conf=self.conf, iou=self.iou, imgsz=self.imgsz,
                                     max_det=self.max_det, verbose=False)[0]
        boxes = result.boxes
        xyxyn = boxes.xyxyn.cpu().numpy().astype(float)
        scores = boxes.conf.cpu().numpy().astype(float)
        classes = boxes.cls.cpu().numpy().astype(int)
        return [Detection(self.names.get(int(c), f"class{int(c)}"), float(s),
                          (float(b[0]), float(b[1]), float(b[2]), float(b[3])))
                for b, s, c in zip(xyxyn, scores, classes)]

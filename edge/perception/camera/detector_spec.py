"""A detector from its command-line spec (``--detector haar,hog`` or ``yolo:MODEL``): the one
place that knows every detector, so ``detectors.py`` stays the interface they all implement."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from edge.perception.camera.detectors import CombinedDetector, Detector, DetectorError
from edge.perception.camera.opencv_detectors import HaarFaceDetector, HogPersonDetector
from edge.perception.camera.yolo import OnnxYoloDetector

# models/ of the checkout (this file is edge/perception/camera/detector_spec.py)
DEFAULT_MODELS_DIR = Path(__file__).resolve().parents[3] / "models"

SPEC_HELP = "haar | hog | yolo:MODEL (.onnx, .pt or an NCNN folder), or several joined by commas (haar,hog)"


def make_detector(spec: str, models_dir: Path | None = None, **options: Any) -> Detector:
    """Build a detector from a CLI spec such as ``haar``, ``hog``, ``haar,hog`` or ``yolo:yolov8n.onnx``.
    ``options`` go to YOLO detectors (conf, iou, backend, names)."""
    parts = [p.strip() for p in spec.split(",") if p.strip()] if isinstance(spec, str) else []
    if not parts:
        raise DetectorError(f"empty detector spec {spec!r}; expected {SPEC_HELP}")
    built: list[Detector] = []
    for part in parts:
        kind, _, arg = part.partition(":")
        kind = kind.lower()
        if kind == "haar" and not arg:
            built.append(HaarFaceDetector())
        elif kind == "hog" and not arg:
            built.append(HogPersonDetector())
        elif kind == "yolo" and arg:
            built.append(make_yolo_detector(arg, models_dir=models_dir, **options))
        else:
            raise DetectorError(f"unknown detector {part!r}; expected {SPEC_HELP}")
    return built[0] if len(built) == 1 else CombinedDetector(built)


def resolve_model(model: str | Path, models_dir: Path | None = None) -> Path:
    """A model path as given, else under ``models/``; a DetectorError says where it looked."""
    path = Path(model).expanduser()
    if path.exists():
        return path
    tried = [path]
    if not path.is_absolute():
        candidate = (models_dir or DEFAULT_MODELS_DIR) / path
        if candidate.exists():
            return candidate
        tried.append(candidate)
    raise DetectorError(f"YOLO model {model!s} not found (looked at {', '.join(str(t) for t in tried)}); "
                        f"give a path to an .onnx, .pt or NCNN folder, or fetch one into models/")


def make_yolo_detector(model: str | Path, models_dir: Path | None = None, **options: Any):
    """``yolo:MODEL``: ``.onnx`` runs without torch; ``.pt`` and ``*_ncnn_model/`` need Ultralytics."""
    path = resolve_model(model, models_dir)
    if path.is_file() and path.suffix.lower() == ".onnx":
        return OnnxYoloDetector(path, **options)
    if (path.is_file() and path.suffix.lower() == ".pt") or (path.is_dir() and any(path.glob("*.param"))):
        from edge.perception.camera.ultralytics_backend import UltralyticsDetector  # numpy, torch

        options.pop("backend", None)
        return UltralyticsDetector(path, **options)
    raise DetectorError(f"YOLO model {path}: not an .onnx file, a .pt file or an NCNN export folder "
                        f"(a folder with model.ncnn.param)")

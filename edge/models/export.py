"""YOLO weights (``.pt``) to the formats a Pi or Jetson runs, through Ultralytics.

ONNX runs through onnxruntime without torch (``companion run camera --detector yolo:X.onnx``);
NCNN is the fastest on a Pi's ARM cores; ``engine`` is TensorRT on a Jetson (build it on
the Jetson itself: an engine is tied to its GPU and TensorRT version). Ultralytics (and torch)
are heavy, so they are optional: without them the weights still download and we say how to
export, here or on another machine.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable



class ExportUnavailable(RuntimeError):
    """Ultralytics is not installed here."""


class ExportError(RuntimeError):
    pass


def export_path(weights: Path, fmt: str) -> Path:
    """Where Ultralytics writes each export (beside the weights)."""
    if fmt == "onnx":
        return weights.with_suffix(".onnx")
    if fmt == "engine":
        return weights.with_suffix(".engine")
    return weights.parent / f"{weights.stem}_{fmt}_model"   # ncnn, openvino: folders


def export_present(weights: Path, fmt: str) -> bool:
    out = export_path(weights, fmt)
    return out.is_file() or (out.is_dir() and any(out.iterdir()))


def export_yolo(weights: Path, formats: list[str], *, force: bool = False, imgsz: int = 640,
                say: Callable[[str], None] = print) -> list[Path]:
    """Export ``weights`` to each format not already exported from these weights; return the outputs."""
    if not formats:
        return []
    from edge.perception.camera.ultralytics_backend import UltralyticsMissing, load_ultralytics  # numpy, torch

    try:
        yolo = load_ultralytics()
    except UltralyticsMissing as exc:
        raise ExportUnavailable(
            f"exporting {weights.name} to {', '.join(formats)} needs Ultralytics: {exc}; then rerun the fetch. "
            f"Or export on another machine (`yolo export model={weights.name} format=onnx`) and copy the "
            f"result to {weights.parent}") from None

    outputs = []
    for fmt in formats:
        out = export_path(weights, fmt)
        if not force and export_present(weights, fmt) and out.stat().st_mtime >= weights.stat().st_mtime:
            say(f"{weights.name}: {fmt} export already present at {out}")
            outputs.append(out)
            continue
        say(f"{weights.name}: exporting to {fmt} (this takes a minute or more on a Pi)")
        try:
            produced = yolo(str(weights)).export(format=fmt, imgsz=imgsz)
        except Exception as exc:  # noqa: BLE001  (Ultralytics raises many kinds; the sentence is what matters)
            hint = (f"; install it (pip install {exc.name}) and rerun"
                    if isinstance(exc, ModuleNotFoundError) and exc.name else "")
            raise ExportError(f"exporting {weights.name} to {fmt} failed: {type(exc).__name__}: {exc}{hint}") from exc
        produced_path = Path(str(produced)) if produced else out
        if not produced_path.exists():
            raise ExportError(f"exporting {weights.name} to {fmt} reported {produced!r}, which does not exist")
        say(f"{weights.name}: {fmt} export at {produced_path}")
        outputs.append(produced_path)
    return outputs

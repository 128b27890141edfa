"""One YOLO model in each format the camera node can run, timed on the same frames.

Builds YOLOv8n from Ultralytics' ``yolov8n.yaml`` (random weights: the cost of a forward pass
does not depend on what the weights learned), exports it through ``companion models``' export
step, then times ``detect`` per frame on vtest.avi for:

- ``pt``: the checkpoint through Ultralytics (torch);
- ``onnx/onnxruntime`` and ``onnx/opencv``: our ONNX path, no torch;
- ``ncnn``: the NCNN folder through Ultralytics (what docs/camera.md suggests for a Pi).

Figures: median and p90 milliseconds per frame after a warm-up, frames/s from the median.
Needs ``bash deploy/setup.sh --yolo``. Writes bench/results/yolo_formats.json.
Usage: python bench/yolo_formats.py [--frames 30] [--sizes 320,640] [--threads N]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.camera import first_frames  # noqa: E402  (vtest.avi, decoded beforehand)
from edge.models.export import export_yolo  # noqa: E402
from edge.perception.camera.ultralytics_backend import UltralyticsDetector, load_ultralytics  # noqa: E402
from edge.perception.camera.yolo import OnnxYoloDetector  # noqa: E402

def time_detector(detector, images: list, warmup: int = 3) -> dict[str, float]:
    for image in images[:warmup]:
        detector.detect(image)
    per_frame = []
    for image in images:
        started = time.perf_counter()
        detector.detect(image)
        per_frame.append((time.perf_counter() - started) * 1000)
    median = statistics.median(per_frame)
    return {"median_ms": round(median, 1), "p90_ms": round(sorted(per_frame)[int(0.9 * (len(per_frame) - 1))], 1),
            "fps": round(1000 / median, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=30)
    parser.add_argument("--sizes", default="320,640")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    args = parser.parse_args()
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    images = first_frames(args.frames)
    results = {"frames": len(images), "frame_size": list(images[0].shape[1::-1]), "torch": torch.__version__,
               "torch_threads": torch.get_num_threads(), "sizes": {}}
    with tempfile.TemporaryDirectory() as tmp:
        torch.manual_seed(0)
        weights = Path(tmp) / "yolov8n.pt"
        load_ultralytics()("yolov8n.yaml").save(str(weights))
        for size in (int(s) for s in args.sizes.split(",")):
            started = time.perf_counter()
            for old in Path(tmp).glob("yolov8n[._]*"):   # exports are per size: drop the last size's
                if old.is_dir():
                    shutil.rmtree(old)
                elif old != weights:
                    old.unlink()
            onnx, ncnn = export_yolo(weights, ["onnx", "ncnn"], imgsz=size, say=lambda _: None)
            export_s = time.perf_counter() - started
            row = {
                "pt": time_detector(UltralyticsDetector(weights, imgsz=size), images),
                "onnx/onnxruntime": time_detector(OnnxYoloDetector(onnx, backend="onnxruntime"), images),
                "onnx/opencv": time_detector(OnnxYoloDetector(onnx, backend="opencv"), images),
                "ncnn": time_detector(UltralyticsDetector(ncnn, imgsz=size), images),
                "export_s": round(export_s, 1),
            }
            results["sizes"][size] = row
            print(f"imgsz {size} (exports {export_s:.1f} s):")
            for name, figures in row.items():
                if isinstance(figures, dict):
                    print(f"  {name:18} {figures['median_ms']:7.1f} ms  p90 {figures['p90_ms']:7.1f} ms"
                          f"  {figures['fps']:6.1f} fps")
    out = REPO / "bench" / "results" / "yolo_formats.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

"""Camera pipeline throughput against the bare detector, on the same frames, in the same run.

For each detector:
- bare: ``detector.detect`` over the first N frames of vtest.avi, decoded beforehand;
- pipeline: the camera node on the same N frames — capture thread decoding the video in
  lockstep, the detector, the scene policy (thumbnail diff, debounce), face/person tracking,
  and perceptions and ``look`` actions published on a real mosquitto.
Two measures of each: wall-clock frames/s (best of the rounds, since on a shared machine
other work only ever slows a run down) and CPU time per frame (this process, all threads;
median of the rounds), which neighbours barely disturb. Rounds alternate bare and pipeline.
The target is a pipeline overhead of at most 5 % of the detector's own cost, judged on CPU
time per frame; the wall-clock ratio is printed beside it. A detector that finds nothing and
costs nothing ("none") shows the pipeline's own ceiling.

Prints the figures and writes bench/results/camera.json.
Usage: python bench/camera.py [--frames 30] [--rounds 3] [--detectors haar,hog,haar+hog]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import cv2  # noqa: E402

from edge.runtime.broker import LocalBroker  # noqa: E402
from edge.runtime.bus import Bus  # noqa: E402
from edge.perception.camera.capture import Camera, CaptureConfig  # noqa: E402
from edge.perception.camera.node import CameraNode  # noqa: E402
from edge.perception.camera.detector_spec import make_detector  # noqa: E402
from edge.perception.camera.scene import ScenePolicy  # noqa: E402
from edge.perception.camera.tracking import Tracker  # noqa: E402

VTEST = Path("/usr/share/doc/opencv-doc/examples/data/vtest.avi")
TARGET_PCT = 5.0


class NoDetector:
    name = "none"

    def detect(self, frame):
        return []


class StopAfter:
    """Ends the node's run after N frames; the detector inside is untouched."""

    def __init__(self, inner, frames: int, stop: threading.Event):
        self.inner, self.name, self.left, self.stop = inner, inner.name, frames, stop

    def detect(self, frame):
        found = self.inner.detect(frame)
        self.left -= 1
        if self.left <= 0:
            self.stop.set()
        return found


def first_frames(n: int) -> list:
    cap = cv2.VideoCapture(str(VTEST))
    frames = []
    while len(frames) < n:
        ok, frame = cap.read()
        if not ok:
            break
        frames.append(frame)
    cap.release()
    return frames


def bare_run(detector, frames: list) -> tuple[float, float]:
    """(frames/s, CPU ms per frame) of the detector alone."""
    began, cpu = time.perf_counter(), time.process_time()
    for frame in frames:
        detector.detect(frame)
    return len(frames) / (time.perf_counter() - began), (time.process_time() - cpu) / len(frames) * 1000


def pipeline_run(detector, frames: int, broker: LocalBroker) -> tuple[float, float, int]:
    """(frames/s, CPU ms per frame, messages published) of the whole camera node."""
    cpu = time.process_time()
    stop = threading.Event()
    bus = Bus("camera-bench", "camera", broker.address).connect()
    camera = Camera(VTEST, CaptureConfig(realtime=False)).start()
    node = CameraNode(bus, camera, StopAfter(detector, frames, stop), ScenePolicy(), tracker=Tracker())
    try:
        node.run(stop)
    finally:
        camera.stop()
        bus.close()
    assert node.frames == frames, (node.frames, frames)
    cpu_ms = (time.process_time() - cpu) / frames * 1000
    return node.frames / node.elapsed_s, cpu_ms, len(node.published) + node.looks


def figures(bare: list[tuple[float, float]], piped: list[tuple[float, float]], messages: int,
            judge: bool) -> dict:
    b_fps, p_fps = max(f for f, _ in bare), max(f for f, _ in piped)
    b_cpu, p_cpu = statistics.median(c for _, c in bare), statistics.median(c for _, c in piped)
    row = {"bare_cpu_ms": round(b_cpu, 3), "pipeline_cpu_ms": round(p_cpu, 3),
           "overhead_cpu_pct": round((p_cpu / b_cpu - 1) * 100, 2) if judge else None,
           "overhead_cpu_ms_per_frame": round(p_cpu - b_cpu, 3),
           "bare_fps": round(b_fps, 2), "pipeline_fps": round(p_fps, 2),
           "overhead_wall_pct": round((b_fps / p_fps - 1) * 100, 2) if judge else None,
           "messages_published": messages,
           "runs": {"bare": [[round(f, 2), round(c, 2)] for f, c in bare],
                    "pipeline": [[round(f, 2), round(c, 2)] for f, c in piped]}}
    if judge:
        row["within_target"] = row["overhead_cpu_pct"] <= TARGET_PCT
    return row


def line(spec: str, row: dict) -> str:
    if row["overhead_cpu_pct"] is None:  # the ceiling: no detector cost to compare with
        return (f"{spec:>10}: pipeline alone {row['overhead_cpu_ms_per_frame']:.2f} CPU ms/frame, "
                f"{row['pipeline_fps']:.0f} frames/s at best")
    return (f"{spec:>10}: CPU/frame bare {row['bare_cpu_ms']:7.2f} ms, pipeline {row['pipeline_cpu_ms']:7.2f} ms, "
            f"overhead {row['overhead_cpu_pct']:+5.2f} % {'ok' if row['within_target'] else 'OVER'} "
            f"(target <= {TARGET_PCT:g} %)  |  wall, best: bare {row['bare_fps']:6.2f} fps, "
            f"pipeline {row['pipeline_fps']:6.2f} fps ({row['overhead_wall_pct']:+.2f} %)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--detectors", default="haar,hog,haar+hog,none",
                        help="comma-separated; '+' joins detectors into one (haar+hog)")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "camera.json")
    args = parser.parse_args()
    if not VTEST.is_file():
        print(f"{VTEST} missing: apt-get install opencv-doc", file=sys.stderr)
        return 2
    frames = first_frames(args.frames)
    print(f"{len(frames)} frames of {VTEST.name} ({frames[0].shape[1]}x{frames[0].shape[0]}), "
          f"{args.rounds} rounds, {os.cpu_count()} CPUs")
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        broker = LocalBroker(data_dir=Path(tmp)).start()
        try:
            for spec in args.detectors.split(","):
                detector = NoDetector() if spec == "none" else make_detector(spec.replace("+", ","))
                bare, piped, messages = [], [], 0
                for _ in range(args.rounds):
                    bare.append(bare_run(detector, frames))
                    fps, cpu_ms, messages = pipeline_run(detector, len(frames), broker)
                    piped.append((fps, cpu_ms))
                results[spec] = row = figures(bare, piped, messages, judge=spec != "none")
                print(line(spec, row))
        finally:
            broker.stop()
    report = {"source": VTEST.name, "frames": len(frames), "rounds": args.rounds, "cpus": os.cpu_count(),
              "target_overhead_pct": TARGET_PCT, "detectors": results}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out.relative_to(REPO) if args.out.is_relative_to(REPO) else args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`companion run camera` options, through the real command line on a real broker."""

from __future__ import annotations

import argparse
import base64
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from edge.perception.camera.options import camera_settings, size_arg
from edge.perception.camera.detectors import DetectorError
from edge.perception.camera.yolo import OnnxYoloDetector
from camera_cli_run import run_camera_cli, still_folder
from .test_detectors import build_yolo_stub

DATA = Path("/usr/share/doc/opencv-doc/examples/data")
needs_samples = pytest.mark.skipif(not (DATA / "messi5.jpg").is_file(),
                                   reason="opencv-doc samples missing (apt-get install opencv-doc)")


def companion(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "edge.cli", *args], capture_output=True, text=True, timeout=timeout)


def test_sizes_parse_and_bad_ones_are_named():
    assert size_arg("640x480") == (640, 480) and size_arg("1280X720") == (1280, 720)
    for bad in ("640", "640x", "x480", "axb", "0x0", "640x-1", "99999x10"):
        with pytest.raises(argparse.ArgumentTypeError, match="is not WIDTHxHEIGHT"):
            size_arg(bad)


@pytest.mark.parametrize("args,message", [
    (["--size", "640"], "argument --size: '640' is not WIDTHxHEIGHT"),
    (["--fps", "0"], "argument --fps: '0' is not a number from 0.1 to 240"),
    (["--conf", "1.5"], "argument --conf: '1.5' is not a number from 0.01 to 1"),
    (["--imgsz", "abc"], "argument --imgsz: 'abc' is not a number from 32 to 2048"),
])
def test_a_bad_camera_option_stops_before_anything_starts(args, message):
    done = companion("run", "camera", "--source", "0", "--broker", "127.0.0.1:1", *args)
    assert done.returncode == 2 and message in done.stderr


def test_options_become_capture_policy_and_detector_settings():
    args = argparse.Namespace(size=(320, 240), fps=2.0, loop=True, conf=0.6, imgsz=320, send_image=True)
    got = camera_settings(args)
    capture = got["capture"]
    assert (capture.width, capture.height, capture.fps, capture.loop) == (320, 240, 2.0, True)
    assert got["policy"].min_confidence == 0.6 and got["detector_options"] == {"conf": 0.6, "imgsz": 320}
    assert got["options"].send_image is True
    plain = camera_settings(argparse.Namespace())
    assert plain["detector_options"] == {} and plain["capture"].width is None and plain["policy"].min_confidence == 0.5


def test_a_fixed_size_onnx_refuses_another_imgsz(tmp_path):
    stub = build_yolo_stub(tmp_path / "stub.onnx")        # fixed 640x640 input
    assert OnnxYoloDetector(stub, imgsz=640).input_size == (640, 640)
    with pytest.raises(DetectorError, match=r"takes 640x640 images, not 320x320: leave imgsz out"):
        OnnxYoloDetector(stub, imgsz=320)


@needs_samples
def test_size_and_send_image_reach_the_published_frame(broker, tmp_path):
    folder = still_folder(tmp_path / "desk", DATA / "messi5.jpg", 6)   # 1.2 s at 5 fps: past the 0.3 s debounce
    run = run_camera_cli(broker, "--source", str(folder), "--detector", "haar", "--size", "640x400",
                         "--fps", "5", "--send-image")
    seen, states = run.perceptions, run.statuses
    import cv2

    assert any(s.extra.get("camera") == "open" for s in states)
    image = next(p for p in seen if p.format == "image")
    picture = cv2.imdecode(np.frombuffer(base64.b64decode(image.body), np.uint8), cv2.IMREAD_COLOR)
    assert picture.shape == (400, 640, 3)       # resized to --size (messi5.jpg is 548x342)
    assert next(p for p in seen if p.format == "object").body["counts"] == {"face": 1}

"""A real Ultralytics YOLOv8 checkpoint, its ONNX and NCNN exports, and our detectors on all three.

The checkpoint is built here from Ultralytics' own ``yolov8n.yaml`` (no download) with seeded
random weights, re-drawn so that signals survive the depth of the network (Kaiming normal; the
default draw fades to nothing by the head) and with the class branch scaled so confidences
spread over 0.65..0.9 and depend on the image. The weights mean nothing, but every format must agree on them: our ONNX decoder
(letterbox, head layout, NMS, names from the export's metadata) must find the same boxes as
Ultralytics' own pipeline on the same file, and the NCNN folder the same as the ``.pt``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from edge.models.export import ExportUnavailable, export_yolo
from edge.perception.camera.detector_spec import make_detector
from edge.perception.camera.detectors import DetectorError
from edge.perception.camera.ultralytics_backend import UltralyticsDetector, UltralyticsMissing
from edge.perception.camera.yolo import OnnxYoloDetector

pytest.importorskip("ultralytics", reason="Ultralytics is not installed (bash deploy/setup.sh --yolo)")

DATA = Path("/usr/share/doc/opencv-doc/examples/data")
pytestmark = pytest.mark.skipif(not (DATA / "messi5.jpg").is_file(),
                                reason="opencv-doc samples missing (apt-get install opencv-doc)")
NAMES = ["person", "bicycle", "car", "cat", "dog"] + [f"thing{i}" for i in range(5, 80)]
SIZE = 320          # export size: small keeps the exports quick
CONF = 0.8


def frame(width: int, height: int) -> np.ndarray:
    import cv2

    return cv2.resize(cv2.imread(str(DATA / "messi5.jpg")), (width, height), interpolation=cv2.INTER_AREA)


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> dict[str, Path]:
    """planted.pt and its ONNX and NCNN exports, made once through our own export step."""
    import torch
    from edge.perception.camera.ultralytics_backend import load_ultralytics

    folder = tmp_path_factory.mktemp("yolo")
    torch.manual_seed(0)
    model = load_ultralytics()("yolov8n.yaml")
    head = model.model.model[-1]
    for layer in model.model.modules():
        if isinstance(layer, torch.nn.Conv2d) and layer is not head.dfl.conv:   # DFL's conv is fixed
            torch.nn.init.kaiming_normal_(layer.weight, nonlinearity="relu")
    for branch in head.cv3:                         # the class branch of each detection scale
        torch.nn.init.zeros_(branch[-1].bias)
        branch[-1].weight.data *= 50
    model.model.names = dict(enumerate(NAMES))
    weights = folder / "planted.pt"
    model.save(str(weights))
    said: list[str] = []
    onnx, ncnn = export_yolo(weights, ["onnx", "ncnn"], imgsz=SIZE, say=said.append)
    assert any("exporting to onnx" in line for line in said) and any("exporting to ncnn" in line for line in said)
    return {"pt": weights, "onnx": onnx, "ncnn": ncnn}


def same(a, b, box_tol: float, conf_tol: float) -> None:
    """Two detection lists name the same things at the same places, best first."""
    assert len(a) == len(b) > 0
    for x, y in zip(a, b):
        assert x.label == y.label
        assert abs(x.confidence - y.confidence) < conf_tol, (x, y)
        assert np.allclose(x.box, y.box, atol=box_tol), (x, y)


def test_pt_checkpoint_detects_through_ultralytics_with_its_names(exported):
    detector = make_detector(f"yolo:{exported['pt']}", conf=CONF, imgsz=SIZE, max_det=20)
    assert isinstance(detector, UltralyticsDetector) and detector.name == "yolo:planted.pt"
    found = detector.detect(frame(SIZE, SIZE))
    assert 0 < len(found) <= 20
    assert {d.label for d in found} <= set(NAMES)
    assert all(d.confidence >= CONF for d in found)
    assert all(0 <= v <= 1 for d in found for v in d.box) and all(d.box[0] < d.box[2] for d in found)
    assert [d.confidence for d in found] == sorted((d.confidence for d in found), reverse=True)


@pytest.mark.parametrize("backend", ["onnxruntime", "opencv"])
def test_our_onnx_decoder_finds_what_ultralytics_finds_in_the_pt(exported, backend):
    """A square frame needs no padding in either pipeline, so the .pt and the ONNX see the same input."""
    image = frame(SIZE, SIZE)
    ours = OnnxYoloDetector(exported["onnx"], backend=backend, conf=CONF, max_det=20)
    assert ours.input_size == (SIZE, SIZE)
    assert ours.names == dict(enumerate(NAMES))        # from the metadata Ultralytics wrote
    reference = UltralyticsDetector(exported["pt"], conf=CONF, imgsz=SIZE, max_det=20)
    same(ours.detect(image), reference.detect(image), box_tol=2e-3, conf_tol=2e-3)


def test_our_letterbox_matches_ultralytics_on_a_wide_frame(exported):
    """Ultralytics running the same ONNX file pads a 4:3 frame as we do."""
    image = frame(640, 480)
    ours = OnnxYoloDetector(exported["onnx"], backend="onnxruntime", conf=CONF, max_det=20)
    theirs = UltralyticsDetector(exported["onnx"], conf=CONF, imgsz=SIZE, max_det=20)
    same(ours.detect(image), theirs.detect(image), box_tol=4e-3, conf_tol=5e-3)


def test_ncnn_folder_detects_like_the_pt(exported):
    assert (exported["ncnn"] / "model.ncnn.param").is_file() and (exported["ncnn"] / "model.ncnn.bin").is_file()
    image = frame(SIZE, SIZE)
    ncnn = make_detector(f"yolo:{exported['ncnn']}", conf=CONF, imgsz=SIZE, max_det=20)
    assert isinstance(ncnn, UltralyticsDetector) and ncnn.names == dict(enumerate(NAMES))
    reference = UltralyticsDetector(exported["pt"], conf=CONF, imgsz=SIZE, max_det=20)
    same(ncnn.detect(image), reference.detect(image), box_tol=5e-3, conf_tol=5e-3)


def test_a_second_export_reuses_what_is_there(exported):
    said: list[str] = []
    again = export_yolo(exported["pt"], ["onnx"], imgsz=SIZE, say=said.append)
    assert again == [exported["onnx"]] and "already present" in said[0]


def test_a_corrupt_checkpoint_is_a_clear_error(tmp_path):
    (tmp_path / "broken.pt").write_bytes(b"\x80\x02not really a checkpoint")
    with pytest.raises(DetectorError, match=r"broken\.pt: Ultralytics cannot load it"):
        make_detector(f"yolo:{tmp_path / 'broken.pt'}")


def test_without_ultralytics_the_error_names_the_install_command(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ultralytics", None)   # what a venv without it gives
    (tmp_path / "yolov8n.pt").write_bytes(b"\x80\x02")
    with pytest.raises(UltralyticsMissing, match=r"yolov8n\.pt: .*Ultralytics is not installed.*setup\.sh --yolo"):
        make_detector("yolo:yolov8n.pt", models_dir=tmp_path)
    with pytest.raises(ExportUnavailable, match=r"yolov8n\.pt to onnx needs Ultralytics.*setup\.sh --yolo"):
        export_yolo(tmp_path / "yolov8n.pt", ["onnx"])


def test_camera_node_on_the_pt_publishes_what_the_model_sees_once(exported, broker, tmp_path):
    """`companion run camera --detector yolo:planted.pt` over an unchanging scene: one vision
    perception naming the model's classes, then quiet, then offline when the folder ends."""
    import cv2

    from camera_cli_run import run_camera_cli, still_folder

    folder = still_folder(tmp_path / "still", DATA / "messi5.jpg", 8)
    expected = {d.label for d in UltralyticsDetector(exported["pt"]).detect(cv2.imread(str(DATA / "messi5.jpg")))}
    seen = run_camera_cli(broker, "--source", str(folder), "--detector", f"yolo:{exported['pt']}").perceptions
    assert len(seen) == 1, [p.body for p in seen]
    vision = seen[0]
    assert (vision.title, vision.format, vision.sender) == ("vision", "object", "camera-still")
    assert set(vision.body["counts"]) == expected and expected <= set(NAMES)
    assert {c["change"] for c in vision.body["changes"]} == {"appeared"}


def test_models_fetch_downloads_the_pt_and_exports_it(exported, tmp_path):
    """`companion models fetch` on a YOLO entry: the .pt from an HTTP server, checked against its
    sha256, then exported to ONNX and NCNN beside it; `models list` then says so."""
    import hashlib
    import subprocess

    from file_server import Blob, FileServer

    weights = exported["pt"].read_bytes()
    with FileServer() as server:
        server.blobs["/planted.pt"] = Blob(weights)
        manifest = tmp_path / "manifest.toml"
        manifest.write_text(f'''
[[model]]
name = "planted"
kind = "yolo"
license = "AGPL-3.0"
used_by = "tests"
exports = ["onnx", "ncnn"]
[[model.files]]
path = "yolo/planted.pt"
url = "{server.url('/planted.pt')}"
size = {len(weights)}
sha256 = "{hashlib.sha256(weights).hexdigest()}"
''')
        dest = tmp_path / "models"
        common = ["--manifest", str(manifest), "--dest", str(dest)]
        done = subprocess.run([sys.executable, "-m", "edge.cli", "models", "fetch", "planted", *common],
                              capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout[-1500:] + done.stderr[-1500:]
    yolo = dest / "yolo"
    assert (yolo / "planted.pt").read_bytes() == weights
    assert (yolo / "planted.onnx").is_file() and (yolo / "planted_ncnn_model" / "model.ncnn.param").is_file()
    listed = subprocess.run([sys.executable, "-m", "edge.cli", "models", "list", *common],
                            capture_output=True, text=True, timeout=60)
    assert "exports: onnx yes, ncnn yes" in listed.stdout, listed.stdout
    onnx = make_detector(f"yolo:{yolo / 'planted.onnx'}")
    assert isinstance(onnx, OnnxYoloDetector) and onnx.input_size == (640, 640) and onnx.names == dict(enumerate(NAMES))

"""Detectors on real images (opencv-doc samples) and the YOLO ONNX decode path on a model built here."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")
onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from edge.perception.camera.detector_spec import make_detector  # noqa: E402
from edge.perception.camera.detectors import (  # noqa: E402
    CombinedDetector, Detection, DetectorError, nms)
from edge.perception.camera.opencv_detectors import HaarFaceDetector, HogPersonDetector  # noqa: E402
from edge.perception.camera.yolo import Letterbox, OnnxYoloDetector, decode_yolo, letterbox  # noqa: E402

DATA = Path("/usr/share/doc/opencv-doc/examples/data")
needs_samples = pytest.mark.skipif(not (DATA / "messi5.jpg").is_file(),
                                   reason="opencv-doc samples missing (apt-get install opencv-doc)")


def image(name: str) -> np.ndarray:
    frame = cv2.imread(str(DATA / name))
    assert frame is not None, name
    return frame


# -- OpenCV's bundled detectors on real pictures ------------------------------------------

@needs_samples
def test_haar_finds_messis_face_and_no_face_in_an_empty_room():
    haar = HaarFaceDetector()
    faces = haar.detect(image("messi5.jpg"))
    assert [d.label for d in faces] == ["face"]
    cx, cy = faces[0].center  # his face is at about (245, 112) of the 548x342 picture
    assert abs(cx - 245 / 548) < 0.03 and abs(cy - 112 / 342) < 0.03
    assert 0.5 < faces[0].confidence <= 1.0
    assert haar.detect(image("home.jpg")) == []
    assert haar.detect(image("fruits.jpg")) == []


@needs_samples
def test_hog_finds_the_players_and_nobody_in_an_empty_room():
    hog = HogPersonDetector()
    people = hog.detect(image("basketball1.png"))
    assert people and {d.label for d in people} == {"person"}
    # the player on the left fills most of the picture's height
    left = min(people, key=lambda d: d.center[0])
    assert left.center[0] < 0.3 and left.box[3] - left.box[1] > 0.6
    for d in people:
        assert all(0.0 <= v <= 1.0 for v in d.box) and d.box[0] < d.box[2] and d.box[1] < d.box[3]
    assert hog.detect(image("home.jpg")) == []


@needs_samples
def test_combined_spec_runs_both_and_max_side_keeps_boxes_normalized():
    both = make_detector("haar,hog")
    assert isinstance(both, CombinedDetector) and both.name == "haar,hog"
    labels = [d.label for d in both.detect(image("basketball1.png"))]
    assert "face" in labels and "person" in labels
    # twice the size, detected at max_side = the original's size: the same single face, same place
    big = cv2.resize(image("messi5.jpg"), (1096, 684))
    small = HaarFaceDetector(max_side=548).detect(big)
    assert len(small) == 1 and abs(small[0].center[0] - 245 / 548) < 0.03


def test_bad_frames_and_specs_are_named():
    haar = HaarFaceDetector()
    with pytest.raises(DetectorError, match="H x W x 3 uint8"):
        haar.detect(np.zeros((10, 10), np.uint8))
    with pytest.raises(DetectorError, match="numpy image, not NoneType"):
        haar.detect(None)  # type: ignore[arg-type]
    with pytest.raises(DetectorError, match="unknown detector 'yolov8'.*haar \\| hog"):
        make_detector("yolov8")
    with pytest.raises(DetectorError, match="empty detector spec"):
        make_detector(" , ")
    with pytest.raises(DetectorError, match="no such file"):
        HaarFaceDetector(cascade="/nonexistent/cascade.xml")


def test_wire_form_is_the_centre_in_the_view_frame_and_the_size():
    d = Detection("person", 0.876, (0.1, 0.2, 0.3, 0.6))   # left of centre, a little above it
    assert d.to_dict() == {"label": "person", "confidence": 0.88, "x": -0.6, "y": 0.2, "w": 0.2, "h": 0.4}
    assert d.area == pytest.approx(0.08)


def test_nms_keeps_the_best_of_overlapping_boxes_deterministically():
    boxes = np.array([[0, 0, 10, 10], [1, 0, 11, 10], [20, 20, 30, 30], [0, 0, 10, 10]], float)
    assert nms(boxes, np.array([0.5, 0.9, 0.7, 0.9]), 0.5) == [1, 2]
    # 0 and 3 are the same box with the same score: the lower index wins, whatever the sort did
    assert nms(boxes, np.array([0.9, 0.9, 0.1, 0.9]), 0.95) == [0, 1, 2]
    assert nms(boxes[[3, 1, 2, 0]], np.array([0.9, 0.9, 0.1, 0.9]), 0.95) == [0, 1, 2]


# -- YOLO: a model built offline with planted boxes, decoded exactly -------------------------

NAMES = ["person", "cup", "dog"]
# cx, cy, w, h in the model's 640x640 input, then one score per class
PLANTED = [
    ([320, 320, 64, 128], {"person": 0.9}),   # A: kept
    ([330, 320, 64, 128], {"person": 0.6}),   # B: overlaps A (IoU 0.73), same class: suppressed
    ([330, 320, 64, 128], {"cup": 0.7}),      # C: same place, other class: kept
    ([100, 200, 40, 40], {"dog": 0.2}),       # D: below the 0.25 threshold
    ([600, 480, 80, 40], {"dog": 0.8}),       # E: kept, in the bottom-right corner
    ([40, 130, 40, 40], {"person": 0.5}),     # F: reaches into the letterbox's grey band
]
RED_BOX = ([320, 100, 20, 20], "cup")       # G: its score is the mean of the input's red channel


def build_yolo_stub(path: Path, metadata: bool = True) -> Path:
    """A YOLOv8-shaped ONNX graph (1, 4+nc, N): constant planted boxes plus one box whose
    score is computed from the input (1x1 conv picking channel 0, then a global mean)."""
    nc, n = len(NAMES), len(PLANTED) + 1
    planted = np.zeros((1, 4 + nc, n), np.float32)
    for i, (box, scores) in enumerate(PLANTED):
        planted[0, :4, i] = box
        for label, score in scores.items():
            planted[0, 4 + NAMES.index(label), i] = score
    mask = np.zeros_like(planted)
    planted[0, :4, n - 1] = RED_BOX[0]
    mask[0, 4 + NAMES.index(RED_BOX[1]), n - 1] = 1.0
    pick_red = np.zeros((1, 3, 1, 1), np.float32)
    pick_red[0, 0] = 1.0
    graph = helper.make_graph(
        [helper.make_node("Conv", ["images", "pick_red"], ["red"]),
         helper.make_node("GlobalAveragePool", ["red"], ["mean"]),
         helper.make_node("Reshape", ["mean", "shape"], ["mean3"]),
         helper.make_node("Mul", ["mean3", "mask"], ["live"]),
         helper.make_node("Add", ["live", "planted"], ["output0"])],
        "yolo_stub",
        [helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, 640, 640])],
        [helper.make_tensor_value_info("output0", TensorProto.FLOAT, [1, 4 + nc, n])],
        [numpy_helper.from_array(pick_red, "pick_red"), numpy_helper.from_array(np.array([1, 1, 1], np.int64), "shape"),
         numpy_helper.from_array(mask, "mask"), numpy_helper.from_array(planted, "planted")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    if metadata:  # what Ultralytics writes into its exports
        helper.set_model_props(model, {"names": str(dict(enumerate(NAMES))), "imgsz": "[640, 640]"})
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


BACKENDS = ["onnxruntime", "opencv"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_planted_boxes_decode_exactly_through_the_letterbox(tmp_path, backend):
    detector = OnnxYoloDetector(build_yolo_stub(tmp_path / "stub.onnx"), backend=backend)
    assert detector.input_size == (640, 640) and detector.names == dict(enumerate(NAMES))
    # 1280x720 → scale 0.5 into 640x360, centred: 140 px of grey above and below
    found = detector.detect(np.zeros((720, 1280, 3), np.uint8))
    expected = [
        ("person", 0.9, (576 / 1280, 232 / 720, 704 / 1280, 488 / 720)),   # A
        ("dog", 0.8, (1120 / 1280, 640 / 720, 1.0, 1.0)),                 # E
        ("cup", 0.7, (596 / 1280, 232 / 720, 724 / 1280, 488 / 720)),      # C
        ("person", 0.5, (40 / 1280, 0.0, 120 / 1280, 20 / 720)),           # F, clamped at the top
    ]
    # G's score is the red mean: the black frame gives only the grey bands', 0.4375 * 114/255 < 0.25
    assert [d.label for d in found] == [e[0] for e in expected]
    for d, (label, conf, box) in zip(found, expected):
        assert d.confidence == pytest.approx(conf, abs=1e-6)
        assert d.box == pytest.approx(box, abs=1e-6), label


@pytest.mark.parametrize("backend", BACKENDS)
def test_input_is_rgb_and_scaled_to_one(tmp_path, backend):
    detector = OnnxYoloDetector(build_yolo_stub(tmp_path / "stub.onnx"), backend=backend, conf=0.95)
    red = np.zeros((640, 640, 3), np.uint8)
    red[:, :, 2] = 255  # BGR: red is the last channel
    found = detector.detect(red)
    assert [(d.label, round(d.confidence, 5)) for d in found] == [("cup", 1.0)]
    assert found[0].box == pytest.approx((310 / 640, 90 / 640, 330 / 640, 110 / 640), abs=1e-6)
    blue = np.zeros((640, 640, 3), np.uint8)
    blue[:, :, 0] = 255
    assert detector.detect(blue) == []


def test_names_without_metadata_come_from_the_option_or_default(tmp_path):
    path = build_yolo_stub(tmp_path / "bare.onnx", metadata=False)
    assert OnnxYoloDetector(path).detect(np.zeros((640, 640, 3), np.uint8))[0].label == "class0"
    names = tmp_path / "names.txt"
    names.write_text("human\nmug\nhound\n")
    labels = {d.label for d in OnnxYoloDetector(path, names=names).detect(np.zeros((640, 640, 3), np.uint8))}
    assert labels == {"human", "mug", "hound"}


def test_end_to_end_layout_and_transposed_heads_decode():
    fit = Letterbox(scale=0.5, pad_x=0, pad_y=140, width=1280, height=720)
    rows = np.zeros((1, 300, 6), np.float32)
    rows[0, 0] = [288, 256, 352, 384, 0.9, 2]
    rows[0, 1] = [0, 0, 10, 10, 0.1, 0]
    found = decode_yolo(rows, fit, NAMES)
    assert [(d.label, round(d.confidence, 3)) for d in found] == [("dog", 0.9)]
    assert found[0].box == pytest.approx((576 / 1280, 232 / 720, 704 / 1280, 488 / 720))
    head = np.zeros((1, 7, 50), np.float32)
    head[0, :, 3] = [320, 320, 64, 128, 0, 0.8, 0]
    by_rows = decode_yolo(head.transpose(0, 2, 1), fit, NAMES)
    assert decode_yolo(head, fit, NAMES) == by_rows and [d.label for d in by_rows] == ["cup"]
    with pytest.raises(DetectorError, match="not \\(1, 4\\+classes, N\\)"):
        decode_yolo(np.zeros((2, 3, 4, 5)), fit, NAMES)


def test_letterbox_centres_and_pads_with_grey():
    canvas, fit = letterbox(np.full((100, 400, 3), 7, np.uint8), (640, 640))
    assert fit == Letterbox(scale=1.6, pad_x=0, pad_y=240, width=400, height=100)
    assert canvas[0, 0].tolist() == [114, 114, 114] and canvas[320, 320].tolist() == [7, 7, 7]


def test_broken_or_missing_models_are_clear_errors(tmp_path):
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"this is not a protobuf")
    with pytest.raises(DetectorError, match="broken.onnx: onnxruntime cannot load it"):
        OnnxYoloDetector(broken, backend="onnxruntime")
    with pytest.raises(DetectorError, match="broken.onnx: OpenCV DNN cannot load it"):
        OnnxYoloDetector(broken, backend="opencv")
    with pytest.raises(DetectorError, match="yolov8n.onnx not found \\(looked at"):
        make_detector("yolo:yolov8n.onnx", models_dir=tmp_path)
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(DetectorError, match="not an .onnx file, a .pt file or an NCNN export folder"):
        make_detector(f"yolo:{tmp_path / 'notes.txt'}")
    with pytest.raises(DetectorError, match="unknown ONNX backend 'tensorrt'"):
        OnnxYoloDetector(build_yolo_stub(tmp_path / "ok.onnx"), backend="tensorrt")


def test_a_yolo_model_without_a_folder_is_looked_for_in_the_checkouts_models_dir():
    from repo_paths import REPO
    with pytest.raises(DetectorError) as caught:
        make_detector("yolo:no-such-model.onnx")
    assert str(REPO / "models" / "no-such-model.onnx") in str(caught.value)


def test_yolo_spec_finds_models_in_the_models_dir(tmp_path):
    build_yolo_stub(tmp_path / "stub.onnx")
    detector = make_detector("yolo:stub.onnx", models_dir=tmp_path, conf=0.5, backend="opencv")
    assert isinstance(detector, OnnxYoloDetector) and detector.backend == "opencv" and detector.conf == 0.5


def test_coco_names_metadata_longer_than_a_file_name_is_parsed():
    from edge.perception.camera.yolo import parse_names
    names = {i: f"class_number_{i}" for i in range(80)}
    parsed = parse_names(str(names), "model.onnx")
    assert parsed == names and len(str(names)) > 255

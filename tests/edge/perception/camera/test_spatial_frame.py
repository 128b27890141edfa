"""One spatial frame for the whole stack (docs/protocol.md "Spatial frame"): what the camera
publishes for a person on the robot's left is a negative x, and copying it into ``look`` turns
the head left, for the camera node, the tracker, the shipped companions, the kinematics and the demo."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("cv2")

from body_drivers.body_types import PanTilt  # noqa: E402
from body_drivers.kinematics import plan  # noqa: E402
from edge.demo import DEFAULT_SCENARIO  # noqa: E402
from edge.perception.camera.detectors import Detection  # noqa: E402
from edge.perception.camera.tracking import Tracker  # noqa: E402
from edge.perception.camera.view_frame import Z_MAX_M, Z_MIN_M, box_in_view  # noqa: E402
from edge.protocol.companion import load_companion, validate_params  # noqa: E402
from vision_frames import (camera_perception, needs_vtest, person_on_the_left,  # noqa: E402
                           person_on_the_left_perception, person_on_the_right)
from repo_paths import REPO

COMPANIONS = sorted((REPO / "companions").glob("*.json"))
COMPANIONS = [p for p in COMPANIONS if p.name != "schema.json"]
LOOKING = [p for p in COMPANIONS if load_companion(p).action("look") is not None]   # the ones that can look
CAMERA_KEYS = {"summary", "changes", "counts", "objects", "frame"}
OBJECT_KEYS = {"label", "confidence", "x", "y", "w", "h"}


def _pan(x: float, y: float, z: float = 1.0) -> float:
    return plan("look", PanTilt("pan", "tilt"), {"x": x, "y": y, "z": z}, {})[0]["pan"]


# -- the wire form --------------------------------------------------------------------------

@pytest.mark.parametrize("box, where", [
    ((0.0, 0.0, 0.2, 0.2), {"x": -0.8, "y": 0.8}),     # top left of the picture: left and up
    ((0.8, 0.8, 1.0, 1.0), {"x": 0.8, "y": -0.8}),     # bottom right: right and down
    ((0.4, 0.4, 0.6, 0.6), {"x": 0.0, "y": 0.0}),      # the centre: straight ahead
])
def test_a_box_is_published_in_the_view_frame(box, where):
    assert {k: box_in_view(box, 2)[k] for k in "xy"} == where
    assert box_in_view(box, 2)["w"] == pytest.approx(0.2)   # a fifth of the picture's width


def test_the_centre_is_never_a_negative_zero():
    """A small model copies ``-0.0`` as a sign: a centred thing must read 0.0."""
    body = json.dumps(Detection("face", 0.9, (0.45, 0.45, 0.5500001, 0.55)).to_dict())
    assert '"x": 0.0' in body and "-0.0" not in body


def test_tracking_looks_where_a_model_copying_the_object_would():
    face = Detection("face", 0.9, (0.1, 0.3, 0.2, 0.45))
    look = Tracker().update([face], 0.0)
    wire = face.to_dict()
    assert (look["x"], look["y"]) == (wire["x"], wire["y"]) and look["x"] < 0
    assert Z_MIN_M <= look["z"] <= Z_MAX_M


# -- a real video frame through the real camera node on a real broker -------------------------

@needs_vtest
def test_a_person_on_the_left_of_a_real_frame_is_published_left_and_mirrored_right(broker, tmp_path):
    left = person_on_the_left_perception(broker, tmp_path / "left")
    assert set(left.body) == CAMERA_KEYS and left.body["counts"] == {"person": 1}
    people = [o for o in left.body["objects"] if o["label"] == "person"]
    assert people and set(people[0]) == OBJECT_KEYS
    assert all(o["x"] < 0 for o in people), people
    right = camera_perception(broker, person_on_the_right(), tmp_path / "right")
    mirrored = [o for o in right.body["objects"] if o["label"] == "person"]
    assert mirrored and all(o["x"] > 0 for o in mirrored), mirrored
    assert mirrored[0]["x"] == pytest.approx(-people[0]["x"], abs=0.05)
    # copying the object's place into look turns the head left, and the mirror right
    assert _pan(people[0]["x"], people[0]["y"]) < 0 < _pan(mirrored[0]["x"], mirrored[0]["y"])


@needs_vtest
def test_the_frame_picture_has_nobody_in_its_right_half():
    """The helper's claim about its picture, checked with OpenCV's own people detector."""
    from edge.perception.camera.opencv_detectors import HogPersonDetector

    found = HogPersonDetector().detect(person_on_the_left())
    assert found and all(d.center[0] < 0.5 for d in found)


# -- the shipped companions and the demo ----------------------------------------------------

@pytest.mark.parametrize("path", LOOKING, ids=lambda p: p.name)
def test_a_seen_object_copied_into_look_is_a_valid_look_that_turns_left(path):
    look = load_companion(path).action("look")
    assert look is not None
    seen = DEFAULT_SCENARIO[1]["body"]["objects"][0]
    params = {"x": seen["x"], "y": seen["y"], "z": 1}
    assert validate_params(look, params) == []
    assert _pan(**params) < 0
    z = look.schema["properties"]["z"]
    assert z["minimum"] > 0 and z["maximum"] <= 5, "z is a distance ahead in metres, never near(-1)..far(1)"
    for axis in "xyz":
        assert look.schema["properties"][axis].get("description"), f"{path.name}: look.{axis} has no description"


def test_the_demo_sends_what_the_camera_sends_for_a_person_on_the_left():
    vision = DEFAULT_SCENARIO[1]
    assert (vision["title"], vision["format"]) == ("vision", "object")
    body = vision["body"]
    assert set(body) == CAMERA_KEYS and body["counts"] == {"person": 1}
    (person,) = body["objects"]
    assert set(person) == OBJECT_KEYS and person["label"] == "person" and person["x"] < 0

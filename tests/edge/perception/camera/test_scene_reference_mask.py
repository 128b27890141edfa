"""What a detector explained at the last report is not a scene change when it goes away.

The scene diff compares the view with the view at the last report. A person who stood in
front of the camera then and has left now changes a large part of the picture, but the
"person left" report already says so: the pixels of the boxes at the last report are masked
out, like the boxes of the current frame. Without that mask the same departure would also be
reported as "the view changed (80% of it)".
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

pytest.importorskip("cv2")

from edge.perception.camera.detectors import Detection  # noqa: E402
from edge.perception.camera.scene import PolicyConfig, ScenePolicy  # noqa: E402

BIG = Detection("person", 0.9, (0.1, 0.0, 0.9, 1.0))   # 80 % of the view
CONFIG = PolicyConfig(appear_frames=2, appear_s=0.0, leave_frames=2, leave_s=0.0, cooldown_s=0.0,
                      scene_change=0.3)


def frames() -> tuple[np.ndarray, np.ndarray]:
    empty = np.zeros((120, 160, 3), np.uint8)
    person = empty.copy()
    person[:, 16:144] = 255       # exactly the BIG box
    return empty, person


def test_a_person_leaving_is_reported_as_leaving_not_as_a_changed_view():
    empty, person = frames()
    policy = ScenePolicy(CONFIG)
    script = [(0, [], empty), (1, [BIG], person), (2, [BIG], person), (3, [], empty), (4, [], empty)]
    reports = [(ts, e.changes, e.summary) for ts, found, img in script
               if (e := policy.update(found, ts, img)) is not None]
    assert [(ts, changes) for ts, changes, _ in reports] == [
        (2, [{"label": "person", "change": "appeared"}]),
        (4, [{"label": "person", "change": "left"}]),
    ]
    assert reports[-1][2] == "person left. Nothing recognised in view."


def test_a_real_change_outside_the_old_boxes_still_counts():
    empty, person = frames()
    policy = ScenePolicy(dataclasses.replace(CONFIG, scene_change=0.1))
    lights_on = np.full_like(empty, 200)
    lights_on[:, 16:144] = 0      # the person left and the lights came on around where they stood
    script = [(0, [], empty), (1, [BIG], person), (2, [BIG], person), (3, [], lights_on), (4, [], lights_on)]
    changes = [e.changes for ts, found, img in script if (e := policy.update(found, ts, img)) is not None]
    assert changes[-1][0] == {"label": "person", "change": "left"}
    assert changes[-1][1]["change"] == "scene" and 0.15 <= changes[-1][1]["amount"] <= 0.25

"""A real video frame with a person on a known side, and the perception the real camera node
publishes for it, for tests that check what the stack does with what the camera sees.

The picture is frame 415 of OpenCV's ``vtest.avi`` (768x576 pedestrians, package opencv-doc),
cut to the 320x240 window at rows 96..336, columns 220..540: one man stands in its left half,
and nobody else is in it. Mirrored, he stands in the right half.

``camera_perception`` runs ``run_camera`` (what ``companion run camera`` calls) with the HOG
people detector and the default scene policy on a folder showing the picture a few times,
against a real broker, and returns the ``vision`` perception a subscriber received.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from edge.runtime.bus import Bus
from edge.protocol.payloads import Perception, Status

DATA = Path("/usr/share/doc/opencv-doc/examples/data")
VTEST = DATA / "vtest.avi"
FRAME_INDEX = 415
WINDOW = (slice(96, 336), slice(220, 540))   # rows, columns of the full frame
COPIES = 4                                   # at 5 frames a second: seen for 0.6 s, past appear_s

needs_vtest = pytest.mark.skipif(not VTEST.is_file(), reason="opencv-doc samples missing (apt-get install opencv-doc)")


def video_frame(index: int = FRAME_INDEX) -> np.ndarray:
    """Frame ``index`` of vtest.avi, read in order (seeking is not frame-exact for every codec)."""
    import cv2

    capture = cv2.VideoCapture(str(VTEST))
    try:
        for _ in range(index + 1):
            ok, image = capture.read()
            if not ok:
                raise FileNotFoundError(f"{VTEST}: no frame {index}")
        return image
    finally:
        capture.release()


def person_on_the_left() -> np.ndarray:
    """A real camera picture (BGR) with one person in its left half and nobody else."""
    rows, cols = WINDOW
    return np.ascontiguousarray(video_frame()[rows, cols])


def person_on_the_right() -> np.ndarray:
    """The same picture mirrored: the person stands in the right half."""
    return np.ascontiguousarray(person_on_the_left()[:, ::-1])


def camera_perception(broker, image: np.ndarray, folder: Path, detector: str = "hog",
                      companion_id: str | None = None, timeout_s: float = 60.0) -> Perception:
    """Run the real camera node on ``image`` (shown ``COPIES`` times) and return the first
    ``vision`` perception received on the broker; fails the test if none arrives."""
    import cv2

    from edge.perception.camera.capture import CaptureConfig
    from edge.perception.camera.node import run_camera

    folder.mkdir(parents=True, exist_ok=True)
    for n in range(COPIES):
        assert cv2.imwrite(str(folder / f"{n:02d}.png"), image)
    received: list[Perception] = []
    subscribed, seen = threading.Event(), threading.Event()
    listener = Bus(f"vision-frames-{folder.name}", "test", broker.address, persistent=False)

    def on_status(status: Status) -> None:  # our own "online" comes back: the subscriptions are live
        if status.node == listener.node_id and status.state == "online":
            subscribed.set()

    def on_perception(perception: Perception) -> None:
        if perception.title == "vision" and perception.format == "object":
            received.append(perception)
            seen.set()

    listener.subscribe(Status, on_status)
    listener.subscribe(Perception, on_perception)
    listener.connect()
    try:
        assert subscribed.wait(10), "the listener's subscriptions were not confirmed"
        code = run_camera(str(folder), detector, broker.address, companion_id=companion_id,
                          capture=CaptureConfig(realtime=False))
        assert code == 0, f"run_camera exited {code}"
        assert seen.wait(timeout_s), "the camera node published no vision perception"
        return received[0]
    finally:
        listener.close()


def person_on_the_left_perception(broker, folder: Path, companion_id: str | None = None) -> Perception:
    """What the camera node publishes when one person stands on the robot's left."""
    return camera_perception(broker, person_on_the_left(), folder, companion_id=companion_id)

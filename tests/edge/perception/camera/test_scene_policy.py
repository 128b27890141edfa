"""The perception policy and the camera node, with real detectors on real pictures. The node runs
on the in-process transport (the same decode-and-validate path as on a broker): what these
tests check is what the node sees and says, not how the broker carries it."""

from __future__ import annotations

import base64
import shutil
import threading
import time
from pathlib import Path

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

from edge.paths import DEFAULT_COMPANION  # noqa: E402
from edge.perception.camera.capture import Camera, CaptureConfig  # noqa: E402
from edge.perception.camera.node import CameraNode, NodeOptions, default_node_id, run_camera  # noqa: E402
from edge.perception.camera.detector_spec import make_detector  # noqa: E402
from edge.perception.camera.detectors import Detection  # noqa: E402
from edge.perception.camera.scene import PolicyConfig, ScenePolicy  # noqa: E402
from edge.perception.camera.tracking import TrackConfig, Tracker  # noqa: E402
from edge.protocol.payloads import Action, ActionResult, Perception, Status  # noqa: E402
from edge.runtime.local import LocalHub, LocalTransport  # noqa: E402

DATA = Path("/usr/share/doc/opencv-doc/examples/data")
needs_samples = pytest.mark.skipif(not (DATA / "basketball1.png").is_file(),
                                   reason="opencv-doc samples missing (apt-get install opencv-doc)")

PERSON = Detection("person", 0.9, (0.4, 0.2, 0.6, 0.9))
FACE = Detection("face", 0.8, (0.45, 0.2, 0.55, 0.35))
CUP = Detection("cup", 0.7, (0.1, 0.6, 0.2, 0.7))
FAST = PolicyConfig(appear_frames=2, appear_s=0.2, leave_frames=2, leave_s=0.4, cooldown_s=0.5)


def feed(policy: ScenePolicy, script: list[tuple[float, list[Detection]]]) -> list:
    """Run (ts, detections) through the policy; return (ts, [changes]) for each report."""
    out = []
    for ts, found in script:
        event = policy.update(found, ts)
        if event is not None:
            out.append((ts, [(c.get("label"), c["change"]) for c in event.changes]))
    return out


# -- the policy on its own ------------------------------------------------------------------

def test_appear_needs_frames_and_time_and_a_single_false_positive_never_reports():
    policy = ScenePolicy(FAST)
    reports = feed(policy, [(0.0, [CUP]), (0.1, []), (0.2, [PERSON]), (0.3, [PERSON]), (0.4, [PERSON]),
                            (0.5, [PERSON])])
    assert reports == [(0.4, [("person", "appeared")])]  # 2 frames at 0.3, but 0.2 s only at 0.4


def test_leaving_needs_misses_in_a_row_and_a_blink_does_not_count():
    policy = ScenePolicy(FAST)
    script = [(t / 10, [PERSON]) for t in range(3)]
    script += [(0.3, []), (0.4, [PERSON])]  # one missed frame: not a departure
    script += [(t / 10, []) for t in range(5, 12)]  # 2 misses by 0.6, but 0.4 s since 0.4 only at 0.8
    assert feed(policy, script) == [(0.2, [("person", "appeared")]), (0.8, [("person", "left")])]


def test_cooldown_holds_changes_back_and_reports_the_net_difference_after():
    policy = ScenePolicy(FAST)
    script = [(0.0, [PERSON]), (0.2, [PERSON]),                 # person appears at 0.2
              (0.3, [PERSON, CUP]), (0.5, [PERSON, CUP]),        # cup confirmed at 0.5: cooldown until 0.7
              (0.6, [PERSON, CUP]), (0.7, [PERSON, CUP])]
    assert feed(policy, script) == [(0.2, [("person", "appeared")]), (0.7, [("cup", "appeared")])]
    came_and_went = ScenePolicy(PolicyConfig(appear_frames=2, appear_s=0.2, leave_frames=2, leave_s=0.4,
                                             cooldown_s=2.0))
    script = [(0.0, [PERSON]), (0.2, [PERSON]),                  # reported at 0.2; quiet until 2.2
              (0.3, [PERSON, FACE]), (0.5, [PERSON, FACE])]      # face confirmed inside the cooldown ...
    script += [(t / 10, [PERSON]) for t in range(6, 30)]         # ... and gone at 0.9, still inside it
    assert feed(came_and_went, script) == [(0.2, [("person", "appeared")])]
    assert "face" not in came_and_went.present


def test_report_lists_counts_and_positions_and_low_confidence_is_ignored():
    policy = ScenePolicy(FAST)
    weak = Detection("dog", 0.3, (0, 0, 1, 1))
    other = Detection("person", 0.6, (0.0, 0.0, 0.2, 0.5))
    policy.update([PERSON, other, weak], 0.0)
    event = policy.update([PERSON, other, weak], 0.2)
    body = event.body()
    assert body["counts"] == {"person": 2}
    # centred left-right, a little below the middle (the view frame: y up), 20 % wide, 70 % tall
    assert body["objects"][0] == {"label": "person", "confidence": 0.9, "x": 0.0, "y": -0.1, "w": 0.2, "h": 0.7}
    assert body["objects"][1]["x"] == -0.8 and body["objects"][1]["y"] == 0.5  # the one at the top left
    assert body["summary"] == "person appeared. In view: 2 people."
    assert "dog" not in policy.present


def test_a_large_scene_change_reports_once_and_what_detectors_explain_does_not_count():
    policy = ScenePolicy(PolicyConfig(appear_frames=2, appear_s=0.0, cooldown_s=0.0, scene_change=0.3))
    dark, light = np.zeros((120, 160, 3), np.uint8), np.full((120, 160, 3), 200, np.uint8)
    events = [policy.update([], ts, img) for ts, img in [(0, dark), (1, dark), (2, light), (3, light), (4, light),
                                                          (5, light)]]
    assert [i for i, e in enumerate(events) if e] == [3]
    assert events[3].changes == [{"change": "scene", "amount": 1.0}]
    # a big person walking in changes most of the view, but the detector explains it
    policy = ScenePolicy(PolicyConfig(appear_frames=2, appear_s=0.0, cooldown_s=0.0, scene_change=0.3))
    big = Detection("person", 0.9, (0.1, 0.0, 0.9, 1.0))
    person_in = dark.copy()
    person_in[:, 16:144] = 255
    events = [policy.update(found, ts, img) for ts, found, img in
              [(0, [], dark), (1, [big], person_in), (2, [big], person_in), (3, [big], person_in)]]
    assert [e.changes for e in events if e] == [[{"label": "person", "change": "appeared"}]]


def test_tracker_prefers_faces_maps_to_look_and_is_rate_limited():
    tracker = Tracker(TrackConfig(rate_hz=2, deadband=0.1))
    left_face = Detection("face", 0.9, (0.0, 0.0, 0.2, 0.25))
    # the face at the top left: look left and up, at a face filling a quarter of the height (0.44 m)
    assert tracker.update([PERSON, left_face], 0.0) == {"x": -0.8, "y": 0.75, "z": 0.44}
    assert tracker.update([PERSON], 0.2) is None                        # too soon
    # a person 70 % of the picture tall is about 1.2 m ahead
    assert tracker.update([PERSON], 0.5) == {"x": 0.0, "y": -0.1, "z": 1.21}
    assert tracker.update([Detection("person", 0.9, (0.42, 0.2, 0.62, 0.9))], 1.0) is None  # inside the deadband
    assert tracker.update([], 2.0) is None and tracker.sent == 2


# -- the node, real detectors, real pictures ------------------------------------------------

class Listener:
    """A client on the hub that records what the camera node publishes."""

    def __init__(self, hub: LocalHub):
        self.hub = hub
        self.perceptions: list[Perception] = []
        self.statuses: list[Status] = []
        self.actions: list[Action] = []
        self.results: list[ActionResult] = []
        self.bus = hub.transport("listener", "test", announce=False)
        self.bus.subscribe(Perception, self.perceptions.append)
        self.bus.subscribe(Status, self.statuses.append)
        self.bus.subscribe(Action, self.actions.append)
        self.bus.subscribe(ActionResult, self.results.append)
        self.bus.connect()   # subscribed once connected: no SUBACK to wait for

    def wait(self, condition, timeout: float = 5.0) -> bool:
        deadline = time.monotonic() + timeout
        while not condition() and time.monotonic() < deadline:
            time.sleep(0.02)
        return condition()

    def settled(self) -> bool:
        """True once everything published so far was handled (what we recorded is all there is)."""
        return self.hub.settle()

    def camera(self, source: object, node_id: str | None = None) -> LocalTransport:
        """The camera node's transport, under the id ``run_camera`` would give it."""
        return self.hub.transport(node_id or default_node_id(source), "camera")

    def camera_states(self, node: str) -> list[str]:
        return [s.extra.get("camera") for s in self.statuses if s.node == node]


@pytest.fixture
def listener():
    listen = Listener(LocalHub())
    yield listen
    listen.bus.close()


def scene_folder(folder: Path, plan: list[tuple[str, int]]) -> Path:
    """An image folder playing a scene: each (sample, copies) in turn."""
    folder.mkdir()
    n = 0
    for name, copies in plan:
        for _ in range(copies):
            shutil.copy(DATA / name, folder / f"{n:03d}{Path(name).suffix}")
            n += 1
    return folder


LOCKSTEP = CaptureConfig(realtime=False, fps=5)


@needs_samples
def test_people_walk_in_and_out_and_the_node_reports_each_once(listener, tmp_path):
    folder = scene_folder(tmp_path / "room", [("home.jpg", 3), ("basketball1.png", 5), ("home.jpg", 5)])
    code = run_camera(str(folder), "haar,hog", companion_id="pip-1", capture=LOCKSTEP, policy=FAST,
                      transport=listener.camera(folder))
    assert code == 0
    assert listener.settled() and "offline" in [s.state for s in listener.statuses]
    came, went = listener.perceptions
    assert (came.title, came.format, came.to, came.sender) == ("vision", "object", "pip-1", "camera-room")
    assert came.body["changes"][:2] == [{"label": "face", "change": "appeared"},
                                        {"label": "person", "change": "appeared"}]
    assert came.body["counts"]["face"] == 1 and came.body["counts"]["person"] >= 1
    face = next(o for o in came.body["objects"] if o["label"] == "face")
    # the left player's face, at about (92, 111) of the 640x480 picture: left and high in the view
    assert abs(face["x"] - (2 * 92 / 640 - 1)) < 0.06 and abs(face["y"] - (1 - 2 * 111 / 480)) < 0.06
    assert face["x"] < -0.5 and face["y"] > 0.4
    assert [c.get("label") for c in went.body["changes"] if c["change"] == "left"] == ["face", "person"]
    assert went.body["counts"] == {} and went.body["objects"] == []
    node = default_node_id(folder)
    assert [s for s in listener.camera_states(node) if s][:3] == ["starting", "opening", "open"]
    final = [s for s in listener.statuses if s.node == node][-1]
    assert final.state == "offline" and final.extra["camera"] == "ended" and final.extra["frames"] == 13


@needs_samples
def test_an_unchanging_scene_is_reported_once_and_then_stays_quiet(listener, tmp_path):
    folder = scene_folder(tmp_path / "still", [("messi5.jpg", 10)])
    assert run_camera(str(folder), "haar", capture=LOCKSTEP, policy=FAST, transport=listener.camera(folder)) == 0
    assert listener.settled() and "offline" in [s.state for s in listener.statuses]
    assert len(listener.perceptions) == 1
    only = listener.perceptions[0]
    assert only.body["changes"] == [{"label": "face", "change": "appeared"}] and only.to == "all"


@needs_samples
def test_pedestrians_in_vtest_are_noticed_once(listener):
    stop = threading.Event()

    class StopAfter:  # the real HOG detector; the test only counts frames to end early
        def __init__(self) -> None:
            self.inner, self.name, self.n = make_detector("hog"), "hog", 0

        def detect(self, frame):
            self.n += 1
            if self.n >= 8:
                stop.set()
            return self.inner.detect(frame)

    bus = listener.camera(None, "camera-vtest").connect()
    camera = Camera(DATA / "vtest.avi", CaptureConfig(realtime=False, fps=2)).start()
    node = CameraNode(bus, camera, StopAfter(), ScenePolicy(FAST), companion_id="pip")
    try:
        assert node.run(stop) == 0
    finally:
        camera.stop()
        bus.close()
    assert listener.settled()
    assert len(listener.perceptions) == 1 and node.frames == 8
    body = listener.perceptions[0].body
    assert body["changes"] == [{"label": "person", "change": "appeared"}] and body["counts"]["person"] >= 1
    assert all(-1 <= o["x"] <= 1 and -1 <= o["y"] <= 1 and 0 < o["w"] <= 1 and 0 < o["h"] <= 1
               for o in body["objects"])


@needs_samples
def test_tracking_turns_the_simulated_head_toward_the_face(listener, tmp_path):
    from edge.app import Stack
    from edge.config import Settings
    from edge.protocol.companion import load_companion

    pip = load_companion(DEFAULT_COMPANION)
    body = Stack(Settings(body_id="body-test"), speaker=None, kinds=("body",), start_broker=False,
                 transport=listener.hub.transport, companions=[pip]).start()   # `companion run body` on the hub
    sim = body.sim
    try:
        folder = scene_folder(tmp_path / "messi", [("messi5.jpg", 3)])
        code = run_camera(str(folder), "haar", companion_id=pip.id, capture=LOCKSTEP,
                          policy=FAST, track=TrackConfig(rate_hz=1), transport=listener.camera(folder))
        assert code == 0
        assert listener.wait(lambda: len(listener.results) >= 1)
    finally:
        body.stop()
    looks = [a for a in listener.actions if a.name == "look"]
    assert len(looks) == 1 and looks[0].sender == pip.id  # 3 frames at 5 fps, 1 look a second
    assert looks[0].params["x"] == pytest.approx((245 / 548 - 0.5) * 2, abs=0.06)
    assert looks[0].params["y"] == pytest.approx((0.5 - 112 / 342) * 2, abs=0.06)
    assert listener.results[0].ok and listener.results[0].id == looks[0].id
    assert sim.pose.gaze[0] == pytest.approx(looks[0].params["x"], abs=0.01)


@needs_samples
def test_image_perceptions_carry_a_decodable_jpeg(listener, tmp_path):
    folder = scene_folder(tmp_path / "messi", [("messi5.jpg", 3)])
    options = NodeOptions(send_image=True, image_max_side=200)
    assert run_camera(str(folder), "haar", capture=LOCKSTEP, policy=FAST, options=options,
                      transport=listener.camera(folder)) == 0
    assert listener.settled()
    obj, img = listener.perceptions
    assert obj.format == "object" and img.format == "image" and img.title == "vision"
    picture = cv2.imdecode(np.frombuffer(base64.b64decode(img.body), np.uint8), cv2.IMREAD_COLOR)
    assert picture.shape == (125, 200, 3)


def test_a_missing_source_or_model_fails_clearly_with_the_reason_in_the_status(listener, tmp_path, capsys):
    gone = str(tmp_path / "gone.avi")
    assert run_camera(gone, "haar", transport=listener.camera(gone)) == 1
    assert "gone.avi': no such file or folder" in capsys.readouterr().err
    assert run_camera(str(tmp_path), "yolo:nothing.onnx", node_id="camera-yolo",
                      transport=listener.camera(None, "camera-yolo")) == 1
    assert "nothing.onnx not found" in capsys.readouterr().err
    garbage = tmp_path / "noise.avi"
    garbage.write_bytes(bytes(range(256)) * 40)
    assert run_camera(str(garbage), "haar", transport=listener.camera(str(garbage))) == 1
    assert "noise.avi: OpenCV cannot open it as a video" in capsys.readouterr().err
    assert listener.settled() and sum(s.state == "offline" for s in listener.statuses) >= 3
    failed = {s.node: s.extra for s in listener.statuses if s.state == "offline"}
    assert "no such file" in failed["camera-gone"]["reason"] and failed["camera-gone"]["camera"] == "failed"
    assert "nothing.onnx not found" in failed["camera-yolo"]["reason"]
    assert "OpenCV cannot open it" in failed["camera-noise"]["reason"]
    assert listener.perceptions == []


@needs_samples
def test_a_detector_that_fails_on_some_frames_does_not_stop_the_node(listener, tmp_path):
    class Flaky:
        name = "flaky"

        def __init__(self) -> None:
            self.inner, self.n = make_detector("haar"), 0

        def detect(self, frame):
            self.n += 1
            if self.n % 2 == 0:
                raise RuntimeError("inference hiccup")
            return self.inner.detect(frame)

    folder = scene_folder(tmp_path / "messi", [("messi5.jpg", 6)])
    bus = listener.camera(None, "camera-flaky").connect()
    camera = Camera(folder, LOCKSTEP).start()
    warnings: list[str] = []
    node = CameraNode(bus, camera, Flaky(), ScenePolicy(PolicyConfig(appear_frames=2, appear_s=0.0)),
                      status=lambda state, **d: warnings.append(d["warning"]) if "warning" in d else None)
    try:
        assert node.run() == 0
    finally:
        camera.stop()
        bus.close()
    assert node.detector_errors == 3 and node.frames == 3
    assert warnings == ["detector failed on 1 frame(s), last: RuntimeError('inference hiccup')"]
    assert listener.settled() and len(listener.perceptions) == 1

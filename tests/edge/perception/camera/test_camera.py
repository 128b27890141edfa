"""Capture: real files, folders and an MJPEG stream over HTTP; failures reported and recovered."""

from __future__ import annotations

import http.server
import socketserver
import threading
import time
from pathlib import Path

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

from edge.runtime.broker import free_port  # noqa: E402
from edge.perception.camera.capture import Camera, CameraError, CaptureConfig, parse_source  # noqa: E402

DATA = Path("/usr/share/doc/opencv-doc/examples/data")
VTEST = DATA / "vtest.avi"
needs_samples = pytest.mark.skipif(not VTEST.is_file(), reason="opencv-doc samples missing (apt-get install opencv-doc)")


class Statuses:
    """Collects on_status calls, as the node's status board would receive them."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict]] = []

    def __call__(self, state: str, **details) -> None:
        self.calls.append((state, details))

    def states(self) -> list[str]:
        return [s for s, _ in self.calls]

    def first(self, state: str) -> dict:
        return next(d for s, d in self.calls if s == state)


def numbered_folder(folder: Path, count: int, size=(48, 64)) -> Path:
    """Images whose pixels hold their own number, so a frame says which file it came from."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        cv2.imwrite(str(folder / f"img{i:03d}.png"), np.full((*size, 3), i, np.uint8))
    return folder


def read_all(camera: Camera, limit: int = 1000) -> list:
    frames = []
    while len(frames) < limit:
        frame = camera.read(timeout=5)
        if frame is None:
            if camera.finished:
                break
            continue
        frames.append(frame)
    return frames


def test_sources_are_classified_and_a_missing_path_is_named(tmp_path):
    assert parse_source("0").kind == "device" and parse_source("0").target == 0
    assert parse_source("/dev/video2").kind == "device"
    assert parse_source("rtsp://cam.local/stream").kind == "stream"
    assert parse_source(tmp_path).kind == "folder"
    (tmp_path / "clip.avi").write_bytes(b"x")
    assert parse_source(tmp_path / "clip.avi").kind == "file"
    with pytest.raises(CameraError, match="'nowhere.avi': no such file or folder"):
        parse_source("nowhere.avi")
    with pytest.raises(CameraError, match="empty camera source"):
        parse_source("  ")


def test_folder_in_lockstep_gives_every_image_in_order_on_its_own_clock(tmp_path):
    statuses = Statuses()
    camera = Camera(numbered_folder(tmp_path / "f", 6), CaptureConfig(realtime=False, fps=4, width=32, height=24),
                    on_status=statuses).start()
    frames = read_all(camera)
    camera.stop()
    assert [int(f.image[0, 0, 0]) for f in frames] == [0, 1, 2, 3, 4, 5]
    assert [f.ts for f in frames] == [0.0, 0.25, 0.5, 0.75, 1.0, 1.25]
    assert all(f.image.shape == (24, 32, 3) for f in frames) and camera.dropped == 0
    assert statuses.states() == ["opening", "open", "ended"] and statuses.first("open")["frames"] == 6


def test_looping_folder_starts_again_and_its_clock_keeps_going(tmp_path):
    camera = Camera(numbered_folder(tmp_path / "f", 3), CaptureConfig(realtime=False, loop=True, folder_fps=10)).start()
    frames = [camera.read(timeout=5) for _ in range(7)]
    camera.stop()
    assert [int(f.image[0, 0, 0]) for f in frames] == [0, 1, 2, 0, 1, 2, 0]
    assert [round(f.ts, 3) for f in frames] == [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6]


def test_latest_frame_wins_and_no_backlog_builds_up(tmp_path):
    camera = Camera(numbered_folder(tmp_path / "f", 200), CaptureConfig(realtime=True, fps=200)).start()
    first = camera.read(timeout=5)
    time.sleep(0.3)  # a slow consumer: meanwhile many frames came and went
    frame = camera.read(timeout=5)
    newest = camera.produced - 1
    camera.stop()
    assert first is not None and frame is not None
    assert frame.seq > first.seq + 5 and camera.dropped > 0
    assert newest - frame.seq <= 1  # what we got was (nearly) the newest, not an old queued one


@needs_samples
def test_video_rate_skips_frames_by_the_videos_own_clock():
    camera = Camera(VTEST, CaptureConfig(realtime=False, fps=2.5)).start()
    frames = [camera.read(timeout=5) for _ in range(3)]
    camera.stop()
    assert [f.index for f in frames] == [0, 4, 8] and [f.ts for f in frames] == [0.0, 0.4, 0.8]
    assert frames[0].image.shape == (576, 768, 3)


def slow_video(path: Path, fps: float, count: int) -> Path:
    """An MJPEG AVI at ``fps`` whose frames are numbered by their brightness."""
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), fps, (64, 48))
    assert writer.isOpened()
    for i in range(count):
        writer.write(np.full((48, 64, 3), i * 40, np.uint8))
    writer.release()
    return path


def test_realtime_video_is_paced_like_a_camera(tmp_path):
    # 2 frames a second: a consumer that reads at once keeps up even when a busy machine (or the
    # suite's other worker) delays it a few hundred ms; at vtest's 10 fps 0.1 s late was a miss
    camera = Camera(slow_video(tmp_path / "slow.avi", 2.0, 6), CaptureConfig(realtime=True)).start()
    frames = [camera.read(timeout=5) for _ in range(4)]
    camera.stop()
    assert [f.index for f in frames] == [0, 1, 2, 3]   # a consumer that keeps up misses none
    assert [f.ts for f in frames] == pytest.approx([0.0, 0.5, 1.0, 1.5])   # the video's own clock
    # the pacing itself on the wall clock is measured in bench/pacing.py (vtest.avi: frame 3 ~0.3 s after 0)


def test_corrupt_video_is_refused_at_start_with_the_reason(tmp_path):
    garbage = tmp_path / "broken.avi"
    garbage.write_bytes(bytes(range(256)) * 40)
    statuses = Statuses()
    camera = Camera(garbage, on_status=statuses)
    with pytest.raises(CameraError, match="broken.avi: OpenCV cannot open it as a video"):
        camera.start()
    assert camera.state == "failed" and "broken.avi" in statuses.first("failed")["reason"]


@needs_samples
def test_truncated_video_plays_what_it_has_then_ends_with_a_warning(tmp_path):
    cut = tmp_path / "cut.avi"
    cut.write_bytes(VTEST.read_bytes()[:300_000])
    statuses = Statuses()
    camera = Camera(cut, CaptureConfig(realtime=False), on_status=statuses).start()
    frames = read_all(camera)
    camera.stop()
    assert 0 < len(frames) < 795
    ended = statuses.first("ended")
    assert "truncated or corrupt" in ended["warning"] and ended["frames"] == len(frames)


def test_unreadable_image_is_skipped_and_named_and_an_empty_folder_refused(tmp_path):
    folder = numbered_folder(tmp_path / "f", 3)
    (folder / "img001.png").write_bytes(b"not a png")
    statuses = Statuses()
    camera = Camera(folder, CaptureConfig(realtime=False), on_status=statuses).start()
    frames = read_all(camera)
    camera.stop()
    assert [int(f.image[0, 0, 0]) for f in frames] == [0, 2]
    assert any("img001.png could not be decoded; skipped" in d.get("warning", "") for _, d in statuses.calls)
    (tmp_path / "empty").mkdir()
    with pytest.raises(CameraError, match="no images in it"):
        Camera(tmp_path / "empty").start()


def test_a_device_that_does_not_open_is_retried_with_backoff_and_reported():
    index = next(i for i in range(7, 64) if not Path(f"/dev/video{i}").exists())
    statuses = Statuses()
    camera = Camera(str(index), CaptureConfig(backoff_min_s=0.02, backoff_max_s=0.08), on_status=statuses).start()
    deadline = time.monotonic() + 10
    while statuses.states().count("reopening") < 4 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert camera.read(timeout=0.05) is None and not camera.finished  # still trying, not given up
    camera.stop()   # how fast it returns is measured in bench/pacing.py
    assert camera.state == "closed"
    tries = [d for s, d in statuses.calls if s == "reopening"]
    assert f"/dev/video{index} does not exist" in tries[0]["reason"]
    assert [t["attempt"] for t in tries[:4]] == [1, 2, 3, 4]
    assert [t["retry_in_s"] for t in tries[:4]] == [0.02, 0.04, 0.08, 0.08]


# -- a live stream that is late, then drops, then comes back ----------------------------------

class MjpegServer:
    """An HTTP MJPEG camera (multipart/x-mixed-replace, as IP cameras serve) that sends
    ``per_connection`` frames and then hangs up, like a camera that drops off the network."""

    def __init__(self, port: int, jpeg: bytes, per_connection: int):
        jpg, count = jpeg, per_connection

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "multipart/x-mixed-replace; boundary=frame")
                self.end_headers()
                try:
                    for _ in range(count):
                        self.wfile.write(b"--frame\r\nContent-Type: image/jpeg\r\nContent-Length: %d\r\n\r\n%s\r\n"
                                         % (len(jpg), jpg))
                        time.sleep(0.02)
                except OSError:
                    pass

            def log_message(self, *args) -> None:
                pass

        socketserver.ThreadingTCPServer.allow_reuse_address = True
        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_stream_that_is_late_and_drops_is_reopened_and_recovers(tmp_path):
    port = free_port()
    ok, jpeg = cv2.imencode(".jpg", np.full((48, 64, 3), 200, np.uint8))
    statuses = Statuses()
    camera = Camera(f"http://127.0.0.1:{port}/video.mjpg",
                    CaptureConfig(backoff_min_s=0.05, backoff_max_s=0.2, open_timeout_s=2, read_timeout_s=2),
                    on_status=statuses).start()
    deadline = time.monotonic() + 10
    while "reopening" not in statuses.states() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert "cannot connect" in statuses.first("reopening")["reason"]
    server = MjpegServer(port, jpeg.tobytes(), per_connection=5)  # the camera comes up
    try:
        frames = []
        while len(frames) < 12 and time.monotonic() < deadline:
            frame = camera.read(timeout=1)
            if frame is not None:
                frames.append(frame)
    finally:
        camera.stop()
        server.close()
    assert len(frames) == 12 and frames[0].image.shape == (48, 64, 3)
    assert camera.reopens >= 2  # once after the late start, once (at least) after the drop
    reasons = [d["reason"] for s, d in statuses.calls if s == "reopening"]
    assert any("stopped delivering frames" in r for r in reasons)
    assert statuses.states().count("open") >= 3


# -- companion doctor: which cameras are there, and do they open --------------------------------

def test_doctor_lists_camera_nodes_with_names_and_whether_they_open(tmp_path):
    from edge.perception.camera.devices import CameraDevice, camera_report, list_cameras

    dev, sysfs = tmp_path / "dev", tmp_path / "sys"
    dev.mkdir()
    for n in (0, 1, 10):
        (dev / f"video{n}").write_bytes(b"")  # stand-ins that exist but are no cameras
    (sysfs / "video0").mkdir(parents=True)
    (sysfs / "video0" / "name").write_text("HD Webcam C270\n")
    found = list_cameras(dev_dir=dev, sysfs_dir=sysfs, timeout_s=5)
    assert [d.source for d in found] == [str(dev / "video0"), str(dev / "video1"), str(dev / "video10")]
    assert found[0].name == "HD Webcam C270" and found[1].name is None
    assert not any(d.opens for d in found) and all(d.error for d in found)
    ok, lines = camera_report(found)
    assert not ok and lines[0].startswith(f"camera {dev / 'video0'} (HD Webcam C270): does not open: ")
    assert camera_report([CameraDevice("/dev/video0", "cam", True, 640, 480)]) == (
        True, ["camera /dev/video0 (cam): opens, 640x480"])
    ok, lines = camera_report([])
    assert not ok and "none found" in lines[0] and "--source" in lines[0]

"""The camera node: frames → detector → scene policy → ``vision`` perceptions (and ``look`` reflexes).

``run_camera`` is what ``companion run camera`` calls; ``CameraNode`` is the loop itself,
for ``companion up`` and tests that bring their own bus, camera and detector.

The node's retained ``status/<node-id>`` says what the camera is doing: ``camera`` is one of
``opening``, ``open``, ``reopening`` (with ``reason``, ``retry_in_s``, ``attempt``),
``ended`` (a recording played out), ``failed`` (with ``reason``); ``source``, ``detector``
and, every ``progress_s``, ``fps`` and ``frames`` come along.
"""

from __future__ import annotations

import base64
import re
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from edge.runtime.broker import BrokerAddress
from edge.runtime.bus import Bus
from edge.log import get_logger
from edge.perception.camera.capture import Camera, CameraError, CaptureConfig, Frame, parse_source
from edge.perception.camera.lines import CameraLines
from edge.perception.camera.detector_spec import make_detector
from edge.perception.camera.detectors import Detector, DetectorError
from edge.perception.camera.scene import PolicyConfig, SceneEvent, ScenePolicy
from edge.perception.camera.tracking import TrackConfig, Tracker
from edge.protocol.payloads import Action, Perception
from edge.runtime.node import Node, NodeError
from edge.runtime.priority import lower_this_thread
from edge.runtime.transport import Transport
from edge.runtime.worker import FailureSink, guarded

log = get_logger(__name__)

DEFAULT_DETECTOR = "haar,hog"


@dataclass
class NodeOptions:
    title: str = "vision"            # the perception title the companion file declares
    to: str | None = None            # a companion id or "all"; default: the node's companion, else "all"
    send_image: bool = False         # also publish the frame as a JPEG (format image, base64)
    image_title: str | None = None   # defaults to ``title``
    image_max_side: int = 640
    jpeg_quality: int = 80
    progress_s: float = 10.0         # how often the status carries fps/frames
    nice: int = 10                   # the detector's thread yields the CPU to the voice loop (runtime/priority.py)


def default_node_id(source: str | int) -> str:
    """A stable id from the source, so the retained status survives restarts: ``camera-0``,
    ``camera-video0``, ``camera-vtest``, ``camera-192-168-1-5``."""
    text = str(source).strip()
    if "://" in text:
        text = text.split("://", 1)[1].split("/", 1)[0].rsplit("@", 1)[-1].split(":")[0]
    else:
        text = Path(text).stem or text
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40]
    return f"camera-{slug or 'source'}"


class CameraNode:
    """One loop on the caller's thread; the camera captures on its own."""

    def __init__(self, bus: Transport, camera: Camera, detector: Detector, policy: ScenePolicy | None = None,
                 options: NodeOptions | None = None, companion_id: str | None = None,
                 tracker: Tracker | None = None, status: Callable[..., None] | None = None,
                 failures: FailureSink | None = None):
        self.bus = bus
        self.status = status
        self.failures = failures or bus   # the Node (which also refreshes the status) or the transport
        self.camera = camera
        self.detector = detector
        self.policy = policy or ScenePolicy()
        self.options = options or NodeOptions()
        self.to = self.options.to or companion_id or "all"
        self.acting_for = companion_id or bus.node_id  # ``look`` goes out in the companion's name
        self.tracker = tracker
        self.frames = 0
        self.detect_s = 0.0
        self.detector_errors = 0
        self.published: list[Perception] = []
        self.looks = 0
        self.elapsed_s = 0.0
        self._pending: list[Any] = []
        self.on_scene: Callable[[SceneEvent], None] | None = None  # the terminal's line per scene change

    def run(self, stop: threading.Event | None = None) -> int:
        """Process frames until the recording ends, the camera fails, or ``stop`` is set.
        0: ended or stopped; 1: the camera failed for good."""
        stop = stop or threading.Event()
        started = time.monotonic()
        next_progress = started + self.options.progress_s
        last: Frame | None = None
        while not stop.is_set():
            frame = self.camera.read(timeout=0.5)
            if frame is None:
                if self.camera.finished:
                    break
                continue
            last = frame
            # nothing a frame, the detector, the scene policy or the tracker raises ends the loop
            guarded(self.failures, "camera", self._process, frame, topic=f"frame {frame.index}")
            if time.monotonic() >= next_progress:
                next_progress = time.monotonic() + self.options.progress_s
                self._progress(started)
        if last is not None and self.camera.finished and self.camera.error is None:
            event = self.policy.flush(last.ts, last.image)
            if event is not None:
                self._publish(event, last)
        self.elapsed_s = time.monotonic() - started
        self._progress(started, final=True)
        for info in self._pending[-1:]:  # QoS 1 goes out in order: the last one sent means all were
            try:
                info.wait_for_publish(2.0)
            except (RuntimeError, ValueError):
                pass
        return 1 if self.camera.error is not None else 0

    def _process(self, frame: Frame) -> None:
        tick = time.perf_counter()
        try:
            detections = self.detector.detect(frame.image)
        except Exception as exc:  # counted and shown; the worker guard logs it and the loop goes on
            self.detector_errors += 1
            if self.status is not None and (self.detector_errors in (1, 10, 100) or self.detector_errors % 1000 == 0):
                self.status(self.camera.state, warning=f"detector failed on {self.detector_errors} frame(s), "
                                                       f"last: {exc!r}")
            raise
        self.detect_s += time.perf_counter() - tick
        self.frames += 1
        event = self.policy.update(detections, frame.ts, frame.image)
        if event is not None:
            self._publish(event, frame)
        if self.tracker is not None:
            params = self.tracker.update(detections, frame.ts)
            if params is not None:
                self._send(Action(name=self.tracker.config.action, params=params, sender=self.acting_for))
                self.looks += 1

    def _publish(self, event: SceneEvent, frame: Frame) -> None:
        opts = self.options
        perception = Perception(title=opts.title, body=event.body(), format="object", to=self.to,
                                sender=self.bus.node_id)
        self._send(perception)
        self.published.append(perception)
        log.info("camera.perception", summary=event.summary, ts=round(frame.ts, 2))
        if self.on_scene is not None:
            self.on_scene(event)
        if opts.send_image:
            image = Perception(title=opts.image_title or opts.title, body=jpeg_base64(frame.image, opts.image_max_side,
                               opts.jpeg_quality), format="image", to=self.to, sender=self.bus.node_id)
            self._send(image)
            self.published.append(image)

    def _send(self, payload: Perception | Action) -> None:
        self._pending = [*self._pending[-7:], self.bus.publish(payload)]

    def stats(self) -> dict[str, Any]:
        elapsed = self.elapsed_s or 1e-9
        return {"frames": self.frames, "fps": round(self.frames / elapsed, 2), "dropped": self.camera.dropped,
                "perceptions": len(self.published), "looks": self.looks, "detector_errors": self.detector_errors}

    def _progress(self, started: float, final: bool = False) -> None:
        """A log line, and the figures in the status while the camera is open (or at the end)."""
        self.elapsed_s = time.monotonic() - started
        figures = self.stats()
        log.info("camera.progress", **figures)
        if self.status is not None and (final or self.camera.state == "open"):
            state = self.camera.state
            self.status(state, fps=figures["fps"], frames=self.frames, perceptions=len(self.published),
                        **({"reason": str(self.camera.error)} if self.camera.error else {}))


def jpeg_base64(image: Any, max_side: int, quality: int) -> str:
    """The frame as base64 JPEG, scaled down so an image perception stays a few tens of kB."""
    import cv2

    h, w = image.shape[:2]
    if max(h, w) > max_side:
        scale = max_side / max(h, w)
        image = cv2.resize(image, (round(w * scale), round(h * scale)), interpolation=cv2.INTER_AREA)
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise ValueError("JPEG encoding failed")
    return base64.b64encode(data.tobytes()).decode("ascii")


def run_camera(source: str | int, detector_spec: str = DEFAULT_DETECTOR,
               broker: BrokerAddress | str = BrokerAddress(), namespace: str | None = None,
               companion_id: str | None = None, *, node_id: str | None = None,
               capture: CaptureConfig | None = None, policy: PolicyConfig | None = None,
               options: NodeOptions | None = None, track: TrackConfig | bool | None = None,
               stop: threading.Event | None = None, bus_timeout_s: float = 30.0,
               detector_options: dict[str, Any] | None = None, quiet: bool = False,
               transport: Transport | None = None) -> int:
    """``companion run camera``: run until the recording ends or SIGINT/SIGTERM (or ``stop``).
    ``detector_options`` go to YOLO detectors (conf, imgsz, iou, names, backend); ``transport``
    replaces the MQTT bus (tests: ``edge.runtime.local``).
    Exit status 0 when it ended or was stopped, 1 when the broker, the detector or the source
    cannot be used (the reason is printed and left in the retained status)."""
    node_id = node_id or default_node_id(source)
    node = Node(transport or Bus(node_id, "camera", broker, namespace=namespace), source=str(source),
                detector=detector_spec)
    lines = CameraLines(node_id, quiet=quiet)  # the terminal's lines (-q: none)

    def on_status(state: str, **details: Any) -> None:  # the camera's state goes to the bus and the terminal
        node.status(state, **details)
        lines.status(state, **details)

    def main(node: Node) -> int:
        node.status("starting")
        lower_this_thread((options or NodeOptions()).nice)   # before the capture and OpenCV's workers start
        try:
            detector = make_detector(detector_spec, **(detector_options or {}))
            camera = Camera(parse_source(source), capture or CaptureConfig(), on_status=on_status)
            camera.start()
        except (DetectorError, CameraError) as exc:
            raise NodeError(str(exc)) from exc
        tracker = Tracker(track if isinstance(track, TrackConfig) else None) if track else None
        loop = CameraNode(node.transport, camera, detector, ScenePolicy(policy), options, companion_id, tracker,
                          node.status, failures=node)
        loop.on_scene = lines.scene
        lines.started(str(source), detector.name, capture or CaptureConfig())
        try:
            code = loop.run(node.stop_event)
        finally:
            camera.stop()
        lines.ended(node.stop_event.is_set(), loop.stats())
        if camera.error is not None:
            print(f"companion run camera: {camera.error}", file=sys.stderr)
        return code

    return node.run(main, stop=stop, timeout=bus_timeout_s)

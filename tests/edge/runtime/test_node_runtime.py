"""The node runtime (edge/runtime/node.py) on the in-process transport: handlers before connecting,
one signal path, a failure that leaves its reason in the status, and the camera node ported onto it."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import pytest

from edge.protocol.payloads import Action, Perception, Status
from edge.runtime.local import LocalHub
from edge.runtime.node import Node, NodeError


def _status(hub: LocalHub, node: str) -> Status:
    raw = hub.retained(f"status/{node}")
    assert raw is not None, f"no retained status for {node}"
    return Status.decode(raw)


def test_handlers_registered_through_the_node_get_what_was_queued_while_it_was_down():
    hub = LocalHub()
    before = Node(hub.transport("body", "body"))
    before.on(Action, lambda action: None)
    before.run(lambda node: 0)                        # subscribed once, then gone: the session stays
    with hub.transport("brain", "brain") as brain:
        brain.publish(Action(name="look", params={"x": 1}, sender="brain"))
    handled = threading.Event()
    node = Node(hub.transport("body", "body"))
    node.on(Action, lambda action: handled.set() if action.params == {"x": 1} else None)
    assert node.run(lambda node: 0 if handled.wait(5) else 3) == 0
    with pytest.raises(RuntimeError, match="before start"):
        node.on(Action, lambda action: None)         # after starting it would miss the queued ones


def test_a_node_error_is_said_left_in_the_status_and_exits_1(capsys):
    hub = LocalHub()
    node = Node(hub.transport("camera-x", "camera"), source="/dev/video7")

    def main(node: Node) -> int:
        node.status("opening")
        raise NodeError("/dev/video7: no such camera")

    assert node.run(main) == 1
    assert capsys.readouterr().err.strip() == "companion run camera: /dev/video7: no such camera"
    status = _status(hub, "camera-x")
    assert status.state == "offline"                 # closed after the failure, with its fields kept
    assert status.extra["camera"] == "failed" and status.extra["reason"] == "/dev/video7: no such camera"
    assert status.extra["source"] == "/dev/video7" and not node.transport.connected


def test_sigterm_sets_the_stop_event_and_the_previous_handlers_come_back():
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    previous = signal.getsignal(signal.SIGTERM)
    node = Node(LocalHub().transport("mic-x", "mic"))

    def main(node: Node) -> int:
        os.kill(os.getpid(), signal.SIGTERM)
        return 0 if node.stop_event.wait(5) else 3

    assert node.run(main) == 0
    assert signal.getsignal(signal.SIGTERM) is previous


def test_a_stop_event_from_the_caller_is_the_one_signals_set():
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    stop = threading.Event()
    node = Node(LocalHub().transport("n", "test"))

    def main(node: Node) -> int:
        os.kill(os.getpid(), signal.SIGINT)          # Ctrl-C: no KeyboardInterrupt, the event is set
        return 0 if node.stop_event is stop and stop.wait(5) else 3

    assert node.run(main, stop=stop) == 0


def test_the_camera_node_runs_on_the_in_process_transport(tmp_path: Path):
    cv2 = pytest.importorskip("cv2")
    from vision_frames import COPIES, VTEST, person_on_the_left

    if not VTEST.is_file():
        pytest.skip("opencv-doc samples missing (apt-get install opencv-doc)")
    from edge.perception.camera.capture import CaptureConfig
    from edge.perception.camera.node import run_camera

    for n in range(COPIES):
        assert cv2.imwrite(str(tmp_path / f"{n:02d}.png"), person_on_the_left())
    hub = LocalHub()
    seen: list[Perception] = []
    listener = hub.transport("listener", "test", announce=False)
    listener.subscribe(Perception, seen.append)
    with listener:
        code = run_camera(str(tmp_path), "hog", companion_id="pip", capture=CaptureConfig(realtime=False),
                          transport=hub.transport("camera-frames", "camera"), quiet=True)
        assert code == 0 and hub.settle()
    vision = [p for p in seen if p.title == "vision"]
    assert vision and vision[0].to == "pip" and vision[0].body["counts"] == {"person": 1}
    assert vision[0].body["objects"][0]["x"] < 0                 # the man stands on the robot's left
    status = _status(hub, "camera-frames")
    assert status.state == "offline" and status.extra["camera"] == "ended"


@pytest.mark.parametrize("kind", ["gateway", "mcp"])
def test_a_service_whose_broker_does_not_answer_says_so_and_exits_1(kind, capsys):
    """The services run on Node too: no broker is one printed line and exit status 1, nothing served."""
    import socket

    from edge.config import DEFAULT_COMPANION
    from edge.services import gateway, mcp_server

    with socket.socket() as probe:                   # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        broker = f"127.0.0.1:{probe.getsockname()[1]}"
    ready = threading.Event()
    if kind == "gateway":
        code = gateway.serve(broker, config=gateway.GatewayConfig(port=0), ready=ready, stop=threading.Event(),
                             broker_timeout_s=0.5)
    else:
        code = mcp_server.serve(DEFAULT_COMPANION, broker, port=0, ready=ready, stop=threading.Event(),
                                broker_timeout_s=0.5)
    err = capsys.readouterr().err
    assert code == 1 and not ready.is_set()
    assert f"companion run {kind}: " in err and f"no MQTT broker answered at {broker}" in err


def test_the_gateways_status_carries_its_urls_and_goes_offline_when_stopped(broker):
    """On a real broker: ``online`` with where it serves, then a clean ``offline`` (not the will)."""
    import queue

    from edge.runtime.bus import Bus
    from edge.services import gateway

    statuses: queue.Queue[Status] = queue.Queue()
    watcher = Bus("watcher", "test", broker.address, announce=False, persistent=False)
    watcher.subscribe(Status, lambda s: statuses.put(s) if s.node == "gateway-t" else None)
    watcher.connect()
    assert watcher.wait_subscribed()
    stop, ready, urls, codes = threading.Event(), threading.Event(), [], []
    thread = threading.Thread(target=lambda: codes.append(gateway.serve(
        broker.address, config=gateway.GatewayConfig(port=0), node_id="gateway-t", ready=ready, stop=stop,
        on_ready=urls.append)), daemon=True)
    thread.start()
    try:
        assert ready.wait(15)
        status = statuses.get(timeout=5)
        while "gateway" not in status.extra:            # the first online comes before the URLs
            status = statuses.get(timeout=5)
        assert status.state == "online" and status.extra["gateway"] == urls[0]
        assert status.extra["websocket"] == urls[0].replace("http://", "ws://") + "/ws"
        stop.set()
        thread.join(10)
        assert codes == [0]
        while (status := statuses.get(timeout=5)).state != "offline":
            pass
        assert status.extra["gateway"] == urls[0]
    finally:
        stop.set()
        watcher.close()

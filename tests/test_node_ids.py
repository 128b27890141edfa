"""Node ids are stable: ``companion run body`` keeps one retained ``status/body`` across restarts,
``--node-id`` names a second body, and two nodes with one id are told to use it."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from edge.cli import build_parser, main
from edge.config import Settings
from edge.nodes import run_node

ROOT = Path(__file__).resolve().parent.parent


def _retained_status(broker, settle_s: float = 1.0) -> dict[str, dict]:
    """Every retained status/# on the broker: topic -> payload."""
    seen: dict[str, dict] = {}
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"tap-{os.getpid()}-{time.monotonic_ns()}")
    client.on_connect = lambda c, *_: c.subscribe("status/#", qos=1)
    client.on_message = lambda c, u, msg: seen.__setitem__(msg.topic, json.loads(msg.payload)) if msg.retain else None
    client.connect(broker.address.host, broker.address.port)
    client.loop_start()
    time.sleep(settle_s)
    client.loop_stop()
    client.disconnect()
    return seen


class Node:
    """``companion run ...`` as systemd runs it: a process, its stderr collected line by line."""

    def __init__(self, broker, *args: str):
        self.proc = subprocess.Popen([sys.executable, "-m", "edge.cli", "run", *args, "--broker", str(broker.address)],
                                     cwd=ROOT, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=lambda: [self.lines.put(line) for line in self.proc.stderr], daemon=True).start()

    def wait_for(self, text: str, timeout: float) -> str | None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.2)
            except queue.Empty:
                continue
            self.seen.append(line)
            if text in line:
                return line
        return None

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(5)


def _wait_for_status(broker, topic: str, state: str, timeout: float = 20.0) -> dict[str, dict]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = _retained_status(broker, settle_s=0.5)
        if status.get(topic, {}).get("state") == state:
            return status
    raise AssertionError(f"no retained {state} on {topic}: {status}")


def test_the_body_keeps_one_status_topic_across_restarts(broker):
    for start in range(2):
        body = Node(broker, "body", "--tts", "none")
        try:
            status = _wait_for_status(broker, "status/body", "online")
        finally:
            assert body.stop() == 0
        assert set(status) == {"status/body"} and status["status/body"]["node"] == "body", (start, status)
    after = _retained_status(broker)
    assert set(after) == {"status/body"} and after["status/body"]["state"] == "offline"


def test_two_bodies_with_one_id_are_told_to_use_node_id(broker):
    first = Node(broker, "body", "--tts", "none", "--node-id", "body-left")
    _wait_for_status(broker, "status/body-left", "online")
    second = Node(broker, "body", "--tts", "none", "--node-id", "body-left")
    try:
        found = None
        deadline = time.monotonic() + 30
        while found is None and time.monotonic() < deadline:
            found = first.wait_for("bus.client_id_conflict", 0.5) or second.wait_for("bus.client_id_conflict", 0.5)
    finally:
        first.stop(), second.stop()
    assert found is not None, first.seen + second.seen
    assert "companion run body --node-id body-NAME" in found and "this one is body-left" in found


@pytest.mark.parametrize("node, module, function, extra", [
    ("camera", "edge.perception.camera_node", "run_camera", ["--source", "0"]),
    ("mic", "edge.perception.mic_node", "run_mic", ["--source", "hello.wav"]),
    ("gateway", "edge.services.gateway", "serve", []),
    ("mcp", "body_drivers.mcp_server", "serve", []),
])
def test_node_id_reaches_each_node(monkeypatch, node, module, function, extra):
    import importlib
    given: dict = {}
    monkeypatch.setattr(importlib.import_module(module), function, lambda *a, **kw: given.update(kw) or 0)
    args = build_parser().parse_args(["run", node, *extra, "--node-id", f"{node}-front"])
    assert run_node(node, Settings(), args) == 0 and given["node_id"] == f"{node}-front"


def test_a_bad_node_id_or_one_for_a_brain_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["run", "body", "--node-id", "body/left"])
    assert exc.value.code == 2 and "'body/left' is not a node id" in capsys.readouterr().err
    assert main(["run", "brain", "--node-id", "brain-x"]) == 2
    assert "a brain is brain-<companion id>" in capsys.readouterr().err

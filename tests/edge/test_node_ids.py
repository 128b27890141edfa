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
from types import SimpleNamespace
from typing import Callable

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from deploy_harness import Client, StagedBroker, env_value, stage_install
from edge.runtime.broker import BrokerAddress
from edge.runtime.bus import Bus
from edge.cli import main
from edge.protocol.payloads import Action
from repo_paths import REPO

ROOT = REPO


def _retained_status(broker) -> dict[str, dict]:
    """Every retained status/# on the broker: topic -> payload, with no settling time. mosquitto
    queues the retained messages for a subscriber when it accepts the subscription, ahead of
    anything published later; so once a marker we publish after the SUBACK comes back (QoS 1,
    on a topic of our own that no node reads), every retained status has arrived before it."""
    seen: dict[str, dict] = {}
    marker = f"test/tap-{os.getpid()}-{time.monotonic_ns()}"
    back, subscribed = threading.Event(), threading.Event()

    def on_message(client, userdata, msg) -> None:
        if msg.topic == marker:
            back.set()
        elif msg.retain:
            seen[msg.topic] = json.loads(msg.payload)

    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=marker.replace("/", "-"))
    client.on_connect = lambda c, *_: c.subscribe([("status/#", 1), (marker, 1)])
    client.on_subscribe = lambda *_: subscribed.set()
    client.on_message = on_message
    client.connect(broker.address.host, broker.address.port)
    client.loop_start()
    try:
        assert subscribed.wait(10), "no SUBACK for status/#"
        client.publish(marker, b"marker", qos=1)
        assert back.wait(10), "our own marker never came back"
    finally:
        client.disconnect()   # before loop_stop: the network thread then ends at once
        client.loop_stop()
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
    """Waits for ``state`` on ``topic`` as it is published (a subscriber is woken by it, no
    polling), then returns what a newcomer is shown: every retained status."""
    arrived = threading.Event()

    def on_message(client, userdata, msg) -> None:
        if json.loads(msg.payload).get("state") == state:
            arrived.set()

    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"wait-{os.getpid()}-{time.monotonic_ns()}")
    client.on_connect = lambda c, *_: c.subscribe(topic, qos=1)
    client.on_message = on_message
    client.connect(broker.address.host, broker.address.port)
    client.loop_start()
    try:
        got = arrived.wait(timeout)
    finally:
        client.disconnect()
        client.loop_stop()
    status = _retained_status(broker)
    assert got and status.get(topic, {}).get("state") == state, f"no retained {state} on {topic}: {status}"
    return status


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
    ("camera", "edge.perception.camera.node", "run_camera", ["--source", "0"]),
    ("mic", "edge.perception.microphone.run", "run_mic", ["--source", "hello.wav"]),
    ("gateway", "edge.services.gateway", "serve", []),
    ("mcp", "edge.services.mcp_server", "serve", []),
])
def test_node_id_reaches_each_node(monkeypatch, node, module, function, extra):
    import importlib
    given: dict = {}
    monkeypatch.setattr(importlib.import_module(module), function, lambda *a, **kw: given.update(kw) or 0)
    assert main(["run", node, *extra, "--node-id", f"{node}-front"]) == 0 and given["node_id"] == f"{node}-front"


def test_a_bad_node_id_or_one_for_a_brain_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["run", "body", "--node-id", "body/left"])
    assert exc.value.code == 2 and "'body/left' is not a node id" in capsys.readouterr().err
    assert main(["run", "brain", "--node-id", "brain-x"]) == 2
    assert "a brain is brain-<companion id>" in capsys.readouterr().err


def test_two_robots_with_the_same_node_ids_share_a_broker(broker):
    """Client ids carry the namespace (``body@robot1``): each robot's body keeps its session while
    the other's is connected, and each gets its own robot's actions."""
    got: dict[str, list[Action]] = {"robot1": [], "robot2": []}
    arrived = threading.Condition()

    def on_action(namespace: str) -> Callable[[Action], None]:
        def handler(action: Action) -> None:
            with arrived:
                got[namespace].append(action)
                arrived.notify_all()
        return handler
    bodies = {ns: Bus("body", "body", broker.address, namespace=ns) for ns in got}
    for ns, bus in bodies.items():
        bus.subscribe(Action, on_action(ns))
        bus.connect(timeout=10)
    brain = Bus("brain-pip", "brain", broker.address, persistent=False, announce=False).connect(timeout=10)
    try:
        assert sorted(bus.client_id for bus in bodies.values()) == ["body@robot1", "body@robot2"]
        assert all(bus.wait_subscribed(10) for bus in bodies.values())   # else an action may come before its SUBACK
        sent = {ns: Action(name="look", params={"x": 0.5}, sender="pip") for ns in got}
        for ns, action in sent.items():
            brain.client.publish(action.topic(ns), action.encode(), qos=1)
        with arrived:
            assert arrived.wait_for(lambda: all(got.values()), 10), got
        assert {ns: [a.id for a in actions] for ns, actions in got.items()} == {ns: [a.id] for ns, a in sent.items()}
        assert [bus.connects for bus in bodies.values()] == [1, 1], "one body knocked the other off"
        assert all(bus.connected for bus in bodies.values())
    finally:
        brain.close()
        for bus in bodies.values():
            bus.close()


def test_the_body_unit_logs_in_with_its_password_file(tmp_path_factory, tmp_path, monkeypatch):
    """As systemd starts it on a LAN install: body.env's password in the environment, no user
    name; the node logs in as its client id and its retained status reaches an observer."""
    staged = stage_install(tmp_path_factory)
    mqtt_dir = staged.root / "etc/companion/mqtt"
    lan = StagedBroker(staged.root, tmp_path / "broker").start()
    observer = Client(lan.port, "observer", env_value(mqtt_dir / "observer.env", "COMPANION_MQTT_PASSWORD"))
    monkeypatch.setenv("COMPANION_MQTT_PASSWORD", env_value(mqtt_dir / "body.env", "COMPANION_MQTT_PASSWORD"))
    monkeypatch.delenv("COMPANION_MQTT_USERNAME", raising=False)
    body = Node(SimpleNamespace(address=BrokerAddress("127.0.0.1", lan.port)), "body", "--tts", "none")
    try:
        observer.subscribe("status/body")
        with observer.got:
            assert observer.got.wait_for(lambda: any(json.loads(p)["state"] == "online" for _, p in observer.received),
                                         30), body.seen
    finally:
        body.stop()   # its exit status on SIGTERM is test_the_body_keeps_one_status_topic_across_restarts's concern
        observer.close()
        lan.stop()

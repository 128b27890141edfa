"""The broker ``companion up`` starts is watched: killed, it is restarted on the same port, the
console says so, the nodes reconnect, and QoS-1 messages sent meanwhile are acted on once each."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import time
from pathlib import Path

from stack_process import RunningCompanion, companion_cmd
from edge.app import Stack
from edge.runtime.broker import BrokerAddress, LocalBroker, free_port
from edge.runtime.bus import Bus
from edge.config import Settings
from edge.protocol.payloads import Perception
from edge.providers.scripted import ScriptedProvider

SPEAK = {"action": "speak", "params": {"message": "hello there"}}


def _children(pid: int) -> list[int]:
    """Direct children of a process, from every thread's /proc children list."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(p) for p in (task / "children").read_text().split()]
    return found


def _mosquitto_child(pid: int) -> int:
    for child in _children(pid):
        if Path(f"/proc/{child}/comm").read_text().strip() == "mosquitto":
            return child
    raise AssertionError(f"process {pid} has no mosquitto child")


def _wait_saved(data_dir: Path, since: float, timeout: float = 10.0) -> None:
    """Until mosquitto's autosave (every 1 s) has written the sessions made before ``since``:
    a session younger than the last save is not in the persistence file a restart reads."""
    db = data_dir / "mosquitto.db"
    deadline = time.monotonic() + timeout
    while not (db.exists() and db.stat().st_mtime > since + 0.01):
        assert time.monotonic() < deadline, f"mosquitto never saved {db}"
        time.sleep(0.05)


def _wait_stderr(up: RunningCompanion, needle: str, timeout: float = 30.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in list(up.stderr):
            if needle in line:
                return line
        time.sleep(0.05)
    raise AssertionError(f"no stderr line with {needle!r}:\n" + "\n".join(up.stderr[-30:]))


def test_companion_up_restarts_a_killed_broker_and_acts_again(tmp_path):
    script = tmp_path / "speak.jsonl"
    script.write_text(json.dumps(SPEAK) + "\n")
    address = BrokerAddress("127.0.0.1", free_port())
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    up = RunningCompanion(["--sim", "--tts", "none", "--provider", f"scripted:{script}?loop=1",
                           "--broker", str(address), "--json"], env, tmp_path)
    try:
        up.wait_ready()
        ready_at = time.time()
        broker_pid = _mosquitto_child(up.proc.pid)
        _wait_saved(_config_dir(broker_pid), ready_at)
        os.kill(broker_pid, signal.SIGKILL)
        lost = _wait_stderr(up, "broker lost: restarting")
        assert str(address) in lost and "killed by signal 9" in lost
        _wait_stderr(up, "broker back")
        assert _mosquitto_child(up.proc.pid) != broker_pid
        sent = subprocess.run(companion_cmd("perceive", "input", "are you still there?", "--broker", str(address)),
                              env=env, capture_output=True, text=True, timeout=60)
        assert sent.returncode == 0, sent.stderr
        perception_id = json.loads(sent.stdout)["id"]
        action_line = up.wait_for_line('"event": "action"', timeout=60)
        action = json.loads(action_line)
        assert action["perception_id"] == perception_id
        result = json.loads(up.wait_for_line('"event": "result"', timeout=60))["result"]
        assert result["ok"] and result["id"] == action["action"]["id"]
    finally:
        assert up.stop() == 0, "\n".join(up.stderr[-80:])


def _config_dir(pid: int) -> Path:
    """The data folder of a mosquitto started as ``mosquitto -c DIR/mosquitto.conf``."""
    args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    return Path(os.fsdecode(args[args.index(b"-c") + 1])).parent


def test_qos1_perceptions_sent_while_the_broker_restarts_are_acted_on_once_each(tmp_path):
    events: queue.Queue[tuple[str, dict]] = queue.Queue()
    notes: queue.Queue[str] = queue.Queue()
    settings = Settings(broker=BrokerAddress("127.0.0.1", free_port()), tts="none", sim=True,
                        timeline=tmp_path / "timeline.jsonl")
    stack = Stack(settings, provider=ScriptedProvider([SPEAK], loop=True), speaker=None, notify=notes.put,
                  observer_factory=lambda name: lambda kind, data: events.put((kind, data))).start()
    sender = Bus("restart-sender", "test", settings.broker, announce=False).connect(timeout=10)
    try:
        assert isinstance(stack.broker, LocalBroker)
        _wait_saved(stack.broker.data_dir, time.time())
        os.kill(stack.broker.process.pid, signal.SIGKILL)
        sent = [Perception(title="input", body=f"line {i}", sender="test") for i in range(20)]
        for perception in sent:
            sender.publish(perception)   # paho keeps each until the restarted broker acknowledges it
        assert "broker lost" in notes.get(timeout=30)
        acted: dict[str, int] = {}   # perception id -> actions decided for it
        results = 0
        deadline = time.monotonic() + 60
        while results < len(sent) and time.monotonic() < deadline:
            try:
                kind, data = events.get(timeout=1)
            except queue.Empty:
                continue
            if kind == "action":
                acted[data["perception_id"]] = acted.get(data["perception_id"], 0) + 1
            results += kind == "result" and data["result"]["ok"]
        assert "broker back" in notes.get(timeout=30) and stack.broker.restarts == 1
    finally:
        sender.close()
        stack.stop()
    timeline = [json.loads(line) for line in settings.timeline.read_text().splitlines()]
    started = [e for e in timeline if e.get("event") == "action.started"]
    assert acted == {p.id: 1 for p in sent}
    assert len(started) == len({e["id"] for e in started}) == len(sent), timeline

"""Two ``companion up`` stacks on one broker: apart by namespace, or by the body's ``--node-id``
(with their own companions), each keeps its connections and each body carries out only the
actions meant for it."""

from __future__ import annotations

import json
import queue
import time
from pathlib import Path

import pytest

from edge.app import Stack
from edge.runtime.bus import Bus
from edge.cli import build_parser, main
from edge.config import Settings
from edge.protocol.payloads import Perception
from edge.providers.scripted import ScriptedProvider
from repo_paths import REPO

ROOT = REPO
PIP = ROOT / "companions" / "pip.json"


def _stack(broker, tmp_path: Path, name: str, companion: Path, namespace: str | None = None,
           body_id: str = "body") -> tuple[Stack, queue.Queue]:
    results: queue.Queue = queue.Queue()
    settings = Settings(broker=broker.address, namespace=namespace, tts="none", sim=True,
                        companions=[companion], timeline=tmp_path / f"{name}.jsonl")
    script = ScriptedProvider([{"action": "speak", "params": {"message": f"this is {name}"}}], loop=True)
    def observe(kind: str, data: dict) -> None:
        if kind == "result":
            results.put(data["result"])
    stack = Stack(settings, provider=script, speaker=None, body_id=body_id, observer_factory=lambda _: observe)
    return stack.start(), results


def _until(condition, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.02)


def _spoken(stack: Stack) -> list[str]:
    lines = [json.loads(line) for line in stack.settings.timeline.read_text().splitlines()]
    return [e["params"]["message"] for e in lines if e["event"] == "action.started"]


def _other_companion(tmp_path: Path) -> Path:
    """pip.json under another id, so its brain (brain-<companion id>) is a different client."""
    data = json.loads(PIP.read_text())
    data["metadata"]["id"] = "0d3c2b1a-0000-4000-8000-00000000c0de"
    path = tmp_path / "pip-two.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("apart", ["namespace", "node_id"])
def test_two_stacks_share_one_broker(broker, tmp_path, apart):
    if apart == "namespace":
        one, two = dict(namespace="robot1"), dict(namespace="robot2")
        companions = (PIP, PIP)
    else:
        one, two = dict(body_id="body-left"), dict(body_id="body-right")
        companions = (PIP, _other_companion(tmp_path))
    first, first_results = _stack(broker, tmp_path, "first", companions[0], **one)
    second, second_results = _stack(broker, tmp_path, "second", companions[1], **two)
    sender = Bus("coexist-sender", "test", broker.address, persistent=False, announce=False).connect(timeout=10)
    try:
        to_first = Perception(title="input", body="hello first", to=first.companions[0].id, sender="test")
        to_second = Perception(title="input", body="hello second", to=second.companions[0].id, sender="test")
        sender.client.publish(to_first.topic(first.settings.namespace), to_first.encode(), qos=1)
        sender.client.publish(to_second.topic(second.settings.namespace), to_second.encode(), qos=1)
        assert first_results.get(timeout=15)["ok"] and second_results.get(timeout=15)["ok"]
        buses = first.buses + second.buses
        assert len({b.client_id for b in buses}) == len(buses)
        assert all(b.connected and b.connects == 1 for b in buses), [(b.client_id, b.connects) for b in buses]
        if apart == "node_id":   # the result a brain got may be the other body's: let both bodies start both
            _until(lambda: len(_spoken(first)) == len(_spoken(second)) == 2)
    finally:
        sender.close()
        first.stop()
        second.stop()
    if apart == "namespace":   # one actions topic per robot: each body did only its own brain's action
        assert (_spoken(first), _spoken(second)) == (["this is first"], ["this is second"])
    else:                      # one robot, two bodies: every body in the namespace sees both actions
        assert sorted(_spoken(first)) == sorted(_spoken(second)) == ["this is first", "this is second"]
    assert [first.buses[0].client_id, second.buses[0].client_id] == \
        (["body@robot1", "body@robot2"] if apart == "namespace" else ["body-left", "body-right"])


def test_up_takes_a_node_id_and_refuses_a_bad_one(capsys):
    assert build_parser().parse_args(["up", "--node-id", "body-left"]).node_id == "body-left"
    with pytest.raises(SystemExit) as exc:
        main(["up", "--node-id", "body/left"])
    assert exc.value.code == 2 and "'body/left' is not a node id" in capsys.readouterr().err

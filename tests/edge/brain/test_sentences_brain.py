"""The fast path on a real broker: a command Pochi's file names is carried out without the LLM,
shown as such on the console and in --json; anything else still goes to the provider."""

from __future__ import annotations

import io
import json
import queue
from pathlib import Path
from typing import Any, Iterator

import pytest

from body_drivers.sim import SimConfig
from edge.app import Stack
from edge.brain.loop import BrainConfig
from edge.config import Settings
from edge.runtime.bus import Bus
from edge.console import ConsoleObserver
from edge.protocol.companion import Companion, load_companion
from edge.protocol.payloads import Action, Perception, Status
from edge.providers.scripted import ScriptedProvider
from repo_paths import REPO

POCHI = REPO / "companions" / "pochi.json"


@pytest.fixture
def pochi() -> Companion:
    return load_companion(POCHI)


def _online(client_seen: "queue.Queue[Status]", node: str) -> None:
    """Wait for a node's retained status: its earlier subscriptions are then in place on the
    broker (it handles one client's packets in order)."""
    while True:
        status = client_seen.get(timeout=10)
        if status.node == node:
            return


@pytest.fixture
def rig(broker, pochi) -> Iterator[Any]:
    client = Bus("client", "test", broker.address).connect()
    statuses: queue.Queue[Status] = queue.Queue()
    actions: queue.Queue[Action] = queue.Queue()
    client.subscribe(Status, statuses.put)
    client.subscribe(Action, actions.put)
    events: queue.Queue[tuple[str, dict]] = queue.Queue()
    provider = ScriptedProvider([{"action": "speak", "params": {"message": "Bones! I like bones"}}])
    # `companion up`'s body and brain, on the test's broker
    stack = Stack(Settings(broker=broker.address), provider=provider, speaker=None, kinds=("body", "brain"),
                  start_broker=False, companions=[pochi], brain_config=BrainConfig(),
                  observer_factory=lambda name: lambda k, d: events.put((k, d))).start()
    stack.sim.config = SimConfig(move_speed=10, look_speed=10, gesture_s=0.0)
    _online(statuses, "body")
    _online(statuses, f"brain-{pochi.id}")
    yield client, provider, actions, events
    stack.stop()
    client.close()


def _until(events: "queue.Queue[tuple[str, dict]]", kind: str) -> list[tuple[str, dict]]:
    """Every event up to and including the first of ``kind``."""
    seen = []
    while True:
        item = events.get(timeout=10)
        seen.append(item)
        if item[0] == kind:
            return seen


def test_a_named_command_skips_the_llm_and_a_question_does_not(rig, pochi) -> None:
    client, provider, actions, events = rig
    client.publish(Perception(title="input", body="Pochi, please bark two times", to=pochi.id))
    action = actions.get(timeout=10)
    assert (action.name, action.params, action.sender) == ("bark", {"times": 2}, pochi.id)
    seen = _until(events, "result")
    decision = next(d for k, d in seen if k == "decision")
    assert decision["route"] == "sentence" and decision["template"] == "(bark|woof) {times} [times]"
    assert decision["response"]["segments"][0]["toolCall"]["args"] == {"times": 2}
    assert seen[-1][1]["result"]["ok"] is True
    assert provider.calls == []

    client.publish(Perception(title="input", body="What do you like to eat?", to=pochi.id))
    action = actions.get(timeout=10)
    assert (action.name, action.params) == ("speak", {"message": "Bones! I like bones"})
    decision = next(d for k, d in _until(events, "result") if k == "decision")
    assert decision.get("route") != "sentence"
    assert len(provider.calls) == 1 and "What do you like to eat?" in provider.calls[0][0]


def test_the_console_and_json_say_it_went_the_fast_way(rig, pochi) -> None:
    client, provider, actions, events = rig
    client.publish(Perception(title="input", body="Sit!", to=pochi.id))
    decision = next(d for k, d in _until(events, "result") if k == "decision")
    line = ConsoleObserver().render("decision", decision)
    assert line is not None and "decided by sentence template in" in line and " ms: sit {}" in line
    out = io.StringIO()
    ConsoleObserver(as_json=True, out=out, name="Pochi")("decision", decision)
    shown = json.loads(out.getvalue())
    assert shown["event"] == "decision" and shown["route"] == "sentence" and shown["template"].startswith("sit")
    assert provider.calls == []

"""The stages of a turn run in their listed order and say how long each took; the turn's helpers
act through the small ``Acts`` interface, with no brain behind it."""

from __future__ import annotations

from typing import Any

from edge.brain.acting import Acts
from edge.brain.brain_config import BrainConfig
from edge.brain.fast_path import FastPath
from edge.brain.loop import CompanionBrain
from edge.brain.memory import ConversationMemory
from edge.brain.stages import STAGES
from edge.brain.state import BrainState
from edge.protocol.companion import load_companion
from edge.protocol.payloads import ActionResult, Perception
from edge.providers.base import ToolCall
from edge.providers.scripted import ScriptedProvider

from brain_doubles import OkBody
from repo_paths import REPO

PIP = load_companion(REPO / "companions" / "pip.json")


def _handled(body_text: str, provider: Any = None) -> tuple[list[ActionResult], list[tuple[str, dict]]]:
    events: list[tuple[str, dict]] = []
    body = OkBody()
    provider = provider or ScriptedProvider([{"action": "speak", "params": {"message": "Nice to meet you!"}}])
    brain = CompanionBrain(PIP, provider, body, BrainConfig(memory_messages=0, warm=False),
                           lambda kind, data: events.append((kind, data)))
    body.brain = brain
    try:
        results = brain.handle(Perception(title="input", body=body_text))
    finally:
        brain.stop(timeout=1)
    return results, events


def _stages(events: list[tuple[str, dict]]) -> dict[str, float]:
    (timed,) = [data for kind, data in events if kind == "stages"]
    return timed["ms"]


def test_a_model_turn_runs_every_stage_in_order_each_timed():
    results, events = _handled("Hello, nice weather today")
    assert [r.name for r in results] == ["speak"] and all(r.ok for r in results)
    ms = _stages(events)
    assert [name for name in ms if "." not in name] == list(STAGES)
    assert {"model.deciding", "model.acting"} <= set(ms) and all(v >= 0 for v in ms.values())
    # the stages event comes after the decision it timed, once per perception
    kinds = [kind for kind, _ in events]
    assert kinds.index("stages") > kinds.index("decision") and kinds.count("stages") == 1


def test_a_stage_that_settles_the_turn_ends_it():
    results, events = _handled("look to your left")      # one of the file's sentence templates
    assert [(r.name, r.ok) for r in results] == [("look", True)]
    assert list(_stages(events)) == ["templates"]
    assert [d["route"] for kind, d in events if kind == "decision"] == ["sentence"]


class RecordingActs:
    """An ``Acts`` with no brain and no bus: it records what the helper asked for."""

    def __init__(self) -> None:
        self.performed: list[tuple[str, dict[str, Any], str]] = []
        self.states: list[BrainState] = []
        self.seen: list[str] = []

    def perform(self, name: str, params: dict[str, Any], source_id: str) -> ActionResult | None:
        self.performed.append((name, params, source_id))
        return ActionResult(id="r", name=name, ok=True, sender="t", started=0.0, finished=0.0)

    def send(self, name: str, params: dict[str, Any], source_id: str):
        result = self.perform(name, params, source_id)
        return lambda: result

    def send_message(self, call: ToolCall, source_id: str) -> ActionResult:
        raise AssertionError("no message in this test")

    def set_state(self, new: BrainState) -> None:
        self.states.append(new)

    def observe(self, kind: str, data: dict[str, Any]) -> None:
        self.seen.append(kind)

    def cancelled(self) -> str | None:
        return None

    @property
    def cancel_event(self):
        raise AssertionError("the fast path calls no model")

    def last_params(self, name: str) -> dict[str, Any]:
        return next((dict(p) for n, p, _ in reversed(self.performed) if n == name), {})


def test_the_fast_path_acts_through_the_interface_alone():
    acts = RecordingActs()
    as_interface: Acts = acts
    memory = ConversationMemory(4)
    fast = FastPath(PIP, memory, as_interface)
    perception = Perception(title="input", body="look to your left")
    results = fast.run(perception)
    assert results is not None and [r.name for r in results] == ["look"]
    assert acts.performed == [("look", {"x": -1, "y": 0, "z": 1}, perception.id)]
    assert acts.states == [BrainState.EXECUTING_ACTIONS, BrainState.AWAITING_RESULTS]
    assert acts.seen == ["decision"] and len(memory.window()) == 2   # the exchange is remembered

"""The prompt path the brain builds: one cached system text, grounded looks, unchanged views."""

from __future__ import annotations

from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from edge.brain import prompt
from edge.brain.novelty import ViewMemory
from edge.perception.camera.detectors import Detection
from edge.perception.camera.scene import SceneEvent
from edge.protocol.payloads import Perception
from edge.protocol.companion import Companion, load_companion
from edge.providers.decision import decision_prompt, decision_schema
from repo_paths import REPO

ROOT = REPO


@pytest.fixture(scope="module")
def companions() -> dict[str, Companion]:
    return {name: load_companion(ROOT / "companions" / f"{name}.json") for name in ("pip", "pochi")}


def _view(*boxes: tuple[str, float, float, float, float], changes: list | None = None, ts: float = 1.0) -> Perception:
    detections = [Detection(label, 0.9, (x1, y1, x2, y2)) for label, x1, y1, x2, y2 in boxes]
    counts = {d.label: 1 for d in detections}
    if changes is None:
        changes = [{"label": d.label, "change": "appeared"} for d in detections]
    return Perception(title="vision", format="object",
                      body=SceneEvent(ts, changes, counts, detections, (640, 480)).body())


def test_system_text_is_the_same_for_every_perception(companions):
    pip = companions["pip"]
    text = prompt.system_text(pip)
    assert all(e.condition in text for e in pip.events)
    assert "Story:" in text and pip.story in text


def test_examples_are_turns_with_speech_last(companions):
    turns = prompt.example_turns(companions["pip"])
    assert [m.role for m in turns[:2]] == ["user", "assistant"]
    assert turns[-1].role == "assistant" and '"action":"speak"' in turns[-1].content
    assert any('"action":"look"' in m.content for m in turns)


def test_a_look_at_a_view_can_only_point_at_what_is_in_it(companions):
    pip = companions["pip"]
    tools = prompt.offered_tools(pip, "vision", False)
    view = _view(("person", 0.05, 0.2, 0.3, 0.95), ("cup", 0.7, 0.6, 0.8, 0.7))
    grounded = {t.name: t for t in prompt.ground_tools(tools, view)}
    xs = grounded["look"].parameters["properties"]["x"]["enum"]
    person = next(o for o in view.body["objects"] if o["label"] == "person")
    assert person["x"] < 0 and person["x"] in xs and len(xs) == 2
    schema = Draft202012Validator(decision_schema(list(grounded.values())))
    assert schema.is_valid({"action": "look", "params": {"x": person["x"], "y": person["y"], "z": 1}})
    assert not schema.is_valid({"action": "look", "params": {"x": -person["x"], "y": person["y"], "z": 1}})
    # what the model reads does not change, so its prompt cache holds
    assert decision_prompt(list(grounded.values())) == decision_prompt(tools)
    # a spoken line and other actions are untouched; a text perception grounds nothing
    assert grounded["speak"] == next(t for t in tools if t.name == "speak")
    assert prompt.ground_tools(tools, Perception(title="input", body="look left")) == tools


def test_an_unchanged_view_is_recognised_and_a_new_one_is_not():
    views = ViewMemory()
    first = _view(("person", 0.05, 0.2, 0.3, 0.95), ts=1.0)
    assert views.unchanged(first) is None
    again = _view(("person", 0.05, 0.2, 0.3, 0.95), ts=5.0)            # only the time differs
    assert views.unchanged(again) == "the same vision as the last one"
    quiet = _view(("person", 0.05, 0.2, 0.3, 0.95), changes=[], ts=9.0)
    assert views.unchanged(quiet) == "the view reports no changes"
    moved = _view(("person", 0.6, 0.2, 0.9, 0.95), ts=12.0)
    assert views.unchanged(moved) is None
    said = Perception(title="input", body="hello")
    assert views.unchanged(said) is None and views.unchanged(said) is None   # words are never "unchanged"


def test_correction_carries_the_perception_and_the_rejected_reply():
    text = prompt.correction_text("input (text): bark twice", '{"action":"bark","params":{"times":9}}',
                                  ["bark /times: 9 is greater than the maximum of 5"])
    assert text.startswith("input (text): bark twice\n")
    assert '{"action":"bark","params":{"times":9}}' in text and "maximum of 5" in text
    cut = prompt.correction_text("input (text): hi", "Hello th", ["reply cut off at max_tokens: 'Hello th'"])
    assert "shorter reply" in cut


def test_the_companion_tells_its_own_story_in_an_earlier_turn(companions):
    """Its story as something it said itself, the last turn before the perception: a small model
    answers "what's your job?" from what it last saw, not from the system text."""
    pochi = companions["pochi"]
    turns = prompt.example_turns(pochi)
    asked = [i for i, m in enumerate(turns) if m.role == "user" and m.content.endswith(prompt.INTRODUCE_EN)]
    assert len(asked) == 1
    told = turns[asked[0] + 1].content
    assert pochi.story in told and '"action":"speak"' in told
    assert asked[0] == len(turns) - 2                        # the last example turn
    nikoni = load_companion(ROOT / "companions" / "nikoni-rittai-chan.json")
    assert any(m.content.endswith(prompt.INTRODUCE_JA) for m in prompt.example_turns(nikoni))


def test_a_japanese_companion_is_told_in_japanese_what_was_wrong_with_its_words():
    """Told in English, the 0.5B model said the English aloud; a decision's form problems stay
    in English (they name schema pointers)."""
    echo = ["speak /message: it repeats what the person said; answer them in your own words"]
    text = prompt.correction_text("input (text): 元気？", '"元気？"', echo, answer=True, japanese=True)
    assert text.startswith("input (text): 元気？\n") and "くり返し" in text and "rejected" not in text
    schema = ["look /x: 5 is greater than the maximum of 1"]
    assert "rejected" in prompt.correction_text("input (text): 右を見て", "{}", schema, answer=True, japanese=True)
    english = prompt.correction_text("input (text): hi there", '"hi there"', echo, answer=True, japanese=False)
    assert "only repeats their words" in english and "/message" not in english

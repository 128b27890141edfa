"""The brain with the scripted provider and the simulated body. They meet on the in-process
transport (the same decode-and-validate path as the broker's): the broker is not what these tests
are about (tests/test_bus*.py and tests/e2e/ keep it real). "Nothing more was published" is
checked once every message sent so far was handled and the brain is idle, not after a sleep."""

from __future__ import annotations

import time

import pytest
from brain_rig import BrainRig

from edge.brain.loop import CompanionBrain
from edge.config import DEFAULT_COMPANION
from edge.protocol.companion import load_companion
from edge.protocol.payloads import Action, Perception
from edge.providers.scripted import ScriptedProvider


@pytest.fixture
def pip():
    return load_companion(DEFAULT_COMPANION)


@pytest.fixture
def world(pip):
    """A brain factory, an observer client that records every action, its queue of actions and the
    simulated body; ``client.hub`` is the in-process broker they share."""
    rig = BrainRig(pip, (Action,))
    yield rig.brain, rig.client, rig.seen[Action], rig.sim
    rig.close()


def _wait(pred, timeout=10.0):
    deadline = time.time() + timeout
    while not pred():
        if time.time() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.02)


def _settled(client, brain: CompanionBrain) -> None:
    """No message on its way or in a handler and the brain idle (checked twice around the brain:
    an idle brain with nothing in flight publishes nothing more)."""
    _wait(lambda: client.hub.settle(0) and brain.idle() and client.hub.settle(0))


def test_perception_to_action_to_result(world, pip):
    start_brain, client, actions, sim = world
    provider = ScriptedProvider([{"action": "speak", "params": {"message": "Hi, I am Pip!"}}])
    brain = start_brain(provider)
    client.publish(Perception(title="input", body="Hello robot", to=pip.id))
    _wait(lambda: brain.handled == 1)
    action = actions.get(timeout=2)
    assert action.name == "speak" and action.params == {"message": "Hi, I am Pip!"} and action.sender == pip.id
    assert [d["result"]["ok"] for k, d in brain.events if k == "result"] == [True]
    assert sim.spoken[0]["text"] == "Hi, I am Pip!"
    prompt, context = provider.calls[0]
    assert "input" in prompt and "Hello robot" in prompt
    assert "Pip" in context.system and pip.personality in context.system
    # one system text for every perception (so it stays in the model's prompt cache): every rule
    assert all(e.condition in context.system for e in pip.events)
    assert {t.name for t in context.described} == {a.title for a in pip.actions}   # every action described
    assert {t.name for t in context.tools} == {"speak"}   # talk is answered in words: no motion, no expression
    # the file's worked examples come as earlier turns, the perception last
    assert [m.role for m in context.history[:2]] == ["user", "assistant"]


def test_invalid_decision_is_corrected_before_anything_is_published(world, pip):
    start_brain, client, actions, sim = world
    provider = ScriptedProvider([
        {"action": "look", "params": {"x": 100, "y": 0, "z": 0}},   # out of range: never published
        {"raw": "look left please"},                                  # unparsable: never published
        {"action": "look", "params": {"x": -1, "y": 0, "z": 0.5}},
    ])
    brain = start_brain(provider)
    client.publish(Perception(title="input", body="What a nice lamp that is.", to="all"))
    _wait(lambda: brain.handled == 1)
    published = actions.get(timeout=2)
    assert published.params == {"x": -1, "y": 0, "z": 0.5}
    _settled(client, brain)
    assert actions.empty()
    correction = provider.calls[1][0]
    assert "rejected" in correction and "/x" in correction and "100" in correction
    # the correction repeats the perception and quotes the rejected reply (no memory needed)
    assert "What a nice lamp that is." in correction and '"x":100' in correction.replace(" ", "")
    assert "unparsable" in provider.calls[2][0] and "look left please" in provider.calls[2][0]
    assert "What a nice lamp that is." in provider.calls[2][0]
    assert sim.pose.gaze == pytest.approx((-1, 0, 0.5))


def test_unknown_action_fed_back_then_a_repeat_stops_the_turn(world):
    start_brain, client, actions, sim = world
    provider = ScriptedProvider([{"action": "fly", "params": {}}] * 3)
    brain = start_brain(provider, max_corrections=2)
    client.publish(Perception(title="input", body="fly!"))
    _wait(lambda: brain.handled == 1)
    assert len(provider.calls) == 2 and "unknown action 'fly'" in provider.calls[1][0]
    _settled(client, brain)
    assert actions.empty()


def test_different_failures_use_up_the_rounds(world):
    start_brain, client, actions, sim = world
    provider = ScriptedProvider([{"action": "fly", "params": {}}, {"action": "swim", "params": {}},
                                 {"action": "dig", "params": {}}, {"action": "nod", "params": {"times": 1}}])
    brain = start_brain(provider, max_corrections=2)
    client.publish(Perception(title="input", body="do something"))
    _wait(lambda: brain.handled == 1)
    assert len(provider.calls) == 3  # 1 + max_corrections; the valid 4th reply is never asked for
    _settled(client, brain)
    assert actions.empty()


def test_ignores_other_companions_and_unknown_titles(world):
    start_brain, client, actions, sim = world
    provider = ScriptedProvider([{"none": True}])
    brain = start_brain(provider)
    client.publish(Perception(title="input", body="not for you", to="someone-else"))
    client.publish(Perception(title="smell", body="coffee"))
    client.publish(Perception(title="input", body="for you"))
    _wait(lambda: brain.handled == 1)
    _settled(client, brain)
    assert len(provider.calls) == 1 and "for you" in provider.calls[0][0]
    assert any(k == "perception_rejected" and "smell" in d["reason"] for k, d in brain.events)
    assert actions.empty()  # no action is a valid decision


def test_provider_error_does_not_stop_the_loop(world):
    start_brain, client, actions, sim = world
    provider = ScriptedProvider([{"error": {"code": "E2001", "message": "boom"}},
                                 {"action": "nod", "params": {"times": 1}}])
    brain = start_brain(provider)
    client.publish(Perception(title="input", body="one"))
    client.publish(Perception(title="input", body="two"))
    _wait(lambda: brain.handled == 2)
    assert actions.get(timeout=2).name == "nod"
    assert any(k == "provider_error" and d["error"]["code"] == "E2001" for k, d in brain.events)

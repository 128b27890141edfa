"""How a person's sentence is put to the model: by meaning, with the multilingual sentence encoder."""

from __future__ import annotations

from pathlib import Path

import pytest

from edge.brain import prompt
from edge.brain.intent import CLEAR_COMMAND_SCORE, COMMAND_SCORE, CommandSense
from edge.brain.loop import BrainConfig, CompanionBrain
from edge.protocol.companion import load_companion
from edge.protocol.payloads import Action, ActionResult, Perception
from edge.providers.retrieval import EmbeddingRanker, default_ranker
from edge.providers.scripted import ScriptedProvider

COMPANIONS = Path(__file__).resolve().parents[1] / "companions"


@pytest.fixture(scope="module")
def pochi():
    if not isinstance(default_ranker(), EmbeddingRanker):
        pytest.skip("the sentence encoder is not installed (companion models fetch use-multilingual-v3)")
    return load_companion(COMPANIONS / "pochi.json")


@pytest.fixture(scope="module")
def sense(pochi):
    return CommandSense(pochi, prompt.offered_tools(pochi, "input", False))


@pytest.mark.parametrize("said, action", [("Pochi, let me hear two barks", "bark"), ("Gimme your left paw, buddy", "give_paw"),
                                          ("ポチ、お手して", "give_paw")])
def test_a_command_outside_the_templates_is_recognised_by_meaning(sense, said, action):
    assert sense.closest(said)[0] == action
    assert sense.asks_for(said)[0] == action


@pytest.mark.parametrize("said", ["What did you have for breakfast?", "It is raining again today.", "今日は疲れたよ"])
def test_talk_is_not_taken_for_a_command(sense, said):
    assert sense.closest(said)[1] < COMMAND_SCORE and sense.asks_for(said) == []


@pytest.mark.parametrize("said", ["Don't bark!", "Stop barking, Pochi.", "No, not now.", "吠えないで"])
def test_a_sentence_that_says_no_never_asks_for_the_action_it_names(sense, said):
    assert sense.says_no(said) and sense.asks_for(said) == []


class _Body:
    """Answers every action ok at once; records them."""
    def __init__(self):
        self.brain, self.actions = None, []

    def publish(self, payload, retain=None):
        if isinstance(payload, Action):
            self.actions.append(payload)
            self.brain._on_result(ActionResult(id=payload.id, name=payload.name, ok=True, sender="t", started=0.0,
                                               finished=0.0))

    def subscribe(self, *args, **kwargs):
        pass


def _offered(pochi, said: str) -> set[str]:
    provider = ScriptedProvider([{"none": True}], loop=True)
    body = _Body()
    brain = CompanionBrain(pochi, provider, body, BrainConfig(memory_messages=0, warm=False))
    body.brain = brain
    try:
        brain.handle(Perception(title="input", body=said))
    finally:
        brain.stop(timeout=1)
    return {t.name for t in provider.calls[0][1].tools}


def test_the_model_is_offered_what_the_sentence_asks_for(pochi):
    assert CLEAR_COMMAND_SCORE > COMMAND_SCORE
    assert _offered(pochi, "Pochi, let me hear two barks") == {"bark"}      # it only fills in times
    assert _offered(pochi, "Stop barking, Pochi.") == {"speak"}             # words or nothing, no motion
    assert "speak" in _offered(pochi, "What did you have for breakfast?")   # talk: every action, speech too

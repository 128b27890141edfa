"""Warm-up before ready: the brain warms its provider with its own prompt before it takes inputs,
and a warmed embedded model answers its first decision from the prompt cache."""

from __future__ import annotations

import queue

import pytest

from edge.app import Stack
from edge.brain.loop import BrainConfig
from edge.config import DEFAULT_COMPANION, Settings
from edge.protocol.companion import load_companion
from edge.protocol.payloads import Perception
from edge.providers.base import ProviderContext, ProviderError
from edge.providers.scripted import ScriptedProvider


class Warming(ScriptedProvider):
    """A scripted provider with the warm hook; records what it was warmed with, or fails."""

    def __init__(self, *args, fail: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.warmed: list[ProviderContext] = []
        self.fail = fail

    def warm(self, context):
        if self.fail:
            raise ProviderError("E3001", "the model server is not up yet")
        self.warmed.append(context)
        return True


@pytest.fixture
def pip():
    return load_companion(DEFAULT_COMPANION)


def brain_stack(broker, pip, provider, observer) -> Stack:
    """``companion run brain`` on the test broker, with this provider; not started yet."""
    return Stack(Settings(broker=broker.address), kinds=("brain",), start_broker=False, companions=[pip],
                 provider=provider, brain_config=BrainConfig(), observer_factory=lambda name: observer)


def test_the_brain_is_warm_before_start_returns_with_what_its_turns_send(broker, pip):
    provider = Warming([{"none": True}])
    events: list = []
    decided: queue.Queue = queue.Queue()
    stack = brain_stack(broker, pip, provider,
                        lambda k, d: (events.append((k, d)), k == "decision" and decided.put(d))).start()
    brain, bus = stack.brains[0], stack.buses[0]
    try:
        assert len(provider.warmed) == 1 and provider.calls == []    # warmed, no turn spent on it
        assert [k for k, _ in events] == ["warming", "warmed"] and brain.warm_s is not None
        bus.publish(Perception(title="input", body="are you there?"))  # after its own subscribe: no race
        decided.get(timeout=10)
        warmed, turn = provider.warmed[0], provider.calls[0][1]
        assert pip.personality in warmed.system and warmed.system == turn.system   # the same prefix
        # the prompt describes the same actions (the reply's grammar may allow fewer: talk gets no motions)
        assert [t.name for t in warmed.described] == [t.name for t in turn.described]
        assert {t.name for t in turn.tools} <= {t.name for t in warmed.tools}
        assert warmed.history == turn.history
    finally:
        stack.stop()


def test_a_failed_warm_up_is_reported_and_the_brain_still_works(broker, pip):
    provider = Warming([{"none": True}], fail=True)
    events: list = []
    done: queue.Queue = queue.Queue()
    stack = brain_stack(broker, pip, provider,
                        lambda k, d: (events.append((k, d)), k == "decision" and done.put(d))).start()
    brain, bus = stack.brains[0], stack.buses[0]
    try:
        failed = [d for k, d in events if k == "warm_failed"]
        assert failed and failed[0]["error"]["code"] == "E3001" and brain.warm_s is None
        bus.publish(Perception(title="input", body="are you there?"))  # after its own subscribe: no race
        assert done.get(timeout=10)["problems"] == []
    finally:
        stack.stop()


def test_a_warmed_embedded_model_takes_its_first_decision_from_the_prompt_cache(pip):
    pytest.importorskip("xllamacpp")
    from edge.brain import prompt
    from edge.providers.embedded import EmbeddedProvider, default_model_path
    path = default_model_path()
    if path is None:
        pytest.skip("the default embedded model is not installed (companion models fetch)")
    context = ProviderContext(tools=prompt.offered_tools(pip, "input", False), system=prompt.system_text(pip))
    with EmbeddedProvider(path, seed=1) as provider:
        assert provider.warm(context)
        first = provider.generate("input (text): Hello!", context)
    usage = first.metadata["usage"]
    assert usage["cached_tokens"] >= 0.8 * usage["prompt_tokens"]   # the system prompt was already in the cache

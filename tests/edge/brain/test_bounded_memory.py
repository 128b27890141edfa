"""What a long run keeps stays bounded (bench/soak.py found these two growing by each turn):
the scripted provider's call log and the simulated body's spoken sentences."""

from __future__ import annotations

import threading

from body_drivers.sim import SPOKEN_KEPT, SimBody
from edge.protocol.payloads import Action
from edge.providers.base import ProviderContext
from edge.providers.scripted import ScriptedProvider


def test_a_looping_script_keeps_only_its_last_calls():
    provider = ScriptedProvider([{"action": "speak", "params": {"message": "hi"}}], loop=True, keep_calls=5)
    for n in range(12):
        provider.generate(f"prompt {n}", ProviderContext())
    assert provider.call_count == 12
    assert [prompt for prompt, _ in provider.calls] == [f"prompt {n}" for n in range(7, 12)]


def test_the_simulated_body_keeps_only_its_last_sentences():
    sim = SimBody()
    for n in range(SPOKEN_KEPT + 3):
        sim.execute(Action(name="speak", params={"message": f"line {n}"}, sender="pip"), threading.Event())
    assert len(sim.spoken) == SPOKEN_KEPT
    assert sim.spoken[0]["text"] == "line 3" and sim.spoken[-1]["text"] == f"line {SPOKEN_KEPT + 2}"

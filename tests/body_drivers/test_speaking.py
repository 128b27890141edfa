"""The body says when a speech action's sound really starts (``speaking``, docs/protocol.md): the
microphone learns the robot's voice from then, which on a busy CPU is seconds after the action."""

from __future__ import annotations

import queue

import pytest

from body_drivers.speech.speaker import Speaker
from body_drivers.speech.tts import make_synthesizer
from body_drivers.speech.wav_output import WavFileOutput
from edge.app import Stack
from edge.config import DEFAULT_COMPANION, Settings
from edge.protocol.companion import load_companion
from edge.protocol.payloads import Action, ActionResult, Speaking
from edge.runtime.local import LocalHub


@pytest.mark.parametrize("name", ["speak", "look"])
def test_the_body_announces_the_first_audio_of_a_speech_action_and_of_nothing_else(tmp_path, name):
    pip = load_companion(DEFAULT_COMPANION)
    hub = LocalHub()
    speaker = Speaker(make_synthesizer("espeak"), WavFileOutput(tmp_path / "speech"))
    stack = Stack(Settings(sim=True), speaker=speaker, kinds=("body",), start_broker=False, transport=hub.transport,
                  companions=[pip]).start()
    ear = hub.transport("ear", "test")
    heard: queue.Queue[Speaking] = queue.Queue()
    results: queue.Queue[ActionResult] = queue.Queue()
    ear.subscribe(Speaking, heard.put)
    ear.subscribe(ActionResult, results.put)
    ear.connect()
    try:
        params = {"message": "Hello there."} if name == "speak" else {"x": 0.3, "y": 0.0, "z": 1.0}
        action = Action(name=name, params=params, sender=pip.id)
        ear.publish(action)
        result = results.get(timeout=30)
        assert result.id == action.id and result.ok, result
        hub.settle()
        if name != "speak":
            assert heard.empty()   # a look makes no sound
            return
        said = heard.get_nowait()
        assert said.action == action.id and said.sender == "body"
        assert result.started <= said.at <= result.finished   # while the action ran, not at its start
        assert heard.empty()       # once per action
    finally:
        ear.close()
        stack.stop()

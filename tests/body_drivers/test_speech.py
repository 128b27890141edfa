"""Speech output for real: piper and espeak-ng voices, sentence splitting, and the Speaker
playing through sounddevice into ALSA's file sink (see tests/rigs/alsa_sink.py)."""

from __future__ import annotations

import logging
import shutil
import struct
import threading
import time

import numpy as np
import pytest

from alsa_sink import alsa_file_sink, read_wav  # noqa: F401  (fixture)
from servo_harness import wait_for
from body_drivers.speech.playback import AudioDeviceError, AudioOutput, list_output_devices
from body_drivers.speech.speaker import Speaker, SpeechError
from body_drivers.speech.tts import (
    EspeakSynthesizer,
    PiperSynthesizer,
    SynthesisUnavailable,
    decode_wav,
    make_synthesizer,
    split_sentences,
)

HELLO = "Hello, I am your robot."
THREE = "Hello, I am your robot. I can look around the room. Shall we play a game?"
LONG = " ".join(f"This is sentence number {n}, and it goes on for a little while." for n in range(1, 13))
needs_espeak = pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng not installed")


def rms(samples: np.ndarray) -> float:
    return float(np.sqrt(np.mean(samples.astype(np.float64) ** 2))) if samples.size else 0.0


@pytest.fixture(scope="module")
def piper() -> PiperSynthesizer:
    return PiperSynthesizer()  # loaded once: ~1.5 s


class Recording:
    """Wraps an engine and keeps every sentence's audio, to compare with what was played."""

    def __init__(self, inner, fail_on: int | None = None) -> None:
        self.inner, self.fail_on = inner, fail_on
        self.sample_rate, self.name = inner.sample_rate, inner.name
        self.audio: list[np.ndarray] = []

    def synthesize(self, text: str) -> np.ndarray:
        if self.fail_on is not None and len(self.audio) == self.fail_on:
            raise RuntimeError("engine fell over")
        audio = self.inner.synthesize(text)
        self.audio.append(audio)
        return audio


# ----------------------------------------------------------------------------- engines


def test_piper_speaks_a_sentence(piper):
    audio = piper.synthesize(HELLO)
    assert audio.dtype == np.int16 and audio.ndim == 1
    assert piper.sample_rate == 22050 and piper.name == "piper:en_US-joe-medium"
    assert 0.5 <= audio.size / piper.sample_rate <= 5.0
    assert rms(audio) > 500


@needs_espeak
def test_espeak_speaks_a_sentence():
    espeak = EspeakSynthesizer()
    audio = espeak.synthesize(HELLO)
    assert audio.dtype == np.int16 and espeak.sample_rate == 22050
    assert 0.5 <= audio.size / espeak.sample_rate <= 5.0
    assert rms(audio) > 500
    assert espeak.synthesize("-v is not an option here").size > 0  # text goes via stdin


@needs_espeak
def test_espeak_unknown_voice_is_named():
    with pytest.raises(SynthesisUnavailable, match="xx-nope"):
        EspeakSynthesizer("xx-nope")


def test_piper_missing_voice_is_named(tmp_path):
    with pytest.raises(SynthesisUnavailable, match="missing.onnx"):
        PiperSynthesizer(tmp_path / "missing.onnx")


@needs_espeak
def test_fallback_to_espeak_warns_once_with_the_reason(tmp_path, caplog):
    with caplog.at_level(logging.WARNING):
        synth = make_synthesizer(f"piper:{tmp_path / 'gone.onnx'}")
    assert isinstance(synth, EspeakSynthesizer)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "gone.onnx" in warnings[0].getMessage()


def test_no_engine_at_all_names_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no espeak-ng
    with pytest.raises(SynthesisUnavailable) as err:
        make_synthesizer(f"piper:{tmp_path / 'gone.onnx'}")
    assert "piper-tts" in str(err.value) and "espeak-ng" in str(err.value)
    with pytest.raises(ValueError, match="unknown TTS engine"):
        make_synthesizer("festival")


def test_default_choice_is_piper():
    assert make_synthesizer().name.startswith("piper:")


def test_decode_wav_reads_streaming_headers():
    samples = np.arange(-50, 50, dtype=np.int16)
    fmt = struct.pack("<HHIIHH", 1, 1, 16000, 32000, 2, 16)
    for size in (0, 0x7FFFF000):  # ALSA file plugin mid-stream; espeak-ng --stdout
        data = (b"RIFF" + struct.pack("<I", size) + b"WAVEfmt " + struct.pack("<I", 16) + fmt
                + b"data" + struct.pack("<I", size) + samples.tobytes())
        decoded, rate = decode_wav(data)
        assert rate == 16000 and np.array_equal(decoded, samples)
    with pytest.raises(ValueError, match="RIFF"):
        decode_wav(b"not a wav")


# ---------------------------------------------------------------------------- sentences


@pytest.mark.parametrize("text, expected", [
    ("Hello there. How are you? I am fine!", ["Hello there.", "How are you?", "I am fine!"]),
    ("こんにちは。元気ですか？はい！", ["こんにちは。", "元気ですか？", "はい！"]),
    ("First line\nsecond line\n\n", ["First line", "second line"]),
    ("Dr. Smith paid 3.50 dollars at 5 p.m. today. Then he left.",
     ["Dr. Smith paid 3.50 dollars at 5 p.m. today.", "Then he left."]),
    ('"Yes." she said. Okay!', ['"Yes." she said.', "Okay!"]),
    ("Wait... what?! Really.", ["Wait... what?!", "Really."]),
    ("Hi. ...", ["Hi...."]),
    ("Step 1. Open the box.", ["Step 1.", "Open the box."]),
    ("A. Go now.", ["A. Go now."]),
    ("  lots   of\tspace  here.  ", ["lots of space here."]),
    ("...", []),
    ("   ", []),
])
def test_split_sentences(text, expected):
    assert split_sentences(text) == expected


def test_split_sentences_cuts_run_ons_at_commas():
    parts = split_sentences(", ".join(["a clause with words"] * 40), max_chars=100)
    assert len(parts) > 1 and all(len(p) <= 100 for p in parts)
    assert all(p.endswith(",") for p in parts[:-1])


# ------------------------------------------------------------------- speaker, headless


def test_speaker_plays_what_was_synthesized(alsa_file_sink, piper):
    synth = Recording(piper)
    report = Speaker(synth, AudioOutput()).speak(THREE)

    played, rate = alsa_file_sink.last()
    synthesized = np.concatenate(synth.audio)
    assert rate == piper.sample_rate
    assert abs(played.size - synthesized.size) <= 0.1 * synthesized.size
    assert np.array_equal(played, synthesized)  # int16 mono at 22050 Hz passes through untouched
    assert rms(played) > 500
    assert report.sentences == report.sentences_synthesized == 3 and not report.cancelled
    assert report.frames_written == synthesized.size
    # Streaming: the first sentence was heard before the last one existed.
    assert report.first_audio_at is not None
    assert report.synthesis_started_at <= report.first_audio_at < report.sentence_ready_at[-1]
    # Paced to real time (speak() lasts about as long as the speech): measured in bench/pacing.py.
    assert report.started_at <= report.first_audio_at <= report.ended_at


def test_each_utterance_is_its_own_file(alsa_file_sink, piper):
    speaker = Speaker(piper, AudioOutput(pace=False))
    speaker.speak("One.")
    speaker.speak("Two, three.")
    files = alsa_file_sink.recordings()
    assert [f.name for f in files] == ["speaker.wav", "speaker.wav.0001"]
    first, second = (read_wav(f)[0] for f in files)
    assert 0 < first.size < second.size


def test_cancel_cuts_speech_short(alsa_file_sink, piper):
    speaker = Speaker(piper, AudioOutput())
    cancel = threading.Event()
    cancelled_at: list[float] = []

    heard = 44 + int(0.5 * piper.sample_rate) * 2   # the WAV header and half a second of int16 mono

    def cancel_once_audible() -> None:
        """Cancel once half a second of speech reached the sink: its size, not a clock after the call
        or the first sound (a busy machine synthesizes slowly and the playback waits for it)."""
        wait_for(lambda: any(p.stat().st_size >= heard for p in alsa_file_sink.recordings()), timeout=30, step=0.01)
        cancelled_at.append(time.monotonic())
        cancel.set()

    canceller = threading.Thread(target=cancel_once_audible)
    canceller.start()
    report = speaker.speak(LONG, cancel)
    returned = time.monotonic()
    canceller.join()

    assert report.cancelled
    assert report.sentences_synthesized < report.sentences
    played, rate = alsa_file_sink.last()
    assert played.size == report.frames_written
    assert 0.3 < played.size / rate < 2.5  # about half a second of a ~40 s text
    assert cancelled_at[0] <= returned   # returned after the cancel (how promptly: bench/pacing.py)
    # The speaker is not wedged: the next utterance plays in full.
    assert not speaker.speak(HELLO).cancelled


def test_cancel_before_speaking_plays_nothing(alsa_file_sink, piper):
    cancel = threading.Event()
    cancel.set()
    report = Speaker(piper, AudioOutput()).speak(HELLO, cancel)
    assert report.cancelled and report.frames_written == 0 and report.first_audio_at is None
    assert alsa_file_sink.recordings() == []


def test_engine_failure_midway_is_reported(alsa_file_sink, piper):
    synth = Recording(piper, fail_on=1)
    with pytest.raises(SpeechError, match="sentence 2/3") as err:
        Speaker(synth, AudioOutput(pace=False)).speak(THREE)
    assert err.value.report.frames_written == synth.audio[0].size  # sentence 1 was still heard
    assert alsa_file_sink.last()[0].size == synth.audio[0].size


@pytest.mark.parametrize("text", ["", "   \n\t", "...", None])
def test_nothing_to_say_is_a_value_error(piper, text, alsa_file_sink):
    with pytest.raises(ValueError):
        Speaker(piper, AudioOutput()).speak(text)


def test_bad_device_names_it_and_lists_devices(alsa_file_sink):
    assert [d.name for d in list_output_devices()] == ["default"]
    for device in ("no-such-speaker", 42):
        with pytest.raises(AudioDeviceError) as err:
            AudioOutput(device)
        assert repr(device) in str(err.value) and "default" in str(err.value)


def test_unsupported_format_names_the_device(alsa_file_sink):
    output = AudioOutput()
    with pytest.raises(ValueError, match="mono"):
        output.play([np.zeros((10, 2), dtype=np.int16)], 22050)
    with pytest.raises(ValueError, match="sample_rate"):
        output.play([np.zeros(10, dtype=np.int16)], 0)

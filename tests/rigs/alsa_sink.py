"""A headless speaker for tests: ALSA's `file` plugin over `null`, so playback lands in WAV files.

How it works (measured on alsa-lib 1.2.8 / PortAudio 19.6):

* alsa-lib loads `~/.asoundrc` and `$XDG_CONFIG_HOME/alsa/asoundrc` (the latter wins), so a
  test HOME with an `.asoundrc` redefining `pcm.!default` redirects the default output.
* PortAudio reads that config once, at `import sounddevice`; `AudioOutput.reinitialize()`
  restarts it so a HOME set afterwards is seen (it must run with no stream open).
* The file is opened when a stream is configured. With `truncate false` an existing file is
  never overwritten: the first stream writes `speaker.wav`, the next `speaker.wav.0001`, and
  so on; since `AudioOutput.play` opens one stream per utterance, that is one file per
  utterance, in order.
* The WAV header is written with size fields 0 and fixed up only when the stream closes, and
  the last buffer reaches the file only then; read after `speak()` has returned, and use
  `read_wav` (it reads to the end of the file when the sizes are still 0).
* `null` swallows audio instantly; `AudioOutput(pace=True)` (the default) keeps speech at
  real-time speed, so a headless `speak` lasts as long as it would on a speaker.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from body_drivers.speech.playback import AudioOutput
from body_drivers.speech.tts import decode_wav

_ASOUNDRC = """\
# Written by tests/rigs/alsa_sink.py: the default PCM records to a file instead of a sound card.
pcm.!default {{
    type file
    slave.pcm "null"
    file "{path}"
    format "wav"
    truncate false
}}
"""


def _alsa_string(path: Path) -> str:
    """Escape a path for an ALSA config string ('%' is a key prefix in the file plugin)."""
    return str(path).replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")


def make_alsa_file_home(tmp_path: Path) -> tuple[Path, Path]:
    """Create `tmp_path/alsa-home/.asoundrc` sending the default PCM to `tmp_path/speaker.wav`.

    Returns (home_dir, wav_path). Point HOME (and XDG_CONFIG_HOME under it) at home_dir,
    then call `AudioOutput.reinitialize()`; or use the `alsa_file_sink` fixture.
    """
    home = tmp_path / "alsa-home"
    (home / ".config").mkdir(parents=True, exist_ok=True)
    wav = tmp_path / "speaker.wav"
    (home / ".asoundrc").write_text(_ASOUNDRC.format(path=_alsa_string(wav)), encoding="utf-8")
    return home, wav


def read_wav(path: Path) -> tuple[np.ndarray, int]:
    """(int16 samples, rate) of a sink file; an empty file (stream opened, nothing played) is silence."""
    data = Path(path).read_bytes()
    if not data:
        return np.zeros(0, dtype=np.int16), 0
    return decode_wav(data)


@dataclass(frozen=True)
class AlsaFileSink:
    """The files one test's playback went to."""

    home: Path
    wav_path: Path

    def recordings(self) -> list[Path]:
        """Every utterance's file, oldest first: speaker.wav, speaker.wav.0001, …"""
        first = [self.wav_path] if self.wav_path.exists() else []
        return first + sorted(self.wav_path.parent.glob(self.wav_path.name + ".[0-9][0-9][0-9][0-9]"))

    def last(self) -> tuple[np.ndarray, int]:
        """The most recent utterance as (int16 samples, rate)."""
        files = self.recordings()
        if not files:
            raise AssertionError(f"nothing was played: no {self.wav_path.name}* in {self.wav_path.parent}")
        return read_wav(files[-1])


@pytest.fixture
def alsa_file_sink(tmp_path: Path) -> Iterator[AlsaFileSink]:
    """Route this test's default audio output into WAV files under tmp_path."""
    home, wav = make_alsa_file_home(tmp_path)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("HOME", str(home))
        env.setenv("XDG_CONFIG_HOME", str(home / ".config"))  # a developer's own asoundrc must not win
        env.delenv("ALSA_CONFIG_PATH", raising=False)  # it would replace alsa.conf and its ~/.asoundrc hook
        AudioOutput.reinitialize()
        yield AlsaFileSink(home=home, wav_path=wav)
    AudioOutput.reinitialize()  # back to the real HOME's devices for the next test

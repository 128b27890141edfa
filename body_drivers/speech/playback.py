"""Audio output on sounddevice (PortAudio): blocking writes, prompt cancel, clear device errors.

One `play()` call is one utterance and one PortAudio stream, opened when its first chunk
arrives and closed when it ends, so the device is free between utterances and, under
the headless ALSA `file` sink, every utterance lands in a WAV file of its own.
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Protocol

import numpy as np

from body_drivers.speech.hold import PlaybackHold

DeviceSpec = str | int | None
_INSTALL_HINT = "pip install sounddevice; apt-get install libportaudio2"


class AudioDeviceError(RuntimeError):
    """The output device could not be found or opened; the message lists the ones there are."""


@dataclass(frozen=True)
class OutputDevice:
    """One PortAudio device that can play sound."""

    index: int
    name: str
    host_api: str
    channels: int
    default_samplerate: float
    is_default: bool

    def __str__(self) -> str:
        mark = " (default)" if self.is_default else ""
        return (f"[{self.index}] {self.name} — {self.host_api}, {self.channels} ch, "
                f"{self.default_samplerate:g} Hz{mark}")


@dataclass(frozen=True)
class PlaybackReport:
    """What one `play()` did. Times are `time.monotonic()` seconds."""

    frames_written: int
    seconds: float  # audio duration written (frames / rate), not wall time
    cancelled: bool
    first_audio_at: float | None  # when the device accepted the first block
    ended_at: float = 0.0
    underflows: int = 0  # blocks the device ran dry before (synthesis fell behind)


class Player(Protocol):
    """Where the speaker's samples go: a sound card (``AudioOutput``) or WAV files (``WavFileOutput``)."""

    def play(self, chunks: Iterable[np.ndarray], sample_rate: int,
             cancel: threading.Event | None = None, hold: PlaybackHold | None = None) -> PlaybackReport: ...


def _sounddevice() -> ModuleType:
    """Import sounddevice lazily: without PortAudio the rest of the body still imports."""
    try:
        import sounddevice
    except (ImportError, OSError) as exc:  # OSError: libportaudio missing
        raise AudioDeviceError(f"sounddevice / PortAudio unavailable ({exc}); install: {_INSTALL_HINT}") from exc
    return sounddevice


def list_output_devices() -> list[OutputDevice]:
    """Every device PortAudio can play to, as it sees them now."""
    sd = _sounddevice()
    host_apis = [api["name"] for api in sd.query_hostapis()]
    try:
        default_out = int(sd.default.device[1])
    except (TypeError, ValueError, IndexError):
        default_out = -1
    devices: list[OutputDevice] = []
    for info in sd.query_devices():
        if info["max_output_channels"] > 0:
            devices.append(OutputDevice(
                index=int(info["index"]), name=str(info["name"]),
                host_api=host_apis[info["hostapi"]], channels=int(info["max_output_channels"]),
                default_samplerate=float(info["default_samplerate"]),
                is_default=int(info["index"]) == default_out,
            ))
    return devices


def _describe_devices() -> str:
    try:
        devices = list_output_devices()
    except Exception as exc:  # listing must never hide the original error
        return f"(could not list devices: {exc})"
    if not devices:
        return "no output devices at all (is a sound card or an ALSA config present?)"
    return "available output devices: " + "; ".join(str(d) for d in devices)


class AudioOutput:
    """Plays int16 mono chunks on one output device.

    `device` is what sounddevice accepts: None (the default output), an index, or a
    substring of a device name such as "USB" or "default". `pace` keeps the writer at
    most one buffer ahead of the wall clock: a no-op on a real sound card, whose
    blocking writes already do that, but it makes ALSA's `null`/`file` sinks (which
    swallow audio instantly) take as long as the speech, so results, cancel and estop
    behave headless as they do on the robot.
    """

    def __init__(self, device: DeviceSpec = None, *, pace: bool = True, block_s: float = 0.02) -> None:
        self.device = device
        self.pace = pace
        self.block_s = block_s
        self._check_device()

    @staticmethod
    def reinitialize() -> None:
        """Restart PortAudio so it re-reads the ALSA config (a new HOME/.asoundrc) and devices.

        PortAudio reads ALSA's configuration once, when sounddevice is imported. Call this
        after changing HOME / XDG_CONFIG_HOME, with no stream open in this process.
        """
        sd = _sounddevice()
        count = int(getattr(sd, "_initialized", 0))  # Pa_Initialize is reference-counted
        for _ in range(count):
            sd._terminate()
        for _ in range(max(count, 1)):
            sd._initialize()

    def _check_device(self) -> None:
        """Fail at start-up, not at the first `speak`, when the device does not exist."""
        sd = _sounddevice()
        try:
            sd.query_devices(self.device, kind="output")
        except (ValueError, sd.PortAudioError) as exc:
            raise AudioDeviceError(
                f"audio output {self._label()} not found ({exc}); {_describe_devices()}"
            ) from exc

    def _label(self) -> str:
        return "(system default)" if self.device is None else repr(self.device)

    def _open(self, sample_rate: int) -> Any:
        sd = _sounddevice()
        try:
            stream = sd.OutputStream(device=self.device, samplerate=sample_rate, channels=1, dtype="int16")
            stream.start()
        except (ValueError, sd.PortAudioError) as exc:
            raise AudioDeviceError(
                f"cannot open audio output {self._label()} for {sample_rate} Hz mono int16 ({exc}); "
                f"a raw 'hw:' device may not resample, an ALSA 'plughw:'/'default' device does; "
                f"{_describe_devices()}"
            ) from exc
        return stream

    def play(self, chunks: Iterable[np.ndarray], sample_rate: int,
             cancel: threading.Event | None = None, hold: PlaybackHold | None = None) -> PlaybackReport:
        """Write chunks as they come (the iterable may block on a producer) until it ends.

        Returns after the audio has played out, or within one block (~20 ms) of `cancel`
        being set, in which case buffered audio is dropped rather than drained. While `hold`
        is paused the buffered audio is dropped too and the device closed; on resume the part
        that had not been heard yet is played again first, so no words are skipped.
        """
        if sample_rate <= 0:
            raise ValueError(f"sample_rate must be positive, got {sample_rate}")
        cancel = cancel or threading.Event()
        block = max(int(sample_rate * self.block_s), 1)
        out = _Stream(self, sample_rate)
        replay: list[np.ndarray] = []
        try:
            for piece in _blocks(chunks, block):
                if cancel.is_set():
                    break
                if hold is not None and hold.paused():
                    replay = out.drop()
                    hold.wait(cancel)
                    if cancel.is_set():
                        break
                for part in (*replay, piece):
                    out.write(part, cancel, replayed=part is not piece)
                replay = []
            if self.pace and not cancel.is_set():
                out.play_out(cancel)   # the last buffer (cancelably) before stop() drains the rest
        finally:
            cancelled = cancel.is_set()
            out.close(drain=not cancelled)
        return PlaybackReport(
            frames_written=out.frames, seconds=out.frames / sample_rate, cancelled=cancelled,
            first_audio_at=out.first_at, ended_at=time.monotonic(), underflows=out.underflows,
        )


class _Stream:
    """One utterance's writes: opens the device at the first, keeps at most a buffer ahead of
    the wall clock (``pace``), and remembers the last half second written for a pause."""

    def __init__(self, output: AudioOutput, rate: int):
        self.output, self.rate = output, rate
        self.stream: Any = None
        self.frames = self.underflows = 0        # frames of the utterance written (replays not counted)
        self.first_at: float | None = None
        self._opened_at = 0.0
        self._since_open = 0                     # frames written since the device was (re)opened
        self._recent: collections.deque[np.ndarray] = collections.deque()
        self._recent_frames = 0                  # their total, kept as they come and go

    def write(self, samples: np.ndarray, cancel: threading.Event, replayed: bool = False) -> None:
        if self.stream is None:
            self.stream = self.output._open(self.rate)
            self._opened_at, self._since_open = time.monotonic(), 0
        if self.stream.write(samples):
            self.underflows += 1
        self._since_open += samples.size
        self.frames += 0 if replayed else samples.size
        self._recent.append(samples)
        self._recent_frames += samples.size
        while self._recent_frames - self._recent[0].size > self.rate // 2:
            self._recent_frames -= self._recent.popleft().size
        if self.first_at is None:
            self.first_at = time.monotonic()
        if self.output.pace:
            ahead = self._since_open / self.rate - (time.monotonic() - self._opened_at)
            allowance = self.stream.latency + self.output.block_s
            if ahead > allowance:
                cancel.wait(ahead - allowance)

    def drop(self) -> list[np.ndarray]:
        """Close the device at once, dropping what it buffered; return what was not heard yet."""
        if self.stream is None:
            return []
        heard = (time.monotonic() - self._opened_at - self.stream.latency) * self.rate
        unheard = int(min(max(self._since_open - heard, 0), self._recent_frames))
        self.close(drain=False)
        tail = np.concatenate(list(self._recent))[-unheard:] if unheard else np.zeros(0, np.int16)
        self._recent.clear()
        self._recent_frames = 0
        return [tail] if tail.size else []

    def play_out(self, cancel: threading.Event) -> None:
        if self.stream is not None:
            cancel.wait(max(self._since_open / self.rate - (time.monotonic() - self._opened_at), 0.0))

    def close(self, drain: bool) -> None:
        stream, self.stream = self.stream, None
        if stream is not None:
            _close(stream, drain=drain)


def _blocks(chunks: Iterable[np.ndarray], block: int) -> Iterator[np.ndarray]:
    """The chunks as they come, cut into blocks of at most ``block`` samples (empty ones skipped)."""
    for chunk in chunks:
        samples = _as_int16(chunk)
        for offset in range(0, samples.size, block):
            yield samples[offset:offset + block]


def _close(stream: Any, *, drain: bool) -> None:
    """Stop (play out what is buffered) or abort (drop it), then release the device."""
    try:
        if drain:
            stream.stop()
        else:
            stream.abort()
    finally:
        stream.close()


def _as_int16(chunk: np.ndarray) -> np.ndarray:
    """Accept int16, or float in [-1, 1]; always return contiguous 1-D int16."""
    samples = np.asarray(chunk)
    if samples.ndim != 1:
        raise ValueError(f"expected mono 1-D audio, got shape {samples.shape}")
    if samples.dtype == np.int16:
        return np.ascontiguousarray(samples)
    if np.issubdtype(samples.dtype, np.floating):
        return (np.clip(samples, -1.0, 1.0) * 32767).astype(np.int16)
    raise ValueError(f"expected int16 or float audio, got {samples.dtype}")

"""Where the microphone node's audio comes from: a sound device, or a WAV file.

Every source yields ``AudioBlock``s of 16 kHz mono int16, numbered by sample index from
the start of the stream, with the time each block arrived from the device (the node uses it
to know what was heard while the robot itself was talking: on a busy CPU it works through
blocks up to a second after they arrived, and asks about the moment they were heard).

* ``WavSource``: a file played once at ``speed`` times real time (0: as fast as it can be
  read), resampled to 16 kHz and mixed to mono, then the stream ends.
* ``SoundDeviceSource``: a PortAudio input. It asks for 16 kHz mono; a device that cannot
  do that is opened at its own rate and channel count and converted here. A device that
  fails to open, errors, or goes silent for ``stall_s`` (a USB microphone pulled out) is
  closed and reopened with exponential backoff, each step reported through ``on_status``;
  PortAudio lists devices only when it starts, so before a retry it is restarted
  (``refresh_devices``) to see a microphone that came back.
"""

from __future__ import annotations

import queue
import threading
import time
import wave
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Protocol

import numpy as np

from edge.log import get_logger
from edge.perception.microphone.resample import Resampler, resample

log = get_logger(__name__)

SAMPLE_RATE = 16000
StatusCallback = Callable[..., None]  # (state, **details)


class SourceError(RuntimeError):
    """An audio source that cannot be used at all (a bad file, no such device); names it."""


@dataclass(frozen=True)
class AudioBlock:
    samples: np.ndarray  # int16, mono, 16 kHz
    start_sample: int    # index of samples[0] in the stream
    captured_at: float   # time.time() when the block arrived
    fresh: bool = False  # first block after the device was (re)opened: not continuous with the last
    arrived: float = field(default_factory=time.monotonic)   # the same moment on the monotonic clock

    @property
    def end_sample(self) -> int:
        return self.start_sample + len(self.samples)


class AudioSource(Protocol):
    name: str

    def blocks(self, stop: threading.Event) -> Iterator[AudioBlock]:
        """Blocks until the source ends or ``stop`` is set."""
        ...


def _mono(samples: np.ndarray) -> np.ndarray:
    """One channel: (n,) as it is, (n, channels) averaged."""
    if samples.ndim == 1:
        return samples.astype(np.int16, copy=False)
    return samples.reshape(len(samples), -1).mean(axis=1).astype(np.int16)


# -------------------------------------------------------------------------------- WAV


def read_wav(path: str | Path) -> tuple[np.ndarray, int]:
    """(int16 samples, rate) of a PCM WAV file; samples are (n,) for mono, (n, channels) otherwise.
    Anything else (no file, not RIFF/WAVE, float or 12-bit samples) is a SourceError saying why."""
    file = Path(path)
    if not file.is_file():
        raise SourceError(f"WAV file not found: {file}")
    try:
        with wave.open(str(file), "rb") as wav:
            channels, width, rate = wav.getnchannels(), wav.getsampwidth(), wav.getframerate()
            raw = wav.readframes(wav.getnframes())
    except (wave.Error, EOFError, OSError) as exc:
        code = 65534 if "extended format" in str(exc) else \
            next((int(w) for w in str(exc).replace(":", " ").split() if w.isdigit()), None)
        floats = _float_wav(file) if code in (3, 65534) else None
        if floats is None:
            kind = f" ({_CODECS[code]})" if code in _CODECS else ""
            raise SourceError(f"cannot read {file} as a PCM WAV file: {exc}{kind}; integer PCM and 32/64-bit float "
                              "WAVs are read, convert others (e.g. sox in.wav -b 16 out.wav)") from None
        return floats
    if rate <= 0 or channels <= 0:
        raise SourceError(f"{file}: impossible WAV header ({rate} Hz, {channels} channels)")
    if width == 1:
        samples = ((np.frombuffer(raw, dtype=np.uint8).astype(np.int16) - 128) << 8)
    elif width == 2:
        samples = np.frombuffer(raw, dtype="<i2")
    elif width == 3:
        b = np.frombuffer(raw[:len(raw) // 3 * 3], dtype=np.uint8).reshape(-1, 3)
        samples = ((b[:, 2].astype(np.int8).astype(np.int32) << 8) | b[:, 1]).astype(np.int16)
    elif width == 4:
        samples = (np.frombuffer(raw, dtype="<i4") >> 16).astype(np.int16)
    else:
        raise SourceError(f"{file}: {8 * width}-bit samples are not supported (8, 16, 24 or 32-bit PCM)")
    usable = len(samples) // channels * channels
    samples = samples[:usable]
    return (samples.reshape(-1, channels) if channels > 1 else samples.astype(np.int16)), rate


_CODECS = {2: "MS ADPCM", 6: "A-law", 7: "µ-law", 17: "IMA ADPCM", 49: "GSM 6.10", 85: "MP3",
           65534: "WAVE_FORMAT_EXTENSIBLE of a kind not read here"}


def _float_wav(file: Path) -> tuple[np.ndarray, int] | None:
    """An IEEE-float WAV (format 3, which the ``wave`` module refuses) as int16, or None."""
    data = file.read_bytes()
    if data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        return None
    fmt, body, at = None, None, 12
    while at + 8 <= len(data):
        tag, size = data[at:at + 4], int.from_bytes(data[at + 4:at + 8], "little")
        if tag == b"fmt ":
            fmt = data[at + 8:at + 8 + size]
        elif tag == b"data":
            body = data[at + 8:at + 8 + size]
        at += 8 + size + (size & 1)
    if fmt is None or body is None or len(fmt) < 16:
        return None
    tag_code = int.from_bytes(fmt[:2], "little")
    if tag_code == 65534 and len(fmt) >= 26:  # extensible: the sub-format GUID starts with the real code
        tag_code = int.from_bytes(fmt[24:26], "little")
    if tag_code != 3:
        return None
    channels, rate, bits = int.from_bytes(fmt[2:4], "little"), int.from_bytes(fmt[4:8], "little"), \
        int.from_bytes(fmt[14:16], "little")
    if bits not in (32, 64) or channels <= 0 or rate <= 0:
        raise SourceError(f"{file}: {bits}-bit float samples at {rate} Hz x{channels} are not readable")
    values = np.frombuffer(body[:len(body) // (bits // 8) * (bits // 8)], dtype="<f4" if bits == 32 else "<f8")
    samples = (np.clip(np.nan_to_num(values), -1.0, 1.0) * 32767).astype(np.int16)
    samples = samples[:len(samples) // channels * channels]
    return (samples.reshape(-1, channels) if channels > 1 else samples), rate


class WavSource:
    """A WAV file as if it were a microphone: played once, paced at ``speed`` x real time."""

    def __init__(self, path: str | Path, *, speed: float = 1.0, block_s: float = 0.03):
        if speed < 0:
            raise SourceError(f"speed must be 0 (unpaced) or positive, got {speed}")
        samples, rate = read_wav(path)
        self.path = Path(path)
        self.name = f"wav:{self.path.name}"
        self.source_rate = rate
        mono = _mono(samples)
        self.samples = mono if rate == SAMPLE_RATE else resample(mono, rate, SAMPLE_RATE)
        self.speed = speed
        self.block = max(int(block_s * SAMPLE_RATE), 1)

    @property
    def seconds(self) -> float:
        return len(self.samples) / SAMPLE_RATE

    def blocks(self, stop: threading.Event) -> Iterator[AudioBlock]:
        started = time.monotonic()
        for offset in range(0, len(self.samples), self.block):
            if stop.is_set():
                return
            chunk = self.samples[offset:offset + self.block]
            if self.speed > 0:
                due = started + (offset + len(chunk)) / SAMPLE_RATE / self.speed
                if stop.wait(max(due - time.monotonic(), 0.0)):
                    return
            yield AudioBlock(chunk, offset, time.time())


# ----------------------------------------------------------------------------- device


def _sounddevice() -> ModuleType:
    try:
        import sounddevice
    except (ImportError, OSError) as exc:  # OSError: libportaudio2 missing
        raise SourceError(f"sounddevice / PortAudio unavailable ({exc}); "
                          "install: pip install sounddevice; apt-get install libportaudio2") from exc
    return sounddevice


def parse_device(spec: str | int | None) -> str | int | None:
    """``None``/``""``/``default`` → the default input; digits → an index; else a name substring."""
    if spec is None or isinstance(spec, int):
        return spec
    text = str(spec).strip()
    if text in ("", "default"):
        return None
    return int(text) if text.isdigit() else text


@dataclass(frozen=True)
class Backoff:
    first_s: float = 0.5
    max_s: float = 10.0
    factor: float = 2.0

    def delay(self, attempt: int) -> float:
        return min(self.first_s * self.factor ** max(attempt - 1, 0), self.max_s)


class _Stream:
    """One open PortAudio input and the thread that reads it into a bounded queue."""

    def __init__(self, sd: ModuleType, device: str | int | None, block: int, pace: bool):
        self.rate, self.channels = self._settings(sd, device)
        self.resampler = Resampler(self.rate, SAMPLE_RATE) if self.rate != SAMPLE_RATE else None
        frames = max(int(block * self.rate / SAMPLE_RATE), 1)
        # Raw: sounddevice's InputStream sets a NumPy array's shape in place, which NumPy 2.5
        # deprecates (Debian 13 / Pi OS); the bytes are made into an array here instead.
        self.stream = sd.RawInputStream(device=device, samplerate=self.rate, channels=self.channels,
                                        dtype="int16", blocksize=frames)
        self.stream.start()
        self.queue: queue.Queue[tuple[np.ndarray, float, float] | BaseException] = queue.Queue(maxsize=32)
        self.overflows = 0
        self._closing = False
        self._thread = threading.Thread(target=self._read, args=(frames, pace), name="mic-reader", daemon=True)
        self._thread.start()

    @staticmethod
    def _settings(sd: ModuleType, device: str | int | None) -> tuple[int, int]:
        """16 kHz mono if the device takes it, else its own rate and/or two channels."""
        info = sd.query_devices(device, kind="input")
        native = int(info["default_samplerate"]) or SAMPLE_RATE
        tried: list[str] = []
        for rate, channels in ((SAMPLE_RATE, 1), (native, 1), (SAMPLE_RATE, 2), (native, 2)):
            if channels > max(int(info["max_input_channels"]), 1):
                continue
            try:
                sd.check_input_settings(device=device, samplerate=rate, channels=channels, dtype="int16")
                return rate, channels
            except Exception as exc:  # PortAudioError / ValueError: try the next combination
                tried.append(f"{rate} Hz x{channels}: {exc}")
        raise SourceError(f"input {info['name']!r} accepts none of the formats tried: " + "; ".join(tried))

    def _read(self, frames: int, pace: bool) -> None:
        started, got = time.monotonic(), 0
        try:
            while not self._closing:
                data, overflowed = self.stream.read(frames)
                if overflowed:
                    self.overflows += 1
                samples = np.frombuffer(data, dtype=np.int16).reshape(-1, self.channels).copy()
                got += len(samples)
                if pace:  # a real device is paced by its clock; ALSA's null/file plugins are not
                    ahead = got / self.rate - (time.monotonic() - started)
                    if ahead > 0.05:
                        time.sleep(ahead - 0.05)
                self.queue.put((samples, time.time(), time.monotonic()))   # and when it arrived
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer, which decides
            if not self._closing:
                self.queue.put(exc)

    def close(self) -> None:
        """Let the reader finish its read (one block) before the stream goes: aborting a stream
        under a blocked read crashes the process with some ALSA plugins (PipeWire's, Pi OS's
        default). A reader stuck on a dead device is not waited for past 1 s."""
        self._closing = True
        self._empty_queue()   # a reader waiting on a full queue can see `_closing`
        self._thread.join(1.0)
        try:
            self.stream.abort()
            self.stream.close()
        except Exception as exc:  # a vanished device may fail to close; it is gone either way
            log.debug("mic.close_failed", error=repr(exc))
        self._empty_queue()
        self._thread.join(1.0)

    def _empty_queue(self) -> None:
        try:
            while True:
                self.queue.get_nowait()
        except queue.Empty:
            pass


class SoundDeviceSource:
    """A live microphone through sounddevice; reopens it whenever it fails."""

    def __init__(self, device: str | int | None = None, *, block_s: float = 0.03,
                 duration_s: float | None = None, pace: bool = True, stall_s: float = 2.0,
                 backoff: Backoff = Backoff(), refresh_devices: bool = True,
                 on_status: StatusCallback | None = None, sd_module: ModuleType | None = None):
        self.device = parse_device(device)
        self.name = f"mic:{'default' if self.device is None else self.device}"
        self.block = max(int(block_s * SAMPLE_RATE), 1)
        self.duration_s = duration_s
        self.pace = pace
        self.stall_s = stall_s
        self.backoff = backoff
        self.refresh_devices = refresh_devices
        self.on_status = on_status or (lambda state, **details: None)
        self._sd = sd_module
        self.reopens = 0

    def _module(self) -> ModuleType:
        if self._sd is None:
            self._sd = _sounddevice()
        return self._sd

    def check(self) -> None:
        """Raise SourceError now when the device does not exist (start-up check, with the list)."""
        sd = self._module()
        try:
            sd.query_devices(self.device, kind="input")
        except Exception as exc:
            from edge.perception.microphone.audio_devices import describe_inputs
            raise SourceError(f"audio input {self.name} not found ({exc}); {describe_inputs(sd)}") from None

    def blocks(self, stop: threading.Event) -> Iterator[AudioBlock]:
        position = 0
        limit = None if self.duration_s is None else int(self.duration_s * SAMPLE_RATE)
        attempt = 0
        while not stop.is_set() and (limit is None or position < limit):
            self.on_status("opening", attempt=attempt or None)
            try:
                stream = _Stream(self._module(), self.device, self.block, self.pace)
            except Exception as exc:  # PortAudioError, SourceError, ValueError: all mean "not now"
                attempt += 1
                reason = f"cannot open {self.name}: {exc}"
                if attempt == 1:  # say once what there is instead
                    from edge.perception.microphone.audio_devices import describe_inputs
                    reason += f"; {describe_inputs(self._module())}"
                if not self._wait_retry(stop, attempt, reason):
                    return
                continue
            attempt = 0
            self.on_status("listening", rate=stream.rate, channels=stream.channels)
            log.info("mic.open", source=self.name, rate=stream.rate, channels=stream.channels)
            fresh = position > 0
            try:
                for block, wall, arrived in self._drain(stream, stop):
                    if limit is not None:
                        block = block[:limit - position]
                    if len(block):
                        yield AudioBlock(block, position, wall, fresh, arrived)
                        position += len(block)
                        fresh = False
                    if limit is not None and position >= limit:
                        break
            except _Lost as lost:
                attempt += 1
                self.reopens += 1
                if not self._wait_retry(stop, attempt, f"{self.name} lost: {lost}"):
                    return
            finally:
                if stream.overflows:
                    log.warning("mic.overflow", source=self.name, blocks=stream.overflows,
                                reason="audio was dropped: the node fell behind the device")
                stream.close()
        self.on_status("ended" if limit is not None and position >= limit else "stopped")

    def _drain(self, stream: _Stream, stop: threading.Event) -> Iterator[tuple[np.ndarray, float, float]]:
        while not stop.is_set():
            try:
                item = stream.queue.get(timeout=self.stall_s)
            except queue.Empty:
                raise _Lost(f"no audio for {self.stall_s:g} s") from None
            if isinstance(item, BaseException):
                raise _Lost(str(item) or type(item).__name__)
            samples, wall, arrived = item
            out = _mono(samples) if stream.resampler is None else stream.resampler.process(_mono(samples))
            if out.size:
                yield out, wall, arrived

    def _wait_retry(self, stop: threading.Event, attempt: int, reason: str) -> bool:
        delay = self.backoff.delay(attempt)
        log.warning("mic.reopening", source=self.name, reason=reason, attempt=attempt, retry_in_s=delay)
        self.on_status("reopening", reason=reason, attempt=attempt, retry_in_s=round(delay, 2))
        if stop.wait(delay):
            return False
        if self.refresh_devices:
            from edge.perception.microphone.audio_devices import refresh_portaudio
            refresh_portaudio()
        return True


class _Lost(Exception):
    """The open stream failed or went quiet; the source reopens it."""


def open_source(spec: str | int | None, *, speed: float = 1.0, duration_s: float | None = None,
                on_status: StatusCallback | None = None, refresh_devices: bool = True) -> AudioSource:
    """``--source``: a path ending in .wav (or an existing file) is a WavSource, anything else a
    device. A device that is not there yet is not an error here: the source keeps trying to
    open it (a microphone plugged in after boot), and its status says what it waits for."""
    text = "" if spec is None else str(spec).strip()
    if text.lower().endswith((".wav", ".wave")) or (text and not text.isdigit() and Path(text).is_file()):
        return WavSource(text, speed=speed)
    return SoundDeviceSource(text or None, duration_s=duration_s, on_status=on_status,
                             refresh_devices=refresh_devices)

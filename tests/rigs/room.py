"""A room for barge-in: the microphone hears what the robot's speaker plays, as it is played
(at an echo gain), mixed with a person's recorded voice, at real time.

``EchoOutput`` is the body's real ``AudioOutput`` (ALSA underneath); each block it writes to the
device is also put into the room, so speech that is cut stops being heard when it stops being
written. ``RoomSource`` is the microphone: every 30 ms it hands the mic node the person's
recording for that moment plus the robot's sound written since, scaled by ``echo_db``.
The microphone's sample ``n`` arrives at ``started_at + (n + block) / 16000``.
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from body_drivers.speech.playback import AudioOutput
from edge.perception.microphone.audio_source import AudioBlock
from edge.perception.microphone.resample import resample

RATE = 16000


class Room:
    """Sound in the air: the robot's writes waiting to reach the microphone."""

    def __init__(self, echo_db: float = -20.0, noise_dbfs: float | None = -70.0, seed: int = 3):
        self.gain = 10 ** (echo_db / 20)
        self.noise = None if noise_dbfs is None else 32768 * 10 ** (noise_dbfs / 20)
        self._air: collections.deque[np.ndarray] = collections.deque()
        self._lock = threading.Lock()
        self._rng = np.random.default_rng(seed)
        self.writes: list[tuple[float, int]] = []   # (wall time, samples at the speaker's rate)

    def speaker(self, samples: np.ndarray, rate: int) -> None:
        heard = resample(np.asarray(samples, dtype=np.int16), rate, RATE).astype(np.float64) * self.gain
        with self._lock:
            self._air.append(heard)
            self.writes.append((time.time(), len(samples)))

    def take(self, n: int) -> np.ndarray:
        out = np.zeros(n, np.float64)
        filled = 0
        with self._lock:
            while filled < n and self._air:
                chunk = self._air[0]
                k = min(n - filled, len(chunk))
                out[filled:filled + k] = chunk[:k]
                filled += k
                if k == len(chunk):
                    self._air.popleft()
                else:
                    self._air[0] = chunk[k:]
        if self.noise is not None:
            out += self._rng.normal(0, self.noise, n)
        return out

    def last_write_before(self, t: float) -> float | None:
        with self._lock:
            times = [at for at, _ in self.writes if at <= t]
        return times[-1] if times else None

    def last_write(self) -> float | None:
        with self._lock:
            return self.writes[-1][0] if self.writes else None


class EchoOutput(AudioOutput):
    """The real output; every block written to the device is also heard in the room."""

    def __init__(self, room: Room, device: Any = None, **kwargs: Any):
        super().__init__(device, **kwargs)
        self.room = room

    def _open(self, sample_rate: int) -> Any:
        return _Tee(super()._open(sample_rate), self.room, sample_rate)


class _Tee:
    def __init__(self, stream: Any, room: Room, rate: int):
        self.stream, self.room, self.rate = stream, room, rate

    def write(self, data: np.ndarray) -> Any:
        underflow = self.stream.write(data)
        self.room.speaker(data, self.rate)
        return underflow

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


class RoomSource:
    """The microphone in the room: the person's recording (from when ``blocks`` starts) plus echo.

    ``after_robot``: the person's recording starts when the robot's voice first reaches the room
    (its lead is then "seconds after the robot began to talk", whatever synthesis took on a busy
    CPU), and the microphone listens for its length from there; it gives up ``wait_s`` after
    opening if the robot never speaks."""

    name = "room"

    def __init__(self, room: Room, person: np.ndarray, block_s: float = 0.03, after_robot: bool = False,
                 wait_s: float = 30.0):
        self.room = room
        self.person = np.asarray(person, dtype=np.int16)
        self.block = int(block_s * RATE)
        self.after_robot = after_robot
        self.wait_s = wait_s
        self.started_at = 0.0
        self.started = threading.Event()

    def arrival(self, sample: int) -> float:
        """Wall time the block holding ``sample`` reached the node."""
        return self.started_at + (sample // self.block + 1) * self.block / RATE

    def blocks(self, stop: threading.Event) -> Iterator[AudioBlock]:
        self.started_at = time.time()
        self.started.set()
        n = 0
        begin = None if self.after_robot else 0   # the sample at which the person's recording starts
        while not stop.is_set() and (begin is None or n - begin < len(self.person)):
            if begin is None and (self.room.writes or n >= self.wait_s * RATE):
                begin = n
            due = self.started_at + (n + self.block) / RATE
            if stop.wait(max(due - time.time(), 0.0)):
                return
            at = n - (n if begin is None else begin)
            mine = self.person[at:at + self.block].astype(np.float64) if begin is not None \
                else np.zeros(self.block, np.float64)
            mixed = self.room.take(len(mine)) + mine
            yield AudioBlock(np.clip(mixed, -32768, 32767).astype(np.int16), n, time.time())
            n += len(mine)

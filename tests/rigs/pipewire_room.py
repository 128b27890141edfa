"""A room on a real PipeWire graph, with or without PipeWire's WebRTC echo canceller: what a
Pi OS user runs, with only the sound card replaced.

PipeWire and WirePlumber run headless in a private runtime folder (with the D-Bus session
WirePlumber needs). The hardware is null devices: ``room.speaker`` (a sink: the loudspeaker) and
``room.air`` (a sink: the sound at the microphone capsule), read by ``room.mic`` (a loopback
source: the microphone). The echo path is in the graph: a filter-chain convolves what the speaker
plays with a room impulse response (a delay, the echo gain ``echo_db`` and a reverberant tail)
and plays it into the air; a person's recording is played into the air beside it (``pw-play``).
A probe (``pw-record``, two channels, one sample clock) hears the speaker and the person: onsets
and the moment the speaker falls silent are read from it, to the sample.

With ``aec=True`` ``libpipewire-module-echo-cancel`` (``aec/libspa-aec-webrtc``) sits between: the
robot plays into ``ec.sink`` (the canceller's reference), which goes on to the speaker, and listens
to ``ec.source``, the microphone with the echo removed. With ``aec=False`` the robot plays to the
speaker and listens to the microphone directly. Either way the body and the mic node open ALSA
PCMs (``robot_speaker``, ``robot_mic``) through the ``pipewire`` ALSA plugin, as on Pi OS.
The server and its configuration: tests/rigs/pipewire_server.py.
"""

from __future__ import annotations

import bisect
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from pipewire_server import GRAPH_RATE, PipewireServer, pw_cat

from edge.log import get_logger

log = get_logger(__name__)

RATE = 16000
BLOCK = 320                 # 20 ms: the probe's step
SPEAKER_FLOOR = 32          # |sample| above this at the speaker is sound (-60 dBFS)
PERSON_FLOOR = 328          # the person's onset: the first sample above 1 % of full scale

ASOUNDRC = """# written by tests/rigs/pipewire_room.py
pcm.robot_speaker {{ type pipewire playback_node "{speaker}" }}
pcm.robot_mic {{ type pipewire capture_node "{mic}" }}
"""


def impulse_response(echo_db: float, delay_ms: float = 5.0, rt60_s: float = 0.25, tail_db: float = -12.0,
                     seed: int = 5) -> np.ndarray:
    """A room's impulse response at GRAPH_RATE: the direct path ``delay_ms`` late at ``echo_db``, then
    a reverberant tail (decaying noise, -60 dB after ``rt60_s``) ``tail_db`` below it in energy."""
    n_direct = int(delay_ms * GRAPH_RATE / 1000)
    n_tail = int(rt60_s * GRAPH_RATE)
    rng = np.random.default_rng(seed)
    tail = rng.normal(0.0, 1.0, n_tail) * 10 ** (-3 * np.arange(n_tail) / n_tail)   # -60 dB at the end
    tail *= 10 ** (tail_db / 20) / np.sqrt(np.sum(tail ** 2))
    ir = np.zeros(n_direct + 24 + n_tail)
    ir[n_direct] = 1.0
    ir[n_direct + 24:] = tail          # the first reflection 0.5 ms after the direct sound
    return ir * 10 ** (echo_db / 20)



class Listened:
    """A microphone source that says when the mic node first reads from it: by then the node is
    subscribed to the robot's speech, so a ``speak`` published after it reaches its gate."""

    def __init__(self, inner: Any, until: threading.Event | None = None):
        self.inner = inner
        self.name = inner.name
        self.reading = threading.Event()
        self.until = until    # stop listening once this is set (the room played its person out)

    def blocks(self, stop: threading.Event) -> Iterator[Any]:
        for block in self.inner.blocks(stop):
            self.reading.set()
            yield block
            if self.until is not None and self.until.is_set():
                return


class PipewireRoom:
    """The speaker, the air and the microphone. Times are wall-clock (``time.time()``) of probe reads."""

    speaker_device = "robot_speaker"
    mic_device = "robot_mic"

    def __init__(self, folder: Path, person: np.ndarray, *, echo_db: float = -10.0, delay_ms: float = 5.0,
                 rt60_s: float = 0.25, aec: bool = True, aec_args: str = "", noise_dbfs: float | None = -70.0,
                 seed: int = 3, after_robot: bool = False, wait_s: float = 30.0):
        """``after_robot``: the person's track starts when the speaker first sounds (its lead is then
        "seconds into the robot's talk", however long synthesis took on a busy CPU), or ``wait_s``
        after the room starts if it never does."""
        self.folder = folder
        self.person = np.asarray(person, dtype=np.int16)
        self.after_robot, self.wait_s = after_robot, wait_s
        self.noise = None if noise_dbfs is None else 32768 * 10 ** (noise_dbfs / 20)   # the microphone's own
        self._rng = np.random.default_rng(seed)
        self.aec = aec
        self.server = PipewireServer(folder, aec, impulse_response(echo_db, delay_ms, rt60_s), aec_args)
        self.started = threading.Event()      # the person's track has begun to play
        self.finished = threading.Event()     # ... and has been played out (or the room failed)
        self.heard = 0                        # samples the probe has read
        self.started_at = 0.0
        self.person_onsets: list[float] = []  # probe times the person's voice started after silence
        self.loud_at: list[float] = []        # probe times a block with the speaker sounding was read
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._cats: list[subprocess.Popen[bytes]] = []
        self._logs: list[Any] = []
        self._thread: threading.Thread | None = None

    def start(self) -> PipewireRoom:
        """Start the server and point this process's ALSA at it (call before opening any stream)."""
        from body_drivers.speech.playback import AudioOutput

        self.server.start()
        conf = self.folder / "config" / "alsa"
        conf.mkdir(parents=True, exist_ok=True)
        (conf / "asoundrc").write_text(ASOUNDRC.format(speaker="ec.sink" if self.aec else "room.speaker",
                                                       mic="ec.source" if self.aec else "room.mic"), encoding="utf-8")
        for key in ("XDG_RUNTIME_DIR", "PIPEWIRE_RUNTIME_DIR", "XDG_CONFIG_HOME"):
            os.environ[key] = self.server.env[key]
        os.environ.pop("ALSA_CONFIG_PATH", None)
        AudioOutput.reinitialize()   # PortAudio reads the ALSA config when it starts
        self._thread = threading.Thread(target=self._run, name="pipewire-room", daemon=True)
        self._thread.start()
        return self

    def at(self, sample: int) -> float:
        """Roughly when the person's ``sample`` is heard (the track plays in step with the probe)."""
        return self.started_at + sample / RATE

    def last_sound_before(self, t: float) -> float | None:
        """The last probe time before ``t`` at which the speaker was playing something."""
        i = bisect.bisect_left(self.loud_at, t)
        return self.loud_at[i - 1] if i else None

    def onset_between(self, start: float, end: float) -> float | None:
        """The first time in [start, end) the person's voice started at the microphone."""
        i = bisect.bisect_left(self.person_onsets, start)
        return self.person_onsets[i] if i < len(self.person_onsets) and self.person_onsets[i] < end else None

    def _cat(self, mode: str, target: str, channels: int, extra: list[str]) -> subprocess.Popen[bytes]:
        argv = [*pw_cat(mode), "--target", target, "--rate", str(RATE), "--channels", str(channels), "--format", "s16",
                "--latency", str(BLOCK), *extra, "-"]
        logfile = open(self.folder / f"{mode}.log", "ab")   # noqa: SIM115 - open for the process' life
        self._logs.append(logfile)
        pipe = {"stdout": subprocess.PIPE} if mode == "pw-record" else {"stdin": subprocess.PIPE}
        proc = subprocess.Popen(argv, env=self.server.env, stderr=logfile, start_new_session=True, **pipe)
        self._cats.append(proc)
        return proc

    def _run(self) -> None:
        try:
            self._loop()
        except BaseException as exc:  # noqa: BLE001 - the thread reports, never dies silently
            self.error = exc
            log.warning("room.failed", error=repr(exc))
        finally:
            self.finished.set()

    def _loop(self) -> None:
        # the person plays into the air; the probe hears the speaker (FL) and the person (FR) (wired by hand)
        mouth = self._cat("pw-play", "room.air", 1, ["-P", "{ node.name = room.person }"])
        probe = self._cat("pw-record", "0", 2, ["--channel-map", "FL,FR", "-P", "{ node.name = room.probe }"])
        assert probe.stdout is not None and mouth.stdin is not None
        self.server.link("room.speaker:monitor_MONO", "room.probe:input_FL")
        self.server.link("room.person:output_MONO", "room.probe:input_FR")
        ahead = 3                                    # blocks written before the probe hears the first
        first = None if self.after_robot else 0      # the block written when the person's track begins
        for k in range(ahead):
            mouth.stdin.write(self._person_block(k - (first if first is not None else ahead)))
        mouth.stdin.flush()
        last_voice, k = 0.0, 0
        while not self._stop.is_set():
            raw = probe.stdout.read(BLOCK * 4)
            if len(raw) < BLOCK * 4:
                if self._stop.is_set():
                    return
                raise RuntimeError("the probe's stream ended")
            now = time.time()
            both = np.frombuffer(raw, "<i2").reshape(-1, 2)
            if np.abs(both[:, 0].astype(np.int32)).max() > SPEAKER_FLOOR:
                self.loud_at.append(now)
            loud = np.nonzero(np.abs(both[:, 1].astype(np.int32)) > PERSON_FLOOR)[0]
            if len(loud):
                if now - last_voice > 0.5:          # after half a second of quiet: a new onset
                    self.person_onsets.append(now - (BLOCK - loud[0]) / RATE)
                last_voice = now
            if not self.started.is_set() and np.abs(both[:, 1].astype(np.int32)).max() > 0:
                self.started_at = now - BLOCK / RATE
                self.started.set()
            self.heard += BLOCK
            if first is None and (self.loud_at or k * BLOCK >= self.wait_s * RATE):
                first = k + ahead
            mouth.stdin.write(self._person_block(k + ahead - (first if first is not None else k + ahead + 1)))
            mouth.stdin.flush()
            k += 1
            if first is not None and (k - first) * BLOCK >= len(self.person):
                self.finished.set()

    def _person_block(self, k: int) -> bytes:
        """The person's ``k``th block (silence before the track, k < 0), with the microphone's noise."""
        block = np.zeros(BLOCK) if k < 0 else \
            np.pad(self.person[k * BLOCK:(k + 1) * BLOCK].astype(np.float64), (0, BLOCK))[:BLOCK]
        if self.noise is not None:
            block += self._rng.normal(0, self.noise, BLOCK)
        return np.clip(np.round(block), -32768, 32767).astype("<i2").tobytes()

    def stop(self) -> None:
        self._stop.set()
        for proc in self._cats:
            if proc.poll() is None:
                proc.kill()   # pw-record may be blocked writing to a pipe nobody reads any more
                proc.wait(5)
        if self._thread is not None:
            self._thread.join(5)
        for logfile in self._logs:
            logfile.close()
        self.server.stop()

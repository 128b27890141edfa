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
"""

from __future__ import annotations

import bisect
import glob
import json
import os
import shutil
import subprocess
import threading
import time
import wave
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from edge.log import get_logger

log = get_logger(__name__)

RATE = 16000
GRAPH_RATE = 48000
BLOCK = 320                 # 20 ms: the probe's step
SPEAKER_FLOOR = 32          # |sample| above this at the speaker is sound (-60 dBFS)
PERSON_FLOOR = 328          # the person's onset: the first sample above 1 % of full scale

DROP_IN = Path(__file__).resolve().parent.parent / "deploy" / "pipewire" / "echo-cancel.conf"


def echo_cancel_module(aec_args: str = "") -> str:
    """The canceller exactly as deploy/pipewire/echo-cancel.conf sets it up on a Pi, plus where its
    two hardware-facing streams go (on a Pi WirePlumber sends them to the only card) and any
    ``aec.args`` (the WebRTC library's settings; "" keeps its defaults)."""
    text = DROP_IN.read_text(encoding="utf-8")
    module = text[text.index("{ name = libpipewire-module-echo-cancel"):text.rindex("]")]
    module = module.replace('node.name = "ec.capture"', 'node.name = "ec.capture" target.object = "room.mic"')
    module = module.replace('node.name = "ec.playback"', 'node.name = "ec.playback" target.object = "room.speaker"')
    if aec_args:
        module = module.replace("library.name = aec/libspa-aec-webrtc",
                                f"library.name = aec/libspa-aec-webrtc\n        aec.args = {{ {aec_args} }}")
    return "    " + module + "\n"


# The room: the speaker's sound through the impulse response into the air; the microphone reads the air.
ROOM = """
    {{ name = libpipewire-module-filter-chain
      args = {{
        node.description = "Room echo path"
        audio.channels = 1
        audio.position = [ MONO ]
        filter.graph = {{ nodes = [ {{ type = builtin name = path label = convolver config = {{ filename = "{ir}" }} }} ] }}
        capture.props  = {{ node.name = "room.echo.in" target.object = "room.speaker" stream.capture.sink = true
                           node.passive = true }}
        playback.props = {{ node.name = "room.echo.out" target.object = "room.air" node.passive = true }}
      }}
    }}
    {{ name = libpipewire-module-loopback
      args = {{
        node.description = "Room microphone"
        audio.channels = 1
        audio.position = [ MONO ]
        capture.props  = {{ node.name = "room.capsule" target.object = "room.air" stream.capture.sink = true
                           node.passive = true }}
        playback.props = {{ node.name = "room.mic" media.class = Audio/Source node.description = "Room microphone" }}
      }}
    }}
"""

DAEMON_CONF = """# written by tests/pipewire_room.py: a headless PipeWire with a null speaker and microphone
context.properties = {{
    core.daemon = true
    core.name = pipewire-0
    default.clock.rate = 48000
    default.clock.quantum = 1024
    default.clock.min-quantum = 256
}}
context.spa-libs = {{
    audio.convert.* = audioconvert/libspa-audioconvert
    support.*       = support/libspa-support
}}
context.modules = [
    {{ name = libpipewire-module-protocol-native }}
    {{ name = libpipewire-module-access args = {{ }} }}
    {{ name = libpipewire-module-metadata }}
    {{ name = libpipewire-module-spa-node-factory }}
    {{ name = libpipewire-module-client-node }}
    {{ name = libpipewire-module-adapter }}
    {{ name = libpipewire-module-link-factory }}
    {{ name = libpipewire-module-session-manager flags = [ ifexists nofail ] }}
{room}{echo_cancel}]
context.objects = [
    {{ factory = metadata args = {{ metadata.name = default }} }}
    {{ factory = spa-node-factory
      args = {{ factory.name = support.node.driver node.name = Dummy-Driver node.group = pipewire.dummy
               priority.driver = 20000 }} }}
    {{ factory = adapter
      args = {{ factory.name = support.null-audio-sink node.name = room.speaker node.description = "Room speaker"
               media.class = Audio/Sink audio.position = [ MONO ] }} }}
    {{ factory = adapter
      args = {{ factory.name = support.null-audio-sink node.name = room.air node.description = "Sound at the microphone"
               media.class = Audio/Sink audio.position = [ MONO ] }} }}
]
"""

ASOUNDRC = """# written by tests/pipewire_room.py
pcm.robot_speaker {{ type pipewire playback_node "{speaker}" }}
pcm.robot_mic {{ type pipewire capture_node "{mic}" }}
"""

_NEEDED = ("pipewire", "wireplumber", "pw-record", "pw-play", "pw-link", "pw-dump", "dbus-daemon")


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


def write_wav(path: Path, samples: np.ndarray, rate: int) -> None:
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(np.clip(np.round(samples * 32767), -32768, 32767).astype("<i2").tobytes())


def missing() -> str | None:
    """Why the PipeWire room cannot run on this machine, or None (CI installs it: deploy/setup.sh --test)."""
    absent = [tool for tool in _NEEDED if shutil.which(tool) is None]
    if absent:
        return f"not installed: {', '.join(absent)} (apt-get install pipewire pipewire-alsa wireplumber dbus-daemon)"
    for pattern, package in (("/usr/lib/*/alsa-lib/libasound_module_pcm_pipewire.so", "pipewire-alsa"),
                             ("/usr/lib/*/spa-0.2/aec/libspa-aec-webrtc.so", "libspa-0.2-modules"),
                             ("/usr/lib/*/pipewire-0.3/libpipewire-module-echo-cancel.so", "libpipewire-0.3-modules")):
        if not glob.glob(pattern):
            return f"{pattern} missing (apt-get install {package})"
    return None


class PipewireServer:
    """PipeWire + WirePlumber (+ the D-Bus session WirePlumber insists on) in ``folder``."""

    def __init__(self, folder: Path, aec: bool, ir: np.ndarray, aec_args: str = ""):
        self.folder = folder
        self.aec = aec
        self.aec_args = aec_args   # e.g. "webrtc.noise_suppression = false"; "" is the library's defaults
        self.ir = ir
        self.env = dict(os.environ)
        self._procs: list[subprocess.Popen[bytes]] = []

    def start(self, timeout_s: float = 20.0) -> PipewireServer:
        run = self.folder / "run"
        run.mkdir(parents=True, exist_ok=True)
        run.chmod(0o700)
        conf = self.folder / "pipewire.conf"
        write_wav(self.folder / "room-ir.wav", self.ir, GRAPH_RATE)
        room = ROOM.format(ir=self.folder / "room-ir.wav")
        canceller = echo_cancel_module(self.aec_args) if self.aec else ""
        conf.write_text(DAEMON_CONF.format(room=room, echo_cancel=canceller), encoding="utf-8")
        self.env.update(XDG_RUNTIME_DIR=str(run), PIPEWIRE_RUNTIME_DIR=str(run),
                        XDG_STATE_HOME=str(self.folder / "state"), XDG_CONFIG_HOME=str(self.folder / "config"))
        self.env.pop("PIPEWIRE_REMOTE", None)
        bus = self._spawn(["dbus-daemon", "--session", "--nofork", "--print-address=1",
                           f"--address=unix:path={run}/bus"], "dbus", stdout=subprocess.PIPE)
        assert bus.stdout is not None
        self.env["DBUS_SESSION_BUS_ADDRESS"] = bus.stdout.readline().decode().strip()
        self._spawn(["pipewire", "-c", str(conf)], "pipewire")
        self._wait(lambda nodes, links: "room.mic" in nodes, timeout_s, "PipeWire's nodes")
        self._spawn(["wireplumber"], "wireplumber")
        wanted = {("room.speaker", "room.echo.in"), ("room.echo.out", "room.air"), ("room.air", "room.capsule")}
        if self.aec:
            wanted |= {("ec.playback", "room.speaker"), ("room.mic", "ec.capture")}
        # ready when WirePlumber has wired the room (and the canceller to the speaker and the microphone)
        self._wait(lambda nodes, links: wanted <= links, timeout_s, "the room's links")
        return self

    def _spawn(self, argv: list[str], name: str, stdout: int | None = None) -> subprocess.Popen[bytes]:
        logfile = open(self.folder / f"{name}.log", "ab")   # noqa: SIM115 - kept open for the process' life
        proc = subprocess.Popen(argv, env=self.env, stdin=subprocess.DEVNULL, stdout=stdout or logfile,
                                stderr=logfile, start_new_session=True)
        self._procs.append(proc)
        return proc

    def dump(self) -> list[dict]:
        """PipeWire's objects now (``pw-dump``), [] when it does not answer."""
        try:
            out = subprocess.run(["pw-dump"], env=self.env, capture_output=True, timeout=5, check=False).stdout
            return json.loads(out or b"[]")
        except (subprocess.TimeoutExpired, ValueError):
            return []

    def graph(self) -> tuple[dict[str, int], set[tuple[str, str]]]:
        """Node names -> ids, and links as (output node, input node) names."""
        objects = self.dump()
        nodes = {o["info"]["props"].get("node.name", ""): o["id"] for o in objects if o["type"].endswith("Node")}
        names = {i: n for n, i in nodes.items()}
        links = {(names.get(o["info"]["output-node-id"], "?"), names.get(o["info"]["input-node-id"], "?"))
                 for o in objects if o["type"].endswith("Link")}
        return nodes, links

    def link(self, output: str, input: str, timeout_s: float = 10.0) -> None:
        """Link two nodes' ports (``pw-link``, ``node`` or ``node:port``) once both exist; their ports
        may come a moment after them."""
        ends = (output.split(":")[0], input.split(":")[0])

        def linked(nodes: dict[str, int], links: set[tuple[str, str]]) -> bool:
            if ends in links:
                return True
            if ends[0] in nodes and ends[1] in nodes:
                subprocess.run(["pw-link", output, input], env=self.env, capture_output=True, timeout=5, check=False)
            return False
        self._wait(linked, timeout_s, f"a link {output} -> {input}")

    def _wait(self, ready, timeout_s: float, what: str) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            dead = [p.args[0] for p in self._procs if p.poll() is not None]
            if dead:
                raise RuntimeError(f"{dead[0]} exited while waiting for {what}; see {self.folder}/*.log")
            if ready(*self.graph()):
                return
            time.sleep(0.1)   # polling a daemon we do not own an event from
        raise RuntimeError(f"no {what} after {timeout_s} s; see {self.folder}/*.log")

    def stop(self) -> None:
        for proc in reversed(self._procs):
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        self._procs.clear()


class Listened:
    """A microphone source that says when the mic node first reads from it: by then the node is
    subscribed to the robot's speech, so a ``speak`` published after it reaches its gate."""

    def __init__(self, inner: Any):
        self.inner = inner
        self.name = inner.name
        self.reading = threading.Event()

    def blocks(self, stop: threading.Event) -> Iterator[Any]:
        for block in self.inner.blocks(stop):
            self.reading.set()
            yield block


class PipewireRoom:
    """The speaker, the air and the microphone. Times are wall-clock (``time.time()``) of probe reads."""

    speaker_device = "robot_speaker"
    mic_device = "robot_mic"

    def __init__(self, folder: Path, person: np.ndarray, *, echo_db: float = -10.0, delay_ms: float = 5.0,
                 rt60_s: float = 0.25, aec: bool = True, aec_args: str = "", noise_dbfs: float | None = -70.0,
                 seed: int = 3):
        self.folder = folder
        self.person = np.asarray(person, dtype=np.int16)
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
        argv = [mode, "--target", target, "--rate", str(RATE), "--channels", str(channels), "--format", "s16",
                "--latency", str(BLOCK), *extra, "-"]
        logfile = open(self.folder / f"{mode}.log", "ab")   # noqa: SIM115 - kept open for the process' life
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
        for k in range(ahead):
            mouth.stdin.write(self._person_block(k))
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
            mouth.stdin.write(self._person_block(k + ahead))
            mouth.stdin.flush()
            k += 1
            if k * BLOCK >= len(self.person):
                self.finished.set()

    def _person_block(self, k: int) -> bytes:
        block = np.pad(self.person[k * BLOCK:(k + 1) * BLOCK].astype(np.float64), (0, BLOCK))[:BLOCK]
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
        self.server.stop()

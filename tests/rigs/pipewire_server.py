"""A headless PipeWire for the echo-cancellation tests and bench: PipeWire and WirePlumber (and the
D-Bus session WirePlumber 0.4 needs) in a private runtime folder, with null devices for the sound
card and the room's echo path in the graph (tests/rigs/pipewire_room.py), and PipeWire's WebRTC echo
canceller configured exactly as deploy/pipewire/echo-cancel.conf sets it up on a Pi.

Runs on PipeWire 0.3.65 + WirePlumber 0.4.13 (Debian 12, Pi OS bookworm) and PipeWire 1.4 +
WirePlumber 0.5 (Debian 13, Pi OS trixie). The one difference the rig meets is pw-cat's (``pw_cat``);
the graph, the links WirePlumber makes and ``pw-dump``'s output are the same on both.
"""

from __future__ import annotations

import functools
import glob
import json
import re
import os
import shutil
import subprocess
import time
import wave
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from repo_paths import REPO

GRAPH_RATE = 48000

DROP_IN = REPO / "deploy" / "pipewire" / "echo-cancel.conf"


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

DAEMON_CONF = """# written by tests/rigs/pipewire_server.py: a headless PipeWire with a null speaker and microphone
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
    {{ name = libpipewire-module-rt args = {{ nice.level = -11 rt.prio = 88 }} flags = [ ifexists nofail ] }}
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

_NEEDED = ("pipewire", "wireplumber", "pw-record", "pw-play", "pw-link", "pw-dump", "dbus-daemon")



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


@functools.cache
def pw_cat(mode: str) -> list[str]:
    """``pw-play`` / ``pw-record`` for headerless samples on stdin / stdout. PipeWire 1.x's pw-cat
    reads and writes sound files through libsndfile unless told ``--raw``: stdin without a header is
    never played (its stream never appears), stdout gets an AU header; 0.3's pw-cat is raw on a pipe
    and has no such option."""
    try:
        text = subprocess.run([mode, "--help"], capture_output=True, text=True, timeout=10, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        text = ""
    return [mode, "--raw"] if "--raw" in text else [mode]


@functools.cache
def versions() -> str:
    """"PipeWire 1.4.2, WirePlumber 0.5.8": the linked libraries' versions (for the bench's results)."""
    found = []
    for tool, name in (("pipewire", "PipeWire"), ("wireplumber", "WirePlumber")):
        try:
            out = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=10, check=False).stdout
        except (OSError, subprocess.SubprocessError):
            out = ""
        match = re.search(r"Linked with lib\w+ ([\d.]+)", out)
        found.append(f"{name} {match.group(1) if match else '?'}")
    return ", ".join(found)


class PipewireServer:
    """PipeWire + WirePlumber (+ the D-Bus session WirePlumber insists on) in ``folder``."""

    def __init__(self, folder: Path, aec: bool, ir: np.ndarray, aec_args: str = ""):
        self.folder = folder
        self.aec = aec
        self.aec_args = aec_args   # e.g. "webrtc.noise_suppression = false"; "" is the library's defaults
        self.ir = ir
        self.env = dict(os.environ)
        self._procs: list[subprocess.Popen[bytes]] = []
        self._logs: list[Any] = []

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
        logfile = open(self.folder / f"{name}.log", "ab")   # noqa: SIM115 - open for the process' life
        self._logs.append(logfile)
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

    def _wait(self, ready: Callable[[dict[str, int], set[tuple[str, str]]], bool], timeout_s: float,
              what: str) -> None:
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
        for logfile in self._logs:
            logfile.close()
        self._logs.clear()



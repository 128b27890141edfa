"""One config, one wiring point: robot.toml's typed sections (camera, mic and the services too) give
each node its settings, their flags win over the file, and ``companion up --config`` starts every
node the file names, on a real broker."""

from __future__ import annotations

import json
import threading
import urllib.request
from pathlib import Path

import pytest

from edge.app import Stack, up_kinds
from edge.runtime.bus import Bus
from edge.cli import build_parser, settings_from
from edge.config import CameraSection, ConfigError, load_toml
from edge.protocol.payloads import Status
from edge.providers.scripted import ScriptedProvider
from every_kind import every_kind_toml
from repo_paths import REPO

ROOT = REPO
PIP = ROOT / "companions" / "pip.json"


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "robot.toml"
    path.write_text(text)
    return path


def test_each_node_kind_has_its_typed_section(tmp_path):
    (tmp_path / "companions").mkdir()
    path = _write(tmp_path, """
[camera]
source = 0
detector = "hog"
size = "320x240"
fps = 5
send_image = true
node_id = "camera-front"
[mic]
source = "hello.wav"
end_silence = 0.5
vad = "energy"
[gateway]
port = 8800
[registry]
folder = "companions"
[mcp]
port = 0
""")
    s = load_toml(path)
    camera = s.nodes["camera"]
    assert (camera.source, camera.detector, camera.size, camera.fps, camera.send_image, camera.node_id) == \
        (0, "hog", (320, 240), 5.0, True, "camera-front")
    assert (s.nodes["mic"].end_silence, s.nodes["mic"].vad) == (0.5, "energy")
    assert s.nodes["gateway"].port == 8800 and s.nodes["gateway"].host == "127.0.0.1"
    assert s.nodes["registry"].folder == str((tmp_path / "companions").resolve())   # relative to the file
    assert up_kinds(s) == ("body", "brain", "registry", "mcp", "gateway", "camera", "mic")
    assert up_kinds(load_toml(_write(tmp_path, "[brain]\nqueue_size = 4\n"))) == ("body", "brain")


@pytest.mark.parametrize("text, words", [
    ("[camera]\nsorce = 0\n", "unknown key camera.sorce"),
    ("[camera]\nsize = '640'\n", "camera.size: '640' is not WIDTHxHEIGHT"),        # the flag's own sentence
    ("[camera]\nfps = 0\n", "camera.fps: '0' is not a number from 0.1 to 240"),
    ("[camera]\ntrack = 'yes'\n", "camera.track has the wrong type (str; expected bool)"),
    ("[mic]\nvad = 'loud'\n", "mic.vad: 'loud' is not a VAD"),
    ("[gateway]\nport = 70000\n", "gateway.port: '70000' is not a number from 0 to 65535"),
    ("[gateway]\nport = true\n", "gateway.port has the wrong type (bool; expected int)"),
    ("[mcp]\nnode_id = 'mcp/x'\n", "mcp.node_id: 'mcp/x' is not a node id"),
    ("[body]\nnode_id = 'a b'\n", "body.node_id: 'a b' is not a node id"),
    ("[camera]\n", None),
])
def test_a_mistake_in_a_node_section_is_named(tmp_path, text, words):
    path = _write(tmp_path, text)
    if words is None:
        assert load_toml(path).nodes["camera"] == CameraSection()
        return
    with pytest.raises(ConfigError) as err:
        load_toml(path)
    assert words in str(err.value) and str(path) in str(err.value)


def test_a_flag_wins_over_the_file_and_the_file_over_the_default(tmp_path):
    path = _write(tmp_path, "[camera]\nsource = 'clip.mp4'\nfps = 2\nsize = '320x240'\n[body]\nnode_id = 'body-left'\n")
    args = build_parser().parse_args(["run", "camera", "--config", str(path), "--fps", "8", "--track"])
    camera = settings_from(args).nodes["camera"]
    assert (camera.source, camera.fps, camera.size, camera.track, camera.detector) == \
        ("clip.mp4", 8.0, (320, 240), True, "haar,hog")
    assert settings_from(build_parser().parse_args(["run", "body", "--config", str(path)])).body_id == "body-left"
    body = build_parser().parse_args(["run", "body", "--config", str(path), "--node-id", "body-right"])
    assert settings_from(body).body_id == "body-right"


def test_every_section_flag_is_a_flag_of_run():
    """The flags come from the sections: each key with a flag is accepted by `companion run`."""
    args = build_parser().parse_args(["run", "mic", "--source", "x.wav", "--vad", "energy", "--end-silence", "0.4",
                                      "-q", "--stt", "pocketsphinx"])
    mic = settings_from(args).nodes["mic"]
    assert (mic.source, mic.vad, mic.end_silence, mic.quiet, mic.stt) == ("x.wav", "energy", 0.4, True, "pocketsphinx")


class Statuses:
    """Every node's retained status as it changes; ``wait`` until a condition on them holds."""

    def __init__(self, broker) -> None:
        self.seen: dict[str, Status] = {}
        self.changed = threading.Condition()
        self.bus = Bus("watch", "test", broker.address, persistent=False, announce=False)
        self.bus.subscribe(Status, self._on)

    def _on(self, status: Status) -> None:
        with self.changed:
            self.seen[status.node] = status
            self.changed.notify_all()

    def wait(self, condition, timeout: float = 60.0) -> bool:
        with self.changed:
            return self.changed.wait_for(lambda: condition(self.seen), timeout)


def test_up_starts_every_node_the_file_names(broker, tmp_path):
    path = every_kind_toml(tmp_path, broker.address)
    settings = load_toml(path)
    watch = Statuses(broker)
    watch.bus.connect(timeout=10)
    stack = Stack(settings, provider=ScriptedProvider([{"none": True}], loop=True), speaker=None)
    try:
        stack.start()
        wanted = {"body", "brain-" + json.loads(PIP.read_text())["metadata"]["id"], "gateway-0", "registry",
                  "camera-frames", "mic-quiet"}
        assert watch.wait(lambda seen: wanted <= set(seen) and any(n.startswith("mcp-") for n in seen)), \
            sorted(watch.seen)
        gateway = watch.seen["gateway-0"].extra["gateway"]
        with urllib.request.urlopen(f"{gateway}/health", timeout=10) as answer:
            assert json.loads(answer.read())["bus"] == "connected"
        registry = watch.seen["registry"].extra["url"]
        with urllib.request.urlopen(f"{registry}/metadata", timeout=10) as answer:
            assert answer.status == 200
        # the recording and the WAV end; their nodes say so, and the rest of the stack stays up
        assert watch.wait(lambda seen: all(seen[n].state == "offline" for n in ("camera-frames", "mic-quiet")))
        assert watch.seen["body"].state == "online" and all(not t.error for t in stack.threads)
    finally:
        stack.stop()
        watch.bus.close()
    assert [t.done.is_set() for t in stack.threads] == [True] * 5

"""How each node kind is built from its settings: the parts ``edge.app.Stack`` starts and stops.

The brain and the body are built in this process on buses of their own (each registers its
handlers, then connects). The camera, the microphone and the HTTP services (gateway, registry,
MCP) have a blocking ``run``/``serve`` of their own that already handles its connection, status
and exit status: each runs on a ``NodeThread`` whose stop event the stack sets. A node gets the
same arguments whether ``companion up`` starts it beside the others or ``companion run KIND``
starts it alone.
"""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from edge import environment
from edge.config import ConfigError, Settings
from edge.log import get_logger
from edge.protocol.companion import Companion, load_companion

if TYPE_CHECKING:
    from edge.app import Stack
    from edge.runtime.node import Node

log = get_logger(__name__)

READY_TIMEOUT_S = 60.0   # a service that neither serves nor fails within this is reported


def load_companions(settings: Settings) -> list[Companion]:
    """Every configured companion file, parsed; the first bad one raises CompanionError."""
    companions = [load_companion(p) for p in settings.companions]
    seen: dict[str, str] = {}
    for c in companions:
        if c.id in seen:
            raise ValueError(f"two companions share the id {c.id}: {seen[c.id]} and {c.name}")
        seen[c.id] = c.name
    return companions


def default_memory(provider_spec: str) -> int:
    """Conversation window by model size: SmolLM2-135M copies from its history instead of
    deciding (docs/embedded-model.md: 20/48 without memory, 10/48 with 4 turns), so the
    embedded model decides from the rules and the perception alone."""
    return 0 if provider_spec.split(",")[0].strip().startswith("embedded") else 4


def make_peers(settings: Settings, companions: list[Companion]) -> Any:
    """Other companions: those in this process, plus the Registry's when one is configured."""
    local = [c.metadata_json()["metadata"] for c in companions]
    if settings.registry:
        from edge.brain.peers import RegistryPeers
        return RegistryPeers(settings.registry, local=lambda: local)
    return lambda: local


def make_speaker(settings: Settings) -> Any:
    """The body's voice, or None when speech is off. Loading piper takes a second or two."""
    if settings.tts == "none":
        return None
    from body_drivers.speech.playback import AudioDeviceError, AudioOutput, Player
    from body_drivers.speech.speaker import Speaker
    from body_drivers.speech.tts import make_synthesizer

    log.info("speech.loading", engine=settings.tts)
    try:
        output: Player = AudioOutput(settings.audio_device)
    except AudioDeviceError as exc:
        if settings.audio_device is not None:
            raise  # the user named a device: not finding it is an error, not a fallback
        from body_drivers.speech.wav_output import WavFileOutput
        folder = (settings.timeline.parent if settings.timeline else Path(tempfile.gettempdir())) / "companion-speech"
        output = WavFileOutput(folder)
        log.warning("speech.no_audio_device", reason=str(exc), fallback=str(output))
    return Speaker(make_synthesizer(settings.tts), output)


def make_executor(settings: Settings, speaker: Any, timeline: Any, node: "Node") -> tuple[Any, Any]:
    """The body's executor: the simulator, or the servos of ``[body]`` behind the safety layer
    (with the monitor that watches estop, the brain's last will and the watchdog, on the body's
    node: its state shares the body's status)."""
    if settings.sim or settings.body_config is None:
        from body_drivers.sim import SimBody
        return SimBody(speaker=speaker, timeline=timeline), None
    from body_drivers.safety_monitor import SafetyMonitor
    from body_drivers.servo_body import build_servo_body
    servo = build_servo_body(settings.body_config, speaker=speaker, timeline=timeline).start()
    return servo, SafetyMonitor(node, servo).start()


class NodeThread:
    """A node whose ``run(stop)`` blocks until it ends or ``stop`` is set, on a thread of its own.
    ``code`` is its exit status once ``done``; an exception it raised is kept in ``error``."""

    def __init__(self, kind: str, run: Callable[[threading.Event, threading.Event], int | None]):
        self.kind = kind
        self.stop_event = threading.Event()
        self.ready = threading.Event()     # set by services once they serve; others count as ready at once
        self.done = threading.Event()
        self.code: int | None = None
        self.error: BaseException | None = None
        self._run = run
        self._thread = threading.Thread(target=self._main, name=f"node-{kind}", daemon=True)

    def start(self, wait_ready: bool = False) -> "NodeThread":
        """Start; with ``wait_ready``, return once it serves, and raise what stopped it before."""
        self._thread.start()
        if wait_ready:
            for _ in range(int(READY_TIMEOUT_S * 10)):
                if self.ready.is_set() or self.done.is_set():
                    break
                self.done.wait(0.1)
            if self.error is not None:
                raise self.error
            if self.done.is_set() and self.code:
                raise RuntimeError(f"{self.kind} stopped at start with exit status {self.code}")
        return self

    def _main(self) -> None:
        try:
            self.code = self._run(self.stop_event, self.ready) or 0
        except BaseException as exc:  # reported by start() or by the stack's wait; never silently lost
            self.error, self.code = exc, 1
            log.error("node.failed", kind=self.kind, error=repr(exc))
        finally:
            self.done.set()

    def stop(self, timeout: float = 10.0) -> None:
        self.stop_event.set()
        if self._thread.is_alive():
            self._thread.join(timeout)


# -- the kinds that run on a thread -------------------------------------------------------------


def camera(stack: "Stack") -> NodeThread:
    s, section = stack.settings, stack.settings.section("camera")
    if section.source is None:
        raise ConfigError("camera: a source is required: --source SRC or [camera] source (device index, "
                          "video file, image folder or stream URL)")
    from edge.perception.camera import node as camera_node
    from edge.perception.camera.options import camera_settings

    def run(stop: threading.Event, ready: threading.Event) -> int:
        ready.set()
        return camera_node.run_camera(section.source, section.detector or "haar,hog", s.broker, s.namespace,
                                      section.companion_id, node_id=section.node_id, track=bool(section.track),
                                      stop=stop, **camera_settings(section))
    return NodeThread("camera", run)


def mic(stack: "Stack") -> NodeThread:
    s, section = stack.settings, stack.settings.section("mic")
    if section.source is None:
        raise ConfigError("mic: a source is required: --source SRC or [mic] source (an input device "
                          "name/index, or a WAV file)")
    from edge.perception.microphone import run as mic_run
    from edge.perception.microphone.options import mic_settings

    def run(stop: threading.Event, ready: threading.Event) -> int:
        ready.set()
        return mic_run.run_mic(section.source, s.broker, s.namespace, section.companion_id,
                               companions=stack.companions, node_id=section.node_id, stop=stop,
                               **mic_settings(section))
    return NodeThread("mic", run)


def registry(stack: "Stack") -> NodeThread:
    s, section = stack.settings, stack.settings.section("registry")
    from edge.services import registry as service

    sources = [section.folder] if section.folder else [str(p) for p in s.companions]

    def run(stop: threading.Event, ready: threading.Event) -> int:
        return service.serve(sources, host=section.host, port=section.port if section.port is not None
                             else service.DEFAULT_PORT, broker=s.broker, namespace=s.namespace, ready=ready, stop=stop,
                             access=section)
    return NodeThread("registry", run)


def gateway(stack: "Stack") -> NodeThread:
    s, section = stack.settings, stack.settings.section("gateway")
    from edge.services import gateway as service

    token = section.token or environment.value("COMPANION_GATEWAY_TOKEN")
    config = service.GatewayConfig(host=section.host, token=token,
                                   port=section.port if section.port is not None else service.DEFAULT_PORT,
                                   allowed_hosts=section.allowed_hosts, allowed_origins=section.allowed_origins,
                                   token_on_loopback=section.token_on_loopback or None)

    def run(stop: threading.Event, ready: threading.Event) -> int:
        return service.serve(s.broker, namespace=s.namespace, companions=stack.companions, config=config,
                             node_id=section.node_id, ready=ready, stop=stop)
    return NodeThread("gateway", run)


def mcp(stack: "Stack") -> NodeThread:
    s, section = stack.settings, stack.settings.section("mcp")
    if section.companion is not None:
        served: Path | str = section.companion
    elif len(s.companions) == 1:
        served = s.companions[0]
    else:
        raise ConfigError("mcp: serves one companion; give exactly one --companion, or [mcp] companion")
    from edge.services import mcp_server as service

    def run(stop: threading.Event, ready: threading.Event) -> int:
        return service.serve(served, s.broker, namespace=s.namespace, host=section.host,
                             port=section.port if section.port is not None else service.DEFAULT_PORT,
                             result_timeout_s=s.result_timeout_s, node_id=section.node_id, ready=ready, stop=stop,
                             access=section)
    return NodeThread("mcp", run)


THREADED: dict[str, Callable[["Stack"], NodeThread]] = {
    "registry": registry, "gateway": gateway, "mcp": mcp, "camera": camera, "mic": mic}
SERVICES = ("registry", "gateway", "mcp")   # wait until they serve: a taken port stops the start

"""Assemble nodes into a running stack: the broker when needed, the body, one brain per companion.

``companion up`` runs everything in one process; ``companion run brain|body`` runs one node
(what systemd starts). Each node gets its own MQTT connection and status, exactly as if it
were a separate process, so the one-process stack behaves like the distributed one.
"""

from __future__ import annotations

import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from edge.broker import LocalBroker, ensure_broker
from edge.bus import Bus
from edge.config import Settings
from edge.log import get_logger
from edge.nodes import DEFAULT_BODY_ID
from edge.protocol.companion import Companion, load_companion

log = get_logger(__name__)


def load_companions(settings: Settings) -> list[Companion]:
    """Every configured companion file, parsed; the first bad one raises CompanionError."""
    companions = [load_companion(p) for p in settings.companions]
    seen: dict[str, str] = {}
    for c in companions:
        if c.id in seen:
            raise ValueError(f"two companions share the id {c.id}: {seen[c.id]} and {c.name}")
        seen[c.id] = c.name
    return companions


def make_executor(settings: Settings, speaker: Any, timeline: Any, bus: Bus) -> tuple[Any, Any]:
    """The body's executor: the simulator, or the servos of ``[body]`` behind the safety layer
    (with the monitor that watches estop, the brain's last will and the watchdog)."""
    if settings.sim or settings.body_config is None:
        from body_drivers.sim import SimBody
        return SimBody(speaker=speaker, timeline=timeline), None
    from body_drivers.safety_monitor import SafetyMonitor
    from body_drivers.servo_body import build_servo_body
    servo = build_servo_body(settings.body_config, speaker=speaker, timeline=timeline).start()
    return servo, SafetyMonitor(bus, servo).start()


def default_memory(provider_spec: str) -> int:
    """Conversation window by model size: SmolLM2-135M copies from its history instead of
    deciding (docs/embedded-model.md: 20/48 without memory, 10/48 with 4 turns), so the
    embedded model decides from the rules and the perception alone."""
    return 0 if provider_spec.split(",")[0].strip().startswith("embedded") else 4


def make_peers(settings: Settings, companions: list[Companion]):
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


@dataclass
class Stack:
    """What ``companion up`` runs; ``start`` brings it up in the seed's order, ``stop`` reverses it."""

    settings: Settings
    observer_factory: Any = None          # name -> observer callable, for console output
    provider: Any = None                  # an already built provider (tests, benches)
    speaker: Any = "auto"                 # "auto": from settings; None: silent body
    body_id: str = DEFAULT_BODY_ID        # the body's node id: status/<id>, client id <id>@<namespace>
    notify: Callable[[str], None] | None = None  # one line for the person at the console (broker lost ...)
    broker: LocalBroker | None = None
    buses: list[Bus] = field(default_factory=list)
    brains: list[Any] = field(default_factory=list)
    body: Any = None
    sim: Any = None
    executor: Any = None
    safety: Any = None
    companions: list[Companion] = field(default_factory=list)
    ready_s: float | None = None          # start() to ready, model load and warm-up included
    _stopped: threading.Event = field(default_factory=threading.Event)

    def start(self) -> "Stack":
        from body_drivers.node import BodyNode
        from body_drivers.timeline import Timeline
        from edge.brain.loop import BrainConfig, CompanionBrain

        s = self.settings
        started = time.monotonic()
        self.companions = load_companions(s)
        provider = self.provider
        if provider is None:
            from edge.providers.factory import make_provider
            provider = self.provider = make_provider(s.provider)
        try:
            self.broker = ensure_broker(s.broker)
            if self.broker is not None:
                s.broker = self.broker.address
                self.broker.watch(self.notify or (lambda text: None))  # it logs broker.lost itself
            speaker = make_speaker(s) if self.speaker == "auto" else self.speaker
            timeline = Timeline(s.timeline)
            # each node registers its handlers before its bus connects: what the broker kept for its
            # persistent session is handled, not dropped (docs/protocol.md "Sessions")
            body_bus = self._bus(self.body_id, "body")
            self.executor, self.safety = make_executor(s, speaker, timeline, body_bus)
            if s.sim:
                self.sim = self.executor
            self.body = BodyNode(body_bus, self.executor, self.companions, timeline).start()
            body_bus.connect()
            config = BrainConfig(queue_size=s.queue_size, result_timeout_s=s.result_timeout_s,
                                 memory_messages=default_memory(s.provider))
            peers = make_peers(s, self.companions)
            for companion in self.companions:
                bus = self._bus(f"brain-{companion.id}", "brain", companion=companion.id)
                observer = self.observer_factory(companion.name) if self.observer_factory else None
                # the brain registers its handlers when built; connected before the warm-up, what is
                # said meanwhile waits in its inbox; ready (after start) means a quick first decision
                brain = CompanionBrain(companion, provider, bus, config, observer, peers=peers)
                bus.connect()
                self.brains.append(brain.start())
        except BaseException:
            self.stop()
            raise
        self.ready_s = round(time.monotonic() - started, 3)
        warm_s = [b.warm_s for b in self.brains if b.warm_s is not None]
        log.info("stack.ready", broker=str(s.broker), companions=len(self.companions), sim=s.sim,
                 seconds=self.ready_s, warm_s=sum(warm_s) if warm_s else None)
        return self

    def _bus(self, node_id: str, kind: str, **status: Any) -> Bus:
        """A bus not yet connected: the caller registers the node's handlers, then connects."""
        bus = Bus(node_id, kind, self.settings.broker, namespace=self.settings.namespace, status=status)
        self.buses.append(bus)
        return bus

    def idle(self) -> bool:
        return all(b.idle() for b in self.brains)

    def stop(self) -> None:
        """Brains first (no new actions), then the body, then connections, then our broker."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        for brain in self.brains:
            brain.stop()
        if self.safety is not None:
            self.safety.stop()
        if self.body is not None:
            self.body.stop()
        if hasattr(self.executor, "close"):
            self.executor.close()  # a servo body rests in its safe pose with torque off
        for bus in reversed(self.buses):
            bus.close()
        if self.provider is not None and hasattr(self.provider, "close"):
            self.provider.close()
        if self.broker is not None:
            self.broker.cleanup()
        log.info("stack.stopped")

    def __enter__(self) -> "Stack":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

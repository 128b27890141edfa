"""The body: the simulator, or the servos of ``[body]`` behind the safety layer, speaking
through piper or espeak; one node, ``body`` unless ``[body] node_id`` / ``--node-id`` names it."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from edge.config import DEFAULT_BODY_ID, Settings
from edge.log import get_logger
from edge.nodes.lifecycle import BuildContext, Lasting
from edge.runtime.node import Node

log = get_logger(__name__)


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


def make_executor(settings: Settings, speaker: Any, timeline: Any, node: Node) -> tuple[Any, Any]:
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


class BodyRun(Lasting):
    """The body's node: ``body`` (``BodyNode``), ``executor`` (the simulator or the servos),
    ``sim`` (the simulator, when it is one) and ``safety`` (the servos' monitor).

    ``ctx.body_executor`` given (a fake driver, a servo body a test built on its own simulator):
    the body drives that one, with no safety monitor, and leaves closing it to its owner."""

    def __init__(self, ctx: BuildContext):
        from body_drivers.node import BodyNode
        from body_drivers.sim import SimBody
        from body_drivers.timeline import Timeline

        super().__init__("body")
        s = ctx.settings
        speaker = make_speaker(s) if ctx.speaker == "auto" else ctx.speaker
        timeline = Timeline(s.timeline)
        self.node = Node(ctx.transport(ctx.body_id or s.body_id or DEFAULT_BODY_ID, "body"))
        self.given = ctx.body_executor is not None   # a test's or bench's own: driven, not built or closed here
        if self.given:
            self.executor, self.safety = ctx.body_executor, None
        else:
            self.executor, self.safety = make_executor(s, speaker, timeline, self.node)
        self.sim = self.executor if isinstance(self.executor, SimBody) else None
        self.body = BodyNode(self.node, self.executor, ctx.companions, timeline)

    def start(self) -> None:
        # the handlers go on before the node connects: what the broker kept for its persistent
        # session is handled, not dropped (docs/protocol.md "Sessions")
        self.body.start()
        self.node.start()

    def stop(self) -> None:
        if self.safety is not None:
            self.safety.stop()
        self.body.stop()
        if not self.given and hasattr(self.executor, "close"):
            self.executor.close()  # a servo body rests in its safe pose with torque off


def build(ctx: BuildContext) -> BodyRun:
    return BodyRun(ctx)

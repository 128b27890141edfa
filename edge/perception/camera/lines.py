"""The camera's lines for the person at the terminal (its node writes them, its options do not)."""

from __future__ import annotations

from typing import Any

from edge.perception.narration import Narrator


class CameraLines:
    """What ``companion run camera`` prints: a line on start, one per scene change, one per
    state change of the camera (lost, reopened, ended), and the totals at the end; ``-q`` none."""

    def __init__(self, node_id: str, quiet: bool = False, stream: Any = None):
        self.say = Narrator(node_id, quiet=quiet, stream=stream)
        self._state: str | None = None

    def status(self, state: str | None, **details: Any) -> None:
        if state is not None and state != self._state:  # the progress refresh repeats the state
            self._state = state
            if state not in ("ended", "stopped"):  # ``ended()`` says those, with the totals
                self.say.state(state, **details)

    def started(self, source: str, detector: str, capture: Any) -> None:
        size = f" · {capture.width}x{capture.height}" if getattr(capture, "width", None) else ""
        fps = f" · at most {capture.fps:g} fps" if getattr(capture, "fps", None) else ""
        self.say.line(f"watching {source} · detector {detector}{size}{fps} · a line per scene change")

    def scene(self, event: Any) -> None:
        self.say.line(f"scene: {event.summary}")

    def ended(self, stopped: bool, stats: dict[str, Any]) -> None:
        self.say.line(f"{'stopped' if stopped else 'ended'}: {stats['frames']} frames at {stats['fps']} fps, "
                      f"{stats['perceptions']} perceptions, {stats['looks']} looks")

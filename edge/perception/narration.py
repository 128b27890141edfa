"""One line per thing a perception node does, on stdout, so a person at the terminal sees it work.

``companion run mic`` and ``companion run camera`` used to print nothing for minutes when all
was well (the log is quiet by default). Now they say, on start, what they listen to or watch
and with what (source, engine, VAD, model), then one line per utterance (its text, confidence
and timings) or per scene change, and one when the source is lost, found again or ends.
``-q`` silences this; the structured log on stderr and the MQTT traffic are unchanged.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, TextIO


class Narrator:
    """Writes whole lines (thread-safe: the mic prints from its capture and recognizer threads)."""

    def __init__(self, node: str, *, quiet: bool = False, stream: TextIO | None = None):
        self.node = node
        self.quiet = quiet
        self.stream = stream
        self._lock = threading.Lock()

    def line(self, text: str) -> None:
        if self.quiet:
            return
        out = self.stream or sys.stdout
        stamp = time.strftime("%H:%M:%S")
        with self._lock:
            try:
                out.write(f"{stamp} {self.node}: {text}\n")
                out.flush()
            except (OSError, ValueError):  # a closed or broken stdout must not stop the node
                pass

    def state(self, state: str | None, **details: Any) -> None:
        """A source's state change (``listening``, ``reopening``, ...), as the status board gets it."""
        if state is None or state in ("starting", "opening"):
            return
        extra = ""
        if state == "reopening":
            extra = f": {details.get('reason', '?')} (retry in {details.get('retry_in_s', '?')} s)"
        elif state == "listening" and details.get("rate"):
            extra = f" ({details['rate']} Hz x{details.get('channels', 1)})"
        elif state == "failed":
            extra = f": {details.get('reason', '?')}"
        self.line(f"{state}{extra}")


def seconds(value: float | None) -> str:
    return "?" if value is None else f"{value:.2f} s"

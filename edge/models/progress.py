"""A small progress bar on stderr for downloads, hashing and Ollama pulls.

On a terminal it redraws one line (``\\r``) at most ten times a second; anywhere else (a
journal, a CI log, a pipe) it prints a plain line every 10 % (or every 5 s when the total is
unknown), so a long fetch under systemd still shows that it is moving without flooding the log.
tqdm is not a dependency of this project; this bar is all we need.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

_WIDTH = 24


def human(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if abs(n) < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} GB"


class Progress:
    def __init__(self, label: str, total: int | None, *, initial: int = 0, stream: TextIO | None = None,
                 enabled: bool = True, quiet_s: float = 0.0):
        """``quiet_s``: draw nothing until the work has taken this long (a fast hash stays silent)."""
        self.label = label
        self.total = total if total and total > 0 else None
        self.done = initial
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.tty = enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self._start = time.monotonic()
        self._start_bytes = initial
        self._last_draw = 0.0
        self._last_step = -1
        self._closed = False
        self._quiet_s = quiet_s
        self._shown = False
        if initial and enabled and not self.tty:
            self._line(f"{label}: resuming at {human(initial)}")

    def set_total(self, total: int | None) -> None:
        self.total = total if total and total > 0 else None

    def update(self, n: int) -> None:
        self.done += n
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._start < self._quiet_s:
            return
        self._shown = True
        if self.tty:
            if now - self._last_draw >= 0.1:
                self._last_draw = now
                self.stream.write("\r" + self._render(now))
                self.stream.flush()
        elif self.total:
            step = int(10 * self.done / self.total)
            if step != self._last_step and step < 10:
                self._last_step = step
                self._line(self._render(now))
        elif now - self._last_draw >= 5.0:
            self._last_draw = now
            self._line(self._render(now))

    def close(self, note: str = "") -> None:
        if self._closed or not self.enabled:
            return
        self._closed = True
        if self._quiet_s and not self._shown:
            return
        text = self._render(time.monotonic()) + (f"  {note}" if note else "")
        if self.tty:
            self.stream.write("\r" + text + "\n")
            self.stream.flush()
        else:
            self._line(text)

    def _line(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()

    def _render(self, now: float) -> str:
        elapsed = max(now - self._start, 1e-6)
        rate = (self.done - self._start_bytes) / elapsed
        if self.total:
            frac = min(self.done / self.total, 1.0)
            filled = int(frac * _WIDTH)
            bar = "#" * filled + "-" * (_WIDTH - filled)
            left = (self.total - self.done) / rate if rate > 0 else 0
            eta = f"  ETA {int(left // 60)}:{int(left % 60):02d}" if 0 < frac < 1 and rate > 0 else ""
            return (f"{self.label} {frac * 100:3.0f}% [{bar}] {human(self.done)}/{human(self.total)}"
                    f"  {human(rate)}/s{eta}")
        return f"{self.label} {human(self.done)}  {human(rate)}/s"

"""A JSONL record of everything the body did, one object per line, for people and tests.

Recording never fails the caller: a value with a lone surrogate is written with JSON escapes,
and one JSON cannot write at all (a cycle, a deep structure) is kept as a short ``repr``.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any, IO

from edge.protocol.codec import excerpt


class Timeline:
    """Append-only, line-buffered and thread-safe; ``None`` path keeps events in memory only."""

    def __init__(self, path: str | Path | None = None, keep: int = 1000):
        self.path = Path(path) if path else None
        self._file: IO[str] | None = None
        if self.path:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = self.path.open("a", encoding="utf-8", buffering=1)
        self._lock = threading.Lock()
        self._keep = keep
        self.events: list[dict[str, Any]] = []

    def record(self, event: str, **fields: Any) -> dict[str, Any]:
        entry = {"ts": time.time(), "event": event, **fields}
        line = _line(entry)
        with self._lock:
            self.events.append(entry)
            del self.events[:-self._keep]
            if self._file:
                self._file.write(line + "\n")
        return entry

    def close(self) -> None:
        with self._lock:
            if self._file:
                self._file.close()
                self._file = None


def _line(entry: dict[str, Any]) -> str:
    try:
        line = json.dumps(entry, ensure_ascii=False, default=str)
    except (ValueError, TypeError, RecursionError):
        return json.dumps({"ts": entry["ts"], "event": entry["event"], "unwritable": excerpt(repr(entry), 200)},
                          ensure_ascii=True)
    if not line.isascii():
        try:
            line.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates: \udXXX escapes keep the line valid UTF-8
            return json.dumps(entry, ensure_ascii=True, default=str)
    return line

"""Structured, quiet-by-default logging: ``event key=value ...`` lines on stderr.

Every node logs through ``get_logger(name).info("event.name", key=value)`` so a line can be
grepped by event and parsed by machines; the default level is WARNING so a healthy node
prints nothing, ``-v`` gives INFO and ``-vv`` DEBUG.

The event name is positional-only, so any field name is free, ``event`` included
(``log.error("safety.monitor_error", event="estop")``); only ``exc_info`` is read by the logger
itself. Logging never raises: a value that cannot be rendered is shown by its ``repr``, and
every value is cut to ``MAX_VALUE_CHARS`` so a hostile payload cannot flood the log.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Any


MAX_VALUE_CHARS = 1000


def _format_value(value: Any) -> str:
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, default=str)
        except (ValueError, TypeError, RecursionError):  # a cycle, a key json cannot write, too deep
            text = repr(value)
    if len(text) > MAX_VALUE_CHARS:
        text = f"{text[:MAX_VALUE_CHARS]}…({len(text)} chars)"
    if not text.isascii():  # lone surrogates become \udXXX, so no handler fails to write the line
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    if text == "" or any(c in text for c in ' ="\n'):
        return json.dumps(text, ensure_ascii=False)
    return text


class KeyValueLogger:
    """A thin wrapper over ``logging.Logger`` that renders keyword fields as ``key=value``."""

    def __init__(self, logger: logging.Logger):
        self._logger = logger

    def _log(self, level: int, event: str, fields: dict[str, Any]) -> None:
        if self._logger.isEnabledFor(level):
            exc_info = fields.pop("exc_info", None)
            tail = " ".join(f"{k}={_format_value(v)}" for k, v in fields.items())
            self._logger.log(level, f"{event} {tail}".rstrip(), exc_info=exc_info)

    def debug(self, event: str, /, **fields: Any) -> None:
        self._log(logging.DEBUG, event, fields)

    def info(self, event: str, /, **fields: Any) -> None:
        self._log(logging.INFO, event, fields)

    def warning(self, event: str, /, **fields: Any) -> None:
        self._log(logging.WARNING, event, fields)

    def error(self, event: str, /, **fields: Any) -> None:
        self._log(logging.ERROR, event, fields)

    def is_enabled(self, level: int) -> bool:
        return self._logger.isEnabledFor(level)


def get_logger(name: str) -> KeyValueLogger:
    return KeyValueLogger(logging.getLogger(name))


def configure(verbosity: int = 0, stream=None) -> None:
    """0 → WARNING, 1 → INFO, 2+ → DEBUG for our loggers; third-party loggers stay at WARNING."""
    level = logging.WARNING if verbosity <= 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    for ours in ("edge", "body_drivers"):
        logging.getLogger(ours).setLevel(level)

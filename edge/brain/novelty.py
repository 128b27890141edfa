"""Views that show nothing new are answered with "no action" before any model is asked.

The seed lets a companion decide to do nothing, and a person expects exactly that when the
camera reports the same scene again: a robot that greets the same person every few seconds, or
turns back to a cup it already looked at, is broken, whatever a model would say. So a structured
perception is unchanged when it carries an explicit, empty ``changes`` list (the camera node's
periodic report: docs/camera.md), or when its body is the same as the last one of that title
apart from timestamps. Text is never judged here: a person may well say the same thing twice.
"""

from __future__ import annotations

import json
from typing import Any

from edge.protocol.payloads import Perception

_VOLATILE = ("frame", "ts", "time", "timestamp")


class ViewMemory:
    """Remembers the last structured body per perception title (one entry per title: bounded)."""

    def __init__(self) -> None:
        self._last: dict[str, str] = {}

    def unchanged(self, perception: Perception) -> str | None:
        """Why this perception shows nothing new, or None when it may (and is remembered)."""
        body = perception.body
        if perception.format != "object" or not isinstance(body, dict):
            return None
        key = _fingerprint(body)
        same = self._last.get(perception.title) == key
        self._last[perception.title] = key
        if isinstance(body.get("changes"), list) and not body["changes"]:
            return "the view reports no changes"
        if same:
            return f"the same {perception.title} as the last one"
        return None


def _fingerprint(body: dict[str, Any]) -> str:
    stable = {k: v for k, v in body.items() if k not in _VOLATILE}
    return json.dumps(stable, sort_keys=True, ensure_ascii=False, default=str)

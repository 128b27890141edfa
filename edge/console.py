"""What ``companion up`` prints: perceptions in, decisions, actions and results out.

Readable lines for people by default; ``--json`` prints one JSON object per event for
machines. Both come from the brain's observer callback, so they show exactly what happened.
"""

from __future__ import annotations

import json
import sys
import threading
from typing import IO, Any


def _short(value: Any, limit: int = 100) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def answered_by(metadata: dict[str, Any]) -> str:
    """Which provider and model answered, from a response's metadata: ``embedded:qwen...``."""
    name = str(metadata.get("answered_by") or metadata.get("provider") or "")
    model = str(metadata.get("model") or "")
    if ":" in name or not model or model == name:
        return name or model
    return f"{name}:{model}" if name else model


class ConsoleObserver:
    """Callable observer for CompanionBrain; thread-safe."""

    def __init__(self, as_json: bool = False, out: IO[str] | None = None, name: str = ""):
        self.as_json = as_json
        self.out = out or sys.stdout
        self.name = name
        self._lock = threading.Lock()

    def __call__(self, kind: str, data: dict[str, Any]) -> None:
        with self._lock:
            if self.as_json:
                self.out.write(json.dumps({"event": kind, "companion": self.name, **data}, ensure_ascii=False) + "\n")
            else:
                line = self.render(kind, data)
                if line:
                    self.out.write(line + "\n")
            self.out.flush()

    def render(self, kind: str, data: dict[str, Any]) -> str | None:
        who = f"[{self.name}] " if self.name else ""
        if kind == "perception":
            p = data["perception"]
            return f"{who}>> perceived {p['title']} ({p['format']}): {_short(p['body'])}"
        if kind == "perception_rejected":
            return f"{who}!! ignored perception: {data['reason']}"
        if kind == "decision":
            segs = data["response"]["segments"]
            calls = [s["toolCall"] for s in segs if s.get("type") == "tool_call"]
            what = ", ".join(f"{c['name']} {_short(c['args'], 80)}" for c in calls) or "no action"
            if data.get("route") == "sentence":   # edge/brain/fast_path.py: no LLM was asked
                return f"{who}   decided by sentence template in {data['latency_s'] * 1000:.1f} ms: {what}  " \
                       f"(template {data['template']!r})"
            if data.get("route") == "meaning":    # a clear command whose words settle it: no LLM either
                return f"{who}   decided by meaning in {data['latency_s'] * 1000:.1f} ms: {what}"
            note = f"  (rejected: {'; '.join(data['problems'])})" if data["problems"] else ""
            by = answered_by(data["response"].get("metadata") or {})
            return f"{who}   decided in {data['latency_s']:.2f} s{f' by {by}' if by else ''}: {what}{note}"
        if kind == "provider_error":
            e = data["error"]
            if e["code"] == "E4002":
                return f"{who}!! {e['message']}"  # a cancel (estop) is not a provider failure
            return f"{who}!! provider failed: {e['code']} {e['message']}"
        if kind in ("queued", "coalesced", "dropped"):
            why = "estop engaged" if data["held"] else "busy"
            said = data["input"]["format"] == "text"
            verb = {"queued": "queued", "dropped": "dropped the oldest waiting input, queued",
                    "coalesced": "added to the waiting input" if said else f"newest {data['input']['title']} kept"}[kind]
            return f"{who}   ({why}: {verb} {_short(data['input']['text'], 60)!r}, {data['waiting']} waiting)"
        if kind == "estop":
            if data["engaged"]:
                cancelled = "the turn in progress is cancelled; " if data["turn_cancelled"] else ""
                return f"{who}!! emergency stop engaged by {data['by']}: {cancelled}no new turns until it is released"
            return f"{who}   emergency stop released by {data['by']}: going on ({data['waiting']} waiting)"
        if kind == "warming":
            return f"{who}   warming the model ({data['provider']})..."
        if kind == "warmed":
            return f"{who}   model warm: ready in {data['seconds']:.1f} s"
        if kind == "warm_failed":
            e = data["error"]
            return f"{who}!! warming the model failed: {e['code']} {e['message']}"
        if kind == "action":
            a = data["action"]
            return f"{who}<< action {a['name']} {_short(a['params'], 80)}"
        if kind == "result":
            r = data["result"]
            took = r["finished"] - r["started"]
            if r["ok"]:
                return f"{who}   done {r['name']} in {took:.2f} s"
            return f"{who}!! {r['name']} failed: {r['error']['code']}: {r['error']['message']}"
        if kind == "reply":
            r = data["reply"]
            return f"{who}{'  ' if r['ok'] else '!!'} reply: " + r["text"].replace("\n", "\n     ")
        if kind == "message":
            m = data["message"]
            return f"{who}>> message from {m['from']}: {_short(m['message'])}"
        if kind == "message_sent":
            return f"{who}<< message to {data['to']}: {_short(data['message'])} ({data['detail']})"
        if kind == "message_refused":
            return f"{who}!! message to {data['to']} refused: {data['detail']}"
        if kind == "barge_in":
            return f"{who}!! talked over: speech cut, this turn ends; listening"
        if kind == "result_timeout":
            return f"{who}!! no result for {data['action']['name']} (is the body running?)"
        return None

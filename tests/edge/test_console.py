"""What `companion up` prints for the responsiveness events: who answered, what waits, estop, warm-up."""

from __future__ import annotations

import io

from edge.console import ConsoleObserver


def lines(*events) -> list[str]:
    out = io.StringIO()
    console = ConsoleObserver(out=out, name="Pip")
    for kind, data in events:
        console(kind, data)
    return out.getvalue().splitlines()


def decision(metadata: dict) -> tuple[str, dict]:
    call = {"type": "tool_call", "toolCall": {"id": "1", "name": "nod", "args": {"times": 1}}}
    return "decision", {"latency_s": 0.41, "problems": [], "response": {"segments": [call], "metadata": metadata}}


def test_a_decision_names_the_provider_and_model_that_answered():
    assert lines(decision({"provider": "embedded", "model": "qwen2.5-coder-0.5b"}),
                 decision({"provider": "ollama", "model": "qwen2.5:1.5b", "answered_by": "ollama:qwen2.5:1.5b"}),
                 decision({})) == [
        '[Pip]    decided in 0.41 s by embedded:qwen2.5-coder-0.5b: nod {"times": 1}',
        '[Pip]    decided in 0.41 s by ollama:qwen2.5:1.5b: nod {"times": 1}',
        '[Pip]    decided in 0.41 s: nod {"times": 1}']


def test_inputs_that_wait_estop_and_warm_up_are_said():
    said = {"title": "input", "format": "text", "text": "look left"}
    seen = {"title": "vision", "format": "object", "text": '{"objects":[]}'}
    assert lines(("queued", {"input": said, "waiting": 1, "held": False}),
                 ("coalesced", {"input": seen, "waiting": 2, "held": False}),
                 ("queued", {"input": said, "waiting": 3, "held": True}),
                 ("estop", {"engaged": True, "by": "panel", "turn_cancelled": True, "waiting": 0}),
                 ("estop", {"engaged": False, "by": "panel", "turn_cancelled": False, "waiting": 1}),
                 ("provider_error", {"error": {"code": "E4002", "message": "turn cancelled (emergency stop)"}}),
                 ("warming", {"provider": "embedded:qwen"}), ("warmed", {"provider": "embedded:qwen", "seconds": 1.24})) == [
        "[Pip]    (busy: queued 'look left', 1 waiting)",
        "[Pip]    (busy: newest vision kept '{\"objects\":[]}', 2 waiting)",
        "[Pip]    (estop engaged: queued 'look left', 3 waiting)",
        "[Pip] !! emergency stop engaged by panel: the turn in progress is cancelled; no new turns until it is released",
        "[Pip]    emergency stop released by panel: going on (1 waiting)",
        "[Pip] !! turn cancelled (emergency stop)",
        "[Pip]    warming the model (embedded:qwen)...",
        "[Pip]    model warm: ready in 1.2 s"]

"""The whole stack as a user runs it: ``companion up --sim`` on a real broker with the embedded
LLM, perceptions from ``companion perceive``, the simulated body speaking through piper and
sounddevice into a WAV file."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np

from alsa_sink import read_wav
from stack_process import REPO, RunningCompanion, companion_cmd

GREETER = Path(__file__).parent / "greeter.json"


def _recordings(wav: Path) -> list[Path]:
    return sorted(wav.parent.glob(wav.name + "*"))


def test_text_perception_to_spoken_reply(broker, speaker_env, tmp_path):
    env, wav = speaker_env
    timeline = tmp_path / "timeline.jsonl"
    up = RunningCompanion(["--sim", "--broker", str(broker.address), "--companion", str(GREETER),
                           "--provider", "embedded?seed=7", "--timeline", str(timeline), "--json"], env, tmp_path)
    try:
        up.wait_ready()
        sent = subprocess.run(companion_cmd("perceive", "input", "Hello! Nice to meet you.",
                                            "--broker", str(broker.address)),
                              env=env, capture_output=True, text=True, timeout=60)
        assert sent.returncode == 0, sent.stderr
        perception = json.loads(sent.stdout)
        result_line = up.wait_for_line('"event": "result"', timeout=120)
    finally:
        assert up.stop() == 0, "\n".join(up.stderr[-20:])
    events = [json.loads(line) for line in up.stdout if line.startswith("{")]
    order = [e["event"] for e in events]
    assert order.index("warmed") < order.index("perception")    # the model was warm before the first input
    events = [e for e in events if e["event"] not in ("state", "warming", "warmed")]
    kinds = [e["event"] for e in events]
    # the decision, and the speak it carries; with streamed speech the first clause's speak may
    # go out while the model still writes (docs/protocol.md "Streamed speech"), before the decision
    assert kinds[0] == "perception" and {"action", "decision", "result"} <= set(kinds), kinds
    assert events[0]["perception"]["id"] == perception["id"]
    decision = next(e for e in events if e["event"] == "decision")
    assert decision["problems"] == [] and decision["response"]["segments"][0]["type"] == "tool_call"
    action = next(e for e in events if e["event"] == "action")["action"]
    assert action["name"] == "speak" and 2 <= len(action["params"]["message"]) <= 80
    result = json.loads(result_line)["result"]
    assert result["ok"] and result["id"] == action["id"] and result["finished"] > result["started"]

    # the reply was really spoken: a WAV of plausible length, with speech-level energy in it
    recordings = _recordings(wav)
    assert len(recordings) >= 1            # a reply of two sentences is two speaks
    samples, rate = read_wav(recordings[0])
    seconds = samples.size / rate
    assert rate == 22050 and 0.3 < seconds < 15
    frames = samples[: samples.size // 441 * 441].astype(np.float64).reshape(-1, 441)
    loud = np.sqrt((frames ** 2).mean(axis=1)) > 300
    assert loud.mean() > 0.3, "mostly silence"

    lines = [json.loads(line) for line in timeline.read_text().splitlines()]
    spoken = [e for e in lines if e["event"] == "speech.done"]
    assert spoken and spoken[0]["text"] == action["params"]["message"]
    assert result["finished"] >= spoken[0]["ts"]   # the result waited for the playback to end


def test_demo_runs_to_completion(broker, speaker_env, tmp_path):
    """The README's first command, minus the setup: the demo scenario, start to exit."""
    env, wav = speaker_env
    done = subprocess.run(companion_cmd("up", "--sim", "--demo", "--broker", str(broker.address)),
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert out.count(">> perceived") == 3
    assert out.count("decided ") >= 3                 # by the model, or by a sentence template
    assert "Traceback" not in done.stderr
    # "Please look to your left." (the last step) turns the head to the left
    asked = out.index("look to your left")
    look = next(line for line in out[asked:].splitlines() if "<< action look" in line)
    params = json.loads(look.split("<< action look", 1)[1])
    assert params["x"] < 0 and abs(params["x"]) >= abs(params["y"]), look


def test_startup_errors_exit_non_zero_with_the_reason(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "x", "actions": [{"title": "a"}]}')
    done = subprocess.run(companion_cmd("up", "--sim", "--companion", str(bad), "--provider", "scripted:/nonexistent"),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2  # a configuration error: systemd must not restart-loop on it
    assert "bad.json" in done.stderr and "/actions/0" in done.stderr
    missing = subprocess.run(companion_cmd("up", "--sim", "--provider", "embedded:/nope/model.gguf", "--tts", "none"),
                             capture_output=True, text=True, timeout=60)
    assert missing.returncode == 1 and "/nope/model.gguf" in missing.stderr

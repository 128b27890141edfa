"""Stack overhead: perception published -> action result received, beside the raw broker round trip.

Runs, in one process and against one mosquitto:
1. the raw QoS-1 publish -> receive time of a payload-sized message (paho, TCP_NODELAY);
2. the whole stack with a zero-delay scripted provider and a zero-time simulated action:
   perception -> brain -> provider -> action -> body -> result, for N events, with each of
   the three MQTT hops timed on the same clock, and the brain's own stages (edge/brain/stages.py:
   templates, unchanged view, tool offer, retrieval, context, meaning, model turn) as it times them;
3. time from ``companion up --sim`` to ready (the real CLI, embedded LLM and piper), and the
   RSS of the stack without the LLM (scripted provider, speech off).

Prints the figures and ratios and writes bench/results/latency.json.
Usage: python bench/latency.py [--events 1000] [--distinct] [--skip-up]
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from body_drivers.sim import SimConfig  # noqa: E402
from edge.app import Stack  # noqa: E402
from edge.runtime.broker import LocalBroker  # noqa: E402
from edge.runtime.bus import Bus  # noqa: E402
from edge.config import DEFAULT_COMPANION, Settings  # noqa: E402
from edge.protocol.payloads import Action, ActionResult, Perception  # noqa: E402
from edge.providers.scripted import ScriptedProvider  # noqa: E402


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def summary(values_s: list[float]) -> dict[str, float]:
    ms = [v * 1000 for v in values_s]
    return {"n": len(ms), "p50_ms": round(pct(ms, 50), 3), "p99_ms": round(pct(ms, 99), 3),
            "mean_ms": round(statistics.fmean(ms), 3)}


def raw_round_trip(broker: LocalBroker, n: int) -> list[float]:
    """Publish a perception-sized QoS-1 message and time its arrival at a subscriber."""
    got: queue.Queue = queue.Queue()
    sub = Bus("raw-sub", "bench", broker.address, announce=False).connect()
    pub = Bus("raw-pub", "bench", broker.address, announce=False).connect()
    sub.client.on_message = lambda c, u, m: got.put(time.perf_counter())
    sub.client.subscribe("bench/raw", qos=1)
    time.sleep(0.3)
    payload = Perception(title="input", body="hello there, how are you today?").encode()
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        pub.publish_raw("bench/raw", payload, qos=1)
        times.append(got.get(timeout=5) - t0)
    sub.close()
    pub.close()
    return times


OPENERS = ("hello", "hey there", "good morning", "hi again", "excuse me", "so", "well", "listen", "okay", "um")
MIDDLES = ("my friend", "little robot", "buddy", "you", "everyone", "pal", "dear", "mate", "folks", "there")
CLOSERS = ("how are you today", "what time is it", "is it raining outside", "did you sleep well",
           "what are you doing", "do you like music", "are you hungry", "what did you see", "is it cold",
           "shall we play")


def sentence(i: int, distinct: bool) -> str:
    """The i-th thing said: "hello" every time, or (``distinct``) one of 1,000 different sentences,
    none said twice in a run of up to 1,000, so no vector is ever reused (the brain remembers
    the encoder's vector of a sentence said again: rankers.EmbeddingRanker.query_unit)."""
    if not distinct:
        return "hello"
    return f"{OPENERS[i % 10]} {MIDDLES[i // 10 % 10]}, {CLOSERS[i // 100 % 10]}"


def stack_round_trip(broker: LocalBroker, n: int, distinct: bool = False
                     ) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Total and per-hop latencies through the real stack with a zero-delay provider, and the
    brain's time per stage (seconds)."""
    settings = Settings(broker=broker.address, provider="scripted", tts="none", companions=[DEFAULT_COMPANION])
    provider = ScriptedProvider([{"action": "nod", "params": {"times": 1}}], loop=True)
    marks: dict[str, dict[str, float]] = {}
    stages: list[dict[str, float]] = []
    lock = threading.Lock()

    def observer(kind: str, data: dict) -> None:
        now = time.time()
        with lock:
            if kind == "perception":
                marks.setdefault(data["perception"]["id"], {})["brain_in"] = now
            elif kind == "action":
                marks.setdefault(data["perception_id"], {})["action_out"] = now
            elif kind == "stages":
                stages.append(data["ms"])

    stack = Stack(settings, observer_factory=lambda name: observer, provider=provider, speaker=None)
    stack.start()
    stack.sim.config = SimConfig(gesture_s=0.0)
    results: queue.Queue = queue.Queue()
    client = Bus("bench-client", "bench", broker.address, announce=False).connect()
    client.subscribe(ActionResult, lambda r: results.put((r, time.time())))
    time.sleep(0.3)
    totals, hop1, hop2, hop3 = [], [], [], []
    for i in range(n):
        p = Perception(title="input", body=sentence(i, distinct), sender="bench")
        t0 = time.time()
        client.publish(p)
        result, t_end = results.get(timeout=10)
        totals.append(t_end - t0)
        with lock:
            m = marks.get(p.id, {})
        started = next((e["ts"] for e in reversed(stack.body.timeline.events)
                        if e["event"] == "action.started" and e["id"] == result.id), None)
        if "brain_in" in m and "action_out" in m and started is not None:
            hop1.append(m["brain_in"] - t0)
            hop2.append(started - m["action_out"])
            hop3.append(t_end - result.finished)
    client.close()
    stack.stop()
    per_stage: dict[str, list[float]] = {}
    for ms in stages:
        for name, value in ms.items():
            per_stage.setdefault(name, []).append(value / 1000)
    return ({"total": totals, "hop1_perception_to_brain": hop1, "hop2_action_to_body": hop2,
             "hop3_result_to_client": hop3}, per_stage)


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def up_to_ready(extra: list[str], tmp: Path) -> dict[str, float]:
    """Start the real CLI and time until it prints 'ready:'; report its RSS then."""
    companion = REPO / ".venv" / "bin" / "companion"
    cmd = [str(companion) if companion.exists() else sys.executable, *([] if companion.exists() else ["-m", "edge.cli"]),
           "up", "--sim", "--broker", f"127.0.0.1:{LocalBroker().port}", *extra]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, cwd=tmp)
    try:
        for line in proc.stderr:
            if line.startswith("ready:"):
                ready = time.perf_counter() - t0
                time.sleep(0.5)
                return {"ready_s": round(ready, 3), "rss_mb": round(rss_mb(proc.pid), 1)}
        raise RuntimeError(f"`{' '.join(cmd)}` exited before ready")
    finally:
        proc.terminate()
        proc.wait(10)


def measure_up() -> dict[str, dict[str, float]]:
    """Start-up time and RSS of ``companion up --sim`` as a user runs it, and without LLM or speech."""
    with tempfile.TemporaryDirectory() as tmp:
        return {"up_embedded_piper": up_to_ready([], Path(tmp)),
                "up_scripted_no_speech": up_to_ready(
                    ["--provider", f"scripted:{REPO / 'bench' / 'nod.jsonl'}?loop=1", "--tts", "none"], Path(tmp))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--skip-up", action="store_true", help="skip the start-up and RSS measurements")
    parser.add_argument("--up-only", action="store_true", help="only the start-up and RSS measurements")
    parser.add_argument("--distinct", action="store_true",
                        help="a different sentence every time (default: \"hello\" every time)")
    args = parser.parse_args()
    if args.up_only:
        up = measure_up()
        print(json.dumps(up, indent=2))
        return
    with tempfile.TemporaryDirectory() as tmp, LocalBroker(data_dir=Path(tmp) / "broker") as broker:
        raw = raw_round_trip(broker, args.events)
        hops, per_stage = stack_round_trip(broker, args.events, args.distinct)
    raw_s, total_s = summary(raw), summary(hops["total"])
    out = {"events": args.events, "sentences": "distinct" if args.distinct else "hello", "raw_round_trip": raw_s, "stack": {k: summary(v) for k, v in hops.items() if v},
           "brain_stages": {k: summary(v) for k, v in per_stage.items() if v}}
    out["ratio_total_p99_to_3_raw_p99"] = round(total_s["p99_ms"] / (3 * raw_s["p99_ms"]), 2)
    out["overhead_p99_ms"] = round(total_s["p99_ms"] - 3 * raw_s["p99_ms"], 3)
    print(f"raw QoS-1 publish->receive: p50 {raw_s['p50_ms']} ms, p99 {raw_s['p99_ms']} ms ({args.events} messages)")
    for k, v in out["stack"].items():
        print(f"stack {k:>22}: p50 {v['p50_ms']} ms, p99 {v['p99_ms']} ms")
    for k, v in out["brain_stages"].items():
        print(f"brain stage {k:>16}: p50 {v['p50_ms']} ms, p99 {v['p99_ms']} ms")
    print(f"total p99 / (3 x raw p99) = {out['ratio_total_p99_to_3_raw_p99']}  (target <= 3)")
    if not args.skip_up:
        out.update(measure_up())
        print(f"companion up --sim to ready (embedded LLM + piper): {out['up_embedded_piper']['ready_s']} s, "
              f"RSS {out['up_embedded_piper']['rss_mb']} MB")
        print(f"companion up --sim, no LLM, no speech: {out['up_scripted_no_speech']['ready_s']} s, "
              f"RSS {out['up_scripted_no_speech']['rss_mb']} MB")
    results_dir = REPO / "bench" / "results"
    results_dir.mkdir(exist_ok=True)
    (results_dir / "latency.json").write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()

"""Start-up and the first decision, with and without the warm-up.

Each run is a fresh process that starts the whole stack in-process (broker, simulated body,
one brain on the embedded model, speech off), then sends one text perception and waits for
the decision. It reports the time from the process starting to ready, the warm-up's share, and
the first decision after ready with its prompt tokens and how many came from the KV cache.
``cold`` is the same run with the warm-up switched off.

Usage: python bench/warm_up.py [--model NAME_OR_FILE] [--runs 2]
Prints the figures and writes bench/results/warm_up.json.
"""

from __future__ import annotations

import time

STARTED = time.monotonic()  # before the heavy imports: they are part of start-up

import argparse  # noqa: E402
import json  # noqa: E402
import queue  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def child(model: str, warm: bool) -> dict:
    """One measured start, in this process; returns the figures."""
    from edge.app import Stack
    from edge.runtime.broker import LocalBroker
    from edge.brain.loop import CompanionBrain
    from edge.runtime.bus import Bus
    from edge.config import DEFAULT_COMPANION, Settings
    from edge.protocol.payloads import Perception

    if not warm:
        CompanionBrain.warm = lambda self: None  # type: ignore[method-assign]
    decisions: queue.Queue = queue.Queue()
    broker = LocalBroker().start()  # our own, on a free port: no other stack hears the bench
    settings = Settings(provider=f"embedded:{model}" if model else "embedded", companions=[DEFAULT_COMPANION],
                        sim=True, tts="none", broker=broker.address)
    stack = Stack(settings, observer_factory=lambda name: lambda k, d: k == "decision" and decisions.put(d))
    with stack:
        ready = time.monotonic() - STARTED
        with Bus("bench", "cli", settings.broker, persistent=False, announce=False) as bus:
            sent = time.monotonic()
            bus.publish(Perception(title="input", body="Hello! Who are you?"))
            decision = decisions.get(timeout=120)
            first = time.monotonic() - sent
    usage = decision["response"]["metadata"].get("usage") or {}
    broker.stop()
    return {"warm": warm, "ready_s": round(ready, 3), "warm_s": stack.brains[0].warm_s,
            "first_decision_s": round(first, 3), "provider_latency_s": round(decision["latency_s"], 3),
            "prompt_tokens": usage.get("prompt_tokens"), "cached_tokens": usage.get("cached_tokens")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="", help="embedded model: a manifest name or a .gguf (default: the default)")
    parser.add_argument("--runs", type=int, default=2, help="runs per mode")
    parser.add_argument("--child", choices=["warm", "cold"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.model, args.child == "warm")))
        return
    runs: list[dict] = []
    for _ in range(args.runs):
        for mode in ("warm", "cold"):
            out = subprocess.run([sys.executable, __file__, "--child", mode, "--model", args.model],
                                 capture_output=True, text=True, check=True).stdout
            runs.append(json.loads(out.strip().splitlines()[-1]))
            print(json.dumps(runs[-1]))
    summary = {}
    for mode in ("warm", "cold"):
        mine = [r for r in runs if r["warm"] == (mode == "warm")]
        summary[mode] = {key: statistics.median(r[key] for r in mine)
                         for key in ("ready_s", "first_decision_s", "cached_tokens") if mine[0][key] is not None}
        print(f"{mode}: ready {summary[mode]['ready_s']:.2f} s after the process started, "
              f"first decision {summary[mode]['first_decision_s']:.2f} s after ready (median of {len(mine)})")
    results = REPO / "bench" / "results"
    results.mkdir(exist_ok=True)
    (results / "warm_up.json").write_text(json.dumps({"runs": runs, "median": summary}, indent=2))


if __name__ == "__main__":
    main()

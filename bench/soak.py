"""Soak: the whole stack under a steady 10 perceptions/s for minutes; does memory stay flat and
does every perception get its result?

Runs its own mosquitto and the real CLI, ``companion up --sim --tts none`` with one brain on a
looping zero-delay ``scripted:`` provider (so the LLM is not the bottleneck: what is measured is
the runtime around it). A persistent client sends text perceptions at ``--rate``; another counts
the ``actions/results``. The RSS of the stack's process (from /proc) is sampled throughout.

Figures: RSS at the end of the warm-up (the first 10% of the run, at most 60 s) and at the end,
the growth between them and a least-squares slope over the rest; perceptions sent, results
received, lost (sent - results) and extra (results beyond one per perception: acted on twice).
Targets (issue 12): RSS growth <= 5 MB over 10 minutes, 0 lost.

Usage: python bench/soak.py [--minutes 10] [--rate 10]; writes bench/results/soak.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from latency import rss_mb  # noqa: E402  (bench/ is this script's own folder)

from edge.runtime.broker import LocalBroker  # noqa: E402
from edge.runtime.bus import Bus  # noqa: E402
from edge.protocol.payloads import ActionResult, Perception  # noqa: E402

REPLY = {"action": "speak", "params": {"message": "I hear you."}}  # the sim body speaks it instantly (no TTS)
TARGET_GROWTH_MB = 5.0


def positive(kind: Callable[[str], float]) -> Callable[[str], float]:
    """An argparse type: a number above 0, or a usage error naming the bad value."""
    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"{text!r} must be greater than 0")
        return value
    return parse


class Results:
    """Counts the body's results by action id (a set of ids: a duplicate shows as extra)."""

    def __init__(self) -> None:
        self.ids: set[str] = set()
        self.received = 0
        self.failed = 0
        self.changed = threading.Condition()

    def __call__(self, result: ActionResult) -> None:
        with self.changed:
            self.received += 1
            self.ids.add(result.id)
            self.failed += not result.ok
            self.changed.notify_all()


def start_stack(broker: LocalBroker, script: Path, log: Path) -> subprocess.Popen:
    companion = REPO / ".venv" / "bin" / "companion"
    cmd = [str(companion)] if companion.exists() else [sys.executable, "-m", "edge.cli"]
    cmd += ["up", "--sim", "--tts", "none", "--provider", f"scripted:{script}?loop=1",
            "--broker", str(broker.address)]
    with open(log, "w") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, cwd=REPO)
    deadline = time.monotonic() + 120
    while "ready:" not in log.read_text():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise SystemExit(f"`{' '.join(cmd)}` did not become ready:\n{log.read_text()[-2000:]}")
        time.sleep(0.1)
    return proc


def slope_mb_per_min(samples: list[tuple[float, float]]) -> float:
    if len(samples) < 2:
        return 0.0
    ts, ms = [t for t, _ in samples], [m for _, m in samples]
    t_mean, m_mean = statistics.fmean(ts), statistics.fmean(ms)
    var = sum((t - t_mean) ** 2 for t in ts)
    return 60 * sum((t - t_mean) * (m - m_mean) for t, m in samples) / var if var else 0.0


def soak(minutes: float, rate: float, sample_s: float, tmp: Path) -> dict:
    script = tmp / "reply.jsonl"
    script.write_text(json.dumps(REPLY) + "\n")
    results = Results()
    with LocalBroker(data_dir=tmp / "mosquitto") as broker:
        stack = start_stack(broker, script, tmp / "stack.log")
        listener = Bus("soak-results", "bench", broker.address, persistent=False, announce=False)
        listener.subscribe(ActionResult, results)
        listener.connect(timeout=10)
        listener.wait_subscribed(10)
        sender = Bus("soak-sender", "bench", broker.address, announce=False).connect(timeout=10)
        samples: list[tuple[float, float]] = []
        duration = minutes * 60
        warm_up = min(60.0, duration / 10)
        sent = 0
        t0 = time.monotonic()
        next_sample = t0
        try:
            while (now := time.monotonic()) - t0 < duration:
                if now >= next_sample:
                    samples.append((round(now - t0, 2), round(rss_mb(stack.pid), 2)))
                    next_sample += sample_s
                sender.publish(Perception(title="input", body=f"soak line {sent}", sender="soak"))
                sent += 1
                time.sleep(max(0.0, t0 + sent / rate - time.monotonic()))
            with results.changed:   # the last results: until all are in, or none came for 10 s
                while results.received < sent and results.changed.wait(10):
                    pass
            samples.append((round(time.monotonic() - t0, 2), round(rss_mb(stack.pid), 2)))
            broker_rss = round(rss_mb(broker.process.pid), 2) if broker.process else None
        finally:
            sender.close()
            listener.close()
            stack.send_signal(signal.SIGINT)
            try:
                stack.wait(30)
            except subprocess.TimeoutExpired:
                stack.kill()
    settled = [s for s in samples if s[0] >= warm_up]
    baseline = settled[0][1] if settled else samples[0][1]
    end = samples[-1][1]
    return {
        "minutes": minutes, "rate_per_s": rate, "python": platform.python_version(),
        "sent": sent, "results": results.received, "failed_results": results.failed,
        "lost": max(0, sent - len(results.ids)), "extra": results.received - len(results.ids),
        "rss_mb": {"first": samples[0][1], "after_warm_up": baseline, "end": end, "max": max(m for _, m in samples),
                   "growth_after_warm_up": round(end - baseline, 2), "warm_up_s": warm_up,
                   "slope_mb_per_min": round(slope_mb_per_min(settled), 3)},
        "broker_rss_mb_end": broker_rss,
        "samples": samples,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=positive(float), default=10.0, help="how long to send (default 10)")
    parser.add_argument("--rate", type=positive(float), default=10.0, help="perceptions per second (default 10)")
    parser.add_argument("--sample-s", type=positive(float), default=5.0, help="seconds between RSS samples")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "soak.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="soak-") as tmp:
        out = soak(args.minutes, args.rate, args.sample_s, Path(tmp))
    rss = out["rss_mb"]
    print(f"soak {args.minutes:g} min at {args.rate:g}/s: sent {out['sent']}, results {out['results']} "
          f"({out['failed_results']} failed), lost {out['lost']}, acted on twice {out['extra']}")
    print(f"RSS of the stack: {rss['first']} MB at start, {rss['after_warm_up']} MB after {rss['warm_up_s']:g} s "
          f"warm-up, {rss['end']} MB at the end (max {rss['max']}): growth {rss['growth_after_warm_up']} MB, "
          f"slope {rss['slope_mb_per_min']} MB/min; broker {out['broker_rss_mb_end']} MB")
    met = rss["growth_after_warm_up"] <= TARGET_GROWTH_MB and out["lost"] == 0 and out["extra"] == 0
    print(f"target (growth <= {TARGET_GROWTH_MB:g} MB, 0 lost, 0 twice): {'met' if met else 'NOT met'}")
    out["target_met"] = met
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

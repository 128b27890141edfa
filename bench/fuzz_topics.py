"""Fuzz every topic a body and a brain subscribe to, then check they still answer.

One mosquitto, one process: a servo body (feetech simulators on a pty, BodyNode, SafetyMonitor)
and a brain on the ``scripted:`` provider. An attacker publishes N hostile payloads per topic
(tests/rigs/fuzz_payloads.py: deep nesting, huge integers, NaN, lone surrogates escaped and raw,
invalid UTF-8, wrong types, ~1 MB blobs, empty, truncated, garbage); then the bench reports
the threads that died, the errors each node counted, and whether the stack still answers:
the brain decides, the body acts, estop is honoured (a move refused while engaged).

Prints the figures and writes bench/results/fuzz_topics.json.
Usage: python bench/fuzz_topics.py [--per-topic 10000] [--blob-every 500] [--seed 1]
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests" / "rigs")]

import fuzz_payloads  # noqa: E402  (the tests' payload maker and stack)
from edge.runtime.broker import LocalBroker  # noqa: E402
from edge.config import DEFAULT_COMPANION  # noqa: E402
from edge.protocol.companion import load_companion  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-topic", type=int, default=10_000)
    parser.add_argument("--blob-every", type=int, default=500, help="one ~1 MB blob every N payloads (0: none)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    logging.basicConfig(level=logging.CRITICAL)  # the bus logs each refusal (throttled); not the point here

    with tempfile.TemporaryDirectory() as tmp:
        broker = LocalBroker(data_dir=Path(tmp) / "mosquitto").start()
        stack = fuzz_payloads.FuzzStack(broker.address, str(Path(tmp) / "servos"), load_companion(DEFAULT_COMPANION))
        try:
            report = run(stack, args.per_topic, args.blob_every, args.seed)
        finally:
            stack.close()
            broker.stop()

    print(f"payloads: {report['sent_total']} ({args.per_topic} per topic on {len(report['topics'])} topics, "
          f"{CHUNK} in flight at most), {report['mb_sent']:.0f} MB, all handled in {report['counted_s']:.1f} s "
          f"({report['sent_total'] / report['counted_s']:.0f} payloads/s)")
    for topic, row in report["topics"].items():
        print(f"  {topic:<16} {row['sent']:>6} sent   received by {', '.join(row['receivers'])}")
    print(f"errors counted: body {report['errors']['body']}  brain {report['errors']['brain']}  "
          f"body worker {report['errors']['body.worker'] or '{}'}")
    print(f"expected invalid: {report['expected']}  counted: {report['counted']}")
    dead = [name for name, alive in report["threads"].items() if not alive]
    print(f"dead threads: {len(dead)} {dead if dead else ''}")
    answers = report["answers"]
    print(f"still answering: brain decides {answers['brain_decides']}, body acts {answers['body_acts']}, "
          f"estop shown {answers['estop_shown']}, move refused under estop {answers['estop_refuses']}, "
          f"acts after release {answers['acts_after_release']}")
    out = REPO / "bench" / "results" / "fuzz_topics.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1))
    print(f"wrote {out.relative_to(REPO)}")
    ok = not dead and report["counted"] == report["expected"] and all(answers.values())
    return 0 if ok else 1


CHUNK = 500  # payloads in flight at once; mosquitto drops QoS-1 messages past a slow client's queue


def run(stack: fuzz_payloads.FuzzStack, per_topic: int, blob_every: int, seed: int) -> dict:
    expected = {"body": 0, "brain": 0}
    topics: dict[str, dict] = {}
    sent_bytes = 0
    started = time.perf_counter()
    for topic in fuzz_payloads.TOPICS:
        rng = fuzz_payloads.random.Random(f"{seed}:{topic}")
        receivers = stack.receivers(topic)
        topics[topic] = {"sent": 0, "receivers": list(receivers)}
        for first in range(0, per_topic, CHUNK):
            batch = [fuzz_payloads.hostile(topic, i, rng, stack.companion.id, blob_every)
                     for i in range(first, min(per_topic, first + CHUNK))]
            sent_bytes += sum(map(len, batch))
            sent = stack.fire(topic, iter(batch))
            topics[topic]["sent"] += sent
            for node in receivers:
                expected[node] += sent
            stack.wait_counted(expected, timeout=60)  # paced, so the broker's per-client queue never overflows
    counted = stack.wait_counted(expected, timeout=60)
    done = time.perf_counter()

    decided = stack.brain_decides()
    acted = stack.body_acts({"x": 0.2, "y": 0, "z": 1})
    held = stack.estop(True)
    refused = stack.body_acts({"x": -0.5, "y": 0, "z": 1})
    released = stack.estop(False)
    after = stack.body_acts({"x": 0, "y": 0, "z": 1})
    return {
        "per_topic": per_topic, "blob_every": blob_every, "seed": seed, "topics": topics,
        "sent_total": sum(t["sent"] for t in topics.values()), "mb_sent": sent_bytes / 1e6,
        "counted_s": done - started,
        "expected": expected, "counted": counted, "errors": stack.errors(), "threads": stack.threads(),
        "answers": {
            "brain_decides": bool(decided and decided.ok),
            "body_acts": bool(acted and acted.ok),
            "estop_shown": held is not None,
            "estop_refuses": bool(refused and refused.error and refused.error.code == "estop_engaged"),
            "acts_after_release": bool(released is not None and after and after.ok),
        },
    }


if __name__ == "__main__":
    sys.exit(main())

"""The servo executor's control loop against each protocol's simulator over a real pty.

For each protocol and control rate:
- achieved control ticks/s during a long move (one slew-limited sync-write plus one
  read-back of every moving joint per tick) against the configured rate;
- the cost of one tick (write + read-back through the driver and the pty), median and p95;
- look(1, 0, 1) from straight ahead: wall time against the planned time (45° at the
  joint's max speed) — the overhead is the settle into tolerance plus the loop;
- stop → held: how long after ``stop()`` mid-motion ``execute`` returns with the joints held.

Prints the figures and writes bench/results/servo_control.json.
Usage: python bench/servo_control.py [--rates 50,200] [--protocols feetech,dynamixel,maestro]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from body_drivers.body_config import parse_body_config  # noqa: E402
from body_drivers.node import ActionFailure  # noqa: E402
from body_drivers.servo.sim.simulator import start_simulator  # noqa: E402
from body_drivers.servo_body import build_servo_body  # noqa: E402
from edge.protocol.payloads import Action  # noqa: E402


def config_for(protocol: str, link: str, rate: float, speed: float):
    joint = {"protocol": protocol, "port": link, "min_deg": -40, "max_deg": 40, "max_speed_dps": speed}
    return parse_body_config({
        "servo": {"control_hz": rate, "home_speed_dps": 500},
        "joints": [{**joint, "name": "pan", "id": 1}, {**joint, "name": "tilt", "id": 2, "direction": -1}],
        "kinematics": {"look": {"kind": "pan_tilt", "pan": "pan", "tilt": "tilt"}},
    })


def look(body, x: float, cancel: threading.Event | None = None) -> float:
    t0 = time.perf_counter()
    try:
        body.execute(Action(name="look", params={"x": x, "y": 0, "z": 1}, sender="bench"), cancel or threading.Event())
    except ActionFailure as exc:
        if exc.code != "cancelled":
            raise
    return time.perf_counter() - t0


def measure(protocol: str, rate: float, folder: str) -> dict:
    link = f"{folder}/{protocol}-{int(rate)}"
    with start_simulator(protocol, link, [1, 2]):
        slow = build_servo_body(config_for(protocol, link, rate, speed=20)).start()
        ticks: list[float] = []
        write = slow.gate.command

        def timed(goals, speed_cap=None):
            t = time.perf_counter()
            out = write(goals, speed_cap)
            ticks.append(t)
            return out
        slow.gate.command = timed  # type: ignore[method-assign]
        read = slow.io.read
        costs: list[float] = []

        def timed_read(names=None):
            out = read(names)
            costs.append(time.perf_counter() - ticks[-1])
            return out
        slow.io.read = timed_read  # type: ignore[method-assign]
        look(slow, 0.7)   # 35° at 20 °/s: ~1.75 s of ticks
        span = ticks[-1] - ticks[0]
        achieved = (len(ticks) - 1) / span if span > 0 else 0.0
        slow.close()

        fast = build_servo_body(config_for(protocol, link, rate, speed=120)).start()
        fast.execute(Action(name="look", params={"x": 0, "y": 0, "z": 1}, sender="bench"), threading.Event())
        looks = [look(fast, 1.0 if i % 2 == 0 else 0.0) for i in range(4)]
        planned = 40 / 120   # 45° asked, clamped at 40°
        stops = []
        for target in (1.0, 0.0, 1.0):
            timer = threading.Timer(0.1, fast.stop)
            timer.start()
            t_stop = time.perf_counter() + 0.1
            look(fast, target)
            stops.append(time.perf_counter() - t_stop)
        fast.close()
    costs.sort()
    return {
        "protocol": protocol, "control_hz": rate,
        "achieved_hz": round(achieved, 1), "ticks": len(ticks),
        "tick_ms_median": round(1000 * statistics.median(costs), 3),
        "tick_ms_p95": round(1000 * costs[int(0.95 * (len(costs) - 1))], 3),
        "look_s_median": round(statistics.median(looks), 3), "look_planned_s": round(planned, 3),
        "look_overhead_s": round(statistics.median(looks) - planned, 3),
        "stop_to_held_ms_max": round(1000 * max(stops), 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rates", default="50,200")
    parser.add_argument("--protocols", default="feetech,dynamixel,maestro")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for protocol in args.protocols.split(","):
            for rate in (float(r) for r in args.rates.split(",")):
                row = measure(protocol, rate, folder)
                rows.append(row)
                print(f"{protocol:10s} {rate:5.0f} Hz asked: {row['achieved_hz']:6.1f} Hz achieved, "
                      f"tick {row['tick_ms_median']:.2f} ms (p95 {row['tick_ms_p95']:.2f}), "
                      f"look {row['look_s_median']:.3f} s vs {row['look_planned_s']:.3f} s planned, "
                      f"stop->held <= {row['stop_to_held_ms_max']:.0f} ms", flush=True)
    out = REPO / "bench" / "results" / "servo_control.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"rows": rows, "note": "simulators over a pty (no baud-rate delay); "
                               "2-joint body; tick = one sync-write + one read-back"}, indent=2) + "\n")
    print(f"wrote {out.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

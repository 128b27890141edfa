"""Servo bus throughput: commands per second through a pty, beside the 1 Mbaud wire limit.

For each protocol a simulator runs in its own process (``python -m body_drivers.servo.sim``,
as ``companion servo-sim`` would) and our driver talks to it over the pty. A pty has no
baud rate, so the measured rate is the software's (driver + simulator + kernel); the
wire limit is what the same bytes would allow on a real 1 Mbaud 8N1 bus (10 bits a byte,
servo return delay taken as 0 — Dynamixel's factory 500 µs return delay lowers it a lot).
A figure above its wire limit means the software is not the bottleneck on real hardware.

Prints a table and writes bench/results/servo_bus.json.
Usage: python bench/servo_bus.py [--seconds 0.5] [--joints 6]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from body_drivers.servo import dynamixel_packet as dp  # noqa: E402
from body_drivers.servo import feetech_packet as fp  # noqa: E402
from body_drivers.servo import maestro_packet as mp  # noqa: E402
from body_drivers.servo.buses import open_bus  # noqa: E402

BAUD = 1_000_000


def wire_bytes(protocol: str, joints: int) -> dict[str, int]:
    """Bytes on the wire per operation (request + every reply), from the real encoders."""
    if protocol.startswith("feetech"):
        read = len(fp.encode(1, fp.READ, b"\x38\x02")) + len(fp.encode(1, 0, b"\0\0"))
        write = len(fp.encode(1, fp.WRITE, b"\x2a\0\0")) + len(fp.encode(1, 0))
        sync_write = len(fp.encode(0xFE, fp.SYNC_WRITE, bytes(2 + 3 * joints)))
        sync_read = len(fp.encode(0xFE, fp.SYNC_READ, bytes(2 + joints))) + joints * len(fp.encode(1, 0, b"\0\0"))
    elif protocol == "dynamixel":
        read = len(dp.encode(1, dp.READ, bytes(4))) + len(dp.encode(1, 0, bytes(4), status=True))
        write = len(dp.encode(1, dp.WRITE, bytes(6))) + len(dp.encode(1, 0, status=True))
        sync_write = len(dp.encode(0xFE, dp.SYNC_WRITE, bytes(4 + 5 * joints)))
        sync_read = len(dp.encode(0xFE, dp.SYNC_READ, bytes(4 + joints))) + \
            joints * len(dp.encode(1, 0, bytes(4), status=True))
    else:
        device = 12 if protocol == "maestro-pololu" else None
        read = len(mp.encode(mp.GET_POSITION, b"\0", device=device)) + 2
        write = len(mp.encode(mp.SET_TARGET, b"\0\0\0", device=device))
        sync_write = len(mp.encode(mp.SET_MULTIPLE_TARGETS, bytes(2 + 2 * joints), device=device))
        sync_read = joints * read          # no multi-read: one Get Position per channel
    return {"read_position": read, "write_goal": write, "sync_write": sync_write, "sync_read": sync_read}


def rate(op: Callable[[], None], seconds: float, finish: Callable[[], None] | None = None) -> float:
    """Operations per second over ``seconds`` (``finish`` waits until the other end caught up)."""
    count = 0
    start = time.perf_counter()
    end = start + seconds
    while time.perf_counter() < end:
        op()
        count += 1
    if finish:
        finish()
    return count / (time.perf_counter() - start)


def measure(protocol: str, seconds: float, joints: int, workdir: str) -> dict:
    maestro = protocol.startswith("maestro")
    ids = list(range(joints)) if maestro else list(range(1, joints + 1))
    link = os.path.join(workdir, f"tty-{protocol}")
    sim = subprocess.Popen([sys.executable, "-m", "body_drivers.servo.sim", "--protocol", protocol,
                            "--link", link, "--ids", ",".join(map(str, ids)), "--speed", "1000000"],
                           cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        sim.stdout.readline()                          # "servo-sim … ready"
        bus = open_bus(protocol, link, timeout_s=0.1)
        low, high = (5000, 7000) if maestro else (200, 800) if protocol == "feetech-scs" else (1000, 3000)
        bus.set_torque(ids, True)
        flip = [low]

        def goals() -> dict[int, int]:
            flip[0] = high if flip[0] == low else low
            return {i: flip[0] for i in ids}

        def settle() -> None:
            bus.read_position(ids[0])                  # answered only after every write is consumed

        measured = {
            "read_position": rate(lambda: bus.read_position(ids[0]), seconds),
            "write_goal": rate(lambda: bus.write_goal(ids[0], goals()[ids[0]]), seconds, settle),
            "sync_write": rate(lambda: bus.sync_write_goals(goals()), seconds, settle),
            "sync_read": rate(lambda: bus.read_positions(ids), seconds),
        }
        bus.close()
    finally:
        sim.terminate()
        sim.wait(10)
    wire = wire_bytes(protocol, joints)
    out = {}
    for op, per_s in measured.items():
        limit = BAUD / (10 * wire[op])
        out[op] = {"per_s": round(per_s, 1), "wire_bytes": wire[op], "wire_limit_per_s": round(limit, 1),
                   "ratio_to_wire": round(per_s / limit, 3)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=0.5, help="per measurement")
    parser.add_argument("--joints", type=int, default=6, help="servos in sync read/write")
    args = parser.parse_args()
    results = {"baud": BAUD, "joints": args.joints, "seconds": args.seconds, "protocols": {}}
    with tempfile.TemporaryDirectory() as workdir:
        for protocol in ("feetech", "feetech-scs", "dynamixel", "maestro", "maestro-pololu"):
            print(f"measuring {protocol} …", file=sys.stderr, flush=True)
            results["protocols"][protocol] = measure(protocol, args.seconds, args.joints, workdir)
    print(f"{'protocol':16} {'operation':14} {'per s (pty)':>12} {'wire B':>7} {'1 Mbaud limit':>14} {'ratio':>6}")
    for protocol, ops in results["protocols"].items():
        for op, fig in ops.items():
            print(f"{protocol:16} {op:14} {fig['per_s']:12.0f} {fig['wire_bytes']:7d} "
                  f"{fig['wire_limit_per_s']:14.0f} {fig['ratio_to_wire']:6.2f}")
    out = REPO / "bench" / "results" / "servo_bus.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {out.relative_to(REPO)}")


if __name__ == "__main__":
    main()

"""Shared fixture helpers for the servo tests: a simulator on a real pty and a driver on it."""

from __future__ import annotations

import contextlib
import time
from typing import Callable, Iterator

from body_drivers.servo.bus import ServoBus
from body_drivers.servo.buses import open_bus
from body_drivers.servo.sim.simulator import ServoSimulator, start_simulator

# protocol → (ids the bus has, a goal inside the default model's range, a second goal)
CASES = {
    "feetech": ([1, 2], 1000, 3000),
    "feetech-scs": ([1, 2], 200, 800),
    "dynamixel": ([1, 2], 1000, 3000),
    "maestro": ([0, 1], 5000, 7000),
    "maestro-pololu": ([0, 1], 5000, 7000),
}
PACKET_PROTOCOLS = ("feetech", "feetech-scs", "dynamixel")
# How long the tests' drivers wait for a reply. A real servo answers within a millisecond or two;
# here the servo is a simulator thread of this process, starved for tens of milliseconds and more
# when both cores are busy, and a late reply became a retry the tests count (or a reply out of sync).
# A fault the tests inject (no reply, a cut reply) costs them this wait per attempt.
REPLY_TIMEOUT_S = 0.4


@contextlib.contextmanager
def sim_and_bus(protocol: str, link: str, ids: list[int] | None = None, *, speed: float | None = None,
                timeout_s: float = REPLY_TIMEOUT_S, retries: int = 2, **options) -> Iterator[tuple[ServoSimulator, ServoBus]]:
    sim_opts = {k: options[k] for k in ("crc7", "device") if k in options}
    sim = start_simulator(protocol, link, ids or CASES[protocol][0], speed=speed, **sim_opts)
    bus = open_bus(protocol, link, timeout_s=timeout_s, retries=retries, **options)
    try:
        yield sim, bus
    finally:
        bus.close()
        sim.stop()


def wait_for(check: Callable[[], bool], timeout: float = 3.0, step: float = 0.02) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(step)
    return check()

"""One simulated register-table servo: its memory, its motion, its faults.

The memory is a byte array laid out exactly as the model's control table, so a client
can read or write any address the real servo has. Motion is computed lazily: whenever
the table is touched, present position advances from where it was toward the goal at
the profile speed (or the model's top speed when the speed register says 0), as long as
torque is on and no fault has shut the servo down.
"""

from __future__ import annotations

import time

from body_drivers.servo.framing import int_from_bytes, int_to_bytes
from body_drivers.servo.tables import ServoModel

TABLE_SIZE = 256


class SimServo:
    def __init__(self, servo_id: int, model: ServoModel, big_endian: bool = False,
                 top_speed_ticks_s: float | None = None, clock=time.monotonic):
        self.servo_id = servo_id
        self.model = model
        self.big_endian = big_endian
        self.top_speed = top_speed_ticks_s or model.max_speed_ticks_s
        self.clock = clock
        self.memory = bytearray(TABLE_SIZE)
        for name, value in model.defaults.items():
            if name in model.registers:
                self._put(name, value)
        self._put("id", servo_id)
        self.position = float(self.get("present_position"))
        self.faults: set[str] = set()       # names currently reported
        self.shutdown_faults: set[str] = set()   # those that cut torque (vendor's shutdown mask)
        self._last = clock()

    # -- raw registers -----------------------------------------------------------------

    def _put(self, name: str, value: int) -> None:
        reg = self.model.reg(name)
        self.memory[reg.address:reg.address + reg.size] = int_to_bytes(
            value & ((1 << (8 * reg.size)) - 1), reg.size, self.big_endian)

    def get(self, name: str) -> int:
        reg = self.model.reg(name)
        return int_from_bytes(bytes(self.memory[reg.address:reg.address + reg.size]), self.big_endian)

    def covers(self, name: str, address: int, size: int) -> bool:
        reg = self.model.registers.get(name)
        return reg is not None and address < reg.address + reg.size and reg.address < address + size

    def read(self, address: int, size: int) -> bytes:
        self.update()
        return bytes(self.memory[address:address + size])

    def write(self, address: int, data: bytes) -> None:
        """Store bytes as the servo would; the protocol handler has validated them."""
        self.update()
        torque_was = self.get("torque_enable")
        self.memory[address:address + len(data)] = data
        if self.covers("torque_enable", address, len(data)):
            if self.shutdown_faults and self.get("torque_enable"):
                self._put("torque_enable", 0)      # a shut-down servo refuses torque until cleared
            elif self.get("torque_enable") and not torque_was:
                self._put("goal_position", round(self.position))   # hold where it is

    def read_only(self, address: int, size: int) -> bool:
        return any(not reg.writable and self.covers(name, address, size)
                   for name, reg in self.model.registers.items())

    # -- motion ------------------------------------------------------------------------

    def speed_ticks_s(self) -> float:
        raw = self.get("goal_speed")
        if self.model.family == "feetech" and raw & 0x8000:
            raw &= 0x7FFF
        return min(self.top_speed, raw * self.model.speed_unit_ticks_s) if raw else self.top_speed

    def goal(self) -> int:
        return self.get("goal_position")

    def update(self) -> None:
        now = self.clock()
        dt, self._last = now - self._last, now
        goal = self.goal()
        if self.get("torque_enable") and not self.shutdown_faults and dt > 0:
            step = self.speed_ticks_s() * dt
            delta = goal - self.position
            self.position = goal if abs(delta) <= step else self.position + step * (1 if delta > 0 else -1)
        self._put("present_position", round(self.position))
        if "moving" in self.model.registers:
            self._put("moving", int(bool(self.get("torque_enable")) and abs(goal - self.position) >= 1))

    # -- faults ------------------------------------------------------------------------

    def set_faults(self, names: set[str], shutdown: set[str]) -> None:
        self.update()
        self.faults = set(names)
        self.shutdown_faults = set(shutdown)
        if self.shutdown_faults:
            self._put("torque_enable", 0)

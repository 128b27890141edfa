"""A simulated Feetech bus: STS/SMS (little-endian) or SCS (big-endian) servos.

Answers PING, READ, WRITE, REG_WRITE/ACTION, SYNC_READ and SYNC_WRITE as the servos do:
one status packet per addressed servo, none for broadcasts, the fault bits in every
reply's error byte and in the Status register (65). A goal outside the angle limits is
clamped and flagged with the angle bit; Response Status Level 0 silences all but PING
and READ.
"""

from __future__ import annotations

from typing import Iterable

from body_drivers.servo import feetech_packet as fp
from body_drivers.servo.framing import Packet, Scan, scan_resync, int_from_bytes, int_to_bytes
from body_drivers.servo.sim.handler import RegisterHandler, Reply
from body_drivers.servo.sim.servo_state import TABLE_SIZE, SimServo
from body_drivers.servo.tables import FEETECH_ERROR_BITS, ServoModel

_BIT = {name: 1 << bit for bit, name in FEETECH_ERROR_BITS.items()}


class FeetechHandler(RegisterHandler):
    fault_names = ("voltage", "angle_limit", "overheat", "electrical", "overload")

    def __init__(self, ids: Iterable[int], model: ServoModel, top_speed: float | None = None,
                 big_endian: bool = False):
        super().__init__(ids, model, top_speed, big_endian)
        self.protocol = "feetech-scs" if big_endian else "feetech"
        self.big_endian = big_endian
        self._registered: dict[int, tuple[int, bytes]] = {}

    def scan(self, buf: bytearray) -> Scan:
        return scan_resync(fp.scan, buf)

    def _shutdown_for(self, servo: SimServo, names: set[str]) -> set[str]:
        # Unloading Condition (19), default 0x2C: overheat, overcurrent, overload cut torque
        mask = servo.get("unloading_condition")
        return {name for name in names if mask & _BIT[name]}

    def _store_fault_bits(self, servo: SimServo) -> None:
        servo._put("hardware_error", self._error_byte(servo))

    def _error_byte(self, servo: SimServo) -> int:
        return sum(_BIT[name] for name in servo.faults)

    def _reply(self, servo: SimServo, params: bytes = b"", extra_error: int = 0) -> Reply:
        return Reply(servo.servo_id, fp.encode(servo.servo_id, self._error_byte(servo) | extra_error, params))

    def _write(self, servo: SimServo, address: int, data: bytes) -> int:
        """Apply a write; returns extra error bits for the reply (angle limit)."""
        if address + len(data) > TABLE_SIZE or servo.read_only(address, len(data)):
            return 0
        error = 0
        goal = servo.model.reg("goal_position")
        if servo.covers("goal_position", address, len(data)) and address <= goal.address \
                and address + len(data) >= goal.address + goal.size:
            at = goal.address - address
            value = int_from_bytes(data[at:at + goal.size], self.big_endian)
            if not self.big_endian and value & 0x8000:
                value = -(value & 0x7FFF)
            low, high = servo.get("min_position_limit"), servo.get("max_position_limit")
            if not low <= value <= high:
                value = max(low, min(high, value))
                error = _BIT["angle_limit"]
                data = data[:at] + int_to_bytes(value, goal.size, self.big_endian) + data[at + goal.size:]
        servo.write(address, data)
        return error

    def handle(self, packet: Packet) -> list[Reply]:
        code, params, sid = packet.code, packet.params, packet.servo_id
        if sid == fp.BROADCAST_ID:
            return self._broadcast(code, params)
        servo = self.servos.get(sid)
        if servo is None:
            return []
        quiet = servo.get("status_return_level") == 0
        if code == fp.PING:
            return [self._reply(servo)]
        if code == fp.READ and len(params) == 2:
            address, size = params
            return [self._reply(servo, servo.read(address, size))]
        if code in (fp.WRITE, fp.REG_WRITE) and len(params) >= 2:
            if code == fp.WRITE:
                extra = self._write(servo, params[0], params[1:])
            else:
                self._registered[sid], extra = (params[0], params[1:]), 0
            return [] if quiet else [self._reply(servo, extra_error=extra)]
        if code == fp.ACTION:
            self._action([sid])
            return [] if quiet else [self._reply(servo)]
        return []     # unknown or malformed instruction: a Feetech servo stays silent

    def _action(self, ids: Iterable[int]) -> None:
        for sid in ids:
            if sid in self._registered:
                address, data = self._registered.pop(sid)
                self._write(self.servos[sid], address, data)

    def _broadcast(self, code: int, params: bytes) -> list[Reply]:
        if code == fp.SYNC_WRITE and len(params) >= 2:
            address, size = params[0], params[1]
            body = params[2:]
            for at in range(0, len(body) - size, size + 1):
                servo = self.servos.get(body[at])
                if servo is not None:
                    self._write(servo, address, body[at + 1:at + 1 + size])
            return []
        if code == fp.SYNC_READ and len(params) >= 2:
            address, size = params[0], params[1]
            return [self._reply(self.servos[i], self.servos[i].read(address, size))
                    for i in params[2:] if i in self.servos]
        if code == fp.WRITE and len(params) >= 2:
            for servo in self.servos.values():
                self._write(servo, params[0], params[1:])
        if code == fp.ACTION:
            self._action(list(self._registered))
        return []

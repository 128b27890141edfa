"""A simulated Dynamixel Protocol 2.0 bus of X-series servos.

Answers PING (unicast and broadcast), READ, WRITE, SYNC_READ, SYNC_WRITE and REBOOT with
status packets as the e-Manual describes: result errors in bits 0-6 of the error byte
(data range, data length, data limit, access, instruction), the hardware alert in bit 7
with its cause in Hardware Error Status (70), faults in the Shutdown mask (63) cutting
torque until a REBOOT, and Status Return Level (68) deciding what gets a reply.
"""

from __future__ import annotations

from typing import Iterable

from body_drivers.servo import dynamixel_packet as dp
from body_drivers.servo.framing import Packet, Scan, scan_resync, int_from_bytes, to_signed
from body_drivers.servo.sim.handler import RegisterHandler, Reply
from body_drivers.servo.sim.servo_state import TABLE_SIZE, SimServo
from body_drivers.servo.tables import DXL_ALERT_BIT, DXL_HARDWARE_ERROR_BITS, ServoModel

_BIT = {name: 1 << bit for bit, name in DXL_HARDWARE_ERROR_BITS.items()}
OK, INSTRUCTION_ERROR, RANGE_ERROR, LENGTH_ERROR, LIMIT_ERROR, ACCESS_ERROR = 0, 2, 4, 5, 6, 7
EEPROM_END = 64        # addresses below are EEPROM: writable only with torque off


class DynamixelHandler(RegisterHandler):
    protocol = "dynamixel"
    fault_names = ("voltage", "overheat", "encoder", "electrical", "overload")

    def __init__(self, ids: Iterable[int], model: ServoModel, top_speed: float | None = None):
        super().__init__(ids, model, top_speed)

    def _shutdown_for(self, servo: SimServo, names: set[str]) -> set[str]:
        mask = servo.get("shutdown")
        return {name for name in names if mask & _BIT[name]}

    def scan(self, buf: bytearray) -> Scan:
        return scan_resync(dp.scan, buf)

    def _store_fault_bits(self, servo: SimServo) -> None:
        servo._put("hardware_error", sum(_BIT[name] for name in servo.faults))

    def _status(self, servo: SimServo, result: int = OK, params: bytes = b"") -> Reply:
        error = result | (DXL_ALERT_BIT if servo.faults else 0)
        return Reply(servo.servo_id, dp.encode(servo.servo_id, error, params, status=True))

    def _write(self, servo: SimServo, address: int, data: bytes) -> int:
        """Apply a write as the servo would; returns the result error."""
        if not data or address + len(data) > TABLE_SIZE:
            return RANGE_ERROR
        if servo.read_only(address, len(data)) or (address < EEPROM_END and servo.get("torque_enable")):
            return ACCESS_ERROR
        goal = servo.model.reg("goal_position")
        if servo.covers("goal_position", address, len(data)):
            if address > goal.address or address + len(data) < goal.address + goal.size:
                return LENGTH_ERROR          # a partial goal write
            at = goal.address - address
            value = to_signed(int_from_bytes(data[at:at + goal.size]), goal.size)
            if not servo.get("min_position_limit") <= value <= servo.get("max_position_limit"):
                return LIMIT_ERROR
        servo.write(address, data)
        return OK

    def handle(self, packet: Packet) -> list[Reply]:
        code, params, sid = packet.code, packet.params, packet.servo_id
        if sid == dp.BROADCAST_ID:
            return self._broadcast(code, params)
        servo = self.servos.get(sid)
        if servo is None:
            return []
        level = servo.get("status_return_level")
        if code == dp.PING:
            return [self._ping_reply(servo)]
        if code == dp.READ:
            if len(params) != 4:
                reply = self._status(servo, LENGTH_ERROR)
            else:
                address, size = int_from_bytes(params[:2]), int_from_bytes(params[2:])
                reply = self._status(servo, RANGE_ERROR) if address + size > TABLE_SIZE \
                    else self._status(servo, OK, servo.read(address, size))
            return [reply] if level >= 1 else []
        if code == dp.WRITE:
            result = LENGTH_ERROR if len(params) < 3 else self._write(servo, int_from_bytes(params[:2]), params[2:])
            return [self._status(servo, result)] if level >= 2 else []
        if code == dp.REBOOT:
            self._reboot(servo)
            return [self._status(servo)] if level >= 2 else []
        return [self._status(servo, INSTRUCTION_ERROR)] if level >= 2 else []

    def _ping_reply(self, servo: SimServo) -> Reply:
        model = servo.get("model_number")
        return self._status(servo, OK, bytes((model & 0xFF, model >> 8, servo.get("firmware_version"))))

    def _reboot(self, servo: SimServo) -> None:
        servo.set_faults(set(), set())
        self._store_fault_bits(servo)
        servo._put("torque_enable", 0)

    def _broadcast(self, code: int, params: bytes) -> list[Reply]:
        if code == dp.PING:
            return [self._ping_reply(s) for _, s in sorted(self.servos.items())]
        if len(params) < 4:
            return []
        address, size = int_from_bytes(params[:2]), int_from_bytes(params[2:4])
        if code == dp.SYNC_READ:
            if address + size > TABLE_SIZE:
                return []
            return [self._status(self.servos[i], OK, self.servos[i].read(address, size))
                    for i in params[4:] if i in self.servos]
        if code == dp.SYNC_WRITE:
            body = params[4:]
            for at in range(0, len(body) - size, size + 1):
                servo = self.servos.get(body[at])
                if servo is not None:
                    self._write(servo, address, body[at + 1:at + 1 + size])
        return []

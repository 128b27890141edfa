"""Dynamixel Protocol 2.0 servos (X-series: XL330, XM430 …).

Protocol facts this driver relies on (see docs/servos.md for sources): a status packet's
error byte holds an instruction result in bits 0-6 and a hardware *alert* in bit 7, the
alert's cause being in the Hardware Error Status register (70); READ / SYNC_READ take a
2-byte address and a 2-byte length; SYNC_WRITE 0x83 to broadcast 0xFE gets no reply;
Profile Velocity (112) and Goal Position (116) are adjacent, so a goal with its speed is
one 8-byte write. Values are little-endian, positions signed 32-bit.
"""

from __future__ import annotations

from body_drivers.servo import dynamixel_packet as dp
from body_drivers.servo.bus import ServoError
from body_drivers.servo.framing import Packet, Scan, scan_resync, int_from_bytes, int_to_bytes, to_signed
from body_drivers.servo.register_bus import RegisterBus
from body_drivers.servo.tables import (DEFAULT_MODEL, DXL_ALERT_BIT, DXL_HARDWARE_ERROR_BITS,
                                       DXL_RESULT_ERRORS, model as model_named)


def hardware_fault_names(bits: int) -> set[str]:
    names = {name for bit, name in DXL_HARDWARE_ERROR_BITS.items() if bits & (1 << bit)}
    if bits and not names:
        names.add("hardware")
    return names


def _u16(value: int) -> bytes:
    return int_to_bytes(value, 2)


class DynamixelBus(RegisterBus):
    protocol = "dynamixel"

    def __init__(self, port: str, baudrate: int = 1_000_000, timeout_s: float = 0.05,
                 retries: int = 2, model: str | None = None, echo: bool | None = None):
        chosen = model_named(model or DEFAULT_MODEL["dynamixel"])
        if chosen.family != "dynamixel":
            raise ValueError(f"model {chosen.name} is not a Dynamixel servo")
        super().__init__(port, baudrate, timeout_s, retries, chosen, echo)

    # -- framing -------------------------------------------------------------------------

    def _scan(self, buf: bytearray) -> Scan:
        return scan_resync(dp.scan, buf)

    def _is_request(self, packet: Packet) -> bool:
        return packet.code != dp.STATUS

    def _encode(self, value: int, size: int) -> bytes:
        return int_to_bytes(value, size)

    def _decode(self, data: bytes) -> int:
        return int_from_bytes(data)

    def _decode_position(self, data: bytes) -> int:
        return to_signed(self._decode(data), len(data))

    # -- requests ------------------------------------------------------------------------

    def _ping_request(self, servo_id: int) -> bytes:
        return dp.encode(servo_id, dp.PING)

    def _read_request(self, servo_id: int, address: int, size: int) -> bytes:
        return dp.encode(servo_id, dp.READ, _u16(address) + _u16(size))

    def _write_request(self, servo_id: int, address: int, data: bytes) -> bytes:
        return dp.encode(servo_id, dp.WRITE, _u16(address) + data)

    def _sync_read_request(self, ids: list[int], address: int, size: int) -> bytes:
        return dp.encode(dp.BROADCAST_ID, dp.SYNC_READ, _u16(address) + _u16(size) + bytes(ids))

    def _sync_write_request(self, address: int, size: int, items: dict[int, bytes]) -> bytes:
        body = b"".join(bytes((servo_id,)) + data for servo_id, data in items.items())
        return dp.encode(dp.BROADCAST_ID, dp.SYNC_WRITE, _u16(address) + _u16(size) + body)

    def _goal_bytes(self, servo_id: int, ticks: int, speed: int | None) -> tuple[int, bytes]:
        goal = self.model.reg("goal_position")
        if speed is None:
            return goal.address, self._encode(ticks, goal.size)
        velocity = self.model.reg("goal_speed")           # Profile Velocity, right before goal
        return velocity.address, self._encode(speed, velocity.size) + self._encode(ticks, goal.size)

    # -- replies -------------------------------------------------------------------------

    def _reply_data(self, packet: Packet) -> bytes:
        return packet.params[1:]          # params[0] is the error byte

    def _reply_faults(self, servo_id: int, packet: Packet) -> tuple[set[str], tuple[str, str] | None]:
        if not packet.params:
            raise ServoError("malformed", "status packet without an error byte",
                             servo_id=servo_id, port=self.port)
        error = packet.params[0]
        result = DXL_RESULT_ERRORS.get(error & 0x7F)
        if error & 0x7F and result is None:
            result = ("instruction", f"unknown result error 0x{error & 0x7F:02x}")
        faults: set[str] = set()
        if error & DXL_ALERT_BIT:
            # the alert says only "something is wrong"; the register says what
            bits = self._decode(self._read(servo_id, "hardware_error", check=False))
            faults = hardware_fault_names(bits) or {"hardware"}
        return faults, result

    def _register_faults(self, value: int) -> set[str]:
        return hardware_fault_names(value)

    def _quick_faults(self, packet: Packet) -> set[str]:
        error = packet.params[0] if packet.params else 0
        names = {"hardware"} if error & DXL_ALERT_BIT else set()
        if error & 0x7F:
            names.add(DXL_RESULT_ERRORS.get(error & 0x7F, ("instruction", ""))[0])
        return names

    def _model_number(self, servo_id: int, ping_reply: Packet) -> int:
        data = self._reply_data(ping_reply)
        if len(data) < 2:
            raise ServoError("malformed", f"ping reply too short ({len(data)} data bytes)",
                             servo_id=servo_id, port=self.port)
        return self._decode(data[:2])

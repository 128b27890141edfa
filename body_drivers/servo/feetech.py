"""Feetech STS/SMS (little-endian) and SCS (big-endian) serial bus servos.

Protocol facts this driver relies on (see docs/servos.md for sources): every reply's
error byte carries the fault bits (voltage, angle, overheat, overcurrent, overload); READ
is ``addr len`` (one byte each); SYNC_READ 0x82 and SYNC_WRITE 0x83 go to broadcast id
0xFE, the first answered by each servo in turn, the second by nobody; STS positions and
speeds are sign-magnitude (bit 15 = negative), SCS positions are plain 10-bit values.
"""

from __future__ import annotations

from body_drivers.servo import feetech_packet as fp
from body_drivers.servo.framing import Packet, Scan, scan_resync, int_from_bytes, int_to_bytes
from body_drivers.servo.register_bus import RegisterBus
from body_drivers.servo.tables import DEFAULT_MODEL, FEETECH_ERROR_BITS, model as model_named


def fault_names(error: int) -> set[str]:
    names = {name for bit, name in FEETECH_ERROR_BITS.items() if error & (1 << bit)}
    if error & ~sum(1 << b for b in FEETECH_ERROR_BITS) & 0xFF:
        names.add("hardware")
    return names


class FeetechBus(RegisterBus):
    def __init__(self, port: str, baudrate: int = 1_000_000, timeout_s: float = 0.05,
                 retries: int = 2, big_endian: bool = False, model: str | None = None,
                 echo: bool | None = None):
        self.protocol = "feetech-scs" if big_endian else "feetech"
        self.big_endian = big_endian
        chosen = model_named(model or DEFAULT_MODEL[self.protocol])
        if chosen.family != "feetech":
            raise ValueError(f"model {chosen.name} is not a Feetech servo")
        super().__init__(port, baudrate, timeout_s, retries, chosen, echo)

    # -- framing -------------------------------------------------------------------------

    def _scan(self, buf: bytearray) -> Scan:
        return scan_resync(fp.scan, buf)

    def _encode(self, value: int, size: int) -> bytes:
        return int_to_bytes(value, size, self.big_endian)

    def _decode(self, data: bytes) -> int:
        return int_from_bytes(data, self.big_endian)

    def _decode_position(self, data: bytes) -> int:
        value = self._decode(data)
        if not self.big_endian and len(data) == 2 and value & 0x8000:
            return -(value & 0x7FFF)      # STS sign-magnitude (multi-turn / step mode)
        return value

    # -- requests ------------------------------------------------------------------------

    def _ping_request(self, servo_id: int) -> bytes:
        return fp.encode(servo_id, fp.PING)

    def _read_request(self, servo_id: int, address: int, size: int) -> bytes:
        return fp.encode(servo_id, fp.READ, bytes((address, size)))

    def _write_request(self, servo_id: int, address: int, data: bytes) -> bytes:
        return fp.encode(servo_id, fp.WRITE, bytes((address,)) + data)

    def _sync_read_request(self, ids: list[int], address: int, size: int) -> bytes:
        return fp.encode(fp.BROADCAST_ID, fp.SYNC_READ, bytes((address, size, *ids)))

    def _sync_write_request(self, address: int, size: int, items: dict[int, bytes]) -> bytes:
        body = b"".join(bytes((servo_id,)) + data for servo_id, data in items.items())
        return fp.encode(fp.BROADCAST_ID, fp.SYNC_WRITE, bytes((address, size)) + body)

    def _goal_bytes(self, servo_id: int, ticks: int, speed: int | None) -> tuple[int, bytes]:
        goal = self.model.reg("goal_position")
        if speed is None:
            return goal.address, self._encode(ticks, goal.size)
        # goal position, goal time (0: use speed), goal speed are contiguous: one write
        return goal.address, self._encode(ticks, 2) + self._encode(0, 2) + self._encode(speed, 2)

    # -- replies -------------------------------------------------------------------------

    def _reply_data(self, packet: Packet) -> bytes:
        return packet.params

    def _reply_faults(self, servo_id: int, packet: Packet) -> tuple[set[str], tuple[str, str] | None]:
        return fault_names(packet.code), None

    def _register_faults(self, value: int) -> set[str]:
        return fault_names(value)

    def _quick_faults(self, packet: Packet) -> set[str]:
        return fault_names(packet.code)

    def _model_number(self, servo_id: int, ping_reply: Packet) -> int:
        # like scservo_sdk: PING has no payload, the model number is a register
        return self._decode(self._read(servo_id, "model_number", check=False))

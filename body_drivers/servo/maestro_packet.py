"""Pololu Maestro serial commands, compact and Pololu protocol, optional CRC-7.

Compact: ``command data…``; Pololu protocol (for daisy-chains): ``AA device command&7F
data…``. Command bytes have the top bit set, data bytes never do, so 14-bit values go
out as two 7-bit halves (low first). With CRC enabled the Maestro expects one more byte,
the CRC-7 of the whole command (polynomial x^7 + x^3 + 1, bits processed LSB first),
and silently drops a command whose CRC is wrong (setting its serial CRC error bit).
Replies — Get Position, Get Moving State, Get Errors — are bare little-endian bytes with
no header or checksum: the driver knows how many to expect.
"""

from __future__ import annotations

from body_drivers.servo.framing import Packet, Scan

POLOLU = 0xAA
SET_TARGET, SET_SPEED, SET_ACCELERATION = 0x84, 0x87, 0x89
SET_MULTIPLE_TARGETS = 0x9F
GET_POSITION, GET_MOVING_STATE, GET_ERRORS, GO_HOME = 0x90, 0x93, 0xA1, 0xA2
COMPACT_ID = -1   # Packet.servo_id of a compact-protocol command (no device number)

# data bytes after the command byte; None = variable (Set Multiple Targets)
DATA_LENGTH: dict[int, int | None] = {
    SET_TARGET: 3, SET_SPEED: 3, SET_ACCELERATION: 3, SET_MULTIPLE_TARGETS: None,
    GET_POSITION: 1, GET_MOVING_STATE: 0, GET_ERRORS: 0, GO_HOME: 0}
REPLY_LENGTH = {GET_POSITION: 2, GET_MOVING_STATE: 1, GET_ERRORS: 2}


def crc7(data: bytes | bytearray) -> int:
    crc = 0
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc ^ 0x91) >> 1 if crc & 1 else crc >> 1
    return crc


def split14(value: int) -> bytes:
    if not 0 <= value <= 0x3FFF:
        raise ValueError(f"maestro values are 14-bit (0..16383), got {value}")
    return bytes((value & 0x7F, value >> 7))


def join14(low: int, high: int) -> int:
    return (low & 0x7F) | ((high & 0x7F) << 7)


def encode(command: int, data: bytes = b"", *, device: int | None = None, crc: bool = False) -> bytes:
    """One command; ``device`` selects the Pololu protocol, ``crc`` appends CRC-7."""
    if any(b & 0x80 for b in data):
        raise ValueError(f"maestro data bytes must be < 0x80: {data.hex(' ')}")
    if device is None:
        out = bytes((command,)) + bytes(data)
    else:
        if not 0 <= device <= 0x7F:
            raise ValueError(f"maestro device number must be 0..127, got {device}")
        out = bytes((POLOLU, device, command & 0x7F)) + bytes(data)
    return out + bytes((crc7(out),)) if crc else out


def _data_length(command: int, buf: bytes | bytearray, at: int) -> int | None:
    """Data bytes the command at ``buf[at-1]`` takes; -1 if unknown; None if not yet known."""
    if command not in DATA_LENGTH:
        return -1
    fixed = DATA_LENGTH[command]
    if fixed is not None:
        return fixed
    if at >= len(buf):
        return None
    return 2 + 2 * buf[at]           # count, first channel, count × (low, high)


def scan(buf: bytes | bytearray, *, crc: bool = False) -> Scan:
    """The first whole command in ``buf`` (both protocols). Corrupt reasons: "protocol"
    (stray data byte, unknown command, command byte inside data) or "checksum" (CRC-7)."""
    n = len(buf)
    if n == 0:
        return Scan("incomplete")
    if not buf[0] & 0x80:
        return Scan("corrupt", 0, 1, reason="protocol")
    device, at = COMPACT_ID, 1
    command = buf[0]
    if command == POLOLU:
        if n < 3:
            return Scan("incomplete")
        if buf[1] & 0x80 or buf[2] & 0x80:
            return Scan("corrupt", 0, 1, reason="protocol")
        device, command, at = buf[1], buf[2] | 0x80, 3
    size = _data_length(command, buf, at)
    if size is None:
        return Scan("incomplete")
    if size < 0:
        return Scan("corrupt", 0, at, reason="protocol")
    end = at + size + (1 if crc else 0)
    for i in range(1, min(end, n)):
        if buf[i] & 0x80:            # a new command started before this one finished
            return Scan("corrupt", 0, i, reason="protocol")
    if end > n:
        return Scan("incomplete")
    if crc and crc7(buf[:end - 1]) != buf[end - 1]:
        return Scan("corrupt", 0, end, reason="checksum")
    data = bytes(buf[at:at + size])
    return Scan("packet", 0, end, packet=Packet(device, command, data))

"""Dynamixel Protocol 2.0 packets: ``FF FF FD 00 id len_l len_h instr params… crc_l crc_h``.

``len`` counts instruction, parameters and the two CRC bytes *after* byte stuffing; a
reply is ``… 55 error params… crc``. The CRC is the 16-bit CRC ROBOTIS specifies:
polynomial 0x8005, initial value 0, no reflection, no final XOR (the catalogue calls
that CRC-16/BUYPASS, or UMTS), over every byte from the header to the last parameter.
Byte stuffing keeps a header out of the payload: any ``FF FF FD`` inside instruction +
parameters goes out as ``FF FF FD FD`` and is restored on receipt.
"""

from __future__ import annotations

from body_drivers.servo.framing import Packet, Scan

HEADER = b"\xff\xff\xfd\x00"
BROADCAST_ID = 0xFE
STATUS = 0x55
MAX_LENGTH = 1024

PING, READ, WRITE, REG_WRITE, ACTION, FACTORY_RESET, REBOOT = 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x08
SYNC_READ, SYNC_WRITE, BULK_READ, BULK_WRITE = 0x82, 0x83, 0x92, 0x93


def _crc_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x8005) if crc & 0x8000 else (crc << 1)
        table.append(crc & 0xFFFF)
    return tuple(table)


_TABLE = _crc_table()


def crc16(data: bytes | bytearray, crc: int = 0) -> int:
    for byte in data:
        crc = ((crc << 8) ^ _TABLE[((crc >> 8) ^ byte) & 0xFF]) & 0xFFFF
    return crc


def stuff(payload: bytes) -> bytes:
    return payload.replace(b"\xff\xff\xfd", b"\xff\xff\xfd\xfd")


def unstuff(payload: bytes) -> bytes:
    return payload.replace(b"\xff\xff\xfd\xfd", b"\xff\xff\xfd")


def encode(servo_id: int, code: int, params: bytes = b"", *, status: bool = False) -> bytes:
    """A request (``code`` = instruction) or, with ``status``, a reply (``code`` = error)."""
    if not 0 <= servo_id <= 0xFE or servo_id == 0xFD:
        raise ValueError(f"dynamixel id must be 0..252 or 254, got {servo_id}")
    payload = stuff((bytes((STATUS, code)) if status else bytes((code,))) + bytes(params))
    length = len(payload) + 2
    if length > MAX_LENGTH:
        raise ValueError(f"dynamixel packet too long ({len(params)} parameter bytes)")
    head = HEADER + bytes((servo_id, length & 0xFF, length >> 8))
    crc = crc16(head + payload)
    return head + payload + bytes((crc & 0xFF, crc >> 8))


def scan(buf: bytes | bytearray) -> Scan:
    """Find the first whole packet in ``buf``. A status packet decodes to
    ``Packet(id, STATUS, error + params)``; requests to ``Packet(id, instr, params)``."""
    n = len(buf)
    i = buf.find(HEADER)
    if i < 0:
        for keep in (3, 2, 1):          # a header may be split across reads
            if n >= keep and bytes(buf[n - keep:]) == HEADER[:keep]:
                return Scan("incomplete", start=n - keep)
        return Scan("incomplete", start=n)
    if i + 7 > n:
        return Scan("incomplete", start=i)
    servo_id = buf[i + 4]
    length = buf[i + 5] | (buf[i + 6] << 8)
    if length < 3 or length > MAX_LENGTH or servo_id in (0xFD, 0xFF):
        return Scan("corrupt", start=i, end=i + 7)
    end = i + 7 + length
    if end > n:
        return Scan("incomplete", start=i)
    crc = buf[end - 2] | (buf[end - 1] << 8)
    if crc16(buf[i:end - 2]) != crc:
        return Scan("corrupt", start=i, end=end)
    payload = unstuff(bytes(buf[i + 7:end - 2]))
    return Scan("packet", start=i, end=end, packet=Packet(servo_id, payload[0], payload[1:]))

"""Feetech SCS/STS packets: ``FF FF id len instr|error params… checksum``.

``len`` counts the instruction (or error) byte, the parameters and the checksum; the
checksum is the inverted low byte of the sum of id, len, instruction and parameters.
Requests and replies share one layout, so a reply is told from an echoed request only by
comparing bytes. Multi-byte register values are little-endian on STS/SMS servos and
big-endian on SCS servos — that is the only difference between the two families here.
"""

from __future__ import annotations

from body_drivers.servo.framing import Packet, Scan

HEADER = b"\xff\xff"
BROADCAST_ID = 0xFE
MAX_LENGTH = 250   # scservo_sdk's RXPACKET_MAX_LEN / TXPACKET_MAX_LEN

PING, READ, WRITE, REG_WRITE, ACTION, RESET = 0x01, 0x02, 0x03, 0x04, 0x05, 0x06
SYNC_READ, SYNC_WRITE = 0x82, 0x83


def checksum(body: bytes) -> int:
    """``~(id + len + instr + params) & 0xFF``; ``body`` is everything after the header."""
    return ~sum(body) & 0xFF


def encode(servo_id: int, code: int, params: bytes = b"") -> bytes:
    """One packet (request: ``code`` is the instruction; reply: the error byte)."""
    if not 0 <= servo_id <= 0xFE:
        raise ValueError(f"feetech id must be 0..254, got {servo_id}")
    if len(params) + 2 > MAX_LENGTH:
        raise ValueError(f"feetech packet too long ({len(params)} parameter bytes)")
    body = bytes((servo_id, len(params) + 2, code)) + bytes(params)
    return HEADER + body + bytes((checksum(body),))


def scan(buf: bytes | bytearray) -> Scan:
    """Find the first whole packet in ``buf`` (see ``framing`` for the contract)."""
    n = len(buf)
    i = 0
    while True:
        i = buf.find(HEADER, i)
        if i < 0:
            # keep a trailing FF: it may be the first half of a header
            return Scan("incomplete", start=n - 1 if n and buf[-1] == 0xFF else n)
        if i + 2 < n and buf[i + 2] == 0xFF:
            i += 1                       # FF FF FF…: the header is the later pair
            continue
        if i + 4 > n:
            return Scan("incomplete", start=i)
        servo_id, length = buf[i + 2], buf[i + 3]
        if length < 2 or length > MAX_LENGTH:
            return Scan("corrupt", start=i, end=i + 4)
        end = i + 4 + length
        if end > n:
            return Scan("incomplete", start=i)
        body = bytes(buf[i + 2:end - 1])
        if checksum(body) != buf[end - 1]:
            return Scan("corrupt", start=i, end=end)
        return Scan("packet", start=i, end=end,
                    packet=Packet(servo_id, body[2], body[3:]))

"""What the packet codecs share: a decoded packet, a scan result, integers on the wire.

The drivers and the simulators read a byte stream that may start mid-packet, hold
garbage or an echo, or stop short. Each codec's ``scan(buf)`` looks at the buffer and
says one thing: here is a whole valid packet (and where it starts and ends), the bytes
from ``start`` look like a packet whose checksum fails, or nothing complete yet. Callers
drop what they have used and, on a corrupt candidate, drop one byte and scan again —
that is the whole resynchronisation strategy, the same on both sides of the wire.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Packet:
    servo_id: int
    code: int            # instruction (requests) or error byte / status marker (replies)
    params: bytes


@dataclass(frozen=True)
class Scan:
    kind: str            # "packet" | "corrupt" | "incomplete"
    start: int = 0       # where the packet (or the corrupt candidate) begins
    end: int = 0         # one past its last byte ("packet" and "corrupt")
    packet: Packet | None = None
    reason: str = ""     # why a candidate is corrupt ("checksum", "protocol"), for logs and error bits

    def found(self) -> Packet:
        """The packet of a "packet" scan; asking a corrupt or incomplete scan for one is a caller's bug."""
        if self.packet is None:
            raise ValueError(f"a {self.kind!r} scan holds no packet")
        return self.packet




def int_to_bytes(value: int, size: int, big_endian: bool = False) -> bytes:
    """Unsigned little- or big-endian; out-of-range values are the caller's bug (ValueError)."""
    return int(value).to_bytes(size, "big" if big_endian else "little")


def int_from_bytes(data: bytes, big_endian: bool = False) -> int:
    return int.from_bytes(data, "big" if big_endian else "little")


def to_signed(value: int, size: int) -> int:
    """Two's complement (Dynamixel present velocity/position can be negative)."""
    bits = 8 * size
    return value - (1 << bits) if value & (1 << (bits - 1)) else value


def hexdump(data: bytes, limit: int = 48) -> str:
    text = data[:limit].hex(" ")
    return text + (" …" if len(data) > limit else "")


def scan_resync(scan: Callable[[bytearray], Scan], buf: bytearray) -> Scan:
    """``scan``, but a half-received candidate is given up as noise once a whole valid
    packet shows up after it: a garbage "header" with a large length byte must not make
    us wait out the timeout while the real reply sits in the buffer."""
    sc = scan(buf)
    if sc.kind != "incomplete":
        return sc
    offset = sc.start + 1
    while offset < len(buf):
        later = scan(buf[offset:])
        if later.kind == "packet":
            return Scan("corrupt", sc.start, sc.start + 1, reason="overrun")
        if later.kind == "incomplete" and offset + later.start >= len(buf) - 1:
            break
        offset += later.start + 1
    return sc

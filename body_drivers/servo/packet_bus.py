"""Request/reply over a half-duplex packet bus: retries, resync, echo skipping.

Feetech and Dynamixel differ in framing and registers, not in how a conversation goes:
send one instruction packet, collect one status packet from each addressed servo, and
cope with what a real bus does to that — a reply lost or garbled (retry, then raise
``timeout``/``no_reply``/``checksum``), noise before a reply (scan past it), the adapter
echoing our own request back (skip it, and remember that this adapter echoes).
Only the servos that have not answered are asked again on a retry.
"""

from __future__ import annotations

import collections
import threading
import time
from typing import Callable

from body_drivers.servo.bus import ServoError
from body_drivers.servo.framing import Packet, Scan, hexdump
from body_drivers.servo.link import SerialLink
from body_drivers.servo.tables import ServoModel
from edge.log import get_logger

log = get_logger(__name__)

BITS_PER_BYTE = 10   # 8N1 on the wire


class PacketBus:
    protocol = "packet"

    def __init__(self, port: str, baudrate: int, timeout_s: float, retries: int,
                 model: ServoModel, echo: bool | None = None):
        self.port = port
        self.model = model
        self.retries = retries
        self.timeout_s = timeout_s
        self.baudrate = baudrate
        self.echo = echo                 # None: detect; True: the adapter echoes; False: never
        self.link = SerialLink(port, baudrate, timeout_s)
        self._unanswered: collections.deque[bytes] = collections.deque(maxlen=4)
        self._lock = threading.RLock()
        self.stats: collections.Counter[str] = collections.Counter()   # retries, echoes, corrupt, stray (for bench/doctor)

    # -- protocol hooks ------------------------------------------------------------------

    def _scan(self, buf: bytearray) -> Scan:
        raise NotImplementedError

    def _is_request(self, packet: Packet) -> bool:
        """True when a decoded packet is an instruction, not a reply (an echo, another master)."""
        return False

    # -- conversation --------------------------------------------------------------------

    def _wire_time(self, nbytes: int) -> float:
        return nbytes * BITS_PER_BYTE / self.baudrate

    def send(self, request: bytes) -> None:
        """A request no servo answers (broadcast SYNC_WRITE); swallow its echo if any."""
        with self._lock:
            self.link.write(request)
            self.stats["packets"] += 1
            if self.echo:
                self._collect(request, [], time.monotonic() + self.timeout_s)
            else:
                self._unanswered.append(request)

    def transact(self, build: Callable[[list[int]], bytes], ids: list[int], what: str,
                 reply_size: int = 16) -> dict[int, Packet]:
        """Send ``build(ids)``, collect one reply per id; retry the missing ones.

        ``reply_size`` (bytes per reply) only widens the deadline at low baud rates.
        """
        with self._lock:
            got: dict[int, Packet] = {}
            missing = list(ids)
            code, detail = "no_reply", ""
            for attempt in range(self.retries + 1):
                if attempt:
                    self.stats["retries"] += 1
                    log.info("servo.retry", port=self.port, what=what, ids=missing, reason=code)
                request = build(missing)
                deadline = (time.monotonic() + self.timeout_s
                            + self._wire_time(len(request) * 2 + reply_size * len(missing)))
                self.link.write(request)
                self.stats["packets"] += 1
                replies, code, detail = self._collect(request, missing, deadline)
                got.update(replies)
                missing = [i for i in missing if i not in got]
                if not missing:
                    return got
            attempts = self.retries + 1
            raise ServoError(code, f"{what}: {detail} ({attempts} attempt{'s' * (attempts > 1)}, "
                             f"{self.timeout_s * 1000:.0f} ms each)",
                             servo_id=missing[0], port=self.port)

    def _collect(self, request: bytes, expect: list[int], deadline: float
                 ) -> tuple[dict[int, Packet], str, str]:
        """Read until every id in ``expect`` answered or the deadline passed.

        Returns the replies and, for the ones missing, an error code and a detail line.
        With ``expect`` empty it waits only for the echo of ``request``.
        """
        got: dict[int, Packet] = {}
        buf = bytearray()
        seen = bytearray()           # the first bytes received, for the error message
        received = echoed = 0
        corrupt = echo_skipped = False
        while True:
            if expect and all(i in got for i in expect):
                return got, "", ""
            chunk = self.link.read_some(deadline)
            if not chunk:
                break
            buf += chunk
            received += len(chunk)
            seen += chunk[:64 - len(seen)]
            while True:
                sc = self._scan(buf)
                if sc.kind == "incomplete":
                    del buf[:sc.start]
                    break
                if sc.kind == "corrupt":
                    corrupt = True
                    self.stats["corrupt"] += 1
                    del buf[:sc.start + 1]          # resync: the header was noise
                    continue
                raw = bytes(buf[sc.start:sc.end])
                del buf[:sc.end]
                packet = sc.found()
                ours = (raw == request and not echo_skipped) or raw in self._unanswered
                if ours or self._is_request(packet):
                    echo_skipped = echo_skipped or raw == request
                    echoed += len(raw)
                    if ours:
                        self._note_echo(raw)
                    if not expect and raw == request:
                        return got, "", ""
                    continue
                if packet.servo_id in expect and packet.servo_id not in got:
                    got[packet.servo_id] = packet
                else:
                    self.stats["stray"] += 1
                    log.debug("servo.stray_packet", port=self.port, bytes=hexdump(raw))
        missing = [i for i in expect if i not in got]
        if not missing:
            return got, "", ""
        who = "no reply" if len(expect) == 1 else f"no reply from id {', '.join(map(str, missing))}"
        if corrupt:
            return got, "checksum", f"{who}: replies failed their checksum (bytes: {hexdump(bytes(seen))})"
        if received > echoed:
            return got, "timeout", f"{who}: incomplete or unreadable reply (bytes: {hexdump(bytes(seen))})"
        return got, "no_reply", f"{who} within the timeout"

    def _note_echo(self, raw: bytes) -> None:
        self.stats["echoes"] += 1
        if self.echo is None:
            self.echo = True
            log.info("servo.echo_detected", port=self.port)
        try:
            self._unanswered.remove(raw)
        except ValueError:
            pass

    def close(self) -> None:
        with self._lock:
            self.link.close()

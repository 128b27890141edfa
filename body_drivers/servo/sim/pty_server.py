"""A simulated servo bus on a pseudo-terminal: real bytes in, real bytes out.

The simulator owns the master side of a pty; clients open the slave (or a symlink to
it) exactly as they would open /dev/ttyUSB0, through pyserial or a vendor SDK. Both
sides are put in raw mode so no byte is translated or echoed by the line discipline; a
pty has no baud rate, so a reply is on its way within a fraction of a millisecond —
well inside the 34 ms dynamixel-sdk and ~50 ms scservo_sdk wait (docs/protocol.md). The server also plays
the wire's tricks (see ``faults``): echo, lost, garbled, truncated or noisy replies.
"""

from __future__ import annotations

import os
import random
import select
import threading
import tty

from body_drivers.servo.framing import hexdump
from body_drivers.servo.sim.faults import FaultPlan
from body_drivers.servo.sim.handler import Handler
from edge.log import get_logger

log = get_logger(__name__)


class PtyServer:
    def __init__(self, handler: Handler, faults: FaultPlan, link: str | None = None, seed: int = 7):
        self.handler = handler
        self.faults = faults
        self.link = link
        self._rng = random.Random(seed)
        self._master, self._slave = os.openpty()
        for fd in (self._master, self._slave):
            tty.setraw(fd)
        self.device = os.ttyname(self._slave)
        self._wake_r, self._wake_w = os.pipe()
        self._thread = threading.Thread(target=self._serve, name=f"servo-sim-{handler.protocol}",
                                        daemon=True)
        self.lock = threading.Lock()        # handler state vs. API calls from other threads
        self.requests = 0
        self.corrupt_requests = 0
        if link:
            self._make_link(link)

    @property
    def path(self) -> str:
        return self.link or self.device

    def _make_link(self, link: str) -> None:
        if os.path.islink(link):
            os.unlink(link)                 # a stale link from a run that did not clean up
        elif os.path.exists(link):
            self.close_fds()
            raise FileExistsError(f"{link} exists and is not a symlink; refusing to replace it")
        os.symlink(self.device, link)

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> "PtyServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread.is_alive():
            os.write(self._wake_w, b"x")
            self._thread.join(5)
        self.close_fds()
        if self.link and os.path.islink(self.link) and os.readlink(self.link) == self.device:
            os.unlink(self.link)

    def close_fds(self) -> None:
        for name in ("_master", "_slave", "_wake_r", "_wake_w"):
            fd = getattr(self, name)
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
                setattr(self, name, None)

    def wait(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    # -- serving ---------------------------------------------------------------------------

    def _serve(self) -> None:
        buf = bytearray()
        while True:
            ready, _, _ = select.select([self._master, self._wake_r], [], [])
            if self._wake_r in ready:
                return
            try:
                chunk = os.read(self._master, 4096)
            except OSError:
                continue
            buf += chunk
            with self.lock:
                out = self._consume(buf)
            if out:
                self._send(out)

    def _consume(self, buf: bytearray) -> bytes:
        out = bytearray()
        while buf:
            sc = self.handler.scan(buf)
            if sc.kind == "incomplete":
                del buf[:sc.start]
                break
            if sc.kind == "corrupt":
                self.corrupt_requests += 1
                log.debug("servo_sim.corrupt_request", reason=sc.reason, bytes=hexdump(bytes(buf)))
                self.handler.on_corrupt(sc)
                del buf[:self.handler.skip(sc)]
                continue
            raw = bytes(buf[sc.start:sc.end])
            del buf[:sc.end]
            self.requests += 1
            if self.faults.active("echo"):
                out += raw
            for reply in self.handler.handle(sc.found()):
                out += self._on_the_wire(reply.servo_id, reply.data)
        return bytes(out)

    def _on_the_wire(self, servo_id: int | None, data: bytes) -> bytes:
        """One reply as the faults in force let it through."""
        if self.faults.take("no_reply", servo_id):
            return b""
        if self.faults.take("checksum", servo_id):
            data = self.handler.corrupt(data)
        if self.faults.take("truncate", servo_id):
            data = data[:max(1, len(data) // 2)]
        if self.faults.take("garbage", servo_id):
            # noise that starts like a header, so a naive parser would bite
            data = bytes((0xFF, 0xFF, 0xFD)) + self._rng.randbytes(3) + data
        return data

    def _send(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                written = os.write(self._master, view)
            except OSError:
                return
            view = view[written:]

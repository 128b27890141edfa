"""The serial port under a bus driver: open lazily, fail loudly, reopen with backoff.

A USB-serial adapter can vanish mid-run (a loose cable, a brown-out resetting the hub).
Every OS-level failure becomes ``ServoError("port")`` naming the port and the cause; the
link then stays closed, and the next call tries to reopen it — but not more often than
an exponential backoff allows, so a node polling a dead port does not spin.
"""

from __future__ import annotations

import termios
import time

import serial

from body_drivers.servo.bus import ServoError
from edge.log import get_logger

log = get_logger(__name__)

# what a vanished device raises from pyserial's calls (tcflush raises termios.error)
IO_ERRORS = (serial.SerialException, OSError, termios.error)
BACKOFF_FIRST_S = 0.05
BACKOFF_MAX_S = 2.0


class SerialLink:
    def __init__(self, port: str, baudrate: int, timeout_s: float):
        self.port = port
        self.baudrate = baudrate
        self.timeout_s = timeout_s
        self._serial: serial.Serial | None = None
        self._backoff = 0.0
        self._next_try = 0.0
        self._last_error = ""
        self.reopened = 0          # how many times a lost port came back (for status/tests)
        self._pending = bytearray()  # bytes read past what a caller asked for
        self._looked_late = -1.0     # the deadline whose late look (read_some) was taken

    # -- lifecycle -----------------------------------------------------------------------

    def ensure_open(self) -> serial.Serial:
        if self._serial is not None:
            return self._serial
        now = time.monotonic()
        if now < self._next_try:
            raise ServoError("port", f"serial port unavailable ({self._last_error}); next reopen "
                             f"attempt in {self._next_try - now:.2f} s", port=self.port)
        try:
            ser = serial.Serial(self.port, self.baudrate, timeout=self.timeout_s,
                                write_timeout=max(1.0, self.timeout_s))
        except (*IO_ERRORS, ValueError) as exc:
            self._failed(f"cannot open: {exc}")
            raise ServoError("port", f"cannot open serial port: {exc}", port=self.port) from exc
        if self._backoff:
            self.reopened += 1
            log.info("servo.port_reopened", port=self.port)
        self._serial, self._backoff, self._next_try = ser, 0.0, 0.0
        return ser

    def _failed(self, reason: str) -> None:
        self._last_error = reason
        self._backoff = min(BACKOFF_MAX_S, self._backoff * 2 if self._backoff else BACKOFF_FIRST_S)
        self._next_try = time.monotonic() + self._backoff
        log.warning("servo.port_lost", port=self.port, reason=reason, retry_in_s=self._backoff)

    def lost(self, exc: BaseException) -> ServoError:
        """Close after an I/O failure and return the error to raise."""
        self._drop()
        self._failed(str(exc) or type(exc).__name__)
        return ServoError("port", f"serial port failed: {exc}", port=self.port)

    def _drop(self) -> None:
        ser, self._serial = self._serial, None
        if ser is not None:
            try:
                ser.close()
            except IO_ERRORS:
                pass

    def close(self) -> None:
        self._drop()
        self._next_try = 0.0

    # -- I/O ---------------------------------------------------------------------------

    def write(self, data: bytes, flush_input: bool = True) -> None:
        """Send one request; stale input (late replies, echoes, noise) is dropped first."""
        ser = self.ensure_open()
        try:
            if flush_input:
                ser.reset_input_buffer()
                self._pending.clear()
            ser.write(data)
        except IO_ERRORS as exc:
            raise self.lost(exc) from exc

    def read_some(self, deadline: float) -> bytes:
        """Whatever arrives before ``deadline`` (at least one byte unless it passes)."""
        if self._pending:
            out, self._pending = bytes(self._pending), bytearray()
            return out
        ser = self.ensure_open()
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return self._late_look(ser, deadline)
        try:
            ser.timeout = remaining
            first = ser.read(1)
            if not first:
                return b""
            waiting = ser.in_waiting
            return first + (ser.read(waiting) if waiting else b"")
        except IO_ERRORS as exc:
            raise self.lost(exc) from exc

    def _late_look(self, ser: serial.Serial, deadline: float) -> bytes:
        """Past ``deadline``, what had already arrived, once per deadline. On a busy CPU this thread
        can wake after its deadline while the servo's reply waits in the driver's buffer: that is
        a reply, not a timeout (nor a retry). Once, so a line that keeps babbling still ends the wait."""
        if self._looked_late == deadline:
            return b""
        self._looked_late = deadline
        try:
            waiting = ser.in_waiting
            return ser.read(waiting) if waiting else b""
        except IO_ERRORS as exc:
            raise self.lost(exc) from exc

    def available(self) -> int:
        """Bytes already waiting (read ahead or in the driver's buffer)."""
        ser = self.ensure_open()
        try:
            return len(self._pending) + ser.in_waiting
        except IO_ERRORS as exc:
            raise self.lost(exc) from exc

    def read_exact(self, count: int, deadline: float) -> bytes:
        """Up to ``count`` bytes, stopping early only at the deadline."""
        out = bytearray()
        while len(out) < count:
            chunk = self.read_some(deadline)
            if not chunk:
                break
            out += chunk
        self._pending[:0] = out[count:]
        return bytes(out[:count])

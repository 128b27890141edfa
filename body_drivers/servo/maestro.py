"""Pololu Maestro servo controllers (Micro 6, Mini 12/18/24), compact or Pololu protocol.

The Maestro is a controller that sends hobby-servo pulses, not a smart servo: a "servo
id" is a channel, positions are pulse widths in quarter-microseconds, "torque off" is a
target of 0 (no pulses), and Get Position reports the pulse it is outputting right now
(it ramps toward the target under the speed limit) — not where the horn really is.
Commands get no reply, so only queries can fail visibly, and replies have no header or
checksum: a reply is recognised by its length and by values the Maestro can produce.
"""

from __future__ import annotations

import collections
import threading
import time

from body_drivers.servo import maestro_packet as mp
from body_drivers.servo.bus import ServoError
from body_drivers.servo.framing import hexdump
from body_drivers.servo.link import SerialLink
from body_drivers.servo.tables import (DEFAULT_MODEL, MAESTRO_DEFAULT_DEVICE, MAESTRO_ERROR_BITS,
                                       model as model_named)
from edge.log import get_logger

log = get_logger(__name__)

# the largest value each reply can hold: 14-bit positions, 9 error bits, moving 0/1
_REPLY_MAX = {mp.GET_POSITION: 0x3FFF, mp.GET_ERRORS: 0x1FF, mp.GET_MOVING_STATE: 1}


def error_names(bits: int) -> set[str]:
    return {name for bit, name in MAESTRO_ERROR_BITS.items() if bits & (1 << bit)}


class MaestroBus:
    def __init__(self, port: str, baudrate: int = 115_200, timeout_s: float = 0.05,
                 retries: int = 2, pololu: bool = False, model: str | None = None,
                 device: int = MAESTRO_DEFAULT_DEVICE, crc7: bool = False, echo: bool | None = None):
        self.protocol = "maestro-pololu" if pololu else "maestro"
        self.port = port
        self.model = model_named(model or DEFAULT_MODEL[self.protocol])
        if self.model.family != "maestro":
            raise ValueError(f"model {self.model.name} is not a Maestro")
        self.channels = self.model.defaults["channels"]
        self.device = device if pololu else None
        self.crc7 = crc7
        self.echo = echo
        self.retries = retries
        self.timeout_s = timeout_s
        self.link = SerialLink(port, baudrate, timeout_s)
        self._targets: dict[int, int] = {}   # last non-zero target, to resume after torque off
        self._speeds: dict[int, int] = {}
        self._lock = threading.RLock()
        self.stats: collections.Counter[str] = collections.Counter()   # packets, retries (for bench/doctor)

    # -- wire ----------------------------------------------------------------------------

    def _cmd(self, command: int, data: bytes = b"") -> bytes:
        return mp.encode(command, data, device=self.device, crc=self.crc7)

    def _check_channel(self, channel: object) -> int:
        if isinstance(channel, bool) or not isinstance(channel, int) or not 0 <= channel < self.channels:
            raise ServoError("value", f"maestro channel must be an int 0..{self.channels - 1} "
                             f"({self.model.name}), got {channel!r}", port=self.port)
        return channel

    def _send(self, request: bytes) -> None:
        with self._lock:
            self.link.write(request)
            self.stats["packets"] += 1
            if self.echo:      # swallow our echo so it is not mistaken for the next reply
                self.link.read_exact(len(request), time.monotonic() + self.timeout_s)

    def _query(self, command: int, data: bytes, channel: int | None, what: str) -> int:
        request = self._cmd(command, data)
        size = mp.REPLY_LENGTH[command]
        code, detail = "no_reply", ""
        with self._lock:
            for attempt in range(self.retries + 1):
                if attempt:
                    self.stats["retries"] += 1
                    log.info("servo.retry", port=self.port, what=what, reason=code)
                self.link.write(request)
                self.stats["packets"] += 1
                deadline = time.monotonic() + self.timeout_s
                reply = self._read_reply(request, size, deadline)
                if reply is None:
                    code, detail = "no_reply", "no reply within the timeout"
                    continue
                if len(reply) < size:
                    code, detail = "timeout", f"incomplete reply ({hexdump(reply)})"
                    continue
                value = int.from_bytes(reply, "little")
                if len(reply) > size or value > _REPLY_MAX[command] or self.link.available():
                    # no framing to resync on: distrust the lot, flush and ask again
                    code, detail = "malformed", f"reply out of sync ({hexdump(reply)})"
                    continue
                return value
        attempts = self.retries + 1
        raise ServoError(code, f"{what}: {detail} ({attempts} attempts, {self.timeout_s * 1000:.0f} ms each)",
                         servo_id=channel, port=self.port)

    def _read_reply(self, request: bytes, size: int, deadline: float) -> bytes | None:
        """The reply's bytes, past an echo of ``request`` if the adapter sends one."""
        n = len(request)
        if self.echo:
            echo = self.link.read_exact(n, deadline)
            if not echo:
                return None
            if echo != request:
                return echo + self.link.read_exact(size, deadline)   # out of sync: retried
            return self.link.read_exact(size, deadline)
        data = self.link.read_exact(size, deadline)
        if not data or self.echo is False or data[:n] != request[:len(data)]:
            return data or None
        # these bytes match the start of our request: an echo, or a reply that looks like one
        more = self.link.read_exact(n + size - len(data), time.monotonic() + self.timeout_s / 2)
        whole = data + more
        if len(whole) == n + size and whole[:n] == request:
            if self.echo is None:
                self.echo = True
                log.info("servo.echo_detected", port=self.port)
            return whole[n:]
        return whole if more else data

    # -- ServoBus ------------------------------------------------------------------------

    def ping(self, servo_id: int) -> bool:
        channel = self._check_channel(servo_id)
        try:
            # Get Moving State has no side effects (Get Errors would clear the error bits)
            self._query(mp.GET_MOVING_STATE, b"", channel, "ping")
        except ServoError as exc:
            if exc.code == "no_reply":
                return False
            raise
        return True

    def read_position(self, servo_id: int) -> int:
        channel = self._check_channel(servo_id)
        return self._query(mp.GET_POSITION, bytes((channel,)), channel, "get position")

    def read_positions(self, ids: list[int]) -> dict[int, int]:
        return {i: self.read_position(i) for i in ids}   # the Maestro has no multi-read

    def _check_goal(self, channel: int, ticks: int, speed: int | None) -> None:
        low, high = self.model.ticks_min, self.model.ticks_max
        if isinstance(ticks, bool) or not isinstance(ticks, int) or not low <= ticks <= high:
            raise ServoError("value", f"goal must be an int {low}..{high} quarter-µs, got {ticks!r}",
                             servo_id=channel, port=self.port)
        if speed is not None and (isinstance(speed, bool) or not isinstance(speed, int)
                                  or not 0 <= speed <= 0x3FFF):
            raise ServoError("value", f"speed must be an int 0..16383 (0.25 µs/10 ms), got {speed!r}",
                             servo_id=channel, port=self.port)

    def _set_speed(self, channel: int, speed: int | None) -> None:
        if speed is not None and self._speeds.get(channel) != speed:
            self._send(self._cmd(mp.SET_SPEED, bytes((channel,)) + mp.split14(speed)))
            self._speeds[channel] = speed

    def write_goal(self, servo_id: int, ticks: int, speed: int | None = None) -> None:
        channel = self._check_channel(servo_id)
        self._check_goal(channel, ticks, speed)
        with self._lock:
            self._set_speed(channel, speed)
            self._send(self._cmd(mp.SET_TARGET, bytes((channel,)) + mp.split14(ticks)))
            self._targets[channel] = ticks

    def sync_write_goals(self, goals: dict[int, int], speed: int | None = None) -> None:
        """Set Multiple Targets for each run of adjacent channels (Mini Maestro only)."""
        checked = {}
        for servo_id, ticks in goals.items():
            channel = self._check_channel(servo_id)
            self._check_goal(channel, ticks, speed)
            checked[channel] = ticks
        with self._lock:
            for channel in checked:
                self._set_speed(channel, speed)
            runs: list[list[int]] = []
            for channel in sorted(checked):
                if runs and runs[-1][-1] == channel - 1:
                    runs[-1].append(channel)
                else:
                    runs.append([channel])
            for run in runs:
                if len(run) == 1 or self.channels <= 6:       # the Micro Maestro lacks 0x9F
                    for channel in run:
                        self._send(self._cmd(mp.SET_TARGET, bytes((channel,)) + mp.split14(checked[channel])))
                else:
                    data = bytes((len(run), run[0])) + b"".join(mp.split14(checked[c]) for c in run)
                    self._send(self._cmd(mp.SET_MULTIPLE_TARGETS, data))
            self._targets.update(checked)

    def set_torque(self, ids: list[int], enabled: bool) -> None:
        """Off: target 0 stops the pulses (the servo goes limp). On: resume the last goal,
        if any — with none, the first ``write_goal`` starts the pulses."""
        with self._lock:
            for servo_id in ids:
                channel = self._check_channel(servo_id)
                target = self._targets.get(channel, 0) if enabled else 0
                if enabled and not target:
                    continue
                self._send(self._cmd(mp.SET_TARGET, bytes((channel,)) + mp.split14(target)))

    def status(self, servo_id: int) -> set[str]:
        """The controller's error bits (shared by all channels; reading clears them)."""
        channel = self._check_channel(servo_id)
        return error_names(self._query(mp.GET_ERRORS, b"", channel, "get errors"))

    def close(self) -> None:
        with self._lock:
            self.link.close()

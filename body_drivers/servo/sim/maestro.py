"""A simulated Pololu Maestro: channels outputting servo pulses, both serial protocols.

Like the real board it accepts compact and Pololu-protocol commands at the same time,
ignores Pololu commands for other device numbers (they are for other boards on the
chain), needs the CRC-7 byte when CRC is enabled and drops a command whose CRC is wrong,
and records serial errors (CRC, protocol) in the bits Get Errors returns — and clears.
Get Position reports the pulse being output, which ramps toward the target at the
channel's speed limit (0 = jump at once, the factory default).
"""

from __future__ import annotations

import time
from typing import Iterable

from body_drivers.servo import maestro_packet as mp
from body_drivers.servo.framing import Packet, Scan
from body_drivers.servo.sim.handler import Handler, Reply
from body_drivers.servo.tables import MAESTRO_DEFAULT_DEVICE, MAESTRO_ERROR_BITS, ServoModel

_BIT = {name: 1 << bit for bit, name in MAESTRO_ERROR_BITS.items()}


class Channel:
    def __init__(self, speed: int, clock=time.monotonic):
        self.target = 0           # 0: no pulses
        self.position = 0.0
        self.speed = speed        # 0.25 µs per 10 ms; 0 = unlimited
        self.acceleration = 0
        self.clock = clock
        self._last = clock()

    def update(self) -> None:
        now = self.clock()
        dt, self._last = now - self._last, now
        if self.target == 0 or self.position == 0 or self.speed == 0:
            self.position = float(self.target)     # off, first pulse, or no speed limit
            return
        step = self.speed * 100.0 * dt              # quarter-µs per second
        delta = self.target - self.position
        self.position = self.target if abs(delta) <= step else self.position + step * (1 if delta > 0 else -1)

    def set_target(self, target: int) -> None:
        self.update()
        self.target = target


class MaestroHandler(Handler):
    fault_names = tuple(MAESTRO_ERROR_BITS.values())

    def __init__(self, ids: Iterable[int], model: ServoModel, top_speed: float | None = None,
                 pololu: bool = False, device: int = MAESTRO_DEFAULT_DEVICE, crc7: bool = False):
        self.protocol = "maestro-pololu" if pololu else "maestro"
        self.model = model
        self.device = device
        self.crc7 = crc7
        self.errors = 0
        speed = round(top_speed / 100.0) if top_speed else 0
        count = model.defaults["channels"]
        self.channels = [Channel(speed) for _ in range(count)]
        self.ids = [i for i in ids if 0 <= i < count]

    def scan(self, buf: bytearray) -> Scan:
        return mp.scan(buf, crc=self.crc7)

    def skip(self, scan: Scan) -> int:
        return max(scan.end, 1)

    def on_corrupt(self, scan: Scan) -> None:
        self.errors |= _BIT["serial_crc"] if scan.reason == "checksum" else _BIT["serial_protocol"]

    def corrupt(self, data: bytes) -> bytes:
        # replies carry no checksum; a garbled high byte gives a value the board never sends
        return data[:-1] + bytes((data[-1] | 0xC0,))

    def position(self, servo_id: int) -> float:
        channel = self._channel(servo_id)
        channel.update()
        return channel.position

    def _channel(self, number: int) -> Channel:
        if not 0 <= number < len(self.channels):
            raise ValueError(f"{self.model.name} has channels 0..{len(self.channels) - 1}, not {number}")
        return self.channels[number]

    def set_errors(self, servo_id: int | None, names: Iterable[str]) -> None:
        names = set(names)
        unknown = names - set(_BIT)
        if unknown:
            raise ValueError(f"a Maestro cannot report {', '.join(sorted(unknown))}; "
                             f"known: {', '.join(_BIT)}")
        self.errors = sum(_BIT[n] for n in names)

    def handle(self, packet: Packet) -> list[Reply]:
        if packet.servo_id != mp.COMPACT_ID and packet.servo_id != self.device:
            return []                     # a Pololu-protocol command for another board
        code, data = packet.code, packet.params
        if code in (mp.SET_TARGET, mp.SET_SPEED, mp.SET_ACCELERATION, mp.GET_POSITION):
            if data[0] >= len(self.channels):
                self.errors |= _BIT["serial_protocol"]
                return []
            channel = self.channels[data[0]]
            if code == mp.GET_POSITION:
                channel.update()
                return [Reply(data[0], round(channel.position).to_bytes(2, "little"))]
            value = mp.join14(data[1], data[2])
            if code == mp.SET_TARGET:
                channel.set_target(value)
            elif code == mp.SET_SPEED:
                channel.update()
                channel.speed = value
            else:
                channel.acceleration = value
            return []
        if code == mp.SET_MULTIPLE_TARGETS:
            count, first = data[0], data[1]
            if first + count > len(self.channels):
                self.errors |= _BIT["serial_protocol"]
                return []
            for k in range(count):
                self.channels[first + k].set_target(mp.join14(data[2 + 2 * k], data[3 + 2 * k]))
            return []
        if code == mp.GET_MOVING_STATE:
            for channel in self.channels:
                channel.update()
            moving = any(c.target and abs(c.position - c.target) >= 1 for c in self.channels)
            return [Reply(None, bytes((int(moving),)))]
        if code == mp.GET_ERRORS:
            bits, self.errors = self.errors, 0
            return [Reply(None, bits.to_bytes(2, "little"))]
        if code == mp.GO_HOME:
            for channel in self.channels:
                channel.set_target(0)     # factory home setting: "off"
        return []

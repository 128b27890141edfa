"""What every simulated protocol provides to the pty server, and the shared servo bookkeeping.

A handler turns a decoded request into the bytes the real device would send back, one
``Reply`` per answering servo (so faults can hit one servo's reply and not another's).
The server owns the wire (framing, echo, faults); the handler owns the device.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from body_drivers.servo.framing import Packet, Scan
from body_drivers.servo.sim.servo_state import SimServo
from body_drivers.servo.tables import ServoModel


@dataclass(frozen=True)
class Reply:
    servo_id: int | None
    data: bytes


class Handler:
    protocol = ""
    fault_names: tuple[str, ...] = ()       # servo faults this protocol can report

    def scan(self, buf: bytearray) -> Scan:
        raise NotImplementedError

    def handle(self, packet: Packet) -> list[Reply]:
        raise NotImplementedError

    def skip(self, scan: Scan) -> int:
        """Bytes to drop after a corrupt candidate: one, then rescan (resync)."""
        return scan.start + 1

    def on_corrupt(self, scan: Scan) -> None:
        """A request the device could not use (register-table servos just ignore it)."""

    def corrupt(self, data: bytes) -> bytes:
        """The reply with its checksum broken."""
        return data[:-1] + bytes(((data[-1] ^ 0x5A) or 1,))

    def position(self, servo_id: int) -> float:
        raise NotImplementedError

    def set_errors(self, servo_id: int | None, names: Iterable[str]) -> None:
        raise NotImplementedError


class RegisterHandler(Handler):
    """Feetech and Dynamixel: a set of ``SimServo`` tables behind one bus."""

    def __init__(self, ids: Iterable[int], model: ServoModel, top_speed: float | None = None,
                 big_endian: bool = False):
        self.model = model
        self.servos = {i: SimServo(i, model, big_endian, top_speed) for i in ids}

    def servo(self, servo_id: int) -> SimServo:
        try:
            return self.servos[servo_id]
        except KeyError:
            raise ValueError(f"no simulated servo with id {servo_id}; ids: "
                             f"{', '.join(map(str, self.servos))}") from None

    def position(self, servo_id: int) -> float:
        servo = self.servo(servo_id)
        servo.update()
        return servo.position

    def set_errors(self, servo_id: int | None, names: Iterable[str]) -> None:
        names = set(names)
        unknown = names - set(self.fault_names)
        if unknown:
            raise ValueError(f"{self.protocol} servos cannot report {', '.join(sorted(unknown))}; "
                             f"known: {', '.join(self.fault_names)}")
        targets = self.servos.values() if servo_id is None else [self.servo(servo_id)]
        for servo in targets:
            servo.set_faults(names, self._shutdown_for(servo, names))
            self._store_fault_bits(servo)

    def _shutdown_for(self, servo: SimServo, names: set[str]) -> set[str]:
        """The faults that cut this servo's torque (its shutdown / unloading mask)."""
        raise NotImplementedError

    def _store_fault_bits(self, servo: SimServo) -> None:
        raise NotImplementedError

"""The one interface every serial servo bus speaks, and the error every driver raises.

The safety layer and the kinematics work in joints and degrees; a ``ServoBus`` works in
servo ids and raw ticks on one serial port of one protocol family. Keeping the bus this
small (ping, read, write, sync-write, torque, status) is what lets three very different
protocols — Feetech STS/SCS, Dynamixel Protocol 2.0, Pololu Maestro — sit behind it, and
lets the simulators in this package stand in for the hardware byte for byte. The drivers
import this file; ``buses.open_bus`` picks one of them for a protocol name.

Units are raw on purpose: ``ticks`` are the servo's own position units (0..4095 for a
12-bit magnetic encoder, quarter-microseconds of pulse width on a Maestro) and ``speed``
is the raw value of the model's speed register (see ``tables.py`` for each model's
resolution and ``ticks_from_degrees``). Converting is the body config's job, because only
it knows direction, offset and neutral.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

# Error codes a ServoError carries; stable strings the body reports in failed results.
ERROR_CODES = (
    "timeout",      # no (complete) reply within the timeout, after every retry
    "no_reply",     # the servo never answered at all (wrong id, unpowered, disconnected)
    "checksum",     # replies kept arriving corrupted (checksum / CRC mismatch)
    "malformed",    # a reply that parses but makes no sense (wrong id, length, instruction)
    "overload",     # the servo reports an overload / torque limit
    "overheat",     # the servo reports over-temperature
    "voltage",      # the servo reports input voltage out of range
    "angle_limit",  # the goal was outside the servo's configured angle limits
    "encoder",      # the servo reports a position-sensor fault
    "electrical",   # electrical shock / overcurrent / driver fault
    "hardware",     # any other hardware error bit the servo sets
    "instruction",  # the servo rejected the instruction (bad instruction, access, range)
    "port",         # the serial port could not be opened or went away
    "value",        # the caller passed a bad value (out of register range, wrong type)
)


class ServoError(RuntimeError):
    """A servo or bus fault, machine-readable (``code``) and human-readable (``message``).

    The message always names the servo id (and the joint once the body config has added
    it with ``for_joint``) and what went wrong, because it ends up verbatim in a failed
    action result an operator reads.
    """

    def __init__(self, code: str, message: str, servo_id: int | None = None,
                 joint: str | None = None, port: str | None = None):
        self.code = code
        self.servo_id = servo_id
        self.joint = joint
        self.port = port
        self.detail = message
        super().__init__(self._render())

    def _render(self) -> str:
        where = []
        if self.joint:
            where.append(f"joint {self.joint!r}")
        if self.servo_id is not None:
            where.append(f"servo {self.servo_id}")
        if self.port:
            where.append(f"on {self.port}")
        prefix = " ".join(where)
        return f"{prefix}: {self.detail} [{self.code}]" if prefix else f"{self.detail} [{self.code}]"

    @property
    def message(self) -> str:
        return str(self)

    def for_joint(self, joint: str) -> "ServoError":
        """The same error, its message naming the joint (the bus only knows ids)."""
        return ServoError(self.code, self.detail, self.servo_id, joint, self.port)


@runtime_checkable
class ServoBus(Protocol):
    """One serial port, one protocol family. Every method raises ``ServoError`` on failure.

    A method that touches the wire retries a lost or corrupted reply ``retries`` times
    before raising. A reply that carries fault bits raises ``ServoError`` with the fault's
    code (``overload``, ``overheat``, ``voltage``...) from every method except ``status``,
    ``ping`` and ``set_torque(ids, False)`` (going limp is the right answer to a fault); a port that disappeared raises ``ServoError("port")`` and the next call
    tries to reopen it (with backoff), so a node survives a USB adapter being replugged.
    """

    protocol: str   # "feetech" (STS), "feetech-scs", "dynamixel", "maestro", "maestro-pololu"
    port: str

    def ping(self, servo_id: int) -> int | bool:
        """The model number where the protocol reports one (Dynamixel, Feetech), else True.

        Returns False when nothing answers (no retry storm for a scan); raises on a corrupt
        or faulty reply.
        """

    def read_position(self, servo_id: int) -> int:
        """Present position in raw ticks (a Maestro reports its current pulse target)."""

    def read_positions(self, ids: list[int]) -> dict[int, int]:
        """Present positions of several servos: one SYNC_READ packet where the protocol has it."""

    def write_goal(self, servo_id: int, ticks: int, speed: int | None = None) -> None:
        """Goal position in raw ticks; ``speed`` (raw, model units) written with it if given."""

    def sync_write_goals(self, goals: dict[int, int], speed: int | None = None) -> None:
        """Goals for several servos in one SYNC_WRITE packet where the protocol has it."""

    def set_torque(self, ids: list[int], enabled: bool) -> None:
        """Torque on (hold) or off (limp); a Maestro turns the pulse off for ``False``."""

    def status(self, servo_id: int) -> set[str]:
        """The servo's current error bits as names; empty if healthy.

        Servo faults use the ERROR_CODES names ("overload", "overheat", "voltage", ...); a
        Maestro, a controller without servo feedback, names its own serial/script errors
        ("serial_crc", "serial_protocol", ...) and reading them clears them.
        """

    def close(self) -> None:
        """Release the port; idempotent."""


PROTOCOLS = ("feetech", "feetech-scs", "dynamixel", "maestro", "maestro-pololu")

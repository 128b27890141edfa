"""The ``ServoBus`` methods for servos that expose a register table (Feetech, Dynamixel).

Both families read and write bytes at addresses, answer with a status packet that may
carry fault bits, and have SYNC_READ / SYNC_WRITE for many servos in one packet. This
class writes the ServoBus operations once, in terms of register names from ``tables``;
a protocol subclass supplies only its packet layouts and how it reports faults.
"""

from __future__ import annotations

from body_drivers.servo.bus import ServoError
from body_drivers.servo.framing import Packet
from body_drivers.servo.packet_bus import PacketBus

# when several faults are set, the error code is the most serious one
FAULT_PRIORITY = ("overload", "overheat", "electrical", "voltage", "encoder", "angle_limit", "hardware")


def check_id(servo_id: object) -> int:
    if isinstance(servo_id, bool) or not isinstance(servo_id, int) or not 0 <= servo_id <= 252:
        raise ServoError("value", f"servo id must be an int 0..252, got {servo_id!r}")
    return servo_id


class RegisterBus(PacketBus):
    # -- protocol hooks ------------------------------------------------------------------

    def _ping_request(self, servo_id: int) -> bytes:
        raise NotImplementedError

    def _read_request(self, servo_id: int, address: int, size: int) -> bytes:
        raise NotImplementedError

    def _write_request(self, servo_id: int, address: int, data: bytes) -> bytes:
        raise NotImplementedError

    def _sync_read_request(self, ids: list[int], address: int, size: int) -> bytes:
        raise NotImplementedError

    def _sync_write_request(self, address: int, size: int, items: dict[int, bytes]) -> bytes:
        raise NotImplementedError

    def _reply_data(self, packet: Packet) -> bytes:
        raise NotImplementedError

    def _reply_faults(self, servo_id: int, packet: Packet) -> tuple[set[str], tuple[str, str] | None]:
        """Hardware fault names the reply reports, and an instruction error (code, text)."""
        raise NotImplementedError

    def _register_faults(self, value: int) -> set[str]:
        """Fault names in the value of the ``hardware_error`` register."""
        raise NotImplementedError

    def _quick_faults(self, packet: Packet) -> set[str]:
        """Fault and error names visible in a reply itself, without asking the servo more."""
        raise NotImplementedError

    def _encode(self, value: int, size: int) -> bytes:
        raise NotImplementedError

    def _decode(self, data: bytes) -> int:
        raise NotImplementedError

    def _decode_position(self, data: bytes) -> int:
        return self._decode(data)

    def _model_number(self, servo_id: int, ping_reply: Packet) -> int:
        raise NotImplementedError

    # -- helpers -----------------------------------------------------------------------

    def _raise_faults(self, servo_id: int, packet: Packet, what: str) -> None:
        faults, result = self._reply_faults(servo_id, packet)
        if faults:
            code = next((f for f in FAULT_PRIORITY if f in faults), sorted(faults)[0])
            raise ServoError(code, f"{what}: the servo reports {', '.join(sorted(faults))}",
                             servo_id=servo_id, port=self.port)
        if result:
            raise ServoError(result[0], f"{what}: {result[1]}", servo_id=servo_id, port=self.port)

    def _check_value(self, name: str, value: object, low: int, high: int, servo_id: int | None = None) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ServoError("value", f"{name} must be an int {low}..{high}, got {value!r}",
                             servo_id=servo_id, port=self.port)
        return value

    def _read_reply(self, servo_id: int, name: str) -> Packet:
        reg = self.model.reg(name)
        return self.transact(lambda _ids: self._read_request(servo_id, reg.address, reg.size),
                             [servo_id], f"read {name}", reg.size + 8)[servo_id]

    def _read(self, servo_id: int, name: str, check: bool = True) -> bytes:
        reg = self.model.reg(name)
        what = f"read {name}"
        reply = self._read_reply(servo_id, name)
        if check:
            self._raise_faults(servo_id, reply, what)
        data = self._reply_data(reply)
        if len(data) != reg.size:
            raise ServoError("malformed", f"{what}: expected {reg.size} data bytes, got {len(data)}",
                             servo_id=servo_id, port=self.port)
        return data

    def _write(self, servo_id: int, address: int, data: bytes, what: str, check: bool = True) -> None:
        reply = self.transact(lambda _ids: self._write_request(servo_id, address, data),
                              [servo_id], what)[servo_id]
        if check:
            self._raise_faults(servo_id, reply, what)

    # -- registers ---------------------------------------------------------------------

    def read_register(self, servo_id: int, name: str) -> int:
        return self._decode(self._read(check_id(servo_id), name))

    def write_register(self, servo_id: int, name: str, value: int) -> None:
        reg = self.model.reg(name)
        if not reg.writable:
            raise ServoError("value", f"register {name} is read-only", servo_id=servo_id, port=self.port)
        value = self._check_value(name, value, 0, (1 << (8 * reg.size)) - 1, servo_id)
        self._write(check_id(servo_id), reg.address, self._encode(value, reg.size), f"write {name}")

    # -- ServoBus ----------------------------------------------------------------------

    def ping(self, servo_id: int) -> int | bool:
        servo_id = check_id(servo_id)
        try:
            reply = self.transact(lambda _ids: self._ping_request(servo_id), [servo_id], "ping")[servo_id]
        except ServoError as exc:
            if exc.code == "no_reply":
                return False
            raise
        return self._model_number(servo_id, reply)

    def read_position(self, servo_id: int) -> int:
        return self._decode_position(self._read(check_id(servo_id), "present_position"))

    def read_positions(self, ids: list[int]) -> dict[int, int]:
        ids = [check_id(i) for i in ids]
        if len(ids) <= 1:
            return {i: self.read_position(i) for i in ids}
        reg = self.model.reg("present_position")
        what = "sync read present_position"
        replies = self.transact(lambda todo: self._sync_read_request(todo, reg.address, reg.size),
                                ids, what, reg.size + 8)
        out = {}
        for servo_id in ids:
            packet = replies[servo_id]
            self._raise_faults(servo_id, packet, what)
            data = self._reply_data(packet)
            if len(data) != reg.size:
                raise ServoError("malformed", f"{what}: expected {reg.size} data bytes, got {len(data)}",
                                 servo_id=servo_id, port=self.port)
            out[servo_id] = self._decode_position(data)
        return out

    def _goal_bytes(self, servo_id: int, ticks: int, speed: int | None) -> tuple[int, bytes]:
        """(start address, data) for a goal, with the speed where the table puts it."""
        raise NotImplementedError

    def _check_goal(self, servo_id: int, ticks: int, speed: int | None) -> None:
        self._check_value("goal ticks", ticks, self.model.ticks_min, self.model.ticks_max, servo_id)
        if speed is not None:
            size = self.model.reg("goal_speed").size
            self._check_value("speed", speed, 0, min(32767, (1 << (8 * size)) - 1), servo_id)

    def write_goal(self, servo_id: int, ticks: int, speed: int | None = None) -> None:
        servo_id = check_id(servo_id)
        self._check_goal(servo_id, ticks, speed)
        address, data = self._goal_bytes(servo_id, ticks, speed)
        self._write(servo_id, address, data, "write goal_position")

    def sync_write_goals(self, goals: dict[int, int], speed: int | None = None) -> None:
        if not goals:
            return
        items: dict[int, bytes] = {}
        address = 0
        for servo_id, ticks in goals.items():
            servo_id = check_id(servo_id)
            self._check_goal(servo_id, ticks, speed)
            address, items[servo_id] = self._goal_bytes(servo_id, ticks, speed)
        size = len(next(iter(items.values())))
        self.send(self._sync_write_request(address, size, items))

    def set_torque(self, ids: list[int], enabled: bool) -> None:
        reg = self.model.reg("torque_enable")
        for servo_id in ids:
            self._write(check_id(servo_id), reg.address, self._encode(1 if enabled else 0, reg.size),
                        f"torque {'on' if enabled else 'off'}", check=bool(enabled))

    def status(self, servo_id: int) -> set[str]:
        servo_id = check_id(servo_id)
        reply = self._read_reply(servo_id, "hardware_error")
        data = self._reply_data(reply)
        faults = self._register_faults(self._decode(data) if data else 0)
        quick = self._quick_faults(reply)
        if faults:
            quick.discard("hardware")    # an alert the register already explains
        return faults | quick

"""Joints in degrees over servo buses in ticks: the only code that talks to the servos.

The body may spread its joints over several ports and protocols; this groups them per bus,
sends one sync-write per bus, converts with each joint's direction, offset and model, and
turns every ``ServoError`` into one that names the joint. One lock serializes the wire, so
the control loop and the safety monitor never interleave packets.
"""

from __future__ import annotations

import math
import threading
from typing import Callable

from body_drivers.body_types import BodyConfig, JointConfig
from body_drivers.kinematics import Pose, TickScale, scale_for, to_degrees, to_ticks
from body_drivers.servo.bus import ServoBus, ServoError
from body_drivers.servo.buses import open_bus

BusOpener = Callable[..., ServoBus]


class JointIO:
    """Read and write joint angles; every method raises ``ServoError`` naming the joint."""

    def __init__(self, config: BodyConfig, opener: BusOpener = open_bus):
        self.config = config
        self.joints = {j.name: j for j in config.joints}
        self.scales: dict[str, TickScale] = {j.name: scale_for(j) for j in config.joints}
        self._opener = opener
        self._buses: dict[tuple[str, str], ServoBus] = {}
        self._lock = threading.RLock()

    # -- connection -------------------------------------------------------------------------

    def bus_for(self, joint: JointConfig) -> ServoBus:
        """The joint's bus, opened on first use (and again after ``close``)."""
        with self._lock:
            bus = self._buses.get(joint.bus_key)
            if bus is None:
                c = self.config.control
                options = {"model": joint.model} if joint.model else {}
                try:
                    bus = self._opener(joint.protocol, joint.port, joint.baudrate or 1_000_000,
                                       timeout_s=c.timeout_s, retries=c.retries, **options)
                except ServoError as exc:
                    raise exc.for_joint(joint.name) from None
                self._buses[joint.bus_key] = bus
            return bus

    def close(self) -> None:
        with self._lock:
            for bus in self._buses.values():
                try:
                    bus.close()
                except ServoError:
                    pass
            self._buses.clear()

    def ping(self, names: list[str] | None = None) -> dict[str, ServoError]:
        """Every joint's servo answers? Returns joint -> the error for the ones that do not."""
        problems: dict[str, ServoError] = {}
        dead_ports: set[str] = set()
        for name in names or list(self.joints):
            joint = self.joints[name]
            if joint.port in dead_ports:
                continue   # one message per port that cannot be opened, not one per joint
            try:
                with self._lock:
                    answer = self.bus_for(joint).ping(joint.id)
            except ServoError as exc:
                problems[name] = exc.for_joint(name)
                if exc.code == "port":
                    dead_ports.add(joint.port)
                continue
            if answer is False:
                problems[name] = ServoError("no_reply", "did not answer a ping (powered? right id and baud rate?)",
                                            joint.id, name, joint.port)
        return problems

    # -- positions --------------------------------------------------------------------------

    def read(self, names: list[str] | None = None) -> Pose:
        """Present joint angles, one read per bus."""
        out: Pose = {}
        for key, joints in self._group(names).items():
            with self._lock:
                bus = self.bus_for(joints[0])
                try:
                    ticks = bus.read_positions([j.id for j in joints])
                except ServoError as exc:
                    raise self._named(exc, joints) from None
            for j in joints:
                if j.id not in ticks:
                    raise ServoError("malformed", "no position in the reply", j.id, j.name, j.port)
                if j.protocol.startswith("maestro") and ticks[j.id] == 0:
                    out[j.name] = math.nan  # no pulse yet: a Maestro cannot know where the servo is
                else:
                    out[j.name] = to_degrees(j, self.scales[j.name], ticks[j.id])
        return out

    def write(self, pose: Pose) -> dict[str, int]:
        """Goals for the named joints, one sync-write per bus; returns the ticks sent."""
        sent: dict[str, int] = {}
        for key, joints in self._group(list(pose)).items():
            goals = {j.id: to_ticks(j, self.scales[j.name], pose[j.name]) for j in joints}
            with self._lock:
                bus = self.bus_for(joints[0])
                try:
                    bus.sync_write_goals(goals)
                except ServoError as exc:
                    raise self._named(exc, joints) from None
            sent.update({j.name: goals[j.id] for j in joints})
        return sent

    def torque(self, names: list[str] | None, enabled: bool) -> None:
        for key, joints in self._group(names).items():
            with self._lock:
                bus = self.bus_for(joints[0])
                try:
                    bus.set_torque([j.id for j in joints], enabled)
                except ServoError as exc:
                    raise self._named(exc, joints) from None

    def faults(self, name: str) -> set[str]:
        """The joint's error bits right now (empty: healthy)."""
        joint = self.joints[name]
        with self._lock:
            try:
                return self.bus_for(joint).status(joint.id)
            except ServoError as exc:
                raise exc.for_joint(name) from None

    # -- helpers ----------------------------------------------------------------------------

    def _group(self, names: list[str] | None) -> dict[tuple[str, str], list[JointConfig]]:
        groups: dict[tuple[str, str], list[JointConfig]] = {}
        for name in (names if names is not None else list(self.joints)):
            joint = self.joints[name]
            groups.setdefault(joint.bus_key, []).append(joint)
        return groups

    @staticmethod
    def _named(exc: ServoError, joints: list[JointConfig]) -> ServoError:
        for j in joints:
            if j.id == exc.servo_id:
                return exc.for_joint(j.name)
        if len(joints) == 1:
            return exc.for_joint(joints[0].name)
        exc.port = exc.port or joints[0].port
        return exc


def survey(config: BodyConfig, opener: BusOpener = open_bus) -> list[dict[str, object]]:
    """Where every configured joint is, for calibration and ``companion doctor``; never moves
    anything and never raises for a servo: a problem is reported in its row."""
    io = JointIO(config, opener)
    rows: list[dict[str, object]] = []
    try:
        problems = io.ping()
        for joint in config.joints:
            row: dict[str, object] = {"joint": joint.name, "protocol": joint.protocol, "port": joint.port,
                                      "id": joint.id, "ok": joint.name not in problems}
            if joint.name in problems:
                row["error"] = problems[joint.name].message
            else:
                try:
                    deg = io.read([joint.name])[joint.name]
                    row["degrees"] = None if math.isnan(deg) else round(deg, 2)
                    row["within_limits"] = not math.isnan(deg) and joint.min_deg <= deg <= joint.max_deg
                    row["faults"] = sorted(io.faults(joint.name))
                except ServoError as exc:
                    row.update(ok=False, error=exc.message)
            rows.append(row)
    finally:
        io.close()
    return rows

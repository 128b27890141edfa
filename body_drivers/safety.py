"""The safety layer: every goal on its way to a servo passes through here.

Two parts. ``SlewLimiter`` is pure arithmetic over a clock value: it clamps a goal to the
joint's limits and moves the commanded angle toward it by at most
``min(max_step_deg, max_speed_dps * elapsed)`` per command, so no sequence of goals (NaN,
infinities, huge numbers, wrong types included) can command a joint outside its limits or
faster than its slew rate. ``SafetyGate`` puts that limiter in front of the wire and adds
the states a real body needs: nothing moves before the present positions have been read
(the first command starts where the joint already is), nothing moves while the emergency
stop is engaged (the joints hold where they are), and torque goes off only through
``relax`` once the body has reached its safe pose.
"""

from __future__ import annotations

import math
import threading
import time
from typing import Any, Callable, Iterable, Mapping

from body_drivers.body_types import BodyConfig, JointConfig
from body_drivers.joint_io import JointIO
from body_drivers.kinematics import Pose
from edge.log import get_logger
from edge.protocol.action_codes import ActionCode

log = get_logger(__name__)


class SafetyError(RuntimeError):
    """A command the safety layer refused; ``code`` is what the failed result carries."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


class SlewLimiter:
    """Clamp and rate-limit joint goals. Holds the last commanded angle of every joint."""

    def __init__(self, joints: Iterable[JointConfig], max_dt_s: float = 0.1):
        self.joints = {j.name: j for j in joints}
        self.max_dt_s = max_dt_s
        self.commanded: Pose = {}
        self._t: float | None = None

    def reset(self, pose: Mapping[str, float], now: float) -> None:
        """Take ``pose`` (clamped to the limits) as the last command, e.g. after reading the servos."""
        for name, deg in pose.items():
            joint = self._joint(name)
            if not _is_finite_number(deg):
                raise SafetyError(ActionCode.INVALID_POSITION, f"joint {name!r}: position {deg!r} is not a finite number")
            self.commanded[name] = joint.clamp(float(deg))
        self._t = now

    def goal(self, name: str, value: Any) -> float | None:
        """A goal clamped to the joint's limits; None for anything that is not a finite number."""
        joint = self._joint(name)
        if not _is_finite_number(value):
            return None
        return joint.clamp(float(value))

    def allowance(self, joint: JointConfig, dt: float, speed_cap: float | None) -> float:
        """How far one command may move ``joint`` after ``dt`` seconds."""
        speed = joint.max_speed_dps if speed_cap is None else min(joint.max_speed_dps, speed_cap)
        return min(joint.max_step_deg, speed * max(0.0, min(dt, self.max_dt_s)))

    def step(self, goals: Mapping[str, Any], now: float, speed_cap: float | None = None) -> Pose:
        """The next command for every known joint: one slew-limited step toward its goal.

        Joints without a (valid) goal repeat their last command; time that runs backwards
        moves nothing.
        """
        for name in goals:
            if name not in self.commanded:
                self._joint(name)
                raise SafetyError(ActionCode.NOT_HOMED, f"joint {name!r}: its position has not been read yet")
        dt = 0.0 if self._t is None else now - self._t
        out: Pose = {}
        for name, current in self.commanded.items():
            goal = self.goal(name, goals[name]) if name in goals else None
            if goal is None:
                out[name] = current
                continue
            joint = self.joints[name]
            allowed = self.allowance(joint, dt, speed_cap)
            delta = max(-allowed, min(allowed, goal - current))
            out[name] = joint.clamp(current + delta)
        self.commanded = out
        self._t = now if self._t is None else max(self._t, now)
        return dict(out)

    def _joint(self, name: str) -> JointConfig:
        try:
            return self.joints[name]
        except (KeyError, TypeError):
            raise SafetyError(ActionCode.UNKNOWN_JOINT, f"unknown joint {name!r}; the body has {', '.join(self.joints)}") from None


def _is_finite_number(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


class SafetyGate:
    """The only way to a servo: states, estop hold, the first read, then the limiter.

    States: ``unhomed`` (never read), ``active`` (torque on, limiter in step with the
    servos), ``resting`` (safe pose reached, torque off). ``estop`` is separate: while it
    is engaged every command is refused and the joints hold where they stopped.
    """

    def __init__(self, io: JointIO, config: BodyConfig, clock: Callable[[], float] = time.monotonic):
        self.io = io
        self.config = config
        self.clock = clock
        self.limiter = SlewLimiter(config.joints, config.control.max_dt_s)
        self.state = "unhomed"
        self.estop = False
        self._lock = threading.RLock()

    def wake(self) -> Pose:
        """Read where every joint is, make that the last command, then torque on.

        The goal is written before torque goes on, so a servo never jumps to a stale goal.
        A joint found further outside its limits than one step is refused: someone moved
        it by hand, and driving it back at full speed could hurt.
        """
        with self._lock:
            if self.estop:
                raise SafetyError(ActionCode.ESTOP_ENGAGED, "emergency stop is engaged; the body stays where it is")
            present = self.io.read()
            for name, deg in present.items():
                joint = self.config.joint(name)
                if math.isnan(deg):  # no feedback (a Maestro before its first pulse)
                    present[name] = joint.rest_deg
                    log.warning("joint.position_unknown", joint=name, assumed=joint.rest_deg)
                    continue
                beyond = abs(deg - joint.clamp(deg))
                if beyond > joint.max_step_deg:
                    raise SafetyError(ActionCode.OUT_OF_RANGE,
                                      f"joint {name!r} is at {deg:.1f}°, {beyond:.1f}° outside its limits "
                                      f"[{joint.min_deg:g}, {joint.max_deg:g}]; move it back by hand (torque stays off)")
            self.limiter.reset(present, self.clock())
            self.io.write(self.limiter.commanded)
            self.io.torque(None, True)
            self.state = "active"
            log.info("safety.active", joints={n: round(d, 1) for n, d in self.limiter.commanded.items()})
            return present

    def command(self, goals: Mapping[str, Any], speed_cap: float | None = None) -> Pose:
        """One control tick: slew-limited setpoints toward ``goals``, written to the servos."""
        with self._lock:
            if self.estop:
                raise SafetyError(ActionCode.ESTOP_ENGAGED, "emergency stop is engaged; holding position")
            if self.state != "active":
                raise SafetyError(ActionCode.NOT_ACTIVE, f"the body is {self.state}; it must be woken first")
            setpoints = self.limiter.step(goals, self.clock(), speed_cap)
            self.io.write(setpoints)
            return setpoints

    def hold(self) -> Pose | None:
        """Stop where the joints are now: present positions become the goals."""
        with self._lock:
            if self.state != "active":
                return None
            present = {n: d for n, d in self.io.read().items() if not math.isnan(d)}
            self.limiter.reset(present, self.clock())
            self.io.write(self.limiter.commanded)
            return present

    def set_estop(self, engaged: bool) -> None:
        """Engaged: refuse every command from now on and hold. Released: resume from where it is."""
        with self._lock:
            if engaged == self.estop:
                return
            self.estop = engaged
            self.hold()

    def relax(self) -> None:
        """Torque off everywhere; the next command needs ``wake`` (positions may have changed).

        Refused while the estop is engaged: the estop holds with torque on.
        """
        with self._lock:
            if self.estop:
                raise SafetyError(ActionCode.ESTOP_ENGAGED, "emergency stop is engaged; torque stays on, holding")
            self.state = "resting"
            self.io.torque(None, False)

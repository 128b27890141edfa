"""Pure functions from action params to joint angles, and from joint angles to servo ticks.

Nothing here touches a port or a clock, so every rule can be tested exhaustively: params are
checked (a finite number, not a bool or a string), a look direction becomes pan/tilt, a
linear map or a gesture becomes poses, and a joint angle becomes the integer tick the servo
is sent, never outside the joint's limits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, overload

from body_drivers.body_types import Gesture, JointConfig, LinearMap, Mapping, PanTilt
from body_drivers.servo import tables

Pose = dict[str, float]   # joint name -> joint degrees


class KinematicsError(ValueError):
    """Params an action cannot be turned into joint angles with; names the param."""


# -- params -> joint angles ----------------------------------------------------------------

@overload
def finite(params: dict[str, Any], name: str, action: str, default: float) -> float: ...
@overload
def finite(params: dict[str, Any], name: str, action: str, default: None = None) -> float | None: ...


def finite(params: dict[str, Any], name: str, action: str, default: float | None = None) -> float | None:
    """``params[name]`` as a float; a missing one is ``default``; anything else is an error."""
    if not isinstance(params, dict):
        raise KinematicsError(f"{action}: params must be an object, got {type(params).__name__}")
    if name not in params:
        return default
    value = params[name]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise KinematicsError(f"{action}: {name} must be a number, got {value!r}")
    try:
        value = float(value)
    except OverflowError:  # an int too large for a float
        raise KinematicsError(f"{action}: {name} is too large ({str(params[name])[:20]}...)") from None
    if not math.isfinite(value):
        raise KinematicsError(f"{action}: {name} must be finite, got {value!r}")
    return value


VIEW_HALF_ANGLE_DEG = 45.0   # look x = ±1 (the view's edge) is this far off straight ahead


def look_angles(x: float, y: float) -> tuple[float, float]:
    """Pan and tilt (degrees) that point the head at the place (x, y) of the view frame
    (docs/protocol.md "Spatial frame": x -1 left .. 1 right, y -1 down .. 1 up, 0, 0 ahead).

    The view spans ±45°: the point lies on the ray (x·tan 45°, y·tan 45°, 1) from the head, so
    pan = atan(x) and tilt = atan2(y, hypot(x, 1)). How far away it is (``look``'s z) does not
    change that ray, so z never turns the head: pan has the sign of x and grows with it, and
    never passes ±90° (the limits clamp long before).
    """
    k = math.tan(math.radians(VIEW_HALF_ANGLE_DEG))
    sx, sy = x * k, y * k
    pan = math.degrees(math.atan(sx))
    tilt = math.degrees(math.atan2(sy, math.hypot(sx, 1.0)))
    return pan, tilt


def plan(action: str, mapping: Mapping, params: dict[str, Any], current: Pose) -> list[Pose]:
    """The poses an action passes through, in order (one for look/move, several for a gesture).

    A pose names only the joints the action moves; the others stay where they are.
    """
    if isinstance(mapping, PanTilt):
        x = finite(params, "x", action, 0.0)
        y = finite(params, "y", action, 0.0)
        finite(params, "z", action)  # the distance: checked, but it does not change the direction
        pan, tilt = look_angles(x, y)
        pose = {mapping.pan: pan}
        if mapping.tilt is not None:
            pose[mapping.tilt] = tilt
        return [pose]
    if isinstance(mapping, LinearMap):
        return [_linear(action, mapping, params, current)]
    if isinstance(mapping, Gesture):
        return _gesture(action, mapping, params, current)
    raise KinematicsError(f"{action}: no kinematics for mapping {type(mapping).__name__}")


def _linear(action: str, mapping: LinearMap, params: dict[str, Any], current: Pose) -> Pose:
    """Each joint = offset + Σ gain·param; a joint none of whose params were given stays put."""
    pose: Pose = {}
    for joint, gains in mapping.joints.items():
        terms = {p: finite(params, p, action) for p in gains if p != "offset"}
        if terms and all(v is None for v in terms.values()):
            continue
        pose[joint] = gains.get("offset", 0.0) + sum(gains[p] * (v or 0.0) for p, v in terms.items())
    if not pose:
        wanted = sorted({p for g in mapping.joints.values() for p in g if p != "offset"})
        raise KinematicsError(f"{action}: none of its params ({', '.join(wanted)}) were given")
    return pose


def _gesture(action: str, mapping: Gesture, params: dict[str, Any], current: Pose) -> list[Pose]:
    times = 1
    if mapping.repeat is not None:
        value = finite(params, mapping.repeat, action, 1.0)
        if value != int(value) or not 1 <= value <= mapping.max_repeat:
            raise KinematicsError(f"{action}: {mapping.repeat} must be a whole number 1..{mapping.max_repeat}, got {params[mapping.repeat]!r}")
        times = int(value)
    frames = [dict(f) for f in mapping.frames] * times
    moved = {j for f in mapping.frames for j in f}
    frames.append({j: current[j] for j in moved if j in current})  # back to where it was
    return [f for f in frames if f]


# -- joint angles <-> ticks ----------------------------------------------------------------

@dataclass(frozen=True)
class TickScale:
    """A servo model's position units: ``lo..hi`` ticks cover ``span_deg``, centred at ``center``."""

    model: str
    lo: int
    hi: int
    ticks_per_degree: float

    @property
    def center(self) -> float:
        return (self.lo + self.hi) / 2

    def ticks_exact(self, joint: JointConfig, deg: float) -> float:
        """Unrounded ticks for a joint angle: direction and offset applied."""
        return self.center + (joint.direction * deg + joint.offset_deg) * self.ticks_per_degree

    def describe(self) -> str:
        half = (self.hi - self.lo) / 2 / self.ticks_per_degree
        return f"{self.model}: ±{half:.1f}° around its centre"


def scale_for(joint: JointConfig) -> TickScale:
    """The tick scale of the joint's servo model (the protocol's default model when unset)."""
    name = joint.model or tables.DEFAULT_MODEL[joint.protocol]
    try:
        m = tables.model(name)
    except KeyError as exc:
        raise KinematicsError(str(exc.args[0])) from None
    family = "feetech" if joint.protocol.startswith("feetech") else joint.protocol.split("-")[0]
    if m.family != family:
        raise KinematicsError(f"model {name!r} is a {m.family} servo, not {joint.protocol}")
    return TickScale(m.name, m.ticks_min, m.ticks_max, m.ticks_per_degree)


def tick_limits(joint: JointConfig, scale: TickScale) -> tuple[int, int]:
    """The joint's limits in ticks, rounded inward, so every tick inside is inside the limits."""
    a, b = scale.ticks_exact(joint, joint.min_deg), scale.ticks_exact(joint, joint.max_deg)
    lo, hi = math.ceil(min(a, b) - 1e-9), math.floor(max(a, b) + 1e-9)
    return max(lo, scale.lo), min(hi, scale.hi)


def to_ticks(joint: JointConfig, scale: TickScale, deg: float) -> int:
    """The tick to send for a joint angle: nearest tick, then held inside the joint's limits."""
    lo, hi = tick_limits(joint, scale)
    if not math.isfinite(deg):
        raise KinematicsError(f"joint {joint.name!r}: angle {deg!r} is not a finite number")
    return max(lo, min(hi, round(scale.ticks_exact(joint, joint.clamp(deg)))))


def to_degrees(joint: JointConfig, scale: TickScale, ticks: int) -> float:
    """A servo reading as a joint angle (may lie outside the limits: someone moved it by hand)."""
    servo_deg = (ticks - scale.center) / scale.ticks_per_degree
    return (servo_deg - joint.offset_deg) * joint.direction

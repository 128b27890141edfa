"""Reading the hardware body from ``robot.toml``: its joints, how actions map onto them, control
settings (the types they become are in ``body_types``).

Everything is checked when the file is read, so a typo or an unsafe number stops the body
before a servo moves, with a message naming the file, the key and what was expected.
The shape (see docs/hardware.md for a worked pan-tilt example)::

    [body.servo]                 # optional control settings
    control_hz = 50
    [[body.joints]]              # one table per joint
    name = "pan"  protocol = "feetech"  port = "/dev/ttyUSB0"  id = 1  ...
    [body.kinematics.look]       # one table per action
    kind = "pan_tilt"  pan = "pan"  tilt = "tilt"
"""

from __future__ import annotations

import math
import re
import tomllib
from pathlib import Path
from typing import Any, TypeGuard

from body_drivers.body_types import BodyConfig, ControlConfig, Gesture, JointConfig, LinearMap, Mapping, PanTilt
from body_drivers.kinematics import KinematicsError, scale_for
from body_drivers.servo.bus import PROTOCOLS
from edge.config_error import ConfigError


class BodyConfigError(ConfigError):
    """A bad ``[body]`` setting; the message names the file and the key."""


# Highest servo id (Maestro: channel) each protocol family can address.
MAX_ID = {"feetech": 253, "feetech-scs": 253, "dynamixel": 252, "maestro": 23, "maestro-pololu": 23}
DEFAULT_BAUD = {"feetech": 1_000_000, "feetech-scs": 1_000_000, "dynamixel": 1_000_000,
                "maestro": 115_200, "maestro-pololu": 115_200}
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")


def load_body_config(path: str | Path) -> BodyConfig:
    """The ``[body]`` joints of a robot.toml; BodyConfigError when absent or wrong."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BodyConfigError(f"{path}: no such file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise BodyConfigError(f"{path}: not valid TOML: {exc}") from None
    body = data.get("body")
    if not isinstance(body, dict):
        raise BodyConfigError(f"{path}: no [body] section")
    return parse_body_config(body, source=str(path), base=path.parent)


def parse_body_config(body: dict[str, Any], source: str = "robot.toml", base: Path | None = None) -> BodyConfig:
    """Validate the ``[body]`` table (other body keys such as ``tts`` are left to edge.config)."""
    where = _Where(source)
    raw_joints = body.get("joints")
    if not isinstance(raw_joints, list) or not raw_joints:
        raise where.error("body.joints", "needs at least one [[body.joints]] table")
    joints = tuple(_joint(where, f"body.joints[{i}]", raw, base) for i, raw in enumerate(raw_joints))
    _check_unique(where, joints)
    control = _control(where, body.get("servo", {}))
    raw_kin = body.get("kinematics", {})
    if not isinstance(raw_kin, dict):
        raise where.error("body.kinematics", "must be a table of actions, e.g. [body.kinematics.look]")
    names = {j.name for j in joints}
    kinematics = {action: _mapping(where, f"body.kinematics.{action}", spec, names)
                  for action, spec in raw_kin.items()}
    return BodyConfig(joints, kinematics, control, source)


class _Where:
    def __init__(self, source: str):
        self.source = source

    def error(self, key: str, message: str) -> BodyConfigError:
        return BodyConfigError(f"{self.source}: {key}: {message}")


_JOINT_KEYS = {"name", "protocol", "port", "id", "direction", "offset_deg", "min_deg", "max_deg",
               "neutral_deg", "safe_deg", "max_speed_dps", "max_step_deg", "baudrate", "model"}


def _joint(where: _Where, key: str, raw: Any, base: Path | None) -> JointConfig:
    if not isinstance(raw, dict):
        raise where.error(key, "must be a table ([[body.joints]])")
    name = raw.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise where.error(f"{key}.name", f"needs a name of letters, digits, - and _ (got {name!r})")
    key = f"{key} ({name})"
    _no_unknown(where, key, raw, _JOINT_KEYS)
    protocol = raw.get("protocol")
    if protocol not in PROTOCOLS:
        raise where.error(f"{key}.protocol", f"unknown protocol {protocol!r}; expected one of {', '.join(PROTOCOLS)}")
    port = raw.get("port")
    if not isinstance(port, str) or not port.strip():
        raise where.error(f"{key}.port", "needs a serial port path, e.g. \"/dev/ttyUSB0\"")
    servo_id = raw.get("id")
    if not _is_int(servo_id) or not 0 <= servo_id <= MAX_ID[protocol]:
        raise where.error(f"{key}.id", f"must be an integer 0..{MAX_ID[protocol]} for {protocol} (got {servo_id!r})")
    direction = raw.get("direction", 1)
    if direction not in (1, -1) or isinstance(direction, bool):
        raise where.error(f"{key}.direction", f"must be 1 or -1 (got {direction!r})")
    num = {k: _number(where, f"{key}.{k}", raw, k) for k in ("min_deg", "max_deg")}
    lo, hi = num["min_deg"], num["max_deg"]
    if lo >= hi:
        raise where.error(f"{key}.min_deg", f"min_deg {lo:g} must be below max_deg {hi:g}")
    neutral = _number(where, f"{key}.neutral_deg", raw, "neutral_deg", 0.0)
    safe = _number(where, f"{key}.safe_deg", raw, "safe_deg", None)
    for k, v in (("neutral_deg", neutral), ("safe_deg", safe)):
        if v is not None and not lo <= v <= hi:
            raise where.error(f"{key}.{k}", f"{v:g} is outside the joint's limits [{lo:g}, {hi:g}]")
    speed = _number(where, f"{key}.max_speed_dps", raw, "max_speed_dps", 90.0, positive=True)
    step = _number(where, f"{key}.max_step_deg", raw, "max_step_deg", 10.0, positive=True)
    baud = raw.get("baudrate", DEFAULT_BAUD[protocol])
    if not _is_int(baud) or baud <= 0:
        raise where.error(f"{key}.baudrate", f"must be a positive integer (got {baud!r})")
    model = raw.get("model")
    if model is not None and not isinstance(model, str):
        raise where.error(f"{key}.model", f"must be a model name string (got {model!r})")
    offset = _number(where, f"{key}.offset_deg", raw, "offset_deg", 0.0)
    joint = JointConfig(name=name, protocol=protocol, port=_resolve_port(port, base), id=servo_id,
                        min_deg=lo, max_deg=hi, neutral_deg=neutral, safe_deg=safe, direction=direction,
                        offset_deg=offset, max_speed_dps=speed, max_step_deg=step, baudrate=baud, model=model)
    _check_reach(where, key, joint)
    return joint


def _check_reach(where: _Where, key: str, joint: JointConfig) -> None:
    """The limits, after direction and offset, must land inside the servo's own range."""
    try:
        scale = scale_for(joint)
    except KinematicsError as exc:
        raise where.error(f"{key}.model", str(exc)) from None
    for k in ("min_deg", "max_deg"):
        ticks = scale.ticks_exact(joint, getattr(joint, k))
        if not scale.lo <= ticks <= scale.hi:
            servo_deg = joint.direction * getattr(joint, k) + joint.offset_deg
            raise where.error(f"{key}.{k}", f"{getattr(joint, k):g} with offset_deg {joint.offset_deg:g} is servo angle "
                              f"{servo_deg:g}°, beyond what the servo can reach ({scale.describe()})")


def _check_unique(where: _Where, joints: tuple[JointConfig, ...]) -> None:
    names: dict[str, int] = {}
    ids: dict[tuple[str, int], str] = {}
    settings: dict[str, JointConfig] = {}
    for i, j in enumerate(joints):
        if j.name in names:
            raise where.error(f"body.joints[{i}].name", f"joint name {j.name!r} is already used by body.joints[{names[j.name]}]")
        names[j.name] = i
        if (j.port, j.id) in ids:
            raise where.error(f"body.joints[{i}] ({j.name}).id",
                              f"id {j.id} on {j.port} is already joint {ids[(j.port, j.id)]!r}; each servo on a port needs its own id")
        ids[(j.port, j.id)] = j.name
        first = settings.setdefault(j.port, j)
        if (first.protocol, first.baudrate) != (j.protocol, j.baudrate):
            raise where.error(f"body.joints[{i}] ({j.name}).protocol",
                              f"{j.port} is {first.protocol} at {first.baudrate} baud for joint {first.name!r}, "
                              f"but {j.protocol} at {j.baudrate} here; one port speaks one protocol at one speed")


_CONTROL_RANGES: dict[str, tuple[float, float]] = {
    "control_hz": (1, 500), "tolerance_deg": (0.01, 45), "settle_s": (0, 60), "home_speed_dps": (0.1, 1000),
    "watchdog_s": (0, 86_400), "max_dt_s": (0.001, 1), "timeout_s": (0.001, 2), "retries": (0, 10),
}


def _control(where: _Where, raw: Any) -> ControlConfig:
    if not isinstance(raw, dict):
        raise where.error("body.servo", "must be a table ([body.servo])")
    _no_unknown(where, "body.servo", raw, set(_CONTROL_RANGES) | {"safe_on_brain_offline"})
    values: dict[str, Any] = {}
    for k, (lo, hi) in _CONTROL_RANGES.items():
        if k in raw:
            v = _number(where, f"body.servo.{k}", raw, k)
            if not lo <= v <= hi:
                raise where.error(f"body.servo.{k}", f"must be within {lo:g}..{hi:g} (got {v:g})")
            if k == "retries" and not _is_int(raw[k]):
                raise where.error(f"body.servo.{k}", f"must be an integer (got {raw[k]!r})")
            values[k] = int(v) if k == "retries" else v
    if "safe_on_brain_offline" in raw:
        if not isinstance(raw["safe_on_brain_offline"], bool):
            raise where.error("body.servo.safe_on_brain_offline", "must be true or false")
        values["safe_on_brain_offline"] = raw["safe_on_brain_offline"]
    return ControlConfig(**values)


def _mapping(where: _Where, key: str, spec: Any, joints: set[str]) -> Mapping:
    if not isinstance(spec, dict):
        raise where.error(key, "must be a table with a kind: pan_tilt, linear or gesture")
    kind = spec.get("kind")

    def joint_ref(k: str, value: Any) -> str:
        if not isinstance(value, str) or value not in joints:
            raise where.error(f"{key}.{k}", f"unknown joint {value!r}; the body has {', '.join(sorted(joints))}")
        return value

    if kind == "pan_tilt":
        _no_unknown(where, key, spec, {"kind", "pan", "tilt"})
        if "pan" not in spec:
            raise where.error(f"{key}.pan", "pan_tilt needs a pan joint")
        tilt = joint_ref("tilt", spec["tilt"]) if "tilt" in spec else None
        return PanTilt(pan=joint_ref("pan", spec["pan"]), tilt=tilt)
    if kind == "linear":
        _no_unknown(where, key, spec, {"kind", "joints"})
        table = spec.get("joints")
        if not isinstance(table, dict) or not table:
            raise where.error(f"{key}.joints", "needs a table of joint = { param = gain, offset = deg }")
        out: dict[str, dict[str, float]] = {}
        for joint, gains in table.items():
            joint_ref(f"joints.{joint}", joint)
            if not isinstance(gains, dict) or not gains:
                raise where.error(f"{key}.joints.{joint}", "must be a table such as { x = 90 }")
            out[joint] = {p: _number(where, f"{key}.joints.{joint}.{p}", gains, p) for p in gains}
        return LinearMap(out)
    if kind == "gesture":
        _no_unknown(where, key, spec, {"kind", "frames", "repeat", "max_repeat"})
        frames = spec.get("frames")
        if not isinstance(frames, list) or not frames:
            raise where.error(f"{key}.frames", "needs a list of poses such as [{ tilt = 15 }, { tilt = -5 }]")
        poses = []
        for i, frame in enumerate(frames):
            if not isinstance(frame, dict) or not frame:
                raise where.error(f"{key}.frames[{i}]", "must be a table of joint = degrees")
            poses.append({joint_ref(f"frames[{i}].{j}", j): _number(where, f"{key}.frames[{i}].{j}", frame, j)
                          for j in frame})
        repeat = spec.get("repeat")
        if repeat is not None and not isinstance(repeat, str):
            raise where.error(f"{key}.repeat", "must name the integer param that repeats the gesture")
        max_repeat = spec.get("max_repeat", 5)
        if not _is_int(max_repeat) or not 1 <= max_repeat <= 100:
            raise where.error(f"{key}.max_repeat", f"must be an integer 1..100 (got {max_repeat!r})")
        return Gesture(tuple(poses), repeat, max_repeat)
    raise where.error(f"{key}.kind", f"unknown kind {kind!r}; expected pan_tilt, linear or gesture")


# -- small checks --------------------------------------------------------------------------

def _no_unknown(where: _Where, key: str, raw: dict, allowed: set[str]) -> None:
    for k in raw:
        if k not in allowed:
            raise where.error(f"{key}.{k}", f"unknown key (known: {', '.join(sorted(allowed))})")


def _is_int(v: object) -> TypeGuard[int]:
    return isinstance(v, int) and not isinstance(v, bool)


_MISSING = object()


def _number(where: _Where, key: str, raw: dict, name: str, default: Any = _MISSING, positive: bool = False):
    value = raw.get(name, _MISSING)
    if value is _MISSING:
        if default is _MISSING:
            raise where.error(key, "is required")
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise where.error(key, f"must be a finite number (got {value!r})")
    if positive and value <= 0:
        raise where.error(key, f"must be greater than 0 (got {value!r})")
    return float(value)


def _resolve_port(port: str, base: Path | None) -> str:
    """A relative port (a servo-sim link such as ``run/pan-tilt``) is relative to the file."""
    if base is None or Path(port).is_absolute() or re.fullmatch(r"COM\d+", port):
        return port
    return str((base / port).resolve())

"""What a body is once ``robot.toml`` is read: its joints, how actions map onto them, how they
are driven. Plain frozen values; ``body_config`` builds and checks them, everything that moves
the body reads them."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property


@dataclass(frozen=True)
class JointConfig:
    """One servo as the body sees it. Angles are joint degrees: 0 is "straight ahead",
    ``direction`` and ``offset_deg`` map them onto the servo's own angle."""

    name: str
    protocol: str
    port: str
    id: int
    min_deg: float
    max_deg: float
    neutral_deg: float = 0.0
    safe_deg: float | None = None     # where it rests before torque-off; None: neutral
    direction: int = 1
    offset_deg: float = 0.0
    max_speed_dps: float = 90.0
    max_step_deg: float = 10.0
    baudrate: int | None = None
    model: str | None = None

    @property
    def rest_deg(self) -> float:
        return self.neutral_deg if self.safe_deg is None else self.safe_deg

    @property
    def bus_key(self) -> tuple[str, str]:
        return (self.protocol, self.port)

    def clamp(self, deg: float) -> float:
        return min(self.max_deg, max(self.min_deg, deg))


@dataclass(frozen=True)
class PanTilt:
    """``look(x, y, z)``: pan = atan(x), tilt = atan2(y, hypot(x, 1)), in degrees; z (distance) turns nothing."""

    pan: str
    tilt: str | None = None


@dataclass(frozen=True)
class LinearMap:
    """Each joint = offset + sum(gain * param): ``move(x, y, z)`` onto whatever the body has."""

    joints: dict[str, dict[str, float]]   # joint -> {param: gain, "offset": deg}


@dataclass(frozen=True)
class Gesture:
    """A fixed sequence of poses (joint -> degrees), repeated ``params[repeat]`` times."""

    frames: tuple[dict[str, float], ...]
    repeat: str | None = None
    max_repeat: int = 5


Mapping = PanTilt | LinearMap | Gesture


@dataclass(frozen=True)
class ControlConfig:
    """How the executor drives the joints; the defaults suit hobby servos at 1 Mbaud."""

    control_hz: float = 50.0
    tolerance_deg: float = 2.0     # a goal is reached when every joint is this close
    settle_s: float = 1.0          # beyond the planned motion time before a move times out
    home_speed_dps: float = 30.0   # homing and the safe pose go at most this fast
    watchdog_s: float = 0.0        # no action for this long: safe pose, torque off (0: off)
    safe_on_brain_offline: bool = True
    max_dt_s: float = 0.1          # elapsed time counted toward one step's slew allowance
    timeout_s: float = 0.05        # serial reply timeout per attempt
    retries: int = 2


@dataclass(frozen=True)
class BodyConfig:
    joints: tuple[JointConfig, ...]
    kinematics: dict[str, Mapping] = field(default_factory=dict)
    control: ControlConfig = field(default_factory=ControlConfig)
    source: str = "robot.toml"

    def joint(self, name: str) -> JointConfig:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"no joint {name!r}; the body has {', '.join(self._by_name)}") from None

    @cached_property
    def _by_name(self) -> dict[str, JointConfig]:
        return {j.name: j for j in self.joints}

    def ports(self) -> dict[tuple[str, str], list[JointConfig]]:
        """Joints grouped by the serial bus they share."""
        out: dict[tuple[str, str], list[JointConfig]] = {}
        for j in self.joints:
            out.setdefault(j.bus_key, []).append(j)
        return out

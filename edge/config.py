"""Settings for a running stack: command-line flags over an optional ``robot.toml``.

Only keys this version understands are accepted: a typo in the file is an error naming the
key and the file, not a silently ignored setting.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from edge.broker import BrokerAddress
from edge.config_error import ConfigError  # noqa: F401  (re-exported)
from edge.paths import COMPANIONS_DIR, DEFAULT_COMPANION  # noqa: F401  (re-exported)


@dataclass
class Settings:
    broker: BrokerAddress = field(default_factory=BrokerAddress)
    namespace: str | None = None
    provider: str = "embedded"
    companions: list[Path] = field(default_factory=lambda: [DEFAULT_COMPANION])
    sim: bool = True
    timeline: Path | None = None
    audio_device: str | None = None
    tts: str = "piper"           # piper | espeak | none
    result_timeout_s: float = 60.0
    queue_size: int = 8
    registry: str | None = None  # a Registry URL: other companions' metadata for the prompt
    body_config: Any = None      # the parsed [body] servo setup (body_drivers.body_config.BodyConfig) when sim = false


_TOML_KEYS: dict[str, dict[str, type | tuple[type, ...]]] = {
    "broker": {"address": str, "namespace": str},
    "brain": {"provider": str, "companions": list, "result_timeout_s": (int, float), "queue_size": int,
              "registry": str},
    "body": {"sim": bool, "timeline": str, "audio_device": (str, int), "tts": str,
             "joints": list, "kinematics": dict, "servo": dict},  # the servo part: body_drivers/body_config.py
}


_SERVO_KEYS = ("joints", "kinematics", "servo")


def load_toml(path: str | Path, settings: Settings | None = None) -> Settings:
    """Read ``robot.toml`` into ``settings`` (defaults when None)."""
    settings = settings or Settings()
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    for section, values in data.items():
        allowed = _TOML_KEYS.get(section)
        if allowed is None:
            raise ConfigError(f"{path}: unknown section [{section}] (known: {', '.join(_TOML_KEYS)})")
        if not isinstance(values, dict):
            raise ConfigError(f"{path}: {section} must be a [section]")
        for key, value in values.items():
            if key not in allowed:
                raise ConfigError(f"{path}: unknown key {section}.{key} (known: {', '.join(allowed)})")
            if not isinstance(value, allowed[key]):
                raise ConfigError(f"{path}: {section}.{key} has the wrong type ({type(value).__name__})")
            if section == "body" and key in _SERVO_KEYS:
                continue  # parsed as a whole below
            _apply(settings, section, key, value, path)
    if not settings.sim:  # a servo body: check it now, so a mistake stops start-up with its key named
        from body_drivers.body_config import parse_body_config
        servo_part = {k: v for k, v in data.get("body", {}).items() if k in _SERVO_KEYS}
        settings.body_config = parse_body_config(servo_part, source=str(path), base=path.parent)
    return settings


def _apply(settings: Settings, section: str, key: str, value: Any, path: Path) -> None:
    try:
        if (section, key) == ("broker", "address"):
            settings.broker = BrokerAddress.parse(value)
        elif key == "companions":
            settings.companions = [(path.parent / str(v)).resolve() for v in value]
        elif key == "timeline":
            settings.timeline = (path.parent / value).resolve()
        elif key == "audio_device":
            settings.audio_device = str(value)
        else:
            setattr(settings, key, value)
    except ValueError as exc:
        raise ConfigError(f"{path}: {section}.{key}: {exc}") from None
    if settings.tts not in ("piper", "espeak", "none"):
        raise ConfigError(f"{path}: body.tts must be piper, espeak or none, not {settings.tts!r}")


def known_settings() -> list[str]:
    return [f.name for f in fields(Settings)]

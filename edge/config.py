"""Settings for a running stack: command-line flags over an optional ``robot.toml``.

``robot.toml`` has ``[broker]`` and a typed section per node kind (``edge/config_sections.py``;
which kinds there are is ``edge/kinds.py``). A section declares its keys once
(``edge/config_fields.py``): the same declaration checks the file and makes the flags of
``companion run KIND``, and a flag given on the command line wins over the file. ``companion up``
starts the brain and the body, plus every other node kind the file has a section for.

Only keys this version understands are accepted: a typo in the file is an error naming the
key and the file, not a silently ignored setting.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from edge.runtime.broker import BrokerAddress
from edge.config_error import ConfigError  # noqa: F401  (re-exported)
from edge.config_fields import read_section
from edge.config_sections import (DEFAULT_BODY_ID, TTS_ENGINES, BodySection, BrainSection,  # noqa: F401  (re-exported)
                                  BrokerSection, CameraSection, GatewaySection, McpSection, MicSection,
                                  RegistrySection, node_id_arg, tts_arg)
from edge.kinds import KINDS
from edge.paths import COMPANIONS_DIR, DEFAULT_COMPANION  # noqa: F401  (re-exported)

SERVO_KEYS = ("joints", "kinematics", "servo")   # [body]'s servo part, parsed by body_drivers/body_config.py

# The node kinds besides brain and body (edge/kinds.py): `companion up` starts each one robot.toml has a section for.
NODE_SECTIONS: dict[str, type] = {k.name: k.section for k in KINDS if not k.always_up}
SECTIONS: dict[str, type] = {"broker": BrokerSection, **{k.name: k.section for k in KINDS}}
# whose flags `companion run` takes from the sections (brain's and the broker's are shared with `up`)
RUN_FLAG_SECTIONS: tuple[tuple[str, type], ...] = tuple((k.name, k.section) for k in KINDS if k.name != "brain")


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
    retrieval: str | None = None  # [brain] retrieval: auto | onnx | bm25 (None: auto)
    body_config: Any = None      # the parsed [body] servo setup (body_drivers.body_config.BodyConfig) when sim = false
    body_id: str | None = None   # [body] node_id / --node-id (None: body)
    nodes: dict[str, Any] = field(default_factory=dict)  # kind -> its section, for each of NODE_SECTIONS named

    def section(self, kind: str) -> Any:
        """The section of a node kind: the file's, else its defaults."""
        return self.nodes.get(kind) or NODE_SECTIONS[kind]()


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
    for name in data:
        if name not in SECTIONS:
            raise ConfigError(f"{path}: unknown section [{name}] (known: {', '.join(SECTIONS)})")
    read: dict[str, Any] = {name: read_section(SECTIONS[name], table, name, path) for name, table in data.items()}
    for key in data.get("broker", {}):     # [broker], [brain] and [body] keep their flat Settings names
        value = read["broker"].address if key == "address" else read["broker"].namespace
        setattr(settings, "broker" if key == "address" else key, BrokerAddress.parse(value) if key == "address" else value)
    for key in data.get("brain", {}):
        value = getattr(read["brain"], key)
        setattr(settings, key, [(path.parent / str(v)).resolve() for v in value] if key == "companions" else value)
    for key in data.get("body", {}):
        if key not in SERVO_KEYS:
            value = getattr(read["body"], key)
            value = Path(value) if key == "timeline" else str(value) if key == "audio_device" else value
            setattr(settings, "body_id" if key == "node_id" else key, value)
    settings.nodes.update({name: section for name, section in read.items() if name in NODE_SECTIONS})
    if not settings.sim:  # a servo body: check it now, so a mistake stops start-up with its key named
        from body_drivers.body_config import parse_body_config
        servo_part = {k: v for k, v in data.get("body", {}).items() if k in SERVO_KEYS}
        settings.body_config = parse_body_config(servo_part, source=str(path), base=path.parent)
    return settings


def known_settings() -> list[str]:
    return [f.name for f in fields(Settings)]

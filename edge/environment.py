"""The environment variables companion-edge reads: secrets and paths only (settings live in robot.toml).

Every variable is declared here once, with what it is for and its default; the rest of the
code takes values from here instead of reading ``os.environ`` itself.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

# Variables that older systemd units turned into flags of ``companion run KIND``: kind, and the
# robot.toml key it set (None: a string of that kind's flags). robot.toml holds these settings
# now; deploy/install.sh moves them there (deploy/lib/robot_settings.py).
LEGACY_UNIT_VARIABLES: dict[str, tuple[str, str | None]] = {
    "COMPANION_CAMERA_SOURCE": ("camera", "source"),
    "COMPANION_CAMERA_DETECTOR": ("camera", "detector"),
    "COMPANION_CAMERA_ARGS": ("camera", None),
    "COMPANION_MIC_SOURCE": ("mic", "source"),
    "COMPANION_MIC_ARGS": ("mic", None),
    "COMPANION_GATEWAY_HOST": ("gateway", "host"),
    "COMPANION_GATEWAY_PORT": ("gateway", "port"),
    "COMPANION_REGISTRY_HOST": ("registry", "host"),
    "COMPANION_REGISTRY_PORT": ("registry", "port"),
    "COMPANION_MCP_HOST": ("mcp", "host"),
    "COMPANION_MCP_PORT": ("mcp", "port"),
    "COMPANION_MCP_COMPANION": ("mcp", "companion"),
}


def legacy_settings(environ: Mapping[str, str] | None = None) -> list[str]:
    """One sentence per old unit variable that is set: nothing reads it now, robot.toml has its key."""
    environ = os.environ if environ is None else environ
    lines = []
    for name, (kind, key) in LEGACY_UNIT_VARIABLES.items():
        value = environ.get(name, "").strip()
        if value:
            what = f"{key} in [{kind}]" if key else f"its flags as keys of [{kind}] (--some-flag VALUE: some_flag = VALUE)"
            lines.append(f"{name}={value} is no longer read: set {what} of robot.toml instead "
                         f"(rerunning deploy/install.sh moves it there; docs/deploy.md)")
    return lines


def env_file_values(text: str) -> dict[str, str]:
    """``KEY=value`` lines as systemd's EnvironmentFile= reads them (comments skipped, one pair of
    quotes taken off): what the units of /etc/companion/companion.env see."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")) or "=" not in line:
            continue
        key, _, value = line.partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        values[key.strip()] = value
    return values

"""``companion doctor``'s settings check: nothing an older install set outside robot.toml is left.

Older systemd units turned companion.env variables into flags (``COMPANION_CAMERA_SOURCE`` ...);
the units now pass only ``--config``, so such a variable does nothing and the setting it held
must be in robot.toml (deploy/install.sh moves it there). The HTTP services' older
``COMPANION_ALLOWED_HOSTS`` and the like still work, and are named too.
"""

from __future__ import annotations

from pathlib import Path

from edge.config import Settings
from edge.doctor_check import Check
from edge.environment import env_file_values, legacy_settings

COMPANION_ENV = Path("/etc/companion/companion.env")   # the units' EnvironmentFile=


def check_settings(settings: Settings, env_file: Path = COMPANION_ENV) -> Check:
    here = legacy_settings(honoured=True)
    try:
        text = env_file.read_text(encoding="utf-8")
    except OSError:       # not installed, or not readable by this user: the environment is what counts
        text = ""
    lines = here + [f"{env_file}: {line}" for line in legacy_settings(env_file_values(text), honoured=True) if line not in here]
    if not lines:
        return Check("settings", True, ["every node setting comes from robot.toml and its flags"])
    return Check("settings", False, lines, required=False,
                 fix=f"sudo bash deploy/install.sh (it moves them into robot.toml and comments them out in "
                     f"{env_file}), or move them by hand")

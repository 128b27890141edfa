"""`companion doctor` names a setting an older install left outside robot.toml, with its fix."""

from __future__ import annotations

from edge.doctor_settings import check_settings
from edge.environment import LEGACY_UNIT_VARIABLES


def test_nothing_left_behind_passes(tmp_path, monkeypatch):
    for name in LEGACY_UNIT_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    env = tmp_path / "companion.env"
    env.write_text("COMPANION_GATEWAY_TOKEN=abc\n# moved to robot.toml [camera] source by install.sh: "
                   "COMPANION_CAMERA_SOURCE=2\n")
    check = check_settings(None, env)   # type: ignore[arg-type]
    assert check.ok


def test_a_variable_in_the_environment_or_companion_env_is_named_with_its_key(tmp_path, monkeypatch):
    for name in LEGACY_UNIT_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COMPANION_CAMERA_SOURCE", "/dev/video2")
    env = tmp_path / "companion.env"
    env.write_text("COMPANION_CAMERA_SOURCE=/dev/video2\nCOMPANION_GATEWAY_HOST=0.0.0.0\n")
    check = check_settings(None, env)   # type: ignore[arg-type]
    assert not check.ok and not check.required   # a warning: the node still runs, from robot.toml
    assert check.lines == [
        "COMPANION_CAMERA_SOURCE=/dev/video2 is no longer read: set source in [camera] of robot.toml instead "
        "(rerunning deploy/install.sh moves it there; docs/deploy.md)",
        f"{env}: COMPANION_GATEWAY_HOST=0.0.0.0 is no longer read: set host in [gateway] of robot.toml instead "
        "(rerunning deploy/install.sh moves it there; docs/deploy.md)"]
    assert check.fix is not None and "deploy/install.sh" in check.fix and str(env) in check.fix

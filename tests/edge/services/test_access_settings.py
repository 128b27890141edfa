"""Whom the HTTP services accept is robot.toml's (allowed_hosts, allowed_origins, token_on_loopback
in [gateway], [registry], [mcp]), a flag overrides it, and the older environment variables still
work with a warning naming the key."""

from __future__ import annotations

import logging

import pytest

from edge import environment
from edge.cli import build_parser, settings_from
from edge.config import ConfigError
from edge.services.mcp_server import mcp_policy
from edge.services.registry import registry_policy


def section(tmp_path, kind: str, text: str, *flags: str):
    robot = tmp_path / "robot.toml"
    robot.write_text(f"[{kind}]\n{text}\n")
    return settings_from(build_parser().parse_args(["run", kind, "--config", str(robot), *flags])).section(kind)


@pytest.fixture(autouse=True)
def no_old_variables(monkeypatch):
    for name in environment.SERVICE_ACCESS_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(environment, "_warned", set())


def test_robot_toml_names_the_hosts_and_origins_a_service_accepts(tmp_path):
    registry = section(tmp_path, "registry", 'allowed_hosts = "robot.lan, robot.example"\n'
                                             'allowed_origins = "http://dashboard.lan:8080"')
    policy = registry_policy(None, registry)
    assert policy.check_host("robot.lan:8700") is None and policy.check_host("robot.example") is None
    assert policy.check_host("evil.example")[0] == 403
    assert policy.check_origin("http://dashboard.lan:8080", "robot.lan:8700", "http") is None
    assert policy.check_origin("http://evil.example", "robot.lan:8700", "http")[0] == 403


def test_a_flag_overrides_the_file_and_token_on_loopback_reaches_the_policy(tmp_path):
    mcp = section(tmp_path, "mcp", 'allowed_hosts = "robot.lan"\ntoken_on_loopback = true',
                  "--allowed-hosts", "other.lan")
    policy = mcp_policy("secret", access=mcp)
    assert policy.check_host("other.lan") is None and policy.check_host("robot.lan")[0] == 403
    assert policy.token_on_loopback


def test_a_bad_value_names_the_file_and_key(tmp_path):
    with pytest.raises(ConfigError, match=r"robot.toml: gateway.allowed_hosts: 'a b': separate the names with "
                                          r"commas"):
        section(tmp_path, "gateway", 'allowed_hosts = "a b"')
    with pytest.raises(ConfigError, match=r"gateway.token_on_loopback has the wrong type \(str; expected bool\)"):
        section(tmp_path, "gateway", 'token_on_loopback = "yes"')


def test_the_old_variables_still_work_with_one_warning_naming_the_key(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("COMPANION_ALLOWED_HOSTS", "old.lan")
    monkeypatch.setenv("COMPANION_TOKEN_ON_LOOPBACK", "1")
    registry = section(tmp_path, "registry", 'allowed_hosts = "robot.lan"')
    with caplog.at_level(logging.WARNING):
        policy = registry_policy("secret", registry)
        registry_policy("secret", registry)
    assert policy.check_host("old.lan") is None and policy.check_host("robot.lan") is None
    assert policy.token_on_loopback
    warned = [r.getMessage() for r in caplog.records if "environment.deprecated" in r.getMessage()]
    assert len(warned) == 2   # once per variable, not once per policy
    assert any("COMPANION_ALLOWED_HOSTS" in w and "allowed_hosts in [gateway], [registry], [mcp]" in w
               for w in warned)

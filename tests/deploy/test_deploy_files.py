"""The files deploy/ ships, checked by the tools that read them: systemd units (parsed for
hardening and order), udev rules, cloud-init user-data (`cloud-init schema`) and network-config.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from deploy_harness import DEPLOY, run_install, tool
from edge.kinds import NAMES

NODE_UNITS = list(NAMES)   # a unit per node kind
CLOUD_INIT = shutil.which("cloud-init")


def unit_settings(path: Path) -> dict[str, list[str]]:
    """``Key`` -> every value it is given in a unit file (keys repeat: DeviceAllow, After...)."""
    values: dict[str, list[str]] = {}
    for line in path.read_text().splitlines():
        if line and not line.startswith(("#", "[")) and "=" in line:
            key, _, value = line.partition("=")
            values.setdefault(key, []).append(value)
    return values


# -- the unit files themselves ---------------------------------------------------------------------

def test_units_are_hardened_and_ordered_as_the_seed_says():
    units = {name: unit_settings(DEPLOY / f"systemd/companion-{name}.service") for name in NODE_UNITS + ["broker"]}
    for name in NODE_UNITS:
        s = units[name]
        assert s["User"] == ["companion"] and s["Restart"] == ["on-failure"], name
        for key, value in (("ProtectSystem", "strict"), ("ProtectHome", "yes"), ("PrivateTmp", "yes"),
                           ("NoNewPrivileges", "yes"), ("PartOf", "companion.target"),
                           ("WantedBy", "companion.target")):
            assert s.get(key) == [value], (name, key)
        assert "-/etc/companion/companion.env" in s["EnvironmentFile"]
        assert f"-/etc/companion/mqtt/{name}.env" in s["EnvironmentFile"]
        assert s["ExecStart"][0].startswith(f"/opt/companion-edge/venv/bin/companion run {name} ")
        assert "StateDirectory" in s and int(s["RestartSec"][0]) >= 2
    devices = {name: set(units[name].get("DeviceAllow", [])) for name in NODE_UNITS}
    assert devices["body"] == {"char-ttyUSB rw", "char-ttyACM rw", "char-ttyAMA rw", "char-ttyTHS rw", "char-alsa rw"}
    assert devices["camera"] == {"char-video4linux rw"}
    assert devices["mic"] == {"char-alsa rw"}
    for name in ("registry", "brain", "gateway", "mcp"):
        assert not devices[name] and units[name]["PrivateDevices"] == ["yes"], name
    for name in ("body", "camera", "mic"):
        assert units[name]["DevicePolicy"] == ["closed"], name
    broker = units["broker"]
    assert broker["User"] == ["mosquitto"] and broker["Type"] == ["notify"]
    assert broker["ExecStart"] == ["/usr/sbin/mosquitto -c /etc/companion/mosquitto/mosquitto.conf"]

    def after(name: str) -> str:
        return " ".join(units[name]["After"])
    # Registry -> Relay (broker) -> Body -> Companion (brain)
    assert "companion-registry.service" in after("broker")
    assert "companion-broker.service" in after("body")
    assert "companion-body.service" in after("brain") and "companion-broker.service" in after("brain")


def test_udev_rules_cover_the_common_servo_adapters():
    text = (DEPLOY / "udev/99-companion-servo.rules").read_text()
    rules = [line for line in text.splitlines() if line.strip() and not line.startswith("#")]
    token = re.compile(r'^(SUBSYSTEM|ACTION|DRIVER|GOTO|LABEL|GROUP|MODE|SYMLINK\+?|ATTRS?\{\w+\}|ENV\{\w+\})'
                       r'(==|!=|=|\+=)"[^"]*"$')
    for rule in rules:
        for part in rule.split(", "):
            assert token.match(part.strip()), f"not a udev key/value: {part!r} in {rule!r}"
    adapters = {("1a86", "7523"), ("10c4", "ea60"), ("0403", "6001"), ("0403", "6014"),
                ("1ffb", "0089"), ("1ffb", "008a"), ("1ffb", "008b"), ("1ffb", "008c")}
    for vendor, product in adapters:
        matching = [r for r in rules if f'ATTRS{{idVendor}}=="{vendor}"' in r and
                    re.search(rf'ATTRS\{{idProduct\}}=="[^"]*\b{product}\b', r) and "servo-bus" in r]
        assert matching, (vendor, product)
        assert all('GROUP="dialout"' in r and 'MODE="0660"' in r for r in matching)
    assert any('ATTR{latency_timer}="1"' in r and 'DRIVER=="ftdi_sio"' in r for r in rules)


# -- cloud-init ------------------------------------------------------------------------------------

@pytest.mark.skipif(CLOUD_INIT is None, reason="cloud-init not installed (apt-get install cloud-init)")
def test_cloud_init_user_data_passes_the_schema_and_network_config_converts(tmp_path):
    user_data = DEPLOY / "raspberry-pi/user-data"
    result = tool(CLOUD_INIT, "schema", "--config-file", str(user_data))
    # The success line changed wording between releases: bookworm's cloud-init 22.4 says
    # "Valid cloud-config: <file>", trixie's 25.1 (today's Pi OS) says "Valid schema <file>".
    # Either way it must exit 0 and name our file as valid.
    valid = re.compile(rf"^Valid (cloud-config:|schema) {re.escape(str(user_data))}$", re.MULTILINE)
    assert result.returncode == 0 and valid.search(result.stdout), result.stdout + result.stderr
    out = tmp_path / "netplan"
    result = tool(CLOUD_INIT, "devel", "net-convert", "--network-data", str(DEPLOY / "raspberry-pi/network-config"),
                  "--kind", "yaml", "--output-kind", "netplan", "--distro", "debian", "--directory", str(out))
    assert result.returncode == 0, result.stderr
    netplan = "".join(p.read_text() for p in out.rglob("*.yaml"))
    assert "wlan0:" in netplan and "YOUR-WIFI-NAME" in netplan and "eth0:" in netplan


def test_first_boot_script_in_user_data_runs_the_installer_it_ships_with(tmp_path):
    text = (DEPLOY / "raspberry-pi/user-data").read_text()
    script = "\n".join(line[6:] for line in text.split("content: |\n", 1)[1].splitlines()
                       if line.startswith("      ") or not line.strip()).split("\nruncmd:")[0]
    (tmp_path / "firstboot").write_text(script)
    subprocess.run(["bash", "-n", str(tmp_path / "firstboot")], check=True)
    profile = re.search(r"^profile=(\w+)", script, re.MULTILINE).group(1)
    assert 'bash "$src/deploy/install.sh" --profile "$profile"' in script
    assert run_install(tmp_path, "--dry-run", "--profile", profile).rc == 0
    assert "/usr/local/sbin/companion-firstboot" in text.split("runcmd:", 1)[1]

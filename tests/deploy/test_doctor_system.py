"""``companion doctor``'s machine checks: groups for the devices, systemd unit states, the clock.
Each runs on planted state (a fake /dev, fake user tables, real-looking command output) and
once on this machine as it is."""

from __future__ import annotations

import calendar
import io
import os
import subprocess
import time
from pathlib import Path
from typing import Sequence

import pytest

from edge import doctor
from edge.config import Settings
from edge.doctor_system import (UNITS, Accounts, check_clock, check_groups, check_systemd, kernel_clock_synced,
                                parse_show)
from repo_paths import REPO

ROOT = REPO


# -- groups -------------------------------------------------------------------------------------


class TableAccounts(Accounts):
    """Planted user/group tables: name -> (uid, groups), and the groups of this login session."""

    def __init__(self, current: str, users: dict[str, tuple[int, set[str]]], session: set[str] | None = None):
        self.current, self.users = current, users
        self.session = users[current][1] if session is None else session

    def current_user(self) -> str:
        return self.current

    def uid(self, user: str) -> int | None:
        return self.users[user][0] if user in self.users else None

    def groups_of(self, user: str) -> set[str]:
        return self.users[user][1]

    def session_groups(self) -> set[str]:
        return self.session


@pytest.fixture
def dev(tmp_path) -> Path:
    """A /dev with a USB serial adapter, the Pi's serial0 link, a sound card and a camera."""
    root = tmp_path / "dev"
    root.mkdir()
    (root / "ttyUSB0").touch()
    (root / "ttyAMA0").touch()
    (root / "serial0").symlink_to("ttyAMA0")
    (root / "snd").mkdir()
    (root / "video0").touch()
    (root / "ttyS0").touch()  # every PC has one; nobody's servos are on it
    return root


def test_missing_groups_are_named_per_user_with_the_usermod_fix(dev):
    accounts = TableAccounts("pi", {"pi": (1000, {"pi", "audio"}),
                                    "companion": (999, {"companion", "dialout", "audio", "video"})})
    check = check_groups(Settings(), dev=dev, accounts=accounts)
    assert check.mark == "warn" and not check.required
    assert check.lines[0] == (f"devices: serial {dev}/serial0, {dev}/ttyAMA0, {dev}/ttyUSB0; sound {dev}/snd; "
                              f"video {dev}/video0")
    assert "pi: in audio, NOT in dialout, NOT in video" in check.lines
    assert "companion (the systemd units' user): in dialout, in audio, in video" in check.lines
    assert check.fix.startswith("`sudo usermod -aG dialout,video pi`; then log out and in again")
    assert "sudo systemctl restart companion.target" in check.fix and "companion`" not in check.fix


def test_only_groups_whose_devices_exist_are_asked_for(tmp_path):
    (tmp_path / "snd").mkdir()
    accounts = TableAccounts("pi", {"pi": (1000, {"pi", "audio"})})
    check = check_groups(Settings(), dev=tmp_path, accounts=accounts)
    assert check.ok and check.lines == [f"devices: sound {tmp_path}/snd", "pi: in audio"]
    assert check_groups(Settings(), dev=tmp_path / "empty", accounts=accounts).lines == [
        "no serial, sound or video devices here: no groups needed"]


def test_root_needs_no_groups_but_the_service_user_does(dev):
    alone = check_groups(Settings(), dev=dev, accounts=TableAccounts("root", {"root": (0, {"root"})}))
    assert alone.ok and "root: root needs no groups" in alone.lines
    accounts = TableAccounts("root", {"root": (0, {"root"}), "companion": (999, {"companion", "audio"})})
    check = check_groups(Settings(), dev=dev, accounts=accounts)
    assert not check.ok and "companion (the systemd units' user): in audio, NOT in dialout, NOT in video" in check.lines
    assert check.fix.startswith("`sudo usermod -aG dialout,video companion`")


def test_a_group_added_since_login_asks_for_a_new_login(dev):
    everything = {"pi", "dialout", "audio", "video"}
    accounts = TableAccounts("pi", {"pi": (1000, everything)}, session={"pi", "audio", "video"})
    check = check_groups(Settings(), dev=dev, accounts=accounts)
    assert not check.ok and "pi: in audio, in video, in dialout only after logging in again" in check.lines
    assert "usermod" not in check.fix and check.fix.startswith("log out and in again")


def test_groups_on_this_machine(dev):
    me = Accounts().current_user()
    for check in (check_groups(Settings()), check_groups(Settings(), dev=dev)):
        assert check.name == "groups" and not check.required and check.lines
        if check.lines[0].startswith("devices:"):
            mine = next(line for line in check.lines[1:] if line.startswith(f"{me}:"))
            assert (mine == f"{me}: root needs no groups") == (os.geteuid() == 0)


# -- systemd ------------------------------------------------------------------------------------


def _service(unit: str, active: str = "active", sub: str = "running", result: str = "success",
             restarts: int = 0, enabled: str = "enabled", load: str = "loaded") -> str:
    """One block as `systemctl show -p ...` prints it for a service: its own properties first."""
    return (f"Result={result}\nNRestarts={restarts}\nId={unit}\nLoadState={load}\nActiveState={active}\n"
            f"SubState={sub}\nUnitFileState={enabled}\n")


def _target(state: str = "active") -> str:
    return f"Id=companion.target\nLoadState=loaded\nActiveState={state}\nSubState={state}\nUnitFileState=enabled\n"


class FakeSystemctl:
    """Answers like systemctl; remembers every command it was given."""

    def __init__(self, stdout: str = "", stderr: str = "", returncode: int = 0, missing: bool = False):
        self.stdout, self.stderr, self.returncode, self.missing = stdout, stderr, returncode, missing
        self.calls: list[list[str]] = []

    def __call__(self, argv: Sequence[str]) -> subprocess.CompletedProcess:
        self.calls.append(list(argv))
        if self.missing:
            raise FileNotFoundError(2, "No such file or directory", argv[0])
        return subprocess.CompletedProcess(list(argv), self.returncode, self.stdout, self.stderr)


def _show(**blocks: str) -> str:
    """Blocks for every unit in UNITS order; units not given are not installed."""
    missing = lambda unit: _service(unit, active="inactive", sub="dead", enabled="", load="not-found")  # noqa: E731
    return "\n".join(blocks.get(u.split(".")[0].removeprefix("companion-"), missing(u)) for u in UNITS)


def test_healthy_units_are_listed_in_one_systemctl_call():
    units = {name: _service(f"companion-{name}.service") for name in ("registry", "broker", "body", "brain")}
    units["camera"] = _service("companion-camera.service", active="inactive", sub="dead", enabled="disabled")
    run = FakeSystemctl(_show(**units, companion=_target()))
    check = check_systemd(Settings(), run=run)
    assert run.calls == [["systemctl", "show", "-p", "Id,LoadState,UnitFileState,ActiveState,SubState,Result,NRestarts",
                          *UNITS]]
    assert check.ok and check.lines == [
        "companion-registry.service: active (running)", "companion-broker.service: active (running)",
        "companion-body.service: active (running)", "companion-brain.service: active (running)",
        "companion.target: active (active)", "installed, not enabled: companion-camera.service"]


def test_failed_and_restarting_units_fail_with_journalctl_and_reset_failed(monkeypatch):
    run = FakeSystemctl(_show(
        broker=_service("companion-broker.service"),
        body=_service("companion-body.service", active="failed", sub="failed", result="exit-code", restarts=10),
        brain=_service("companion-brain.service"),
        mic=_service("companion-mic.service", active="activating", sub="auto-restart", result="exit-code", restarts=3),
        companion=_target()))
    check = check_systemd(Settings(), run=run)
    assert check.mark == "FAIL"
    assert "companion-body.service: failed (failed), result exit-code, restarted 10 times <- FAILED" in check.lines
    assert ("companion-mic.service: activating (auto-restart), result exit-code, restarted 3 times "
            "<- restarting in a loop") in check.lines
    assert "`journalctl -u companion-body.service -e` and `journalctl -u companion-mic.service -e`" in check.fix
    assert "`sudo systemctl reset-failed companion-body.service companion-mic.service`" in check.fix
    buf = io.StringIO()
    monkeypatch.setattr(doctor, "CHECKS", [lambda settings: check_systemd(settings, run=run)])
    assert doctor.run_doctor(Settings(), buf) == 1
    assert buf.getvalue().startswith("[FAIL] systemd\n") and "       fix: see why with `journalctl" in buf.getvalue()


def test_without_systemd_as_pid_1_or_without_systemctl_the_check_passes():
    container = FakeSystemctl(returncode=1, stderr="System has not been booted with systemd as init system (PID 1). "
                                                   "Can't operate.\nFailed to connect to bus: Host is down\n")
    check = check_systemd(Settings(), run=container)
    assert check.ok and check.lines == ["systemd is not PID 1 here (a container, chroot or CI): unit states not checked"]
    assert check_systemd(Settings(), run=FakeSystemctl(missing=True)).lines == [
        "systemctl is not installed: unit states not checked"]
    assert check_systemd(Settings(), run=FakeSystemctl(_show())).lines == [
        "no companion units installed (deploy/install.sh installs them)"]
    odd = check_systemd(Settings(), run=FakeSystemctl(returncode=1, stderr="Access denied\n"))
    assert odd.mark == "warn" and odd.lines == ["systemctl show failed: Access denied"]


def test_parse_show_reads_blocks_and_values_with_equals_signs():
    assert parse_show("A=1\nB=x=y\n\n\nA=2\n") == [{"A": "1", "B": "x=y"}, {"A": "2"}]


def test_the_unit_list_matches_deploy_systemd():
    assert sorted(UNITS) == sorted(p.name for p in (ROOT / "deploy" / "systemd").iterdir()
                                   if p.suffix in (".service", ".target"))


def test_systemd_on_this_machine():
    check = check_systemd(Settings())
    assert check.name == "systemd" and check.lines
    if not Path("/run/systemd/system").exists():  # sd_booted(): systemd is not PID 1 (this project's CI)
        assert check.ok and ("not PID 1" in check.lines[0] or "not installed" in check.lines[0])


# -- clock --------------------------------------------------------------------------------------

NOW = float(calendar.timegm((2025, 6, 1, 12, 0, 0)))


def _timedatectl(answer: str) -> FakeSystemctl:
    return FakeSystemctl(stdout=answer + "\n")


def test_clock_synchronized_or_not_by_timedatectl():
    run = _timedatectl("yes")
    synced = check_clock(Settings(), run=run, now=lambda: NOW, kernel_synced=lambda: False)
    assert run.calls == [["timedatectl", "show", "-p", "NTPSynchronized", "--value"]]
    assert synced.ok and synced.lines == ["now: 2025-06-01 12:00:00 UTC", "synchronized with NTP (timedatectl)"]
    drifting = check_clock(Settings(), run=_timedatectl("no"), now=lambda: NOW, kernel_synced=lambda: True)
    assert drifting.mark == "warn" and "NOT synchronized with NTP (timedatectl)" in drifting.lines[1]
    assert drifting.fix.startswith("`sudo timedatectl set-ntp true` and check the network")


def test_clock_falls_back_to_the_kernel_when_timedatectl_is_absent_or_fails():
    absent = check_clock(Settings(), run=FakeSystemctl(missing=True), now=lambda: NOW, kernel_synced=lambda: None)
    assert absent.ok and absent.lines[1:] == ["timedatectl is not installed", "NTP synchronization unknown"]
    failing = FakeSystemctl(returncode=1, stderr="System has not been booted with systemd as init system (PID 1).\n")
    check = check_clock(Settings(), run=failing, now=lambda: NOW, kernel_synced=lambda: False)
    assert check.mark == "warn" and check.lines[1] == "timedatectl: System has not been booted with systemd as init " \
                                                      "system (PID 1)."
    assert "NOT synchronized with NTP (the kernel's adjtimex flag)" in check.lines[2] and "chrony" in check.fix
    assert check_clock(Settings(), run=failing, now=lambda: NOW, kernel_synced=lambda: True).ok


def test_a_clock_before_2024_fails_even_without_timedatectl():
    check = check_clock(Settings(), run=FakeSystemctl(missing=True), now=lambda: 86400.0, kernel_synced=lambda: None)
    assert check.mark == "FAIL" and check.lines[0] == "now: 1970-01-02 00:00:00 UTC"
    assert "the year 1970 is wrong" in check.lines[-1] and "sudo date -s" in check.fix


def test_clock_on_this_machine():
    assert kernel_clock_synced() in (True, False, None)
    check = check_clock(Settings())
    assert check.name == "clock" and check.lines[0].startswith(f"now: {time.gmtime().tm_year}-")
    assert check.mark != "FAIL"  # this machine's clock is past 2024


def test_run_doctor_runs_the_machine_checks():
    assert {check_groups, check_systemd, check_clock} <= set(doctor.CHECKS)

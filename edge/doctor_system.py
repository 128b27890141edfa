"""``companion doctor``'s checks of the machine around the nodes: the groups that open the
devices, the systemd units' states and the clock.

Each check reads the machine through arguments (a /dev root, the user and group tables, a
command runner, the time) so that tests can plant a machine's state; the defaults read this one.
"""

from __future__ import annotations

import ctypes
import grp
import os
import pwd
import subprocess
import time
from pathlib import Path
from typing import Callable, Sequence

from edge.config import Settings
from edge.doctor_check import Check
from edge.kinds import units

SERVICE_USER = "companion"  # User= of every unit in deploy/systemd

# group -> (what it opens, the device nodes under /dev that need it), as Debian's udev rules set them
DEVICE_GROUPS: dict[str, tuple[str, tuple[str, ...]]] = {
    "dialout": ("serial", ("ttyUSB*", "ttyACM*", "ttyAMA*", "ttyTHS*", "serial0")),
    "audio": ("sound", ("snd",)),
    "video": ("video", ("video*",)),
}

RESTART_UNITS = "`sudo systemctl restart companion.target`"


# -- group membership ---------------------------------------------------------------------------


def _group_name(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


class Accounts:
    """The user and group database (pwd/grp); a test subclasses it with its own tables."""

    def current_user(self) -> str:
        uid = os.geteuid()
        try:
            return pwd.getpwuid(uid).pw_name
        except KeyError:  # a container running as a uid without a passwd entry
            return str(uid)

    def uid(self, user: str) -> int | None:
        """The user's uid, or None when there is no such user."""
        try:
            return pwd.getpwnam(user).pw_uid
        except KeyError:
            return int(user) if user.isdigit() else None

    def groups_of(self, user: str) -> set[str]:
        """The groups a new login of ``user`` gets (its primary group included)."""
        try:
            entry = pwd.getpwnam(user)
        except KeyError:
            return set()
        return {_group_name(gid) for gid in os.getgrouplist(user, entry.pw_gid)}

    def session_groups(self) -> set[str]:
        """The groups this process has: fewer than ``groups_of`` until the user logs in again."""
        return {_group_name(gid) for gid in {os.getegid(), *os.getgroups()}}


def devices_needing_groups(dev: Path = Path("/dev")) -> dict[str, list[str]]:
    """Group -> the device nodes under ``dev`` it opens; groups without devices are left out."""
    found: dict[str, list[str]] = {}
    for group, (_, patterns) in DEVICE_GROUPS.items():
        paths = sorted({str(path) for pattern in patterns for path in dev.glob(pattern)})
        if paths:
            found[group] = paths
    return found


def check_groups(settings: Settings, dev: Path = Path("/dev"), accounts: Accounts | None = None) -> Check:
    """The nodes open serial ports, the sound card and cameras as their user (the one running
    ``companion run``, and ``companion`` under systemd): without the group, the port or
    device fails with "Permission denied" at start-up, which reads like a hardware fault."""
    accounts = accounts or Accounts()
    needed = devices_needing_groups(dev)
    if not needed:
        return Check("groups", True, ["no serial, sound or video devices here: no groups needed"], required=False)
    lines = ["devices: " + "; ".join(f"{DEVICE_GROUPS[g][0]} {', '.join(paths)}" for g, paths in needed.items())]
    me = accounts.current_user()
    users = [me] + ([SERVICE_USER] if SERVICE_USER != me and accounts.uid(SERVICE_USER) is not None else [])
    fixes: list[str] = []
    relogin = False
    for user in users:
        role = " (the systemd units' user)" if user == SERVICE_USER else ""
        if accounts.uid(user) == 0:
            lines.append(f"{user}{role}: root needs no groups")
            continue
        has = accounts.groups_of(user)
        missing = [g for g in needed if g not in has]
        stale = [g for g in needed if g in has and user == me and g not in accounts.session_groups()]
        lines.append(f"{user}{role}: " + ", ".join(
            [f"in {g}" for g in needed if g in has and g not in stale]
            + [f"NOT in {g}" for g in missing]
            + [f"in {g} only after logging in again" for g in stale]))
        if missing:
            fixes.append(f"`sudo usermod -aG {','.join(missing)} {user}`")
        relogin = relogin or bool(missing or stale)
    if not relogin:
        return Check("groups", True, lines, required=False)
    fix = (" and ".join(fixes) + "; then " if fixes else "") + \
        f"log out and in again (your shell) and {RESTART_UNITS} (the services)"
    return Check("groups", False, lines, fix=fix, required=False)


# -- systemd units ------------------------------------------------------------------------------

UNITS = tuple(f"companion-{unit}.service" for unit in units()) + ("companion.target",)
PROPERTIES = ("Id", "LoadState", "UnitFileState", "ActiveState", "SubState", "Result", "NRestarts")
# what systemctl says where systemd is not PID 1 (containers, CI) or in a chroot (an image build)
NOT_BOOTED = ("has not been booted with systemd", "Failed to connect to bus", "Running in chroot")

Runner = Callable[[Sequence[str]], "subprocess.CompletedProcess[str]"]


def run_command(argv: Sequence[str], timeout: float = 10.0) -> "subprocess.CompletedProcess[str]":
    """Run a command, capturing its text; FileNotFoundError when it is not installed."""
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, check=False)


def parse_show(text: str) -> list[dict[str, str]]:
    """``systemctl show`` output: one block of KEY=value lines per unit, blocks separated by a blank line."""
    blocks: list[dict[str, str]] = [{}]
    for line in text.splitlines():
        if not line.strip():
            if blocks[-1]:
                blocks.append({})
            continue
        key, _, value = line.partition("=")
        blocks[-1][key] = value
    return [b for b in blocks if b]


def _unit_problem(unit: dict[str, str]) -> str | None:
    if unit.get("ActiveState") == "failed":
        return "FAILED"
    if unit.get("ActiveState") == "activating" and unit.get("SubState", "").startswith("auto-restart"):
        return "restarting in a loop"
    return None


def _unit_line(unit: dict[str, str]) -> str:
    text = f"{unit.get('Id', '?')}: {unit.get('ActiveState', '?')} ({unit.get('SubState', '?')})"
    if unit.get("Result") not in (None, "", "success"):
        text += f", result {unit['Result']}"
    if unit.get("NRestarts", "0") not in ("", "0"):
        text += f", restarted {unit['NRestarts']} times"
    if unit.get("UnitFileState") not in ("enabled", "enabled-runtime"):
        text += f", {unit.get('UnitFileState') or 'not enabled'}"
    problem = _unit_problem(unit)
    return text + (f" <- {problem}" if problem else "")


def check_systemd(settings: Settings, run: Runner = run_command) -> Check:
    """On a device every node is a systemd unit: a unit that failed or restarts in a loop is a
    node that is not there, although each check above may pass when run by hand."""
    try:
        proc = run(["systemctl", "show", "-p", ",".join(PROPERTIES), *UNITS])
    except FileNotFoundError:
        return Check("systemd", True, ["systemctl is not installed: unit states not checked"], required=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return Check("systemd", False, [f"systemctl show failed: {exc}"], required=False)
    said = f"{proc.stdout}\n{proc.stderr}"
    if any(marker in said for marker in NOT_BOOTED):
        return Check("systemd", True, ["systemd is not PID 1 here (a container, chroot or CI): "
                                       "unit states not checked"], required=False)
    if proc.returncode != 0:
        first = (proc.stderr.strip() or proc.stdout.strip() or f"exit status {proc.returncode}").splitlines()[0]
        return Check("systemd", False, [f"systemctl show failed: {first}"], required=False)
    installed = [u for u in parse_show(proc.stdout) if u.get("LoadState", "not-found") != "not-found"]
    if not installed:
        return Check("systemd", True, ["no companion units installed (deploy/install.sh installs them)"])
    shown = [u for u in installed if u.get("UnitFileState") in ("enabled", "enabled-runtime") or _unit_problem(u)]
    lines = [_unit_line(u) for u in shown]
    idle = [u["Id"] for u in installed if u not in shown]
    if idle:
        lines.append("installed, not enabled: " + ", ".join(idle))
    bad = [u["Id"] for u in shown if _unit_problem(u)]
    if not bad:
        return Check("systemd", True, lines or ["no companion unit is enabled"])
    why = " and ".join(f"`journalctl -u {unit} -e`" for unit in bad)
    fix = f"see why with {why}; after fixing it, `sudo systemctl reset-failed {' '.join(bad)}` and {RESTART_UNITS}"
    return Check("systemd", False, lines, fix=fix)


# -- clock --------------------------------------------------------------------------------------

EARLIEST_YEAR = 2024  # older than this code: the clock was never set
TIME_ERROR = 5        # adjtimex(2): the kernel's clock is not synchronized


def kernel_clock_synced() -> bool | None:
    """The kernel's own NTP flag (adjtimex, read only), which NTP daemons clear; None off Linux."""
    try:
        adjtimex = ctypes.CDLL(None, use_errno=True).adjtimex
    except (OSError, AttributeError):
        return None
    timex = ctypes.create_string_buffer(512)  # struct timex is 208 bytes on 64-bit; modes 0 = read
    state = adjtimex(timex)
    return None if state < 0 else state != TIME_ERROR


def ntp_synchronized(run: Runner = run_command) -> tuple[bool | None, str]:
    """timedatectl's answer; else None and why there is none (absent, or systemd is not running)."""
    try:
        proc = run(["timedatectl", "show", "-p", "NTPSynchronized", "--value"])
    except FileNotFoundError:
        return None, "timedatectl is not installed"
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"timedatectl failed: {exc}"
    answer = proc.stdout.strip()
    if proc.returncode == 0 and answer in ("yes", "no"):
        return answer == "yes", "timedatectl"
    said = (proc.stderr.strip() or answer or f"exit status {proc.returncode}").splitlines()[0]
    return None, f"timedatectl: {said}"


def check_clock(settings: Settings, run: Runner = run_command, now: Callable[[], float] = time.time,
                kernel_synced: Callable[[], bool | None] = kernel_clock_synced) -> Check:
    """A Pi has no real-time clock: until NTP sets it, TLS to a remote LLM API fails on
    certificate dates and the logs carry wrong times."""
    utc = time.gmtime(now())
    lines = [f"now: {time.strftime('%Y-%m-%d %H:%M:%S', utc)} UTC"]
    synced, source = ntp_synchronized(run)
    fix = "`sudo timedatectl set-ntp true` and check the network (`timedatectl timesync-status`)"
    if synced is None:
        lines.append(source)
        fix = ("start an NTP client (`sudo timedatectl set-ntp true` where systemd runs, else chrony or ntpd) "
               "and check the network; in a container, the host's clock is the one to fix")
        synced, source = kernel_synced(), "the kernel's adjtimex flag"
    if utc.tm_year < EARLIEST_YEAR:
        lines.append(f"the year {utc.tm_year} is wrong: the clock was never set, so TLS certificates look invalid")
        return Check("clock", False, lines, fix=fix + "; or set it by hand: `sudo date -s 'YYYY-MM-DD HH:MM'`")
    if synced is None:
        return Check("clock", True, lines + ["NTP synchronization unknown"], required=False)
    if synced:
        return Check("clock", True, lines + [f"synchronized with NTP ({source})"], required=False)
    lines.append(f"NOT synchronized with NTP ({source}): a Pi has no real-time clock, so TLS to remote LLM APIs "
                 "and log times depend on it")
    return Check("clock", False, lines, fix=fix, required=False)

"""The LAN broker's accounts, one per node, and the ACL that limits each (install.sh --lan).

Why it needs the node ids: mosquitto's wildcards match whole topic levels, so an ACL can keep
a node to its own ``status/<node id>`` only by naming that id, and an account can own a client
id only if the account is named after it. A unit's node id follows from its command line (its
``ExecStart=``, with the unit's ``Environment=`` defaults and companion.env over them, as
systemd runs it) and from robot.toml, computed here the way the node computes it at start;
the account name is the node's client id (``edge.runtime.bus.client_id_for``).

Run with the installed venv's Python (it imports ``edge``). Prints one line per account:
``ACCOUNT<TAB>CREDENTIAL FILE NAME<TAB>KIND<TAB>NODE ID`` (``!<TAB>PROBLEM`` for a unit left
without one) and writes the rendered ACL.
Exit status 2 with a message on stderr for bad input (a missing template, an unknown unit).
"""

from __future__ import annotations

import argparse
import re
import shlex
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from edge.runtime.bus import client_id_for

NODE_UNITS = ("registry", "body", "brain", "camera", "mic", "gateway", "mcp")
TOOLS = ("estop", "observer")   # accounts for things outside the robot's units (a panel, a dashboard)
ETC = "/etc/companion"


class AccountError(ValueError):
    """Bad input: the message names the file or unit."""


@dataclass(frozen=True)
class Account:
    name: str    # the user name, which the broker also makes the client id
    file: str    # /etc/companion/mqtt/<file>.env holds its password
    kind: str    # the kind lines of acl.template it gets
    node: str    # its node id (status/<node>); a tool's own name


def env_file(path: Path) -> dict[str, str]:
    """``KEY=value`` lines as systemd's EnvironmentFile= reads them (comments skipped)."""
    values: dict[str, str] = {}
    if not path.is_file():
        return values
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")) or "=" not in line:
            continue
        key, value = line.split("=", 1)
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        values[key.strip()] = value
    return values


def unit_command(unit_file: Path, overrides: dict[str, str]) -> list[str]:
    """The unit's ExecStart= as argv: ``${VAR}`` is one word, ``$VAR`` splits on spaces."""
    env: dict[str, str] = {}
    command = ""
    for line in unit_file.read_text(encoding="utf-8").splitlines():
        if line.startswith("Environment="):
            for item in shlex.split(line.split("=", 1)[1]):
                key, _, value = item.partition("=")
                env[key] = value
        elif line.startswith("ExecStart="):
            command = line.split("=", 1)[1]
    env.update(overrides)
    command = re.sub(r"\$\{(\w+)\}", lambda m: shlex.quote(env.get(m.group(1), "")), command)
    command = re.sub(r"\$(\w+)", lambda m: env.get(m.group(1), ""), command)
    return shlex.split(command)


def flag(argv: list[str], name: str) -> str | None:
    """The value of ``--name VALUE`` or ``--name=VALUE``; the last one wins, as in argparse."""
    found = None
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            found = argv[i + 1]
        elif arg.startswith(name + "="):
            found = arg.split("=", 1)[1]
    return found


def companion_id(path: Path) -> str:
    """The id the brain and MCP nodes take from a companion file (read as they read it)."""
    from edge.protocol.companion import load_companion
    try:
        return load_companion(path).id
    except Exception as exc:  # CompanionError, OSError: the unit's own check names it too
        raise AccountError(f"{path}: {exc}") from None


def brain_nodes(robot: Path) -> list[str]:
    """brain-<companion id> for each companion file robot.toml's [brain] names."""
    try:
        data = tomllib.loads(robot.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise AccountError(f"{robot}: cannot read [brain] companions ({exc})") from None
    paths = data.get("brain", {}).get("companions")
    if not paths:
        from edge.config import Settings
        files = Settings().companions
    else:
        files = [robot.parent / str(p) for p in paths]
    return [f"brain-{companion_id(f)}" for f in files]


def node_ids(unit: str, argv: list[str], root: Path) -> list[str]:
    """The node id(s) ``companion run UNIT`` takes with this command line."""
    given = flag(argv, "--node-id")
    if unit == "brain":
        return brain_nodes(root / ETC.lstrip("/") / "robot.toml")
    if given:
        return [given]
    if unit in ("registry", "body"):
        return [unit]
    if unit == "camera":
        from edge.perception.camera.node import default_node_id as camera_id
        return [camera_id(flag(argv, "--source") or "0")]
    if unit == "mic":
        from edge.perception.microphone.node import default_node_id as mic_id
        return [mic_id(flag(argv, "--source"))]
    if unit == "gateway":
        from edge.services.gateway import GatewayConfig
        return [f"gateway-{flag(argv, '--port') or GatewayConfig().port}"]
    if unit == "mcp":
        companion = flag(argv, "--companion") or ""
        path = root / companion.lstrip("/") if companion.startswith("/") else Path(companion)
        return [f"mcp-{companion_id(path)}"]
    raise AccountError(f"unknown unit {unit!r}: one of {', '.join(NODE_UNITS)}")


def accounts(units: list[str], units_dir: Path, root: Path, namespace: str | None,
             problems: list[str]) -> list[Account]:
    """Every unit's node accounts (a brain has one per companion), then the tools'. A unit whose
    node id cannot be known (a missing companion file) gets none: it is named in ``problems``
    and its node is refused by the broker until a rerun after the fix."""
    etc = root / ETC.lstrip("/")
    shared = env_file(etc / "companion.env")
    found: list[Account] = []
    for unit in units:
        unit_file = units_dir / f"companion-{unit}.service"
        if unit not in NODE_UNITS or not unit_file.is_file():
            raise AccountError(f"unknown unit {unit!r}: one of {', '.join(NODE_UNITS)}")
        argv = unit_command(unit_file, shared)
        kind = "camera-track" if unit == "camera" and "--track" in argv else unit
        try:
            nodes = node_ids(unit, argv, root)
        except AccountError as exc:
            problems.append(f"{unit}: no broker account: {exc}")
            continue
        found += [Account(client_id_for(node, namespace), unit, kind, node) for node in nodes]
    found += [Account(client_id_for(tool, namespace), tool, tool, tool) for tool in TOOLS]
    names = [a.name for a in found]
    twins = sorted({n for n in names if names.count(n) > 1})
    if twins:
        raise AccountError(f"two units would run the node(s) {', '.join(twins)}: give one a --node-id")
    return found


def kind_blocks(template: str) -> dict[str, list[str]]:
    """acl.template's ``kind NAME`` sections: kind -> its topic lines."""
    blocks: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in template.splitlines():
        if line.startswith("kind "):
            current = blocks.setdefault(line.split()[1], [])
        elif line.strip() and not line.startswith("#") and current is not None:
            current.append(line.strip())
    return blocks


def render_acl(template: str, found: list[Account], namespace: str | None) -> str:
    blocks = kind_blocks(template)
    prefix = f"{namespace}/" if namespace else ""
    out = ["# Rendered by install.sh from deploy/mosquitto/acl.template: one section per account.",
           "# Edit the template and rerun install.sh --lan; changes here are overwritten.", ""]
    for account in found:
        kinds = ["camera", "camera-track"] if account.kind == "camera-track" else [account.kind]
        missing = [k for k in kinds if k not in blocks]
        if missing:
            raise AccountError(f"acl.template has no `kind {missing[0]}` section")
        out.append(f"# {account.file}: node {account.node}" if account.file in NODE_UNITS else f"# {account.file}")
        out.append(f"user {account.name}")
        out += [line.replace("@NS@", prefix).replace("@NODE@", account.node) for k in kinds for line in blocks[k]]
        out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path("/"), help="where /etc/companion is (install.sh --root)")
    parser.add_argument("--units-dir", type=Path, required=True, help="deploy/systemd")
    parser.add_argument("--template", type=Path, required=True, help="deploy/mosquitto/acl.template")
    parser.add_argument("--acl", type=Path, required=True, help="write the rendered ACL here")
    parser.add_argument("--namespace", default="", help="robot.toml [broker] namespace")
    parser.add_argument("units", nargs="+", help="the units installed (registry body brain ...); broker is skipped")
    args = parser.parse_args(argv)
    try:
        template = args.template.read_text(encoding="utf-8")
        problems: list[str] = []
        found = accounts([u for u in args.units if u != "broker"], args.units_dir, args.root,
                         args.namespace or None, problems)
        args.acl.write_text(render_acl(template, found, args.namespace or None), encoding="utf-8")
    except (AccountError, OSError) as exc:
        print(f"broker accounts: {exc}", file=sys.stderr)
        return 2
    for problem in problems:
        print(f"!\t{problem}")
    for account in found:
        print(f"{account.name}\t{account.file}\t{account.kind}\t{account.node}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

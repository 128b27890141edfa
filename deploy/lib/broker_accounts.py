"""The LAN broker's accounts, one per node, and the ACL that limits each (install.sh --lan).

Why it needs the node ids: mosquitto's wildcards match whole topic levels, so an ACL can keep
a node to its own ``status/<node id>`` only by naming that id, and an account can own a client
id only if the account is named after it. A unit's node id follows from its command line (its
``ExecStart=``, as systemd runs it) and the robot.toml it names, read through the CLI's own
settings path and computed the way the node computes it at start; the account name is the
node's client id (``edge.runtime.bus.client_id_for``).

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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edge.kinds import BY_NAME, KINDS
from edge.kinds_cli import acl_blocks
from edge.runtime.bus import client_id_for

NODE_UNITS = tuple(k.name for k in KINDS)   # a unit per node kind (edge/kinds.py)
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
    variants: tuple[str, ...] = ()   # the kind's variants its command line chose (camera --track: track)


def env_file(path: Path) -> dict[str, str]:
    """``KEY=value`` lines as systemd's EnvironmentFile= reads them; none when the file is missing."""
    from edge.environment import env_file_values
    return env_file_values(path.read_text(encoding="utf-8")) if path.is_file() else {}


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


def unit_settings(argv: list[str], root: Path) -> Any:
    """The settings ``companion run`` takes from this command line, through the CLI's own path:
    its flags over the robot.toml it names (read under ``root``)."""
    from edge.cli import build_parser, settings_from
    from edge.config import ConfigError
    try:
        args = build_parser().parse_args(argv[1:])
    except SystemExit:
        raise AccountError(f"`{shlex.join(argv)}` is not a command companion takes") from None
    if args.config is not None:
        args.config = on_root(args.config, root)
    try:
        return settings_from(args)
    except (ConfigError, ValueError) as exc:
        raise AccountError(str(exc)) from None


def on_root(path: Path | str, root: Path) -> Path:
    """An absolute path as the staged tree under ``root`` has it."""
    path = Path(path)
    return root / str(path).lstrip("/") if path.is_absolute() and not path.is_relative_to(root) else path


def companion_id(path: Path) -> str:
    """The id the brain and MCP nodes take from a companion file (read as they read it)."""
    from edge.protocol.companion import load_companion
    try:
        return load_companion(path).id
    except Exception as exc:  # CompanionError, OSError: the unit's own check names it too
        raise AccountError(f"{path}: {exc}") from None


def node_ids(unit: str, settings: Any, root: Path) -> list[str]:
    """The node id(s) ``companion run UNIT`` takes with these settings."""
    if unit == "brain":
        return [f"brain-{companion_id(on_root(p, root))}" for p in settings.companions]
    if unit == "registry":
        return ["registry"]
    if unit == "body":
        return [settings.body_id or "body"]
    section = settings.section(unit)
    if section.node_id:
        return [section.node_id]
    if unit == "camera":
        from edge.perception.camera.node import default_node_id as camera_id
        if section.source is None:
            raise AccountError("robot.toml has no [camera] source")
        return [camera_id(section.source)]
    if unit == "mic":
        from edge.perception.microphone.node import default_node_id as mic_id
        return [mic_id(section.source)]
    if unit == "gateway":
        from edge.services.gateway import GatewayConfig
        return [f"gateway-{section.port if section.port is not None else GatewayConfig().port}"]
    if unit == "mcp":
        if section.companion is None and len(settings.companions) != 1:
            raise AccountError("robot.toml has no [mcp] companion")
        return [f"mcp-{companion_id(on_root(section.companion or settings.companions[0], root))}"]
    if unit in BY_NAME and "<" not in BY_NAME[unit].default_id:   # a kind whose id is fixed
        return [BY_NAME[unit].default_id]
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
        try:
            settings = unit_settings(argv, root)
            nodes = node_ids(unit, settings, root)
        except AccountError as exc:
            problems.append(f"{unit}: no broker account: {exc}")
            continue
        row = BY_NAME[unit]   # a variant (camera track) is chosen by its key in the kind's section
        variants = tuple(v.name for v in row.variants if getattr(settings.section(unit), v.name, False))
        kind = "-".join([unit, *variants])
        found += [Account(client_id_for(node, namespace), unit, kind, node, variants) for node in nodes]
    found += [Account(client_id_for(tool, namespace), tool, tool, tool) for tool in TOOLS]
    names = [a.name for a in found]
    twins = sorted({n for n in names if names.count(n) > 1})
    if twins:
        raise AccountError(f"two units would run the node(s) {', '.join(twins)}: give one a --node-id")
    return found


def kind_blocks(template: str) -> dict[str, list[str]]:
    """kind -> its topic lines: each node kind's made from its topics in edge/kinds.py, with what a
    ``kind NAME`` section of acl.template adds to them; the accounts that are not nodes (estop,
    observer) from the template alone."""
    blocks: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in template.splitlines():
        if line.startswith("kind "):
            current = blocks.setdefault(line.split()[1], [])
        elif line.strip() and not line.startswith("#") and current is not None:
            current.append(line.strip())
    made = acl_blocks()
    return {**blocks, **{kind: lines + blocks.get(kind, []) for kind, lines in made.items()}}


def render_acl(template: str, found: list[Account], namespace: str | None) -> str:
    blocks = kind_blocks(template)
    prefix = f"{namespace}/" if namespace else ""
    out = ["# Rendered by install.sh from each node kind's topics (edge/kinds.py) and deploy/mosquitto/acl.template:",
           "# one section per account. Edit those and rerun install.sh --lan; changes here are overwritten.", ""]
    for account in found:
        base = account.file if account.file in NODE_UNITS else account.kind
        kinds = [base, *(f"{base}-{v}" for v in account.variants)]   # camera-track: camera's lines, then track's
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

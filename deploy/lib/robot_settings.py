"""Give robot.toml the settings older installs kept in companion.env (install.sh, step 6).

Until this version the camera, mic, gateway, registry and MCP units built flags from
companion.env variables (``--source ${COMPANION_CAMERA_SOURCE}`` ...), and a flag wins over
robot.toml, so robot.toml's ``[camera] source`` never took effect on a device. The units now
pass only ``--config /etc/companion/robot.toml``; this script writes into robot.toml what the
old unit line passed, so an upgraded robot keeps doing what it did:

- a variable set in companion.env: its value (what ran) goes over robot.toml's key, and its
  line in companion.env is commented out with a note saying where it went;
- the HTTP services' COMPANION_ALLOWED_HOSTS, _ALLOWED_ORIGINS and COMPANION_TOKEN_ON_LOOPBACK
  (still honoured, with a warning) likewise go to each installed service's section;
- a unit's own old default, where the node has none (the camera's source 0, the microphone's
  ``default``, the registry's folder, the MCP server's companion): only when robot.toml lacks it.

Run with the installed venv's Python (it checks the result with ``edge.config``, as the node
will read it). Writes the new robot.toml and companion.env to ``--robot-out``/``--env-out``
(the same text when nothing moved) and prints one ``info|warn<TAB>message`` line per change.
A value that is no good setting stays in companion.env, and a robot.toml with a mistake of its
own is left as it was (step 9 names the mistake for each unit it keeps off): each is a ``warn``
line naming the file and key. Exit status 2 only when a file cannot be read or written.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

from edge.config import NODE_SECTIONS, ConfigError
from edge.config_fields import read_section, settings_of
from edge.environment import LEGACY_UNIT_VARIABLES, SERVICE_ACCESS_VARIABLES, TRUE_WORDS, env_file_values

# What the old units passed when companion.env said nothing, for keys the node has no default of
# its own for (the other old defaults - detector haar,hog, host 127.0.0.1, the ports - are the
# sections' own defaults). Paths are relative to robot.toml, in /etc/companion.
UNIT_DEFAULTS: dict[str, dict[str, str]] = {
    "camera": {"source": "0"},
    "mic": {"source": "default"},
    "registry": {"folder": "companions"},
    "mcp": {"companion": "companions/pip.json"},
}
ETC = "/etc/companion/"


def flag_texts(kind: str, argv: list[str]) -> tuple[dict[str, str | bool], list[str]]:
    """The section keys a unit's old flags set, as the text typed (``True`` for a switch), and
    the words that are no setting of the kind."""
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    for field in settings_of(NODE_SECTIONS[kind]):
        flags = field.metadata["flag"]
        if flags is None:
            continue
        if field.metadata["kind"] is bool:
            parser.add_argument(*flags, dest=field.name, action="store_true", default=None)
        else:
            parser.add_argument(*flags, dest=field.name, default=None)
    known, unknown = parser.parse_known_args(argv)
    return {k: v for k, v in vars(known).items() if v is not None}, unknown


def toml_value(kind: str, key: str, text: str | bool) -> str:
    """The flag's text as robot.toml writes it: read back, it passes the same check the flag did."""
    field = next(f for f in settings_of(NODE_SECTIONS[kind]) if f.name == key)
    kinds = field.metadata["kind"] if isinstance(field.metadata["kind"], tuple) else (field.metadata["kind"],)
    if text is True:
        return "true"
    assert isinstance(text, str)
    if field.metadata["path"] and text.startswith(ETC):
        text = text[len(ETC):]          # beside robot.toml, wherever install.sh --root stages it
    if str in kinds:
        return json.dumps(text, ensure_ascii=False)
    number = float(text) if float in kinds and not re.fullmatch(r"[+-]?\d+", text.strip()) else int(text)
    return repr(number)


def set_keys(text: str, section: str, values: dict[str, str]) -> str:
    """``text`` with each ``key = value`` in ``[section]``: replaced where the key is, added after
    the section's last setting where it is not, the section appended where there is none."""
    lines = text.splitlines()
    header = re.compile(r"\s*\[\s*" + re.escape(section) + r"\s*\]\s*(#.*)?$")
    start = next((i for i, line in enumerate(lines) if header.match(line)), None)
    if start is None:
        return "\n".join([*lines, "", f"[{section}]", *(f"{k} = {v}" for k, v in values.items())]) + "\n"
    end = next((i for i in range(start + 1, len(lines)) if lines[i].lstrip().startswith("[")), len(lines))
    for key, value in values.items():
        key_line = re.compile(r"\s*" + re.escape(key) + r"\s*=")
        hit = next((i for i in range(start + 1, end) if key_line.match(lines[i])), None)
        if hit is not None:
            lines[hit] = f"{key} = {value}"
            continue
        last = max((i for i in range(start, end) if lines[i].strip() and not lines[i].lstrip().startswith("#")),
                   default=start)
        lines.insert(last + 1, f"{key} = {value}")
        end += 1
    return "\n".join(lines) + "\n"


def section_keys(robot_text: str, kind: str) -> set[str]:
    table = tomllib.loads(robot_text).get(kind, {})
    return set(table) if isinstance(table, dict) else set()


def migrate(robot_text: str, env_text: str, units: list[str]) -> tuple[str, str, list[tuple[str, str]]]:
    """New robot.toml and companion.env texts, and what was done (``(info|warn, message)``).
    A variable whose value is no good setting stays in companion.env, named in a warning."""
    env = env_file_values(env_text)
    notes: list[tuple[str, str]] = []
    moved: dict[str, str] = {}       # variable -> where it went
    for kind in (k for k in ("registry", "mcp", "gateway", "camera", "mic") if k in units):
        present = section_keys(robot_text, kind)
        values: dict[str, str] = {}
        for variable, texts, where in _old_settings(kind, env, notes):
            try:
                values.update(_checked(kind, texts, variable))
            except ConfigError as exc:
                notes.append(("warn", f"{exc}: left in companion.env, and nothing reads it now; fix it, or set "
                                      f"the key in robot.toml (docs/configuration.md)"))
                continue
            moved[variable] = where
        for key, text in UNIT_DEFAULTS.get(kind, {}).items():
            if key not in present and key not in values:
                values[key] = toml_value(kind, key, text)
        if values:
            robot_text = set_keys(robot_text, kind, values)
            notes.append(("info", f"robot.toml [{kind}]: " + ", ".join(f"{k} = {v}" for k, v in values.items())))
    for variable, where in moved.items():
        notes.append(("info", f"moved {variable} from companion.env to {where}"))
    if moved:
        env_text = "\n".join(f"# moved to {moved[name]} by install.sh: {line}" if (name := _name(line)) in moved
                             else line for line in env_text.splitlines()) + "\n"
    return robot_text, env_text, notes


def _old_settings(kind: str, env: dict[str, str],
                  notes: list[tuple[str, str]]) -> Iterator[tuple[str, dict[str, str | bool], str]]:
    """(variable, {key: flag text}, where it goes) for each old variable companion.env sets for ``kind``."""
    for variable, (owner, key) in LEGACY_UNIT_VARIABLES.items():
        text = env.get(variable, "").strip()
        if owner != kind or not text:
            continue
        texts, unknown = ({key: text}, []) if key else flag_texts(kind, text.split())
        if unknown:
            notes.append(("warn", f"companion.env: {variable} has {' '.join(unknown)}, which is no [{kind}] "
                                  f"setting: left there, and the unit no longer passes it (docs/configuration.md)"))
            continue
        yield variable, texts, f"robot.toml [{kind}] {', '.join(texts)}"
    for variable, key in SERVICE_ACCESS_VARIABLES.items():   # each HTTP service read these
        text = env.get(variable, "").strip()
        if kind in ("camera", "mic") or not text:
            continue
        if key != "token_on_loopback":
            yield variable, {key: text}, f"robot.toml {key} of each HTTP service"
        else:
            yield variable, ({key: True} if text.lower() in TRUE_WORDS else {}), f"robot.toml {key} of each HTTP service"


def _checked(kind: str, texts: dict[str, str | bool], variable: str) -> dict[str, str]:
    """The keys as robot.toml lines, after the check the node will make (ConfigError naming the variable)."""
    try:
        values = {key: toml_value(kind, key, text) for key, text in texts.items()}
    except ValueError:
        raise ConfigError(f"companion.env: {variable}: {', '.join(map(str, texts.values()))} is not a "
                          f"number") from None
    table = tomllib.loads("".join(f"{key} = {value}\n" for key, value in values.items()))
    read_section(NODE_SECTIONS[kind], table, kind, Path(f"companion.env: {variable}"))
    return values


def _name(line: str) -> str:
    text = line.strip()
    return "" if text.startswith(("#", ";")) or "=" not in text else text.partition("=")[0].strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robot", type=Path, required=True, help="the robot.toml in place")
    parser.add_argument("--env", type=Path, required=True, help="companion.env (may be missing)")
    parser.add_argument("--robot-out", type=Path, required=True)
    parser.add_argument("--env-out", type=Path, required=True)
    parser.add_argument("units", nargs="*", help="the units being installed")
    args = parser.parse_args(argv)
    try:
        robot = args.robot.read_text(encoding="utf-8")
        env = args.env.read_text(encoding="utf-8") if args.env.is_file() else ""
        try:
            _check(robot, args.robot)    # the user's own mistakes: step 9 names them for each unit it keeps off
            new_robot, new_env, notes = migrate(robot, env, args.units)
        except ConfigError as exc:
            new_robot, new_env, notes = robot, env, [("warn", f"{exc}: robot.toml and companion.env left as they "
                                                              f"were; fix it and rerun")]
        args.robot_out.write_text(new_robot, encoding="utf-8")
        args.env_out.write_text(new_env, encoding="utf-8")
    except OSError as exc:
        print(f"robot settings: {exc}", file=sys.stderr)
        return 2
    for level, message in notes:
        print(f"{level}\t{message}")
    return 0


def _check(text: str, named: Path) -> None:
    """Every node section of the new robot.toml passes the checks the node will make."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{named}: not valid TOML: {exc}") from None
    for kind, cls in NODE_SECTIONS.items():
        if kind in data:
            read_section(cls, data[kind], kind, named)


if __name__ == "__main__":
    sys.exit(main())

"""One declaration per setting: its ``robot.toml`` key, its type and check, and its command-line flag.

A node kind's section is a dataclass whose fields are made with ``setting``. From that one
declaration come the keys ``[section]`` accepts (anything else is an error naming the file and
the key), the check of each value (the same function argparse uses for the flag, so a file and
a flag are refused with the same sentence), and the flag of ``companion run KIND`` (``--size``,
``--port`` ...), whose value, when given, wins over the file's.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from edge.config_error import ConfigError

T = TypeVar("T")
Kind = type | tuple[type, ...]


def setting(default: Any = None, *, kind: Kind = str, flag: str | tuple[str, ...] | None = None, help: str = "",
            parse: Callable[[str], Any] | None = None, path: bool = False, metavar: str | None = None) -> Any:
    """A field of a section: ``kind`` the TOML types accepted (``bool`` for a switch), ``parse`` the
    check turning text into the value (argparse's ``type``; also run on the file's value), ``path``
    a file name resolved against robot.toml's folder, ``flag`` its command-line option."""
    meta = {"kind": kind, "flag": (flag,) if isinstance(flag, str) else flag, "help": help, "parse": parse,
            "path": path, "metavar": metavar}
    if isinstance(default, (list, dict)):
        return dataclasses.field(default_factory=lambda: type(default)(default), metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def settings_of(cls: type) -> list[dataclasses.Field[Any]]:
    return [f for f in dataclasses.fields(cls) if "kind" in f.metadata]


def read_section(cls: type[T], table: Any, name: str, source: Path) -> T:
    """``[name]`` of robot.toml as ``cls``; ConfigError naming ``source`` and ``name.key`` for a mistake."""
    if not isinstance(table, dict):
        raise ConfigError(f"{source}: {name} must be a [section]")
    known = {f.name: f for f in settings_of(cls)}
    values: dict[str, Any] = {}
    for key, value in table.items():
        field = known.get(key)
        if field is None:
            raise ConfigError(f"{source}: unknown key {name}.{key} (known: {', '.join(known)})")
        values[key] = check_value(field, value, f"{name}.{key}", source)
    return cls(**values)


def check_value(field: dataclasses.Field[Any], value: Any, where: str, source: Path) -> Any:
    kind, parse = field.metadata["kind"], field.metadata["parse"]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
        raise ConfigError(f"{source}: {where} has the wrong type ({type(value).__name__}; "
                          f"expected {' or '.join(k.__name__ for k in kinds)})")
    if parse is not None and not isinstance(value, bool):
        try:
            value = parse(str(value))
        except (argparse.ArgumentTypeError, ValueError) as exc:
            raise ConfigError(f"{source}: {where}: {exc}") from None
    if field.metadata["path"]:
        value = str((source.parent / str(value)).resolve())
    return value


def add_flags(parser: argparse.ArgumentParser | Any, sections: Iterable[tuple[str, type]]) -> None:
    """Every section's flags on one parser (``companion run`` takes any kind's); a flag two kinds
    share (``--source``, ``--port``) is added once, its help naming each kind. An absent flag is
    None, so only what was typed overrides the file."""
    merged: dict[tuple[str, ...], tuple[dataclasses.Field[Any], dict[str, list[str]]]] = {}   # help -> kinds
    for name, cls in sections:
        for field in settings_of(cls):
            flag = field.metadata["flag"]
            if flag is None:
                continue
            if flag in merged:
                if merged[flag][0].name != field.name:
                    raise ValueError(f"{flag} stands for {merged[flag][0].name} and {field.name}")
            else:
                merged[flag] = (field, {})
            merged[flag][1].setdefault(field.metadata["help"], []).append(name)
    for flags, (field, helps) in merged.items():
        meta = field.metadata
        text = "; ".join(f"{', '.join(kinds)}: {help}" for help, kinds in helps.items())
        if meta["kind"] is bool:
            parser.add_argument(*flags, dest=field.name, action="store_true", default=None, help=text)
        else:
            parser.add_argument(*flags, dest=field.name, type=meta["parse"] or _text(meta["kind"]), default=None,
                                metavar=meta["metavar"], help=text)


def overlay(section: T, args: argparse.Namespace | None) -> T:
    """``section`` with every flag that was given on the command line put over it."""
    if args is None:
        return section
    given = {f.name: getattr(args, f.name) for f in settings_of(type(section))
             if f.metadata["flag"] is not None and getattr(args, f.name, None) is not None}
    return dataclasses.replace(section, **given) if given else section  # type: ignore[type-var]


def _text(kind: Kind) -> Callable[[str], Any]:
    """argparse's ``type`` for a plain field: text when text is accepted, else the first type."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return str if str in kinds else kinds[0]

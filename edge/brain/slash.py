"""Slash commands: a user's ``/speak hello`` runs an action directly, bypassing the LLM.

Arguments are read against the action's own schema, in one of three forms:
  /look 0 1 0                    positional, in the schema's ``required`` order, then the rest
  /look x=0 y=1 z=0              key=value
  /look {"x": 0, "y": 1, "z": 0} one JSON object
An action whose only positional parameter is a string takes the whole rest of the line
(``/speak it's a nice day`` needs no quotes). Values are converted by the property's type and
the result is validated like any other action: a bad command is an error naming what was wrong.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from typing import Any

from edge.protocol.companion import ActionSpec, Companion, validate_params


class SlashError(ValueError):
    """A command that cannot run; the message says why and how it should look."""


@dataclass(frozen=True)
class SlashCommand:
    name: str
    params: dict[str, Any]


@dataclass(frozen=True)
class SlashHelp:
    text: str


def is_slash(text: Any) -> bool:
    return isinstance(text, str) and text.lstrip().startswith("/") and len(text.strip()) > 1


def parse_slash(text: str, companion: Companion) -> SlashCommand | SlashHelp:
    head, _, rest = text.strip()[1:].partition(" ")
    name, rest = head.strip(), rest.strip()
    if name == "help":
        return SlashHelp(help_text(companion, rest or None))
    spec = companion.action(name)
    if spec is None:
        known = ", ".join(["/help"] + [f"/{a.title}" for a in companion.actions])
        raise SlashError(f"unknown command /{name}; known: {known}")
    params = _read_args(spec, rest)
    problems = validate_params(spec, params)
    if problems:
        listed = "; ".join(f"{p.pointer or '/'}: {p.message}" for p in problems)
        raise SlashError(f"/{name}: {listed} (usage: {usage(spec)})")
    return SlashCommand(name, params)


def _properties(spec: ActionSpec) -> dict[str, dict[str, Any]]:
    props = spec.schema.get("properties")
    return props if isinstance(props, dict) else {}


def positional_order(spec: ActionSpec) -> list[str]:
    """Required parameters in their listed order, then the other properties as declared."""
    props = _properties(spec)
    required = [r for r in spec.schema.get("required", []) if r in props]
    return required + [p for p in props if p not in required]


def _read_args(spec: ActionSpec, rest: str) -> dict[str, Any]:
    if not rest:
        return {}
    if rest.startswith("{"):
        try:
            value = json.loads(rest)
        except json.JSONDecodeError as exc:
            raise SlashError(f"/{spec.title}: arguments are not valid JSON ({exc.msg} at column {exc.colno})") from None
        if not isinstance(value, dict):
            raise SlashError(f"/{spec.title}: JSON arguments must be an object")
        return value
    order = positional_order(spec)
    props = _properties(spec)
    if len(order) >= 1 and _type_of(props[order[0]]) == "string" and len(spec.schema.get("required", [])) <= 1 \
            and "=" not in rest.split(" ", 1)[0]:
        return {order[0]: rest}
    try:
        tokens = shlex.split(rest)
    except ValueError:
        tokens = rest.split()
    if all("=" in t for t in tokens):
        pairs = [t.split("=", 1) for t in tokens]
        unknown = [k for k, _ in pairs if k not in props]
        if unknown:
            raise SlashError(f"/{spec.title}: unknown parameter {unknown[0]!r} (usage: {usage(spec)})")
        return {k: _convert(spec, k, props[k], v) for k, v in pairs}
    if len(tokens) > len(order):
        raise SlashError(f"/{spec.title}: {len(tokens)} arguments given, at most {len(order)} expected "
                         f"(usage: {usage(spec)})")
    return {key: _convert(spec, key, props[key], token) for key, token in zip(order, tokens)}


def _type_of(prop: dict[str, Any]) -> str:
    kind = prop.get("type", "string")
    return kind[0] if isinstance(kind, list) and kind else kind if isinstance(kind, str) else "string"


def _convert(spec: ActionSpec, key: str, prop: dict[str, Any], raw: str) -> Any:
    kind = _type_of(prop)
    try:
        if kind == "integer":
            return int(raw)
        if kind == "number":
            return float(raw)
        if kind == "boolean":
            lowered = raw.lower()
            if lowered in ("true", "yes", "on", "1"):
                return True
            if lowered in ("false", "no", "off", "0"):
                return False
            raise ValueError(raw)
        if kind in ("object", "array"):
            return json.loads(raw)
    except (ValueError, json.JSONDecodeError):
        raise SlashError(f"/{spec.title}: {key} must be {'an' if kind[0] in 'aeiou' else 'a'} {kind}, "
                         f"not {raw!r} (usage: {usage(spec)})") from None
    return raw


def usage(spec: ActionSpec) -> str:
    required = set(spec.schema.get("required", []))
    parts = []
    for key in positional_order(spec):
        kind = _type_of(_properties(spec)[key])
        parts.append(f"{key}:{kind}" if key in required else f"[{key}:{kind}]")
    return " ".join([f"/{spec.title}", *parts])


def help_text(companion: Companion, about: str | None = None) -> str:
    """One line per action (``/help NAME`` for one action with its parameters' descriptions)."""
    if about:
        spec = companion.action(about.lstrip("/"))
        if spec is None:
            raise SlashError(f"/help: no action named {about!r}")
        lines = [f"{usage(spec)}  {spec.description}"]
        for key, prop in _properties(spec).items():
            desc = prop.get("description", "")
            bounds = " ".join(f"{k}={prop[k]}" for k in ("minimum", "maximum", "maxLength", "enum") if k in prop)
            lines.append(f"  {key}: {_type_of(prop)} {desc} {bounds}".rstrip())
        return "\n".join(lines)
    return "\n".join([f"{usage(a)}  {a.description}" for a in companion.actions]
                     + ["/help [NAME]  this list, or one action in detail"])

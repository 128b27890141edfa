"""Companion definition files: reading one into a ``Companion``, and validation that names every
problem. The public face of companion files: the model's names are handed on from
``companion_types`` and ``problems``, so ``from edge.protocol.companion import Companion,
load_companion, CompanionError`` is all outside code needs.

The file format is defined by ``companions/schema.json`` (draft 2020-12). Everything JSON
Schema cannot express -- consistent identity fields, unique titles, events that name
real perceptions and actions, real calendar dates, duplicate JSON keys, the ``x-sentences``
section (``sentences.py``) -- is checked here, so the brain, the registry and ``companion
validate`` all agree on what "valid" means. See docs/companion-files.md for the user-facing rules.
"""

from __future__ import annotations

import codecs
import copy
import functools
import json
import os
import re
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from edge.paths import COMPANIONS_DIR
from edge.protocol.companion_types import (ID_PREFIX, ActionSpec, Companion, CompanionError, EventSpec,
                                           PerceptionSpec, derive_id, validate_params)
from edge.protocol.problems import Problem, explain, finish, format_problem, json_pointer, short, unknown_name
from edge.protocol.sentences import sentence_problems
from edge.protocol.speech_action import speech_mark_problems

__all__ = ["ID_PREFIX", "SCHEMA_PATH", "SHARED_FIELDS", "ActionSpec", "Companion", "CompanionError", "EventSpec",
           "PerceptionSpec", "Problem", "derive_id", "file_validator", "format_problem", "load_companion",
           "parse_companion", "validate_document", "validate_file", "validate_params"]

SCHEMA_PATH = COMPANIONS_DIR / "schema.json"

# Fields that may be written at the top level (first seed) or inside metadata (distributed seed).
SHARED_FIELDS = ("name", "personality", "story", "sample", "version")

_UUID_RE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
# Same shape as the schema's date-time pattern; only such strings get a calendar check.
_DATETIME_RE = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})")


@functools.lru_cache(maxsize=1)
def file_validator() -> Draft202012Validator:
    """The compiled file schema; the format checker also catches bad regexes in action schemas."""
    try:
        schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RuntimeError(f"companion file schema unavailable at {SCHEMA_PATH}: {exc}") from exc
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


def validate_document(doc: object) -> list[Problem]:
    """Every problem in a parsed companion document, sorted by pointer."""
    problems = [p for e in file_validator().iter_errors(doc) for p in explain(e)]
    if isinstance(doc, dict):
        problems += _semantic_problems(doc)
    return finish(problems)


def _semantic_problems(doc: dict) -> list[Problem]:
    metadata = doc.get("metadata")
    meta = metadata if isinstance(metadata, dict) else {}
    out = _identity_problems(doc, meta) + _date_problems(meta)
    titles = {kind: _titles(doc, kind, out) for kind in ("actions", "perceptions")}
    out += _event_problems(doc, titles["actions"], titles["perceptions"])
    return out + sentence_problems(doc) + speech_mark_problems(doc)


def _identity_problems(doc: dict, meta: dict) -> list[Problem]:
    out = []
    for key in SHARED_FIELDS:
        if key in doc and key in meta and doc[key] != meta[key]:
            out.append(Problem(f"/metadata/{key}", (
                f"{short(meta[key])} differs from the top-level {key!r} {short(doc[key])}; "
                "give it in one place, or the same value in both")))
    ident = meta.get("id")
    # A pattern's "$" also matches before a final newline, so the schema lets "<uuid>\n" through.
    if isinstance(ident, str) and ident.endswith("\n") and _UUID_RE.fullmatch(ident[:-1]):
        out.append(Problem("/metadata/id", f"{short(ident)} is not a UUID (stray characters around it)"))
    return out


def _date_problems(meta: dict) -> list[Problem]:
    parsed: dict[str, datetime] = {}
    out = []
    for key in ("created", "updated"):
        value = meta.get(key)
        if not isinstance(value, str) or not _DATETIME_RE.fullmatch(value):
            continue  # absent, or the schema already reported its shape
        try:
            # Fractions dropped: Python 3.10's fromisoformat only takes 3 or 6 digits.
            plain = re.sub(r"\.[0-9]+", "", value.upper()).replace("Z", "+00:00")
            parsed[key] = datetime.fromisoformat(plain)
        except ValueError as exc:
            out.append(Problem(f"/metadata/{key}", f"{value!r} is not a real date-time: {exc}"))
    if len(parsed) == 2 and parsed["updated"] < parsed["created"]:
        out.append(Problem("/metadata/updated", "is earlier than metadata.created"))
    return out


def _titles(doc: dict, kind: str, out: list[Problem]) -> list[str] | None:
    """The titles defined under ``kind``, reporting repeats; None when the list itself is broken."""
    items = doc.get(kind, [])
    if not isinstance(items, list):
        return None
    first: dict[str, int] = {}
    for i, item in enumerate(items):
        title = item.get("title") if isinstance(item, dict) else None
        if isinstance(title, str) and title in first:
            out.append(Problem(f"/{kind}/{i}/title",
                               f"duplicate {kind[:-1]} title {title!r} (first defined at /{kind}/{first[title]})"))
        elif isinstance(title, str):
            first[title] = i
    return list(first)


def _event_problems(doc: dict, actions: list[str] | None, perceptions: list[str] | None) -> list[Problem]:
    events = doc.get("events", [])
    if not isinstance(events, list):
        return []
    out = []
    for i, event in enumerate(events):
        if not isinstance(event, dict):
            continue
        name = event.get("perception")
        if perceptions is not None and isinstance(name, str) and name and name not in perceptions:
            out.append(Problem(f"/events/{i}/perception", unknown_name("perception", name, perceptions)))
        wanted = event.get("action")
        if actions is not None and isinstance(wanted, list):
            for m, title in enumerate(wanted):
                if isinstance(title, str) and title and title not in actions:
                    out.append(Problem(f"/events/{i}/action/{m}", unknown_name("action", title, actions)))
    return out


def parse_companion(doc: object, path: str | None = None) -> Companion:
    """Validate ``doc`` and build the model; raises CompanionError listing every problem."""
    problems = validate_document(doc)
    if problems:
        raise CompanionError(problems, path)
    assert isinstance(doc, dict)  # the schema guarantees it
    return _build(copy.deepcopy(doc))


def _build(doc: dict) -> Companion:
    meta: dict = doc.get("metadata", {})

    def pick(key: str, default: Any) -> Any:
        return doc[key] if key in doc else meta.get(key, default)

    name = pick("name", "")
    ident = meta.get("id")
    return Companion(
        id=str(uuid.UUID(ident)) if ident else derive_id(name),
        name=name,
        personality=pick("personality", ""),
        story=pick("story", ""),
        version=pick("version", "0.0.0"),
        sample=pick("sample", ""),
        author=meta.get("author", ""),
        tags=tuple(meta.get("tags", ())),
        icon=meta.get("icon"),
        thumbnail=meta.get("thumbnail"),
        created=meta.get("created"),
        updated=meta.get("updated"),
        actions=tuple(ActionSpec(a["title"], a["description"], a) for a in doc.get("actions", [])),
        perceptions=tuple(PerceptionSpec(p["title"], p["description"], p) for p in doc.get("perceptions", [])),
        events=tuple(EventSpec(e["perception"], tuple(e["action"]), e["condition"]) for e in doc.get("events", [])),
        source=doc,
    )


_UNREAD = object()


def _read(path: str | os.PathLike) -> tuple[object, list[Problem]]:
    """Bytes -> JSON document, with a located problem for each way that can fail."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        return _UNREAD, [Problem("", f"cannot read file: {exc.strerror or exc}")]
    skip = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    try:
        text = data[skip:].decode("utf-8")
    except UnicodeDecodeError as exc:
        at = skip + exc.start
        line = data[:at].count(b"\n") + 1
        return _UNREAD, [Problem("", f"not UTF-8: byte 0x{data[at]:02x} at offset {at} (line {line}) "
                                     "cannot be decoded; save the file as UTF-8")]
    if not text.strip():
        return _UNREAD, [Problem("", "not valid JSON: the file is empty")]
    duplicates: dict[int, list[str]] = {}
    keep: list[dict] = []  # holds objects with duplicates alive so their ids stay unique

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict:
        obj = dict(pairs)
        if len(obj) < len(pairs):
            keys = [k for k, _ in pairs]
            duplicates[id(obj)] = sorted({k for k in keys if keys.count(k) > 1}, key=keys.index)
            keep.append(obj)
        return obj

    def no_constant(name: str) -> Any:
        raise ValueError(f"{name} is not a JSON value")

    try:
        doc = json.loads(text, object_pairs_hook=pairs_hook, parse_constant=no_constant)
    except json.JSONDecodeError as exc:
        return _UNREAD, [Problem("", f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}")]
    except ValueError as exc:
        return _UNREAD, [Problem("", f"not valid JSON: {exc}")]
    return doc, _duplicate_key_problems(doc, duplicates)


def _duplicate_key_problems(doc: object, duplicates: dict[int, list[str]]) -> list[Problem]:
    if not duplicates:
        return []
    out = []
    stack: list[tuple[object, list]] = [(doc, [])]
    while stack:
        node, path = stack.pop()
        if isinstance(node, dict):
            for key in duplicates.get(id(node), ()):
                out.append(Problem(json_pointer([*path, key]),
                                   f"duplicate key {key!r}: only the last value would be used; keep one"))
            stack.extend((v, [*path, k]) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, [*path, i]) for i, v in enumerate(node))
    return out


def _check_file(path: str | os.PathLike) -> tuple[object, list[Problem]]:
    doc, problems = _read(path)
    if doc is not _UNREAD:
        problems = finish(problems + validate_document(doc))
    return doc, problems


def validate_file(path: str | os.PathLike) -> list[Problem]:
    """Every problem in the file at ``path``; never raises for bad content or a missing file."""
    return _check_file(path)[1]


def load_companion(path: str | os.PathLike) -> Companion:
    """Read, validate and build a companion; raises CompanionError naming every problem."""
    doc, problems = _check_file(path)
    if problems:
        raise CompanionError(problems, os.fspath(path))
    assert isinstance(doc, dict)  # the schema guarantees it
    return _build(doc)

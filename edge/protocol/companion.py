"""Companion definition files: the typed model, and validation that names every problem.

The file format is defined by ``companions/schema.json`` (draft 2020-12). Everything JSON
Schema cannot express -- consistent identity fields, unique titles, events that name
real perceptions and actions, real calendar dates, duplicate JSON keys -- is checked
here, so the brain, the registry and ``companion validate`` all agree on what "valid"
means. See docs/companion-files.md for the user-facing rules.
"""

from __future__ import annotations

import codecs
import copy
import difflib
import functools
import json
import os
import re
import unicodedata
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match
from referencing.exceptions import Unresolvable

from edge.paths import COMPANIONS_DIR

SCHEMA_PATH = COMPANIONS_DIR / "schema.json"

# Derived ids: uuid5(NAMESPACE_URL, ID_PREFIX + NFC(name)); documented in docs/companion-files.md.
ID_PREFIX = "urn:companion-edge:companion:"

# Fields that may be written at the top level (first seed) or inside metadata (distributed seed).
SHARED_FIELDS = ("name", "personality", "story", "sample", "version")

_UUID_RE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
# Same shape as the schema's date-time pattern; only such strings get a calendar check.
_DATETIME_RE = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})")


@dataclass(frozen=True)
class Problem:
    """One thing wrong, located by an RFC 6901 pointer ("" is the whole document)."""
    pointer: str
    message: str


def format_problem(problem: Problem, path: str | None = None) -> str:
    """One report line, ``FILE: /pointer: message``; the root is shown as ``/``."""
    where = path if path is not None else "<companion>"
    message = " ".join(problem.message.splitlines())
    return f"{where}: {problem.pointer or '/'}: {message}"


class CompanionError(ValueError):
    """A companion file could not be loaded; ``problems`` lists every reason."""
    def __init__(self, problems: Iterable[Problem], path: str | None = None) -> None:
        self.problems: list[Problem] = list(problems)
        self.path = path
        super().__init__("\n".join(format_problem(p, path) for p in self.problems))


@dataclass(frozen=True)
class ActionSpec:
    """An action the companion may take; ``schema`` is the action object, a JSON Schema for params."""
    title: str
    description: str
    schema: dict
    # Compiled once here because validate_params runs on every single decision.
    _validator: Draft202012Validator = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        validator = Draft202012Validator(self.schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
        object.__setattr__(self, "_validator", validator)

    def __hash__(self) -> int:  # the schema dict is unhashable; equal specs still hash alike
        return hash((self.title, self.description))


@dataclass(frozen=True)
class PerceptionSpec:
    """A perception the companion understands; ``schema`` describes its payload."""
    title: str
    description: str
    schema: dict

    def __hash__(self) -> int:
        return hash((self.title, self.description))


@dataclass(frozen=True)
class EventSpec:
    """When ``perception`` arrives, consider ``actions`` under the natural-language ``condition``."""
    perception: str
    actions: tuple[str, ...]
    condition: str


@dataclass(frozen=True)
class Companion:
    """A validated companion definition, identity fields already merged from both layouts."""
    id: str
    name: str
    personality: str
    story: str
    version: str
    sample: str
    author: str
    tags: tuple[str, ...]
    icon: str | None
    thumbnail: str | None
    created: str | None
    updated: str | None
    actions: tuple[ActionSpec, ...]
    perceptions: tuple[PerceptionSpec, ...]
    events: tuple[EventSpec, ...]
    source: dict = field(repr=False, compare=False)

    def __hash__(self) -> int:
        return hash((self.id, self.version))

    def action(self, title: str) -> ActionSpec | None:
        return next((a for a in self.actions if a.title == title), None)

    def perception(self, title: str) -> PerceptionSpec | None:
        return next((p for p in self.perceptions if p.title == title), None)

    def events_for(self, perception_title: str) -> tuple[EventSpec, ...]:
        return tuple(e for e in self.events if e.perception == perception_title)

    def metadata_json(self) -> dict:
        """The item the registry serves from ``GET /metadata``; icon falls back to thumbnail."""
        keys = ("id", "name", "personality", "story", "sample", "version", "author")
        item: dict[str, Any] = {k: getattr(self, k) for k in keys}
        item.update(tags=list(self.tags), icon=self.icon if self.icon is not None else self.thumbnail)
        return {"metadata": item}


def derive_id(name: str) -> str:
    """The stable id of a companion whose file has no metadata.id."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, ID_PREFIX + unicodedata.normalize("NFC", name)))


def _pointer(path: Iterable[Any]) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _sort_key(problem: Problem) -> tuple:
    parts = problem.pointer.split("/")[1:] if problem.pointer else []
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts), problem.message


def _finish(problems: Iterable[Problem]) -> list[Problem]:
    """Drop exact duplicates (two schema branches may say the same thing) and sort by location."""
    return sorted(dict.fromkeys(problems), key=_sort_key)


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _explain(error: ValidationError) -> list[Problem]:
    """Turn one jsonschema error into problems with the clearest message we can give."""
    path = list(error.absolute_path)
    schema = error.schema if isinstance(error.schema, dict) else {}
    # "x-error": {keyword: message} beside a keyword replaces jsonschema's wording for it.
    custom = schema.get("x-error")
    template = custom.get(error.validator) if isinstance(custom, dict) else None
    if isinstance(template, str):
        try:
            message = template.format(instance=_short(error.instance))
        except (KeyError, IndexError, ValueError):  # an author's template with stray braces
            message = template
        return [Problem(_pointer(path), message)]
    if error.validator in ("anyOf", "oneOf") and error.context:
        return _explain(best_match(error.context))
    if error.validator == "type":
        expected = error.validator_value
        wanted = " or ".join(map(repr, expected)) if isinstance(expected, list) else repr(expected)
        return [Problem(_pointer(path), f"{_short(error.instance)} is not of type {wanted}")]
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        return _unknown_properties(error.instance, schema, path)
    return [Problem(_pointer(path), error.message)]


def _unknown_properties(instance: dict, schema: dict, path: list) -> list[Problem]:
    """One problem per unexpected key, pointing at the key, with a hint when it looks like a typo."""
    known = list(schema.get("properties", {}))
    patterns = list(schema.get("patternProperties", {}))
    out = []
    for key in instance:
        if key in known or any(re.search(p, key) for p in patterns):
            continue
        close = difflib.get_close_matches(key, known, n=1, cutoff=0.75)
        if close:
            hint = f" (did you mean {close[0]!r}?)"
        else:
            hint = f" (allowed: {', '.join(known)})" if known else ""
        out.append(Problem(_pointer([*path, key]), f"unknown property {key!r}{hint}"))
    return out


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
    problems = [p for e in file_validator().iter_errors(doc) for p in _explain(e)]
    if isinstance(doc, dict):
        problems += _semantic_problems(doc)
    return _finish(problems)


def _semantic_problems(doc: dict) -> list[Problem]:
    metadata = doc.get("metadata")
    meta = metadata if isinstance(metadata, dict) else {}
    out = _identity_problems(doc, meta) + _date_problems(meta)
    titles = {kind: _titles(doc, kind, out) for kind in ("actions", "perceptions")}
    out += _event_problems(doc, titles["actions"], titles["perceptions"])
    from edge.protocol.sentences import sentence_problems  # late: sentences.py builds on this module
    return out + sentence_problems(doc)


def _identity_problems(doc: dict, meta: dict) -> list[Problem]:
    out = []
    for key in SHARED_FIELDS:
        if key in doc and key in meta and doc[key] != meta[key]:
            out.append(Problem(f"/metadata/{key}", (
                f"{_short(meta[key])} differs from the top-level {key!r} {_short(doc[key])}; "
                "give it in one place, or the same value in both")))
    ident = meta.get("id")
    # A pattern's "$" also matches before a final newline, so the schema lets "<uuid>\n" through.
    if isinstance(ident, str) and ident.endswith("\n") and _UUID_RE.fullmatch(ident[:-1]):
        out.append(Problem("/metadata/id", f"{_short(ident)} is not a UUID (stray characters around it)"))
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
            out.append(Problem(f"/events/{i}/perception", _unknown("perception", name, perceptions)))
        wanted = event.get("action")
        if actions is not None and isinstance(wanted, list):
            for m, title in enumerate(wanted):
                if isinstance(title, str) and title and title not in actions:
                    out.append(Problem(f"/events/{i}/action/{m}", _unknown("action", title, actions)))
    return out


def _unknown(kind: str, name: str, defined: list[str]) -> str:
    if not defined:
        return f"unknown {kind} {name!r} (this file defines no {kind}s)"
    return f"unknown {kind} {name!r} (defined: {', '.join(defined)})"


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
                out.append(Problem(_pointer([*path, key]),
                                   f"duplicate key {key!r}: only the last value would be used; keep one"))
            stack.extend((v, [*path, k]) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, [*path, i]) for i, v in enumerate(node))
    return out


def _check_file(path: str | os.PathLike) -> tuple[object, list[Problem]]:
    doc, problems = _read(path)
    if doc is not _UNREAD:
        problems = _finish(problems + validate_document(doc))
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


def validate_params(action: ActionSpec, params: object) -> list[Problem]:
    """Problems with ``params`` for ``action``, pointers into params; empty when they may be published."""
    try:
        return _finish(p for e in action._validator.iter_errors(params) for p in _explain(e))
    except (Unresolvable, re.error) as exc:
        return [Problem("", f"the schema of action {action.title!r} cannot be applied: {exc}")]

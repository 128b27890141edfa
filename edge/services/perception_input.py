"""Perceptions as clients send them to the gateway: checked field by field, and against the
companions' own perception schemas, before anything is published. Every refusal is a
``FieldError`` naming the field, quoting at most a short excerpt of a bad value."""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Sequence

from jsonschema import Draft202012Validator

from edge.protocol.companion import Companion, PerceptionSpec
from edge.protocol.payloads import PayloadError, Perception
from edge.services.wire import clip, excerpt

FORMATS = ("text", "object", "image")
FIELDS = ("title", "body", "format", "to", "from")


class FieldError(ValueError):
    """A perception field that cannot be accepted; ``field`` names it (None: the whole body).
    A message that starts with a JSON pointer already says where, so it is not prefixed."""

    def __init__(self, field: str | None, message: str):
        super().__init__(f"{field}: {message}" if field and not message.startswith("/") else message)
        self.field = field


def perception_from(fields: Any, companions: Sequence[Companion] = (), default_sender: str = "user") -> Perception:
    """Build a Perception from client fields, or raise FieldError naming the first bad field."""
    if not isinstance(fields, dict):
        raise FieldError(None, f"expected a JSON object with at least title and body, not {kind_of(fields)}")
    unknown = sorted(set(fields) - set(FIELDS))
    if unknown:
        raise FieldError(excerpt(unknown[0], 40, raw=True), f"unknown field; a perception has {', '.join(FIELDS)}")
    title = _name(fields, "title", None)
    if "body" not in fields:
        raise FieldError("body", "required")
    body = fields["body"]
    fmt = fields.get("format", "text")
    if fmt not in FORMATS:
        raise FieldError("format", f"{excerpt(fmt)} is not one of {', '.join(FORMATS)}")
    if fmt in ("text", "image") and not isinstance(body, str):
        raise FieldError("body", f"must be a string when format is {fmt!r} (got {kind_of(body)})")
    perception = Perception(title=title, body=body, format=fmt, to=_name(fields, "to", "all"),
                            sender=_name(fields, "from", default_sender))
    if companions:
        _check_against_companions(perception, companions)
    try:
        Perception.check(perception.to_dict())
    except PayloadError as exc:  # a wire rule the checks above missed; its message names the field
        raise FieldError(exc.message.split(":", 1)[0].strip("/") or None, clip(exc.message)) from None
    return perception


def kind_of(value: Any) -> str:
    """How a value reads in a message: 'an object', 'a string', ..."""
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
            type(None): "null"}.get(type(value), "a number")


def _name(fields: dict, key: str, default: str | None) -> str:
    value = fields.get(key, default)
    if value is None:
        raise FieldError(key, "required, a non-empty string")
    if not isinstance(value, str) or not value.strip():
        raise FieldError(key, f"must be a non-empty string (got {kind_of(value)})")
    if len(value) > 200:
        raise FieldError(key, f"at most 200 characters (got {len(value)})")
    return value


def _check_against_companions(perception: Perception, companions: Sequence[Companion]) -> None:
    """The addressee must exist, know the title, and accept the body under its perception schema."""
    if perception.to != "all" and perception.to not in [c.id for c in companions]:
        known = ", ".join(f"{c.id} ({c.name})" for c in companions)
        raise FieldError("to", f"no companion {excerpt(perception.to)} here; use all or one of: {known}")
    targets = [c for c in companions if perception.to in ("all", c.id)]
    specs = [s for c in targets if (s := c.perception(perception.title)) is not None]
    if not specs:
        titles = sorted({p.title for c in targets for p in c.perceptions})
        raise FieldError("title", f"unknown perception {excerpt(perception.title)}; known: {', '.join(titles)}")
    instance = {"title": perception.title, "format": perception.format, "body": perception.body}
    problems = [sorted(_validator(spec).iter_errors(instance), key=lambda e: list(e.absolute_path))
                for spec in specs]
    if all(problems):
        errors = problems[0]
        field = str(errors[0].absolute_path[0]) if errors[0].absolute_path else None
        said = "; ".join(f"/{'/'.join(map(str, e.absolute_path))}: {clip(e.message, 160)}" for e in errors[:5])
        raise FieldError(field, clip(f"{said} (perception {perception.title!r} of the companion definition)"))


@lru_cache(maxsize=256)
def _validator(spec: PerceptionSpec) -> Draft202012Validator:
    return Draft202012Validator(spec.schema, format_checker=Draft202012Validator.FORMAT_CHECKER)

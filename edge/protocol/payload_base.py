"""What every payload of the wire contract has in common: a dataclass that owns its topic, QoS,
size limits and JSON Schema, decoded through the strict wire codec and validated on receipt.

The wire dict is derived from the dataclass fields, in the schema's ``properties`` order: a
field's wire name is its own unless its metadata says otherwise, ``field(metadata=wire("from"))``
(``from`` is a Python keyword); a ``None`` field is left out; ``nested=`` names a dataclass
member type; ``rest=True`` collects every member the class does not name (``Status`` extras).
The messages themselves are in ``edge/protocol/payloads.py``.
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

from jsonschema import Draft202012Validator

from edge.protocol import codec
from edge.protocol.fast_schema import FastCheck, fast_check
from edge.protocol.codec import CodecError, Limits

SMALL = Limits(max_bytes=256 * 1024)
"""Actions, results, status, estop, messages, replies: a few hundred bytes each in practice."""


class PayloadError(ValueError):
    """A payload that is not JSON or breaks its topic's schema; the message names the field."""

    def __init__(self, topic: str, message: str):
        super().__init__(f"{topic}: {message}")
        self.topic = topic
        self.message = message


def new_id() -> str:
    return str(uuid.uuid4())


def now() -> float:
    return time.time()


def wire(name: str | None = None, *, nested: type | None = None, rest: bool = False) -> dict[str, Any]:
    """A field's wire mapping, as its metadata (see the module docstring)."""
    return {"wire": name, "nested": nested, "rest": rest}


def _describe(error: Any) -> str:
    """One schema violation, quoting at most an excerpt of the offending value."""
    where = "/" + "/".join(str(p) for p in error.absolute_path)
    message = error.message
    quoted = repr(error.instance)
    if len(quoted) > codec.EXCERPT_CHARS and quoted in message:
        message = message.replace(quoted, codec.excerpt(error.instance))
    return f"{where}: {message if len(message) <= 300 else message[:300] + '…'}"


class _Member(NamedTuple):
    attr: str
    name: str
    nested: type | None
    rest: bool


_MEMBERS: dict[type, tuple[_Member, ...]] = {}


def _members(cls: type) -> tuple[_Member, ...]:
    """The wire members of a payload class, in its schema's property order (rest first)."""
    cached = _MEMBERS.get(cls)
    if cached is not None:
        return cached
    members = [_Member(f.name, f.metadata.get("wire") or f.name, f.metadata.get("nested"), bool(f.metadata.get("rest")))
               for f in dataclasses.fields(cls)]
    order = list(getattr(cls, "SCHEMA", {}).get("properties", {}))
    ranked = sorted(members, key=lambda m: (not m.rest, order.index(m.name) if m.name in order else len(order)))
    _MEMBERS[cls] = tuple(ranked)
    return _MEMBERS[cls]


def _plain(value: Any) -> Any:
    """A nested dataclass member as its dict."""
    return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}


@dataclass
class Payload:
    """Base of every wire payload. Subclasses set TOPIC, QOS, SCHEMA and their fields."""

    TOPIC: ClassVar[str]
    QOS: ClassVar[int] = 1
    GLOBAL: ClassVar[bool] = False  # True: never namespaced (``messages`` crosses robots)
    RETAIN: ClassVar[bool] = False
    LIMITS: ClassVar[Limits] = SMALL
    SCHEMA: ClassVar[dict[str, Any]]
    _validator: ClassVar[Draft202012Validator | None] = None
    _fast: ClassVar[tuple[FastCheck | None]] = (None,)   # (check,) once made, see ``check``

    def topic(self, namespace: str | None = None) -> str:
        return self.topic_pattern(namespace)

    @classmethod
    def topic_pattern(cls, namespace: str | None = None) -> str:
        """The topic (or subscription filter) for this payload type under a namespace."""
        return cls.TOPIC if cls.GLOBAL or not namespace else f"{namespace}/{cls.TOPIC}"

    @classmethod
    def validator(cls) -> Draft202012Validator:
        validator = cls.__dict__.get("_validator")   # this class's own, not a base class's
        if validator is None:
            validator = Draft202012Validator(cls.SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER)
            cls._validator = validator
        return validator

    def to_dict(self) -> dict[str, Any]:
        """The wire dict, built from the fields (see the module docstring)."""
        out: dict[str, Any] = {}
        for m in _members(type(self)):
            value = getattr(self, m.attr)
            if m.rest:
                out.update(value)
            elif value is not None:
                out[m.name] = _plain(value) if m.nested is not None else value
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Any:
        """The payload from a wire dict that passed ``check``; absent members take their defaults."""
        members = _members(cls)
        named = {m.name for m in members if not m.rest}
        kwargs: dict[str, Any] = {}
        for m in members:
            if m.rest:
                kwargs[m.attr] = {k: v for k, v in data.items() if k not in named}
            elif m.name in data:
                value = data[m.name]
                if m.nested is not None and isinstance(value, dict):
                    value = m.nested(**{f.name: value[f.name] for f in dataclasses.fields(m.nested) if f.name in value})
                kwargs[m.attr] = value
        return cls(**kwargs)

    def encode(self) -> bytes:
        """The payload as UTF-8 JSON, or CodecError naming the member that cannot be sent."""
        return codec.encode(self.to_dict(), self.LIMITS)

    @classmethod
    def check(cls, data: Any) -> None:
        """Raise PayloadError listing every schema violation of ``data``. A compiled validator
        says yes or no first (edge/protocol/fast_schema.py): on every message received, the
        same answer in about a hundredth of the time; only a refused payload is walked again
        for its messages."""
        made = cls.__dict__.get("_fast")
        if made is None:
            made = cls._fast = (fast_check(cls.SCHEMA, ours=True),)
        if made[0] is not None and made[0](data):
            return
        errors = sorted(cls.validator().iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
        if errors:
            raise PayloadError(cls.TOPIC, "; ".join(_describe(e) for e in errors[:5]))

    @classmethod
    def decode(cls, raw: bytes | str) -> Any:
        try:
            data = codec.decode(raw, cls.LIMITS)
        except CodecError as exc:
            raise PayloadError(cls.TOPIC, str(exc)) from None
        cls.check(data)
        return cls.from_dict(data)

"""Payload types of the MQTT wire contract; each class owns its topic, QoS and JSON Schema.

Receiving code calls ``Cls.decode(raw_bytes)``: the bytes go through the strict wire codec
(``edge.protocol.codec``), are validated against the class's schema, and turned into a typed
object, or a ``PayloadError`` names what was wrong. Senders build the object and call
``encode()``, which refuses (``CodecError``) what a strict peer would refuse.

The wire dict is derived from the dataclass fields, in the schema's ``properties`` order: a
field's wire name is its own unless its metadata says otherwise, ``field(metadata=wire("from"))``
(``from`` is a Python keyword); a ``None`` field is left out; ``nested=`` names a dataclass
member type; ``rest=True`` collects every member the class does not name (``Status`` extras).
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, NamedTuple, TypeGuard, get_args

from jsonschema import Draft202012Validator

from edge.protocol import codec
from edge.protocol.codec import CodecError, Limits

_UUID = {"type": "string", "format": "uuid",
         "pattern": "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"}
_TS = {"type": "number", "minimum": 0}
_NAME = {"type": "string", "minLength": 1, "maxLength": 200}

SMALL = Limits(max_bytes=256 * 1024)
"""Actions, results, status, estop, messages, replies: a few hundred bytes each in practice."""
LARGE = Limits(max_bytes=8 * 1024 * 1024)
"""Perceptions: an image perception carries a base64 JPEG."""

__all__ = ["ALL_PAYLOADS", "Action", "ActionError", "ActionResult", "CodecError", "CompanionMessage", "Estop",
           "Payload", "PayloadError", "Perception", "Reply", "VoiceActivity", "Status", "new_id", "now", "wire"]


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
        """Raise PayloadError listing every schema violation of ``data``."""
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


PerceptionFormat = Literal["text", "object", "image"]


def is_perception_format(value: object) -> TypeGuard[PerceptionFormat]:
    return value in get_args(PerceptionFormat)


@dataclass
class Perception(Payload):
    """Something the companion senses; ``title`` names a perception of its definition."""

    TOPIC: ClassVar[str] = "perceptions"
    LIMITS: ClassVar[Limits] = LARGE
    SCHEMA: ClassVar[dict[str, Any]] = {
        "type": "object",
        "required": ["id", "from", "to", "title", "format", "body", "ts"],
        "properties": {
            "id": _UUID, "from": _NAME, "to": _NAME, "title": _NAME,
            "format": {"enum": ["text", "object", "image"]},
            "body": {},
            "ts": _TS,
        },
        "allOf": [
            {"if": {"properties": {"format": {"enum": ["text", "image"]}}},
             "then": {"properties": {"body": {"type": "string"}}}},
        ],
    }

    title: str
    body: Any
    format: PerceptionFormat = "text"
    to: str = "all"
    sender: str = field(default="user", metadata=wire("from"))
    id: str = field(default_factory=new_id)
    ts: float = field(default_factory=now)



    def body_text(self) -> str:
        """The body as the model should read it: text as is, structured data as compact JSON."""
        if isinstance(self.body, str):
            return self.body
        return codec.encode_text(self.body, self.LIMITS)


@dataclass
class Action(Payload):
    """A decision for the body: the seed's ``{from, name, params}`` plus an id for its result."""

    TOPIC: ClassVar[str] = "actions"
    SCHEMA: ClassVar[dict[str, Any]] = {
        "type": "object",
        "required": ["id", "from", "name", "params", "ts"],
        "properties": {"id": _UUID, "from": _NAME, "name": _NAME, "params": {"type": "object"}, "ts": _TS},
    }

    name: str
    params: dict[str, Any]
    sender: str = field(metadata=wire("from"))
    id: str = field(default_factory=new_id)
    ts: float = field(default_factory=now)


@dataclass
class ActionError:
    """Why an action failed: a short machine code and a sentence for people (and the LLM)."""

    code: str
    message: str


@dataclass
class ActionResult(Payload):
    """Published by the body when an action ends: done, failed or rejected."""

    TOPIC: ClassVar[str] = "actions/results"
    SCHEMA: ClassVar[dict[str, Any]] = {
        "type": "object",
        "required": ["id", "from", "name", "ok", "started", "finished"],
        "properties": {
            "id": {"type": "string", "minLength": 1}, "from": _NAME, "name": {"type": "string"},
            "ok": {"type": "boolean"}, "started": _TS, "finished": _TS,
            "error": {"type": "object", "required": ["code", "message"],
                      "properties": {"code": {"type": "string"}, "message": {"type": "string"}}},
        },
        "if": {"properties": {"ok": {"const": False}}}, "then": {"required": ["error"]},
    }

    id: str
    name: str
    ok: bool
    sender: str = field(metadata=wire("from"))
    started: float
    finished: float
    error: ActionError | None = field(default=None, metadata=wire(nested=ActionError))


@dataclass
class CompanionMessage(Payload):
    """Companion-to-companion talk, exactly the seed's shape; global across namespaces."""

    TOPIC: ClassVar[str] = "messages"
    GLOBAL: ClassVar[bool] = True
    SCHEMA: ClassVar[dict[str, Any]] = {
        "type": "object",
        "required": ["from", "to", "message"],
        "properties": {"from": _NAME, "to": _NAME, "message": {"type": "string"}},
    }

    sender: str = field(metadata=wire("from"))
    to: str
    message: str


NodeState = Literal["online", "offline"]


@dataclass
class Status(Payload):
    """A node's liveness, retained; every node's last will publishes ``offline`` here."""

    TOPIC: ClassVar[str] = "status"
    RETAIN: ClassVar[bool] = True
    SCHEMA: ClassVar[dict[str, Any]] = {
        "type": "object",
        "required": ["node", "kind", "state", "ts"],
        "properties": {"node": _NAME, "kind": _NAME, "state": {"enum": ["online", "offline"]}, "ts": _TS},
    }

    node: str
    kind: str
    state: NodeState
    ts: float = field(default_factory=now)
    extra: dict[str, Any] = field(default_factory=dict, metadata=wire(rest=True))

    def topic(self, namespace: str | None = None) -> str:
        base = f"{self.TOPIC}/{self.node}"
        return f"{namespace}/{base}" if namespace else base

    @classmethod
    def topic_pattern(cls, namespace: str | None = None) -> str:
        base = f"{cls.TOPIC}/+"
        return f"{namespace}/{base}" if namespace else base


@dataclass
class Estop(Payload):
    """Emergency stop, retained: while engaged the body stops and holds."""

    TOPIC: ClassVar[str] = "estop"
    RETAIN: ClassVar[bool] = True
    SCHEMA: ClassVar[dict[str, Any]] = {
        "type": "object",
        "required": ["from", "engaged", "ts"],
        "properties": {"from": _NAME, "engaged": {"type": "boolean"}, "ts": _TS},
    }

    sender: str = field(metadata=wire("from"))
    engaged: bool
    ts: float = field(default_factory=now)


@dataclass
class Reply(Payload):
    """A companion's direct answer to whoever sent a perception, outside the LLM path:
    ``/help`` text, a slash command's error. (An extension of the seed's topics.)"""

    TOPIC: ClassVar[str] = "replies"
    SCHEMA: ClassVar[dict[str, Any]] = {
        "type": "object",
        "required": ["id", "from", "to", "in_reply_to", "text", "ts"],
        "properties": {"id": _UUID, "from": _NAME, "to": _NAME, "in_reply_to": {"type": "string"},
                       "text": {"type": "string"}, "ok": {"type": "boolean"}, "ts": _TS},
    }

    sender: str = field(metadata=wire("from"))
    to: str
    in_reply_to: str
    text: str
    ok: bool = True
    id: str = field(default_factory=new_id)
    ts: float = field(default_factory=now)


@dataclass
class VoiceActivity(Payload):
    """The microphone heard a person start talking (``event: "started"``) while the robot spoke:
    the body cuts its speech (barge-in). Before that, ``onset``: a sound louder than the robot that
    may be a person; the body pauses its speech until ``started`` or ``dismissed`` (it was not a
    person: the speech goes on). An extension of the seed's topics, like ``replies``. QoS 0 and
    never queued for a node that is away: a late one must not cut a later sentence."""

    TOPIC: ClassVar[str] = "voice"
    QOS: ClassVar[int] = 0
    SCHEMA: ClassVar[dict[str, Any]] = {
        "type": "object",
        "required": ["id", "from", "event", "onset", "ts"],
        "properties": {"id": _UUID, "from": _NAME, "event": {"enum": ["started", "onset", "dismissed"]}, "onset": _TS,
                       "over": {"type": "array", "items": {"type": "string"}, "maxItems": 16}, "ts": _TS},
    }

    sender: str = field(metadata=wire("from"))
    onset: float                  # wall time the voice began (the first frame heard as the person)
    event: str = "started"        # or "onset" (pause: maybe a person), "dismissed" (not a person)
    over: list[str] | None = None  # the ``speak`` action ids the microphone knew were playing
    id: str = field(default_factory=new_id)
    ts: float = field(default_factory=now)


ALL_PAYLOADS: tuple[type[Payload], ...] = (Perception, Action, ActionResult, CompanionMessage, Status, Estop, Reply,
                                           VoiceActivity)

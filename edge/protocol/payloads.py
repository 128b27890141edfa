"""Payload types of the MQTT wire contract; each class owns its topic, QoS and JSON Schema.

Receiving code calls ``Cls.decode(raw_bytes)``: the bytes are parsed, validated against the
class's schema, and turned into a typed object, or a ``PayloadError`` names what was wrong.
Senders build the object and call ``encode()``. ``from`` is a Python keyword, so the
field is ``sender`` in Python and ``from`` on the wire.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from jsonschema import Draft202012Validator

_UUID = {"type": "string", "format": "uuid",
         "pattern": "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"}
_TS = {"type": "number", "minimum": 0}
_NAME = {"type": "string", "minLength": 1, "maxLength": 200}


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


def _describe(error) -> str:
    where = "/" + "/".join(str(p) for p in error.absolute_path)
    return f"{where}: {error.message}"


@dataclass
class Payload:
    """Base of every wire payload. Subclasses set TOPIC, QOS, SCHEMA and the field mapping."""

    TOPIC: ClassVar[str]
    QOS: ClassVar[int] = 1
    GLOBAL: ClassVar[bool] = False  # True: never namespaced (``messages`` crosses robots)
    RETAIN: ClassVar[bool] = False
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
        if cls.__dict__.get("_validator") is None:
            cls._validator = Draft202012Validator(cls.SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER)
        return cls._validator  # type: ignore[return-value]

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Payload":
        raise NotImplementedError

    def encode(self) -> bytes:
        return json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    @classmethod
    def check(cls, data: Any) -> None:
        """Raise PayloadError listing every schema violation of ``data``."""
        errors = sorted(cls.validator().iter_errors(data), key=lambda e: list(e.absolute_path))
        if errors:
            raise PayloadError(cls.TOPIC, "; ".join(_describe(e) for e in errors))

    @classmethod
    def decode(cls, raw: bytes | str):
        try:
            data = json.loads(raw)
        except UnicodeDecodeError as exc:
            raise PayloadError(cls.TOPIC, f"not UTF-8: {exc.reason} at byte {exc.start}") from None
        except json.JSONDecodeError as exc:
            raise PayloadError(cls.TOPIC, f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
        cls.check(data)
        return cls.from_dict(data)


PerceptionFormat = Literal["text", "object", "image"]


@dataclass
class Perception(Payload):
    """Something the companion senses; ``title`` names a perception of its definition."""

    TOPIC: ClassVar[str] = "perceptions"
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
    sender: str = "user"
    id: str = field(default_factory=new_id)
    ts: float = field(default_factory=now)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "from": self.sender, "to": self.to, "title": self.title,
                "format": self.format, "body": self.body, "ts": self.ts}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Perception":
        return cls(title=d["title"], body=d["body"], format=d["format"], to=d["to"],
                   sender=d["from"], id=d["id"], ts=d["ts"])

    def body_text(self) -> str:
        """The body as the model should read it: text as is, structured data as compact JSON."""
        if isinstance(self.body, str):
            return self.body
        return json.dumps(self.body, ensure_ascii=False)


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
    sender: str
    id: str = field(default_factory=new_id)
    ts: float = field(default_factory=now)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "from": self.sender, "name": self.name, "params": self.params, "ts": self.ts}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Action":
        return cls(name=d["name"], params=d["params"], sender=d["from"], id=d["id"], ts=d["ts"])


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
            "ok": {"type": "boolean"},
            "error": {"type": "object", "required": ["code", "message"],
                      "properties": {"code": {"type": "string"}, "message": {"type": "string"}}},
            "started": _TS, "finished": _TS,
        },
        "if": {"properties": {"ok": {"const": False}}}, "then": {"required": ["error"]},
    }

    id: str
    name: str
    ok: bool
    sender: str
    started: float
    finished: float
    error: ActionError | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "from": self.sender, "name": self.name, "ok": self.ok,
                               "started": self.started, "finished": self.finished}
        if self.error is not None:
            out["error"] = {"code": self.error.code, "message": self.error.message}
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "ActionResult":
        err = d.get("error")
        return cls(id=d["id"], name=d["name"], ok=d["ok"], sender=d["from"], started=d["started"],
                   finished=d["finished"], error=ActionError(err["code"], err["message"]) if err else None)


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

    sender: str
    to: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"from": self.sender, "to": self.to, "message": self.message}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "CompanionMessage":
        return cls(sender=d["from"], to=d["to"], message=d["message"])


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
    state: Literal["online", "offline"]
    ts: float = field(default_factory=now)
    extra: dict[str, Any] = field(default_factory=dict)

    def topic(self, namespace: str | None = None) -> str:
        base = f"{self.TOPIC}/{self.node}"
        return f"{namespace}/{base}" if namespace else base

    @classmethod
    def topic_pattern(cls, namespace: str | None = None) -> str:
        base = f"{cls.TOPIC}/+"
        return f"{namespace}/{base}" if namespace else base

    def to_dict(self) -> dict[str, Any]:
        return {**self.extra, "node": self.node, "kind": self.kind, "state": self.state, "ts": self.ts}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Status":
        extra = {k: v for k, v in d.items() if k not in ("node", "kind", "state", "ts")}
        return cls(node=d["node"], kind=d["kind"], state=d["state"], ts=d["ts"], extra=extra)


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

    sender: str
    engaged: bool
    ts: float = field(default_factory=now)

    def to_dict(self) -> dict[str, Any]:
        return {"from": self.sender, "engaged": self.engaged, "ts": self.ts}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Estop":
        return cls(sender=d["from"], engaged=d["engaged"], ts=d["ts"])


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

    sender: str
    to: str
    in_reply_to: str
    text: str
    ok: bool = True
    id: str = field(default_factory=new_id)
    ts: float = field(default_factory=now)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "from": self.sender, "to": self.to, "in_reply_to": self.in_reply_to,
                "text": self.text, "ok": self.ok, "ts": self.ts}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Reply":
        return cls(sender=d["from"], to=d["to"], in_reply_to=d["in_reply_to"], text=d["text"],
                   ok=d.get("ok", True), id=d["id"], ts=d["ts"])


ALL_PAYLOADS: tuple[type[Payload], ...] = (Perception, Action, ActionResult, CompanionMessage, Status, Estop, Reply)

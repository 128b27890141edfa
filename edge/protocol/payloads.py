"""Payload types of the MQTT wire contract (docs/protocol.md); each class owns its topic, QoS and
JSON Schema.

Receiving code calls ``Cls.decode(raw_bytes)``: the bytes go through the strict wire codec
(``edge.protocol.codec``), are validated against the class's schema, and turned into a typed
object, or a ``PayloadError`` names what was wrong. Senders build the object and call
``encode()``, which refuses (``CodecError``) what a strict peer would refuse. What every payload
shares (the base class, the wire mapping of its fields) is ``edge/protocol/payload_base.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeGuard, get_args

from edge.protocol import codec
from edge.protocol.codec import CodecError, Limits
from edge.protocol.payload_base import Payload, PayloadError, new_id, now, wire

_UUID = {"type": "string", "format": "uuid",
         "pattern": "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"}
_TS = {"type": "number", "minimum": 0}
_NAME = {"type": "string", "minLength": 1, "maxLength": 200}

LARGE = Limits(max_bytes=8 * 1024 * 1024)
"""Perceptions: an image perception carries a base64 JPEG."""

__all__ = ["ALL_PAYLOADS", "Action", "ActionError", "ActionResult", "CodecError", "CompanionMessage", "Estop",
           "Payload", "PayloadError", "Perception", "Reply", "Speaking", "VoiceActivity", "Status", "new_id", "now",
           "wire"]


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


@dataclass
class Speaking(Payload):
    """The body began to play a speech action's sound (its first block went to the device): how
    the microphone knows when the robot's voice really starts, which on a busy CPU is seconds after
    the ``speak`` action (synthesis). An extension of the seed's topics, like ``voice``."""

    TOPIC: ClassVar[str] = "speaking"
    SCHEMA: ClassVar[dict[str, Any]] = {
        "type": "object", "required": ["id", "from", "action", "at", "ts"],
        "properties": {"id": _UUID, "from": _NAME, "action": {"type": "string"}, "at": _TS, "ts": _TS},
    }

    sender: str = field(metadata=wire("from"))
    action: str                   # the speech action's id
    at: float                     # wall time its sound began
    id: str = field(default_factory=new_id)
    ts: float = field(default_factory=now)


ALL_PAYLOADS: tuple[type[Payload], ...] = (Perception, Action, ActionResult, CompanionMessage, Status, Estop, Reply,
                                           VoiceActivity, Speaking)

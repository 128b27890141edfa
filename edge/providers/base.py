"""The provider contract every LLM backend implements (OpenStarry Standard Protocol).

A provider turns a prompt plus context (tools, history, parameters) into a
``ProviderResponse``: an ordered list of segments (text, tool calls, images, ...).
The brain never sees an API's own shapes; each provider translates upstream
(tools -> the API's format) and downstream (the API's reply -> segments).
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Literal, Protocol, runtime_checkable

SegmentType = Literal["text", "image", "audio", "video", "ui", "tool_call", "error"]
FinishReason = Literal["end_turn", "max_tokens", "tool_use", "stop_sequence", "content_filter", "error"]


@dataclass
class ToolCall:
    """The model's intent to run one action; ``id`` is always set (a UUID when the API gives none)."""

    name: str
    args: dict[str, Any]
    id: str = field(default_factory=lambda: str(uuid.uuid4()))


@dataclass
class ContentSegment:
    """One ordered piece of a reply. ``error`` segments carry replies that could not be parsed."""

    type: SegmentType
    text: str | None = None
    data: str | None = None
    mime_type: str | None = None
    tool_call: ToolCall | None = None
    ui: Any = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        if self.text is not None:
            out["text"] = self.text
        if self.data is not None:
            out["data"] = self.data
        if self.mime_type is not None:
            out["mimeType"] = self.mime_type
        if self.tool_call is not None:
            out["toolCall"] = asdict(self.tool_call)
        if self.ui is not None:
            out["ui"] = self.ui
        return out


@dataclass
class ProviderResponse:
    """What ``generate`` returns: segments in the order the model produced them, plus metadata
    (usage, model, latency_s, finish_reason)."""

    segments: list[ContentSegment] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [s.tool_call for s in self.segments if s.type == "tool_call" and s.tool_call]

    @property
    def text(self) -> str:
        return "".join(s.text or "" for s in self.segments if s.type == "text")

    @property
    def errors(self) -> list[str]:
        return [s.text or "" for s in self.segments if s.type == "error"]

    def to_json(self) -> dict[str, Any]:
        return {"segments": [s.to_json() for s in self.segments], "metadata": self.metadata}


@dataclass
class Tool:
    """An action offered to the model: its name, description and JSON Schema for the args."""

    name: str
    description: str
    parameters: dict[str, Any]


Role = Literal["system", "user", "assistant", "tool"]


@dataclass
class Message:
    """One turn of conversation history sent to the provider."""

    role: Role
    content: str


@dataclass
class ProviderContext:
    """Everything besides the prompt: the tools map, history and standard parameters."""

    tools: list[Tool] = field(default_factory=list)
    system: str = ""
    history: list[Message] = field(default_factory=list)
    temperature: float | None = None
    max_tokens: int | None = None
    top_p: float | None = None
    stop: list[str] | None = None
    timeout_s: float | None = None
    tool_choice: str | dict[str, Any] | None = None   # "auto" | "required" | "none" | {"name": TOOL}
    response_format: dict[str, Any] | None = None     # {"type": "json_schema", "schema": {...}} or {"type": "json_object"}
    structured: bool | None = None   # True: decide through a JSON-Schema-constrained reply instead of native tools
    cancel: threading.Event | None = None  # set it to abandon the call (E4002)
    spoken_to: bool = False          # a person is talking to the companion: lean towards answering in words
    answer: bool = False             # a person said something: reply with an action or words, not "none"
    # The actions the prompt describes, when more than ``tools`` (which the reply may use): the
    # same text every turn keeps llama.cpp's prompt cache valid while the offer narrows.
    described: list[Tool] | None = None
    # Called with each clause of a reply in words while the model still writes the rest (a
    # provider that cannot stream never calls it; the full reply comes back as usual).
    on_words: Callable[[str], None] | None = None


class ProviderError(Exception):
    """A failed provider call, with an AI-Protocol error code (E1001..E9999).

    The retryable / fallbackable flags default to the standard table's for the code;
    ``retry_after`` carries a server's ``Retry-After`` in seconds, ``status`` its HTTP status.
    """

    def __init__(self, code: str, message: str, *, retryable: bool | None = None,
                 fallbackable: bool | None = None, retry_after: float | None = None,
                 status: int | None = None, provider: str | None = None):
        from edge.providers.errors import STANDARD_ERRORS

        standard = STANDARD_ERRORS.get(code, STANDARD_ERRORS["E9999"])
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.name = standard.name
        self.retryable = standard.retryable if retryable is None else retryable
        self.fallbackable = standard.fallbackable if fallbackable is None else fallbackable
        self.retry_after = retry_after
        self.status = status
        self.provider = provider

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "name": self.name, "message": self.message,
                               "retryable": self.retryable, "fallbackable": self.fallbackable}
        for key in ("retry_after", "status", "provider"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out


@runtime_checkable
class Provider(Protocol):
    """Anything with ``generate``; ``name`` is for logs. ``warm`` is optional (``Warmable``)."""

    name: str

    def generate(self, prompt: str, context: ProviderContext) -> ProviderResponse: ...

    def close(self) -> None: ...


@runtime_checkable
class Warmable(Protocol):
    """The optional warm-up hook: a provider that pays a first-call cost (weights paged in,
    a grammar compiled, a prompt cache filled) pays it here, before the node says it is ready,
    given the context (system prompt, actions, history) its first decisions will carry.
    Remote APIs leave it out."""

    def warm(self, context: ProviderContext) -> bool: ...


def warm(provider: object, context: ProviderContext) -> bool:
    """Warm ``provider`` when it has the hook; True when something was warmed. May raise ProviderError."""
    if isinstance(provider, Warmable):
        return bool(provider.warm(context))
    return False

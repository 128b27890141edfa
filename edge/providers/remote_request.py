"""What the Anthropic and Gemini providers share when they build a request from the context.

Both APIs take the system text apart from the conversation, and both want turns of two roles
(user / the model) rather than our four. ``conversation`` folds the history into such turns:

* ``system`` messages in the history join the system text (neither API has a system turn);
* ``tool`` messages become user turns carrying the observation as text. We keep no native
  tool-use ids across turns (the brain's history is text), so the observation cannot be sent
  as the API's own tool-result block, which would need the id of the call it answers;
* consecutive turns of one role are merged into one turn of several parts, so the result
  always alternates (older Gemini models reject two user turns in a row; Anthropic merges them
  itself, but we do not rely on it); empty messages are skipped (Anthropic rejects empty text).

``api_key`` finds a key, and refuses to call an official host without one (E1002 naming the
environment variable) while a custom URL (a proxy, a local gateway) may go without.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Literal, Sequence, TypeVar

from edge import environment
from edge.providers.base import ProviderContext, ProviderError

TOOL_RESULT_PREFIX = "Tool result: "

T = TypeVar("T")


@dataclass
class Turn:
    """One turn of the conversation as the API will see it: the speaker and its text parts."""

    role: Literal["user", "assistant"]
    parts: list[str] = field(default_factory=list)


def conversation(context: ProviderContext, prompt: str) -> tuple[str, list[Turn]]:
    """(system text, alternating turns ending with ``prompt`` as the last user turn)."""
    system = [context.system] if context.system else []
    turns: list[Turn] = []

    def add(role: Literal["user", "assistant"], text: str) -> None:
        if not text:
            return
        if turns and turns[-1].role == role:
            turns[-1].parts.append(text)
        else:
            turns.append(Turn(role, [text]))

    for message in context.history:
        if message.role == "system":
            if message.content:
                system.append(message.content)
        elif message.role == "tool":
            add("user", TOOL_RESULT_PREFIX + message.content if message.content else "")
        elif message.role == "assistant":
            add("assistant", message.content)
        else:
            add("user", message.content)
    add("user", prompt)
    return "\n\n".join(system), turns


def api_key(explicit: str | None, env_vars: Sequence[str], official_host: bool, provider: str) -> str | None:
    """The key given, else the first environment variable set; ``None`` is allowed only for a
    custom URL. Checked per call, so a chain with this provider first can still fall back."""
    if explicit:
        return explicit
    for name in env_vars:
        value = environment.value(name)
        if value:
            return value
    if official_host:
        names = " or ".join(env_vars)
        raise ProviderError("E1002", f"{provider}: no API key; set {names} (or pass @URL for a proxy "
                                     f"that needs none)", provider=provider)
    return None


def check_cancel(cancel: threading.Event | None, provider: str) -> None:
    """E4002 when the caller has abandoned the call (checked before and after a request)."""
    if cancel is not None and cancel.is_set():
        raise ProviderError("E4002", f"{provider} call cancelled", provider=provider)


def pick(per_call: T | None, default: T | None) -> T | None:
    """A per-call value from the context wins over the constructor's default."""
    return per_call if per_call is not None else default

"""Turn a companion definition and one perception into what the provider sees.

The system text carries who the companion is (personality, story) and the rules it acts by
(the definition's events, as "when <perception>: <condition>"); the user text carries the
perception with its title, so the model always knows which sense it came from. Kept short on
purpose: the embedded model has 135M parameters and a small context.
"""

from __future__ import annotations

from edge.protocol.companion import Companion, EventSpec
from edge.protocol.payloads import Perception
from edge.providers.base import Tool

MAX_BODY_CHARS = 1500


def system_text(companion: Companion, perception_title: str | None = None) -> str:
    """Identity and rules. When a perception is given, only its events are listed (fewer, sharper rules)."""
    lines = [f"You are {companion.name}, a robot companion."]
    if companion.personality:
        lines.append(f"Personality: {companion.personality}")
    if companion.story:
        lines.append(f"Story: {companion.story}")
    events = companion.events_for(perception_title) if perception_title else companion.events
    if events:
        lines.append("Rules:")
        lines.extend(f"- {_rule(e)}" for e in events)
    lines.append("Decide on your own whether to act. Choosing no action is allowed.")
    return "\n".join(lines)


def _rule(event: EventSpec) -> str:
    return f"on {event.perception}: {event.condition} (actions: {', '.join(event.actions)})"


def user_text(perception: Perception) -> str:
    """The perception as one line the model reads: its title, its format and its body."""
    body = perception.body_text()
    if perception.format == "image":
        body = f"<image, {len(body)} base64 characters>"
    elif len(body) > MAX_BODY_CHARS:
        body = body[:MAX_BODY_CHARS] + " ..."
    return f"Perception '{perception.title}' ({perception.format}): {body}"


def offered_tools(companion: Companion, perception_title: str, events_only: bool = True) -> list[Tool]:
    """The actions offered for this perception: its events' actions when it has events and
    ``events_only`` is set (a smaller choice suits a small model), else every action."""
    names: list[str] = []
    if events_only:
        for event in companion.events_for(perception_title):
            names.extend(n for n in event.actions if n not in names)
    specs = [companion.action(n) for n in names] if names else list(companion.actions)
    return [Tool(name=s.title, description=s.description, parameters=s.schema) for s in specs if s is not None]


def correction_text(problems: list[str]) -> str:
    """The observation fed back when a decision broke its action's schema."""
    listed = "; ".join(problems)
    return f"Your last decision was rejected: {listed}. Decide again with valid parameters, or choose no action."

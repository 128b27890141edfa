"""Turn a companion definition and one perception into what the provider sees.

The system text carries who the companion is (personality, story), the rules it acts by (the
definition's events for this perception, each as "on <perception>: <condition> (actions: ...)")
and, where the events give them, a few worked examples (an event's ``x-examples``: a perception body and the
decision it should get). The user text carries the perception with its title, so the model
always knows which sense it came from; its body comes last (``input (text): Hello!``).

Kept short on purpose: the embedded model has 135M parameters and a small context, and it
mostly *copies*: from the user text (it repeats a question instead of answering it) and from
examples. What we measured on SmolLM2-135M (bench/decision_quality.py, docs/embedded-model.md):

* examples in exactly the user text's format are what stop it from parroting the user;
  instructions ("answer in your own words") alone change nothing;
* example lines spoken without a final full stop keep its replies to one short clause (with
  "I love songs." it goes on "I love songs. I love songs. ..." up to the length limit);
* a structured body as compact JSON (``"x":-0.6``) is copied exactly into a decision's params
  (``"x":-0.6``): so a vision perception is looked at where it is;
* it does not map words to directions ("left" -> x < 0) whatever the wording: a "look" request
  gets the direction of the look example. A closing "Decide on your own whether to act" line
  made no difference and is gone.
"""

from __future__ import annotations

import json
from typing import Any

from edge.protocol.companion import Companion, EventSpec
from edge.protocol.payloads import Perception
from edge.providers.base import Tool

MAX_BODY_CHARS = 1500
MAX_EXAMPLES = 8          # per system text: each costs ~25 prompt tokens on a perception switch
EXAMPLES_KEY = "x-examples"


def system_text(companion: Companion, perception_title: str | None = None) -> str:
    """Identity, rules and examples. When a perception is given, only its events are listed
    (fewer, sharper rules) with their examples."""
    lines = [f"You are {companion.name}, a robot companion."]
    if companion.personality:
        lines.append(f"Personality: {companion.personality}")
    if companion.story:
        lines.append(f"Story: {companion.story}")
    events = companion.events_for(perception_title) if perception_title else companion.events
    if events:
        lines.append("Rules:")
        lines.extend(f"- {_rule(e)}" for e in events)
    shots = examples(companion, perception_title) if perception_title else []
    if shots:
        lines.append("Examples:")
        lines.extend(shots)
    return "\n".join(lines)


def _rule(event: EventSpec) -> str:
    return f"on {event.perception}: {event.condition} (actions: {', '.join(event.actions)})"


def examples(companion: Companion, perception_title: str) -> list[str]:
    """The worked examples of this perception's events, each as the user text the model will see
    followed by the decision it should answer with (compact JSON, as the grammar emits it).

    An event gives them as ``"x-examples": [{"body": ..., "decision": {"action": ..., "params":
    {...}}}]`` (``format`` optional: "text" for a string body, "object" otherwise). Examples
    whose action is not one of their event's actions, or that are malformed, are skipped.
    """
    out: list[str] = []
    for event, raw in _events_with_source(companion, perception_title):
        items = raw.get(EXAMPLES_KEY) if isinstance(raw, dict) else None
        for item in items if isinstance(items, list) else []:
            line = _example(event, item)
            if line is not None and len(out) < MAX_EXAMPLES:
                out.append(line)
    return out


def _events_with_source(companion: Companion, perception_title: str) -> list[tuple[EventSpec, Any]]:
    """Each event of the perception with its object in the file (where x- keys live)."""
    source = companion.source.get("events") if isinstance(companion.source, dict) else None
    if not isinstance(source, list) or len(source) != len(companion.events):
        return []
    return [(e, raw) for e, raw in zip(companion.events, source) if e.perception == perception_title]


def _example(event: EventSpec, item: Any) -> str | None:
    if not isinstance(item, dict) or "body" not in item or not isinstance(item.get("decision"), dict):
        return None
    decision = item["decision"]
    action = decision.get("action")
    if action != "none" and (action not in event.actions or not isinstance(decision.get("params"), dict)):
        return None
    body = item["body"]
    fmt = item.get("format") or ("text" if isinstance(body, str) else "object")
    perception = Perception(title=event.perception, body=body, format=fmt)
    shown = {"action": action, "params": decision["params"]} if action != "none" else {"action": "none"}
    return f"{user_text(perception)}\n{_compact(shown)}"


def user_text(perception: Perception) -> str:
    """The perception as one line the model reads: its title, its format and its body (last),
    e.g. ``input (text): Hello!``. A structured body is compact JSON: the model copies
    ``"x":0.4`` into a decision verbatim. (A longer "Perception 'input' (text): ..." scored
    lower, 88 against 103 of 186 decisions, and costs 3 tokens per example.)"""
    if perception.format == "image":
        body = f"<image, {len(perception.body_text())} base64 characters>"
    else:
        body = perception.body if isinstance(perception.body, str) else _compact(perception.body)
        if len(body) > MAX_BODY_CHARS:
            body = body[:MAX_BODY_CHARS] + " ..."
    return f"{perception.title} ({perception.format}): {body}"


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


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

"""Turn a companion definition and one perception into what the provider sees.

The system text is the same for every perception of a companion: who it is (personality, story),
the rules it acts by (every event, as "on <perception>: <condition> (actions: ...)") and a few
worked examples (events' ``x-examples``: a perception body and the decision it should get). Kept
constant on purpose: llama.cpp keeps it in its prompt cache, so a decision reads only the few
tokens of the new perception (on a 0.5B model on 2 cores, re-reading a 500-token prompt costs
~2-3 s; reading a 40-token perception line ~0.2 s). The user text carries the perception with its
title, so the model always knows which sense it came from; its body comes last
(``input (text): Hello!``). A correction round repeats that line together with the rejected reply
and why it was rejected, so a model with no conversation memory still knows what it is correcting.

What we measured on small models (bench/decision_quality.py, docs/embedded-model.md):

* examples in exactly the user text's format are what stop a small model from parroting the user;
* a structured body as compact JSON (``"x":-0.6``) is copied exactly into a decision's params, and
  the camera reports positions in the frame ``look`` takes (docs/protocol.md, "Spatial frame"),
  so a vision perception is looked at where it is;
* a camera body's ``frame`` (picture size, timestamp) only distracts: it is left out.
"""

from __future__ import annotations

import json
import re
from typing import Any

from edge.brain.slot_numbers import extremes, numbers_for, says_numbers
from edge.brain.slots import pin, settled
from edge.protocol.companion import Companion, EventSpec
from edge.protocol.speech_action import spoken_action
from edge.protocol.language import companion_language
from edge.protocol.payloads import Perception, is_perception_format
from edge.providers.base import Message, Tool

MAX_BODY_CHARS = 1500
MAX_EXAMPLES = 8          # per system text: each costs ~25 prompt tokens on a perception switch
EXAMPLES_KEY = "x-examples"


def system_text(companion: Companion) -> str:
    """Identity, every rule and the examples: the same text for every perception (see above)."""
    lines = [f"You are {companion.name}, a robot companion."]
    if companion.personality:
        lines.append(f"Personality: {companion.personality}")
    if companion.story:
        lines.append(f"Story: {companion.story}")
    lines.append("Rules:")
    lines.append("- When someone talks to you, answer them in your own words; use another action only "
                 "when they ask for it.")
    if speaks_japanese(companion):
        lines.append("- Always speak Japanese (いつも日本語で話す).")
    elif companion_language(companion) == "zh":
        lines.append("- Always speak Chinese (请一直用中文说话).")
    if companion.events:
        lines.extend(f"- {_rule(e)}" for e in companion.events)
    lines.append("- When a perception shows nothing new, choose none.")
    return "\n".join(lines)


def speaks_japanese(companion: Companion) -> bool:
    """A companion written in Japanese speaks Japanese: kana in its name, personality or story.
    (The file format has no language field; small models otherwise drift into English, measured:
    "こんにちは！" got "Hello! How can I assist you today?")."""
    text = " ".join(t or "" for t in (companion.name, companion.personality, companion.story))
    return re.search(r"[\u3040-\u30ff]", text) is not None


def _rule(event: EventSpec) -> str:
    return f"on {event.perception}: {event.condition} (actions: {', '.join(event.actions)})"


def example_pairs(companion: Companion, perception_title: str | None = None) -> list[tuple[str, str]]:
    """The worked examples as (user text, decision JSON) pairs, at most ``MAX_EXAMPLES``: the
    perception line the model will see and the compact decision it should answer with.

    An event gives them as ``"x-examples": [{"body": ..., "decision": {"action": ..., "params":
    {...}}}]`` (``format`` optional: "text" for a string body, "object" otherwise). Examples
    whose action is not one of their event's actions, or that are malformed, are skipped."""
    out: list[tuple[str, str]] = []
    for event, raw in _events_with_source(companion, perception_title):
        items = raw.get(EXAMPLES_KEY) if isinstance(raw, dict) else None
        for item in items if isinstance(items, list) else []:
            pair = _example(event, item)
            if pair is not None and len(out) < MAX_EXAMPLES:
                out.append(pair)
    return out


def example_turns(companion: Companion) -> list[Message]:
    """The examples as earlier chat turns (user: a perception line, assistant: its decision):
    an instruct model follows demonstrated turns far more closely than examples in the system
    text, and they are as constant as the system text, so they stay in the prompt cache."""
    turns: list[Message] = []
    # Speech last: a small model leans towards the kind of reply it saw most recently, and most
    # of what people say to a companion wants words, not motion.
    voice = spoken_action(companion)
    said = f'"action":"{voice.name if voice else "speak"}"'
    pairs = sorted(example_pairs(companion), key=lambda pair: said in pair[1])
    introduction = self_introduction(companion)
    if introduction is not None:   # the last turn before the perception: its facts stay in view
        pairs.append(introduction)
    for said, decided in pairs:
        turns += [Message("user", said), Message("assistant", decided)]
    return turns


INTRODUCE_EN = "Tell me about yourself."   # what the companion is asked before it tells its story
INTRODUCE_JA = "自己紹介して。"


def self_introduction(companion: Companion) -> tuple[str, str] | None:
    """A worked example in which the companion tells its own story when asked about itself.

    The story sits in the system text, but a 0.5B model answers from what it saw last: asked its
    age, its grade or its job it invented one ("私は1歳です。" from a first-year student, 14 by its
    story). Said by the companion itself in the turn just before the perception, the facts are
    where a small model looks (held-out set F: 3 of 3 story questions wrong without it). Constant
    per companion, so it costs nothing after the warm-up (prompt cache); the story beside each
    question instead cost ~0.3 s of prompt reading per question for the same score."""
    voice = spoken_action(companion)
    speech = companion.action(voice.name) if voice is not None else None
    if voice is None or speech is None or not companion.story.strip():
        return None
    props = speech.schema.get("properties")
    if not isinstance(props, dict) or list(props) != [voice.param]:
        return None
    param = voice.param
    asked = INTRODUCE_JA if speaks_japanese(companion) else INTRODUCE_EN
    perception = Perception(title="input", body=asked, format="text")
    return user_text(perception), _compact({"action": speech.title, "params": {param: companion.story.strip()}})


def _events_with_source(companion: Companion, perception_title: str | None) -> list[tuple[EventSpec, Any]]:
    """Each event of the perception with its object in the file (where x- keys live)."""
    source = companion.source.get("events") if isinstance(companion.source, dict) else None
    if not isinstance(source, list) or len(source) != len(companion.events):
        return []
    return [(e, raw) for e, raw in zip(companion.events, source)
            if perception_title is None or e.perception == perception_title]


def _example(event: EventSpec, item: Any) -> tuple[str, str] | None:
    if not isinstance(item, dict) or "body" not in item or not isinstance(item.get("decision"), dict):
        return None
    decision = item["decision"]
    action = decision.get("action")
    if action != "none" and (action not in event.actions or not isinstance(decision.get("params"), dict)):
        return None
    body = item["body"]
    fmt = item.get("format") or ("text" if isinstance(body, str) else "object")
    if not is_perception_format(fmt):
        return None
    perception = Perception(title=event.perception, body=body, format=fmt)
    shown = {"action": action, "params": decision["params"]} if action != "none" else {"action": "none"}
    return user_text(perception), _compact(shown)


def user_text(perception: Perception) -> str:
    """The perception as one line the model reads: its title, its format and its body (last),
    e.g. ``input (text): Hello!``. A structured body is compact JSON: the model copies
    ``"x":0.4`` into a decision verbatim. (A longer "Perception 'input' (text): ..." scored
    lower, 88 against 103 of 186 decisions, and costs 3 tokens per example.)"""
    if perception.format == "image":
        body = f"<image, {len(perception.body_text())} base64 characters>"
    else:
        shown = perception.body
        if isinstance(shown, dict) and "frame" in shown:
            shown = {k: v for k, v in shown.items() if k != "frame"}
        body = shown if isinstance(shown, str) else _compact(shown)
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


LOOK_ACTION = "look"


def ground_tools(tools: list[Tool], perception: Perception) -> list[Tool]:
    """For words, each number said is pinned in the parameter it measures (slot_numbers.py): a
    model that chooses the action keeps the person's number. For a view that reports objects,
    ``look`` may only point at one of them.

    A camera body gives each object's ``x``/``y`` in the frame ``look`` takes (docs/protocol.md),
    so looking at a thing means copying two numbers; small models copy the digits but sometimes
    not the sign (Qwen2.5-Coder-0.5B turned to x=0.7 for a cup at x=-0.7). The grammar is told the
    exact values the objects have (an ``enum`` per axis), so a look goes where something is; the
    model still decides whether to look, speak or do nothing, and at what. The descriptions the
    model reads do not change (``decision_prompt`` shows the range), so the prompt cache holds.
    """
    body = perception.body
    if perception.format == "text" and isinstance(body, str):   # "ninety degrees": the number said, pinned
        return [pin(t, _said_numbers(t, body)) for t in tools] if says_numbers(body) else tools
    objects = body.get("objects") if isinstance(body, dict) else None
    if not isinstance(objects, list):
        return tools
    points = [(o["x"], o["y"]) for o in objects if isinstance(o, dict) and _number(o.get("x")) and _number(o.get("y"))]
    if not points:
        return tools
    return [_grounded(t, points) if t.name == LOOK_ACTION else t for t in tools]


def _said_numbers(tool: Tool, text: str) -> dict[str, Any]:
    """The numbers the words give this action, each with the sign a direction gives it
    ("45 degrees to the left" is -45 where left is negative)."""
    numbers = numbers_for(tool, text, {})
    numbers.update(extremes(tool, text, numbers))
    if not numbers:
        return numbers
    full = settled(tool, text)
    return {name: full.get(name, value) for name, value in numbers.items()}


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value


def _grounded(tool: Tool, points: list[tuple[float, float]]) -> Tool:
    props = tool.parameters.get("properties") if isinstance(tool.parameters, dict) else None
    if not isinstance(props, dict) or not all(isinstance(props.get(a), dict) for a in ("x", "y")):
        return tool
    narrowed = dict(props)
    for index, axis in enumerate(("x", "y")):
        spec = props[axis]
        low, high = spec.get("minimum", float("-inf")), spec.get("maximum", float("inf"))
        values = sorted({min(high, max(low, p[index])) for p in points})
        narrowed[axis] = {**spec, "enum": values}
    return Tool(name=tool.name, description=tool.description, parameters={**tool.parameters, "properties": narrowed})


def correction_text(perception_line: str, rejected: str, problems: list[str], answer: bool = False,
                    japanese: bool = False) -> str:
    """What the model reads after a rejected decision: the perception again, its own reply, and
    why it was rejected. With no conversation memory (the default for small models) this is all
    it knows, so without the perception it could only repeat itself. When a person spoke
    (``answer``), "none" is no way out: the model is asked to answer them.

    What was wrong with the *words* of a reply (an echo, an example's answer, "none" said aloud,
    too long) is said plainly, in the companion's language, without the checks' own wording:
    the 0.5B model said the problem texts aloud ("'none' aloud", "回答 what they said.")."""
    if answer and problems and all(_SPOKEN_PROBLEM.search(p) for p in problems):
        why = _spoken_reasons(problems, japanese)
        if japanese:
            return f"{perception_line}\n（その返事 {rejected} は使えません: {why}。相手に、自分の言葉で短く答えてください。）"
        return f"{perception_line}\n(Your reply {rejected} can't be used: {why}. Answer them in a few words of your own.)"
    listed = "; ".join(problems)
    cut = any("cut off" in p for p in problems)
    advice = "Decide again with a shorter reply" if cut else "Decide again with valid parameters"
    way_out = "or answer them in a few words of your own" if answer else "or choose none"
    return (f"{perception_line}\nYour reply {rejected} was rejected: {listed}. "
            f"{advice}, {way_out}.")


# Problems with what a spoken reply says (not with a decision's form), and how each is put plainly
_SPOKEN_PROBLEM = re.compile(r"/message: |cut off")
_REASONS = (("repeats what the person said", "it only repeats their words", "相手の言葉のくり返しです"),
            ("'none' aloud", "it says nothing to them", "何も答えていません"),
            ("says nothing", "it says nothing to them", "何も答えていません"),
            ("cut off", "it is too long", "長すぎます"))


def _spoken_reasons(problems: list[str], japanese: bool) -> str:
    found = list(dict.fromkeys(ja if japanese else en for key, en, ja in _REASONS if any(key in p for p in problems)))
    return ("、" if japanese else "; ").join(found) or ("言葉に問題があります" if japanese else "its words")

"""What a command sentence itself says about an action's parameters, read through the
parameters' own descriptions.

A small model asked to "look to your left" picks the action but often gets the numbers wrong
(``y: -1``, a minus sign dropped); the sentence already says which way. Each parameter's
description names its ends ("your left (-1), to right (1)", "back (-) or forward (+)",
"自分の右が正、左が負", "0 is slow, 1 is fast"), so a direction, speed or side the person said
can be turned into a value without the model, for any companion file that describes its
parameters this way. Counts ("twice", "3回") fill integer counts; a word naming an enum value
("left paw", "おじぎ(bow)" in the description) picks it. What the sentence does not settle is
left to the model, held to the pinned values by the grammar (``pin``).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from edge.brain.quantities import convert, param_unit, quantities
from edge.brain.slot_numbers import LITTLE, described_levels, extremes, numbers_for
from edge.protocol.number_words import english, japanese
from edge.providers.base import Tool

# Meanings a sentence or a description can name, in English and Japanese. A description's words
# and a person's words meet here: "ceiling" and "top" both mean up.
CONCEPTS: dict[str, str] = {
    "left": r"\bleft\b|左|ひだり",
    # "right" as a side, not "all right", "you're right", "right under my feet", "right now"
    "right": r"(?<!all )(?<!that's )(?<!you're )(?<!you are )(?<!i'm )\bright\b"
             r"(?! now| away| there| here| back| next| behind| in front| at| on| by| under| over| where| above| below"
             r"| beside| into| in\b| through| off| outside| inside| before| after| along| around)|右|みぎ",
    "up": r"\bup(?:wards?)?\b|\bceiling\b|\bsky\b|\babove\b|\btop\b|上(?!手)|うえ|天井|空",
    "down": r"\bdown(?:wards?)?\b|\bfloor\b|\bground\b|\bfeet\b|\bbelow\b|\bbottom\b|下(?!が[っるりれろ])|した|床|足元",
    "forward": r"\bforwards?\b|\bahead\b|\bcloser\b|\bnearer\b|\bcome (?:here|over|to me)\b|\btowards? me\b|\bover here\b"
               r"|\bfront\b|前|まえ|近く|近づ|こっち|こちら",
    "back": r"\bback(?:wards?)?\b|\baway\b|\bbehind\b|\bfurther\b|\bsome (?:space|room)\b|後ろ|うしろ|下が[っるりれろ]|さが[っるりれろ]|離れ|はなれ",
    "centre": r"\bstraight\b|\bcent(?:re|er)\b|\bmiddle\b|\blevel\b|正面|真ん中|まんなか|水平",
    "slow": r"\bslow(?:ly|er|est)?\b|\bcalm(?:ly|er|est)?\b|\bgentl[ey]\b|\bsoft(?:ly)?\b|ゆっくり|のんびり|そっと",
    "fast": r"\bfast(?:er|est)?\b|\bquick(?:ly|er|est)?\b|\bexcited(?:ly)?\b|\bhapp(?:ily|iest)\b|\bwild(?:ly)?\b|\bhard\b"
            r"|速く|はやく|早く|激しく|元気",
}
_PACE = ("slow", "fast")
_CONCEPT = {name: re.compile(pattern, re.IGNORECASE) for name, pattern in CONCEPTS.items()}
_CLAUSE = re.compile(r"[,;.。、；]")
_NUMBER = r"[+\-−]?\s*\d+(?:\.\d+)?"
# A value after its word: "left (-1)", "forward (+)", "左が -1", "右が正".
_AFTER = re.compile(rf"[(（]\s*({_NUMBER}|[+\-−])\s*[)）]|が\s*({_NUMBER}|正|負)")
# A value before its words, to the end of the clause: "0 is slow", "1 is a very excited one".
_BEFORE = re.compile(rf"({_NUMBER})\s+(?:is|means)\b")
_METRES = re.compile(r"metre|meter|メートル|\(m\)|（m）", re.IGNORECASE)
_COUNT_WORDS = re.compile(r"how many|number of|times|count|回|度|何", re.IGNORECASE)


@dataclass(frozen=True)
class Anchor:
    """One end or the middle of a parameter, as its description names it: a value, or only a
    sign ("(+)") whose size the sentence or the parameter's range decides."""
    concept: str
    value: float | None = None
    sign: int = 0


def concepts_in(text: str) -> list[tuple[int, str]]:
    """Every concept named in ``text``, with its position, in order."""
    found = [(m.start(), name) for name, rx in _CONCEPT.items() for m in rx.finditer(text)]
    return sorted(found)


@functools.lru_cache(maxsize=1024)
def anchors(description: str) -> tuple[Anchor, ...]:
    """The concepts a parameter's description ties to values (see the module docstring). Cached:
    a companion's few descriptions are read on every sentence a person says."""
    words = concepts_in(description)
    out: list[Anchor] = []
    bound: set[int] = set()
    for m in _AFTER.finditer(description):
        raw = (m.group(1) or m.group(2)).replace(" ", "").replace("−", "-")
        before = [(at, c) for at, c in words if at < m.start() and at not in bound]
        if not before:
            continue
        at, concept = before[-1]
        bound.add(at)
        out.append(_anchor(concept, raw))
    for m in _BEFORE.finditer(description):
        end = _CLAUSE.search(description, m.end())
        stop = end.start() if end else len(description)
        for at, concept in words:
            if m.end() <= at < stop:
                out.append(_anchor(concept, m.group(1).replace(" ", "")))
    return tuple(out)


def _anchor(concept: str, raw: str) -> Anchor:
    if raw in ("+", "正"):
        return Anchor(concept, sign=1)
    if raw in ("-", "負"):
        return Anchor(concept, sign=-1)
    return Anchor(concept, value=float(raw))


def amount(text: str) -> float | None:
    """A distance the sentence names, in metres ("50 cm", "one metre", "半メートル"), or None."""
    return next((metres for q in quantities(text) if q.unit and (metres := convert(q.value, q.unit, "m")) is not None), None)


def count(text: str) -> int | None:
    """A count the sentence names: "3", "three times", "twice", "三回"; None when it names none."""
    lowered = text.lower()
    if m := re.search(r"\b(once|twice|thrice)\b", lowered):
        return {"once": 1, "twice": 2, "thrice": 3}[m.group(1)]
    if m := re.search(r"(?<![\d.])(\d{1,2})(?![\d.]|\s*(?:cm|m\b|met|centi|センチ|メートル))", lowered):
        return int(m.group(1))
    for n in range(20, 0, -1):
        word = english(n)
        if word and re.search(rf"\b{word}\b", lowered):
            return n
        if any(k + c in text for k in japanese(n) for c in ("回", "度", "つ")):
            return n
    return None


def _bounds(spec: dict[str, Any]) -> tuple[float | None, float | None]:
    low, high = spec.get("minimum"), spec.get("maximum")
    return (float(low) if isinstance(low, (int, float)) else None,
            float(high) if isinstance(high, (int, float)) else None)


def _fit(value: float, spec: dict[str, Any]) -> float | int:
    low, high = _bounds(spec)
    if low is not None:
        value = max(low, value)
    if high is not None:
        value = min(high, value)
    return int(round(value)) if spec.get("type") == "integer" else round(value, 3)


def _directional(spec: dict[str, Any], said: set[str], text: str) -> float | int | None:
    """A number parameter with described ends, from the concepts the sentence names."""
    marks = [a for a in anchors(str(spec.get("description", ""))) if a.concept in said]
    if not marks:
        return None
    mark = marks[0]
    little = LITTLE.search(text) is not None
    low, high = _bounds(spec)
    if mark.value is not None:
        value = mark.value * (0.5 if little and mark.value else 1.0)
        if mark.concept in _PACE and low is not None and high is not None and value in (low, high):
            value += (high - low) * 0.2 * (1 if value == low else -1)   # "slow" wags; speed 0 would not move
        return _fit(value, spec)
    reach = (high if mark.sign > 0 else -low if low is not None else None) if high is not None or low is not None else None
    distance = amount(text)
    if distance is None:
        size = (reach or 1.0) * (0.25 if little else 0.5)
        if _METRES.search(str(spec.get("description", ""))):   # a step, not half the room
            size = min(size, 0.1 if little else 0.3)
    else:
        size = distance
    return _fit(mark.sign * size, spec)


def enum_words(spec: dict[str, Any]) -> dict[Any, set[str]]:
    """Each enum value with the words that name it: itself ("shake_head" also as "shake head")
    and a word its description pairs with it ("おじぎ(bow)")."""
    description = str(spec.get("description", ""))
    out: dict[Any, set[str]] = {}
    for value in spec.get("enum") or []:
        if isinstance(value, str):
            words = {value.lower(), value.replace("_", " ").lower()}
            words.update(m.group(1) for m in re.finditer(
                rf"([^\s、。,;()（）:：]+)\s*[(（]\s*{re.escape(value)}\s*[)）]", description))
            # "broil (grill, top heat only)": short words in brackets right after the value name it too
            for m in re.finditer(rf"(?<![\w]){re.escape(value)}\s*[(（]([^)）]*)[)）]", description, re.IGNORECASE):
                words.update(w.strip().lower() for w in re.split(r"[,，、/;・]", m.group(1))
                             if 0 < len(w.split()) <= 2 and len(w.strip()) >= (3 if w.isascii() else 2))
            words.update(_adverbs(words))
            out[value] = words
    return out


def _adverbs(words: set[str]) -> set[str]:
    """"gently" for gentle, "slowly" for slow: how a value is said of the doing."""
    return {w[:-2] + "ly" if w.endswith("le") else w + "ly" for w in words if w.isascii() and w.isalpha() and len(w) >= 4}


def _enum_choice(spec: dict[str, Any], text: str, said: set[str]) -> Any:
    """The one enum value the sentence names: by its own words, a word the description pairs
    with it, or a concept it stands for ("左" for "left")."""
    lowered = text.lower()
    hits = [value for value, words in enum_words(spec).items()
            if any(re.search(rf"(?<![a-z]){re.escape(w)}(?![a-z])", lowered) for w in words if w)
            or (value.lower() in CONCEPTS and value.lower() in said)
            or {c for _, c in concepts_in(value.replace("_", " "))} & said & _DIRECTIONS]   # "backward": back
    return hits[0] if len(hits) == 1 else None


_DIRECTIONS = frozenset(("left", "right", "up", "down", "forward", "back"))


def points_somewhere(tool: Tool) -> bool:
    """Whether the action turns or goes towards a place (a parameter with described directions:
    look, move), as opposed to an expression (wag, nod, bark) or words."""
    props = tool.parameters.get("properties") if isinstance(tool.parameters, dict) else None
    return any(isinstance(spec, dict) and any(a.concept in _DIRECTIONS for a in anchors(str(spec.get("description", ""))))
               for spec in (props or {}).values())


def takes_distance(tool: Tool) -> bool:
    """Whether the action goes somewhere by a distance: a parameter whose ends are signs only
    ("back (-) or forward (+)"), sized by the metres a sentence names. "50 cm to the left" asks
    for such an action, never for a look."""
    props = tool.parameters.get("properties") if isinstance(tool.parameters, dict) else None
    def by_sign(spec: dict[str, Any]) -> bool:   # "right is +, left is -", not "left is -1, right is 1" (a pointing range)
        marks = anchors(str(spec.get("description", "")))
        return any(a.sign for a in marks) and not any(a.value is not None for a in marks)
    return any(isinstance(spec, dict) and by_sign(spec)
               and param_unit(name, str(spec.get("description", ""))) != "deg"   # a turn by degrees goes nowhere
               for name, spec in (props or {}).items())


_MOTION = re.compile(r"\b(?:walk|scoot|shuffle|roll|step|move|slide|drive|shift|budge|come)\w*|ずれ|動い|動け|進ん|移動|寄っ|下が|来て|きて",
                     re.IGNORECASE)


def asks_to_go(text: str) -> bool:
    """The sentence names a distance ("50 cm", "1メートル") or a verb of going ("scoot", "ずれて")."""
    return amount(text) is not None or _MOTION.search(text) is not None


# Verbs of turning the eyes, not the body: "peek to your left" is a look, whatever an embedding
# makes of "peek". Not "see" or "watch": "see you tomorrow" and "watch this" point nowhere.
_SEEING = re.compile(r"\b(?:peek|glance|peer|gaze|stare)\w*|\b(?:have|take) a (?:quick )?(?:look|peek|glance)\b"
                     r"|向いて|むいて|覗|のぞ|見上げ|見下ろ", re.IGNORECASE)


def asks_to_see(text: str) -> bool:
    """The sentence names a way of looking ("peek", "glance", "向いて") and no going."""
    return _SEEING.search(text) is not None and not asks_to_go(text)


def settled(tool: Tool, text: str) -> dict[str, Any]:
    """The parameters of ``tool`` that ``text`` settles, by name. A parameter with described
    directions that the sentence does not name is set to its middle (0) when any other one is
    named: "look left" means level, not wherever the model's numbers drift."""
    props = tool.parameters.get("properties") if isinstance(tool.parameters, dict) else None
    if not isinstance(props, dict):
        return {}
    said = {c for _, c in concepts_in(text)}
    out: dict[str, Any] = {}
    directional: list[str] = []
    for name, spec in props.items():
        if not isinstance(spec, dict):
            continue
        kind = spec.get("type")
        low, high = _bounds(spec)
        if "const" in spec:
            out[name] = spec["const"]
        elif kind in ("number", "integer") and low is not None and low == high:
            out[name] = _fit(low, spec)
        elif "enum" in spec:
            if (choice := _enum_choice(spec, text, said)) is not None:
                out[name] = choice
        elif kind in ("number", "integer"):
            if anchors(str(spec.get("description", ""))):
                directional.append(name)
                if (value := _directional(spec, said, text)) is not None:
                    out[name] = value
            elif kind == "integer" and _COUNT_WORDS.search(f"{name} {spec.get('description', '')}"):
                if (n := count(text)) is not None:
                    out[name] = _fit(n, spec)
    if any(name in out for name in directional):
        for name in directional:
            low, high = _bounds(props[name])
            if name not in out and (low is None or low <= 0) and (high is None or high >= 0):
                out[name] = 0 if props[name].get("type") == "integer" else 0.0
    out.update(numbers_for(tool, text, out))   # "ninety degrees", "half a metre", "二分半" (slot_numbers.py)
    out.update(extremes(tool, text, out))      # "turn the light off", "all the way up"
    out.update(described_levels(tool, text, out))   # "烧开" where the description says "100度（烧开）"
    for name, spec in props.items():
        if name not in out and isinstance(spec, dict) and "default" in spec:
            out[name] = spec["default"]
    return out


def usual(tool: Tool, values: dict[str, Any], text: str = "") -> dict[str, Any]:
    """``values`` with the open parameters a command needs no words for filled in as people
    mean them when they do not say: a count is one ("give me a nod"), an amount or a pace is the
    middle of its range ("wag your tail"). Directions, choices and text stay open: "move!" does
    not say where, and guessing would be the model's job. A sentence that says a number
    (``text``) said how much: what it did not settle is left open, not put in the middle."""
    props = tool.parameters.get("properties") if isinstance(tool.parameters, dict) else None
    out = dict(values)
    if text and quantities(text):
        return out
    for name, spec in (props or {}).items():
        if name in out or not isinstance(spec, dict) or spec.get("type") not in ("number", "integer") \
                or "enum" in spec or any(a.concept not in _PACE for a in anchors(str(spec.get("description", "")))):
            continue
        low, high = _bounds(spec)
        if spec.get("type") == "integer" and _COUNT_WORDS.search(f"{name} {spec.get('description', '')}"):
            out[name] = _fit(1, spec)
        elif low is not None and high is not None:
            out[name] = _fit((low + high) / 2, spec)
    return out


def complete(tool: Tool, values: dict[str, Any]) -> bool:
    """Whether ``values`` give every required parameter (the model has nothing left to fill)."""
    required = tool.parameters.get("required", []) if isinstance(tool.parameters, dict) else []
    return all(name in values for name in required)


def pin(tool: Tool, values: dict[str, Any]) -> Tool:
    """``tool`` with ``values`` fixed in its schema (``const``), so the model's grammar fills only
    the rest."""
    if not values:
        return tool
    schema = dict(tool.parameters)
    props = dict(schema.get("properties") or {})
    for name, value in values.items():
        if isinstance(props.get(name), dict):
            props[name] = {**props[name], "const": value}
    schema["properties"] = props
    return Tool(name=tool.name, description=tool.description, parameters=schema)

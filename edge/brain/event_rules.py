"""A companion file's event conditions read as tests of a sensor reading, where they can be.

Event conditions are written in plain words ("When the battery is below 20 percent and Pebble is
not charging, go back to the charger", "水温达到或超过目标水温时…", "距離が 30cm より近くなったら…").
A small model shown a reading and such a rule picks an action almost at random (a low battery
turned the head; a bump at the front turned instead of backing off; readings that trigger no rule
still got an action). Most conditions name a field of the perception, a comparison and a number,
a yes/no field ("not charging") or one of a field's values ("the front bumper"); those are read
here once per file into tests, and each reading is judged by them:

* ``held``: the event applies; the turn offers only its actions, and what its own words settle
  ("drive backward about 10 cm") needs no model at all;
* every event of the perception ``failed``: nothing calls for an action, and none is taken;
* otherwise (a condition with nothing this reader understands) the model decides, as before.

The trigger is the part of the condition before its consequence ("..., back off a little"; "…た
ら、…"; "…时，…"); a consequence that is only "do nothing" makes a rule whose action is none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from edge.brain.quantities import convert, param_unit, quantities, ranges
from edge.brain.rule_tests import HOUR_NAME, LEAST, LESS, MORE, MOST, Test, either_side, range_test
from edge.brain.slots import enum_words, settled
from edge.protocol.companion import Companion, EventSpec
from edge.providers.base import Tool

_BEFORE_NUMBER = (   # the compound words first: "达到或超过" is at least, not above
    (re.compile(r"(?:at least|no less than|not less than|not below|not under|达到或超过|达到|至少|不小于|不低于|不少于|不短于)\s*$",
                re.I), LEAST),
    (re.compile(r"(?:at most|no more than|up to|not more than|not above|not over|不大于|不高于|不多于|不超过|最多)\s*$",
                re.I), MOST),
    (re.compile(r"(?:below|under|less than|lower than|closer than|nearer than|fewer than|beneath|before|earlier than|"
                r"colder than|cooler than|"
                r"低于|小于|少于|不到|不足|近于|短于)\s*$", re.I), LESS),
    (re.compile(r"(?:above|over|more than|greater than|higher than|further than|farther than|exceeds?|beyond|after|"
                r"warmer than|hotter than|"
                r"later than|高于|大于|超过|多于|远于)\s*$", re.I), MORE),
)
_CLOCK = r"(?::00|\s*o'clock|点|時|时)?"   # "after 22:00", "22点以后": an hour said as a time of day
_FROM_THE_HOUR = re.compile(rf"^{_CLOCK}", re.I)


def _clock_said(after: str) -> bool:
    """The number just read is said as a time of day (":00", "o'clock", 点, 時 follows it)."""
    m = _FROM_THE_HOUR.match(after)
    return m is not None and m.group(0) != "" and not after[len(m.group(0)):][:1].isdigit()
_AFTER_NUMBER = (
    (re.compile(rf"^\s*(?:未満|より(?:小さ|低|少な|近|短)|以内|{_CLOCK}\s*(?:より前|之前|以前))", re.I), LESS),
    (re.compile(rf"^\s*(?:or less|or below|or under|or fewer|以下|或以下|或更少|{_CLOCK}\s*(?:or earlier|or before))", re.I),
     MOST),
    (re.compile(r"^\s*(?:を?超え|より(?:大き|高|多|遠|長))", re.I), MORE),
    (re.compile(rf"^\s*(?:or more|or above|or higher|or over|以上|或以上|或更多|"
                rf"{_CLOCK}\s*(?:or later|or after|以降|以后|之后|過ぎ))", re.I), LEAST),
)
_TRIGGER_END = re.compile(r"(?:たら|なら|ときは|時は|とき|場合は?|的时候|时[，,]|時[，,]|后[，,])|[,，:：;；。.](?=\s|$|[^\d])")
_FURTHER = re.compile(r"\s*(?:(?:and |but )?(?:only )?(?:if|unless|provided)\b|如果|要是|并且|而且|もし)", re.I)
# "hour 8 or 18", "level is 3": a number right after a field's own word, with no comparison, is that value
_IS_VALUE = re.compile(r"^\s*(?:is|equals|=|==|of|at|是|为|が|は)?\s*$", re.I)
# Words that make a condition out of a bare event: a rule whose trigger or consequence has one
# of them, or a number, and that this reader could not turn into tests is left to the model
_CONDITIONAL = re.compile(r"\b(?:if|unless|only|provided|fewer|less|more|below|above|under|over|never)\b|如果|只有|除非|"
                          r"少于|多于|低于|高于|超过|もし|なら|だけ|未満|以上|以下", re.I)
_GRAMMAR = set("的是否或者在了把被和与也都不没有时候当个一这那就会要")   # pieces with these name nothing
_NEGATION = re.compile(r"\b(?:not|no longer|isn't|is not|aren't|without)\s+(?:\w+\s+){0,2}$|不|没|未|でない|ない", re.I)
_NOTHING = re.compile(r"\b(?:do nothing|needs nothing|nothing is needed|nothing to do)\b|何もしない|何もしません|什么都不做|不用做什么|"
                      r"什么也不做", re.I)
_FUNCTION_WORDS = {"when", "whenever", "the", "and", "sees", "see", "seen", "comes", "coming", "come", "through", "into",
                   "with", "from", "that", "this", "there", "they", "them", "then", "have", "has", "been", "camera",
                   "view", "report", "reports", "shows", "appears", "any", "some", "someone", "something", "its"}
# "present changes from false to true", "present が false から true に変わったら", "present 从 false 变成 true"
_CHANGE = re.compile(r"(?:from\s+)?(?P<from>true|false|yes|no)\s*(?:から|to|→|->|变成|变为|到)\s*(?P<to>true|false|yes|no)", re.I)
_TRUE = ("true", "yes")
_WORD = re.compile(r"[a-z]{3,}|[\u3040-\u30ff\u4e00-\u9fff]{2,}", re.I)


@dataclass(frozen=True)
class Rule:
    """One event read: its tests (empty: not understood), and whether it only says do nothing."""
    event: EventSpec
    tests: tuple[Test, ...]
    nothing: bool
    consequence: str
    bare: bool = False     # names no condition at all: the reading itself is the event


    def judge(self, body: dict[str, Any], before: dict[str, Any] | None = None) -> bool | None:
        if not self.tests:
            return None
        verdicts = [t.judge(body, before) for t in self.tests]
        if any(v is False for v in verdicts):
            return False
        return True if all(v is True for v in verdicts) else None


@dataclass(frozen=True)
class Verdict:
    held: Rule | None      # the first rule that applies (its action may be "nothing")
    all_failed: bool       # every rule of the perception was understood and none applies


def split(condition: str) -> tuple[str, str]:
    """(trigger, consequence) of a condition; a bracketed note right after the trigger explains
    it and belongs to it ("人が来たら（present が false から true に変わったら）、...")."""
    m = next((m for m in _TRIGGER_END.finditer(condition) if not _inside_brackets(condition, m.start())), None)
    if m is None:
        return condition, ""
    trigger, rest = condition[:m.start()], condition[m.end():]
    note = re.match(r"\s*[(（][^)）]*[)）]", rest)
    if note:
        trigger, rest = trigger + note.group(0), rest[note.end():]
    # "At feeding time (hour 8 or 18), if the fish were fed fewer than 2 times today, feed...":
    # a further condition before the consequence belongs to the trigger too
    more = _FURTHER.match(rest)
    if more is not None and (end := _TRIGGER_END.search(rest, more.end())) is not None:
        trigger, rest = f"{trigger}, {rest[:end.start()].strip()}", rest[end.end():]
    return trigger, rest


def _inside_brackets(text: str, at: int) -> bool:
    """A comma inside "（距离不小于30厘米，也没有驼背）" explains the trigger; it does not end it."""
    before = text[:at]
    return before.count("(") + before.count("（") > before.count(")") + before.count("）")


def _fields(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    props = schema.get("properties") if isinstance(schema, dict) else None
    return {k: v for k, v in (props or {}).items() if isinstance(v, dict)}


def _words_of(name: str, spec: dict[str, Any]) -> set[str]:
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", name).replace("_", " ").lower()
    found = {w for w in _WORD.findall(text)}
    found.update(w.lower() for w in _WORD.findall(str(spec.get("description", "")))[:6])
    return found


def _numeric_field(trigger: str, at: int, unit: str | None, fields: dict[str, dict[str, Any]]) -> str | None:
    """The numeric field a number in the trigger is about: one whose words come before it,
    nearest first, with a unit that fits; else the only field whose unit fits."""
    numeric = {n: s for n, s in fields.items() if s.get("type") in ("number", "integer")}
    before = trigger[:at].lower()
    scored = []
    for name, spec in numeric.items():
        field_unit = param_unit(name, str(spec.get("description", "")))
        if unit is not None and field_unit is not None and convert(1.0, unit, field_unit) is None:
            continue
        positions = [before.rfind(w) for w in _words_of(name, spec) if w in before]
        if positions:
            scored.append((max(positions), name))
    if scored:
        return max(scored)[1]
    after = trigger[at:at + 40].lower()   # "when 1 or more fish are floating": the words come after it
    counted = sorted(((sum(w in after for w in _words_of(n, s)), n) for n, s in numeric.items()), reverse=True)
    if counted and counted[0][0] and (len(counted) == 1 or counted[0][0] > counted[1][0]):
        return counted[0][1]
    fitting = [n for n, s in numeric.items() if unit and param_unit(n, str(s.get("description", ""))) is not None
               and convert(1.0, unit, param_unit(n, str(s.get("description", ""))) or "") is not None]
    if len(fitting) == 1:
        return fitting[0]
    return next(iter(numeric)) if len(numeric) == 1 else None


def _named_right_before(trigger: str, at: int, fields: dict[str, dict[str, Any]]) -> str | None:
    """The numeric field whose own name-word ends just before the number ("hour 8", "level is 3"),
    or the field already named when the number follows "or" ("hour 8 or 18")."""
    before = trigger[:at].lower()
    for name, spec in fields.items():
        if spec.get("type") not in ("number", "integer"):
            continue
        for word in _words_of(name, {}):
            end = before.rfind(word)
            if end < 0:
                continue
            gap = before[end + len(word):]
            if _IS_VALUE.match(gap) or re.fullmatch(r"\s*\d+(?:\.\d+)?\s*(?:or|,|或|か)\s*", gap):
                return name
    return None


def read_rule(event: EventSpec, schema: dict[str, Any]) -> Rule:
    """The tests a condition's trigger names for readings of ``schema``."""
    trigger, consequence = split(event.condition)
    fields = _fields(schema)
    tests: list[Test] = []
    lowered = trigger.lower()
    spans = []
    values: dict[str, list[float]] = {}   # "hour 8 or hour 18": the values a field is said to be
    for low, high, start, end in ranges(trigger):   # "during the day (hour 8 to 17)"
        clock = ":00" in trigger[start:end] or _clock_said(trigger[end:])   # "23:00 to 5:00", "4 o'clock"
        field = (_hour_field(fields) if clock else None) or _numeric_field(trigger, start, None, fields)
        if field is not None:
            tests.append(range_test(field, fields[field], low, high))
            spans.append((start, end))
    tests.extend(_field_against_field(trigger, fields))
    for q in quantities(trigger):
        if any(a <= q.start < b for a, b in spans):
            continue
        op = next((o for rx, o in _BEFORE_NUMBER if rx.search(trigger[:q.start])), None) or \
            next((o for rx, o in _AFTER_NUMBER if rx.match(trigger[q.end:])), None)
        if op == MORE and re.search(r"after\s*$", trigger[:q.start], re.I) and \
                _clock_said(trigger[q.end:]):   # "after 22:00": the hour of 22 on
            op = LEAST
        if op is None:
            if (field := _named_right_before(trigger, q.start, fields)) is not None:
                values.setdefault(field, []).append(q.value)
            continue
        field = _hour_field(fields) if _clock_said(trigger[q.end:]) else None   # "after 22:00"
        field = field or _numeric_field(trigger, q.start, q.unit, fields)
        if field is not None:
            unit = param_unit(field, str(fields[field].get("description", "")))
            value = convert(q.value, q.unit, unit) if q.unit and unit else q.value
            tests.append(Test(field, op, value if value is not None else q.value))
    tests = either_side(tests)
    tests.extend(Test(field, "in", tuple(said)) for field, said in values.items()
                 if not any(t.field == field for t in tests))
    for name, spec in fields.items():
        kind = spec.get("type")
        words = _words_of(name, spec)
        if kind == "boolean" and (change := _CHANGE.search(lowered)) is not None and \
                any(w in lowered[:change.start()] for w in _words_of(name, {})):
            tests.append(Test(name, "became", change.group("to") in _TRUE))
        elif kind == "boolean":   # its name, or a two-character piece of a Chinese/Japanese description ("驼背")
            others = set().union(*(_pieces(n, o) for n, o in fields.items() if n != name))
            named_words = _words_of(name, {}) | {w for w in _pieces(name, spec) - others
                                                 if not w.isascii() and not set(w) & _GRAMMAR}
            hits = [m for w in named_words for m in re.finditer(re.escape(w), lowered)]
            if hits:
                first = min(h.start() for h in hits)
                negated = _NEGATION.search(lowered[max(0, first - 24):first]) is not None or \
                    re.match(r"\S{0,3}(?:ない|ず)", lowered[first + len(hits[0].group(0)):]) is not None
                tests.append(Test(name, "==", not negated))
        elif isinstance(spec.get("enum"), list):   # a value by itself or by its described word ("缺水(empty)")
            named = [v for v, said in enum_words(spec).items()
                     if any(re.search(rf"(?<![a-z]){re.escape(w.replace('_', ' '))}(?![a-z])", lowered.replace("_", " "))
                            for w in said if len(w) >= 2)]
            if len(named) == 1:
                tests.append(Test(name, "==", named[0]))
            elif len(named) > 1 and re.search(r"\b(?:or|either)\b|或|还是|か", lowered):   # "sound is whine or howl"
                tests.append(Test(name, "in", tuple(named)))
        elif kind == "array":
            nouns = [w for w in _WORD.findall(lowered) if w not in words and w not in _FUNCTION_WORDS]
            if nouns and any(w in lowered for w in words) or nouns and len(fields) <= 4:
                tests.append(Test(name, "contains", tuple(nouns)))
    opening = re.split(r"(?<=[.。!！;；])\s*", consequence.strip(), maxsplit=1)[0]   # "…偏低；…以内什么都不做"
    bare = not quantities(trigger) and _CONDITIONAL.search(trigger) is None
    return Rule(event, tuple(tests), _NOTHING.search(opening) is not None, consequence.strip(), bare)


def _hour_field(fields: dict[str, dict[str, Any]]) -> str | None:
    """The reading's one hour-of-day field, for a number said as a time of day."""
    hours = [n for n, spec in fields.items() if spec.get("type") in ("number", "integer")
             and HOUR_NAME.search(n)]
    return hours[0] if len(hours) == 1 else None


def _pieces(name: str, spec: dict[str, Any]) -> set[str]:
    """A field's words, with Japanese and Chinese runs cut into two-character pieces ("目标水温"
    is said as "目标" or "水温")."""
    out = set()
    for w in _words_of(name, spec):
        out.update({w[i:i + 2] for i in range(len(w) - 1)} if not w.isascii() else {w})
    return out


def _field_against_field(trigger: str, fields: dict[str, dict[str, Any]]) -> list[Test]:
    """"水温达到或超过目标水温时", "when the temperature reaches the target": a comparison whose
    other side is another numeric field of the reading, named by words only it has."""
    numeric = {n: s for n, s in fields.items() if s.get("type") in ("number", "integer")}
    if len(numeric) < 2:
        return []
    pieces = {n: _pieces(n, s) for n, s in numeric.items()}
    own = {n: p - set().union(*(q for m, q in pieces.items() if m != n)) for n, p in pieces.items()}
    lowered = trigger.lower()
    for rx, op in _BEFORE_NUMBER + ((re.compile(r"(?:reaches|reached|hits|达到|到达|に達し)\s*$", re.I), LEAST),):
        for at in range(len(lowered), 0, -1):
            m = rx.search(lowered[:at])
            if m is None or m.end() != at:
                continue
            after = re.sub(r"^\s*(?:the\s+)?", "", lowered[at:at + 16])   # "reaches the target temperature"
            right = [n for n, words in own.items() if any(after.startswith(w) or w in after[:6] for w in words)]
            left = [n for n, words in pieces.items() if n not in right and any(w in lowered[:m.start()] for w in words)]
            if len(right) == 1 and left:
                return [Test(left[0], op, ("field", right[0]))]
    return []


class EventRules:
    """A companion's events, read once; ``judge`` a reading of one of its perceptions."""

    def __init__(self, companion: Companion):
        self.companion = companion
        self._rules: dict[str, list[Rule]] = {}
        self._last: dict[str, dict[str, Any]] = {}   # the previous reading per perception ("became" tests)
        for spec in companion.perceptions:
            events = companion.events_for(spec.title)
            self._rules[spec.title] = [read_rule(e, spec.schema) for e in events]

    def rules(self, title: str) -> list[Rule]:
        return self._rules.get(title, [])

    def judge(self, title: str, body: Any) -> Verdict | None:
        """None when nothing here can be said (no rules, a body that is not an object)."""
        rules = self._rules.get(title) or []
        if not rules or not isinstance(body, dict):
            return None
        before, self._last[title] = self._last.get(title), body
        verdicts = [(rule, rule.judge(body, before)) for rule in rules]
        if len(rules) == 1 and not rules[0].tests and not rules[0].nothing and rules[0].bare:
            verdicts = [(rules[0], True)]   # "When the doorbell rings, ...": the reading is the event
        held = next((rule for rule, v in verdicts if v is True), None)
        return Verdict(held, all(v is False for _, v in verdicts))


def rule_values(tool: Tool, rule: Rule, body: dict[str, Any]) -> dict[str, Any]:
    """The params of one of a held rule's actions that the reading and the rule's own words
    settle: a param named like a field of the reading takes its value ("water that plant": the
    reading's ``plant``), and the consequence's words settle the rest ("drive backward about
    10 cm", "close the shade to about 70%")."""
    props = tool.parameters.get("properties") if isinstance(tool.parameters, dict) else None
    out: dict[str, Any] = {}
    for name, spec in (props or {}).items():
        value = body.get(name)
        if isinstance(spec, dict) and value is not None and (not isinstance(spec.get("enum"), list) or value in spec["enum"]):
            out[name] = value
    out.update({k: v for k, v in settled(tool, rule.consequence).items() if k not in out})
    return out

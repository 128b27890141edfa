"""The numbers a command says, put into the action's numeric parameters by what each measures.

quantities.py reads "ninety degrees", "half a metre", "二分半", "八十五度" and "half past seven in
the evening" out of the words; here they meet an action's parameters. A parameter says what it
measures by its name or description (``distance_cm``, "seconds", "水温（℃）", quantities.
``param_unit``): a quantity in a unit that converts to it fills it (metres to centimetres, minutes
to seconds, a quarter turn to 90 degrees). A time of day fills an ``hour`` (0..23) and ``minute``
(0..59) pair. A bare number fills the one numeric parameter still open ("volume thirty", "turn
right ninety"). A value outside the parameter's bounds is left to the model and the schema
check, not clamped: the person did not ask for the nearest allowed value.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any

from edge.brain.quantities import Quantity, clock_time, convert, param_unit, quantities
from edge.providers.base import Tool

_COUNT = re.compile(r"how many|number of|times|count|repeat|回数|回|次数", re.IGNORECASE)


def _numeric(spec: Any) -> bool:
    return isinstance(spec, dict) and spec.get("type") in ("number", "integer") and "enum" not in spec \
        and "const" not in spec


def _fits(value: float, spec: dict[str, Any]) -> bool:
    low, high = spec.get("minimum"), spec.get("maximum")
    if isinstance(low, (int, float)) and value < low or isinstance(high, (int, float)) and value > high:
        return False
    return spec.get("type") != "integer" or float(value).is_integer()


def _as(value: float, spec: dict[str, Any]) -> float | int:
    return int(value) if spec.get("type") == "integer" else round(value, 3)


def _clock_params(props: dict[str, Any]) -> tuple[str, str] | None:
    """An hour 0..23 and a minute 0..59 parameter: a time of day."""
    hour = next((n for n, s in props.items() if _numeric(s) and re.search(r"hour|時|点|小时", n, re.I)
                 and s.get("maximum") in (23, 24)), None)
    minute = next((n for n, s in props.items() if _numeric(s) and re.search(r"min", n, re.I) and s.get("maximum") == 59),
                  None)
    return (hour, minute) if hour and minute else None


def numbers_for(tool: Tool, text: str, taken: dict[str, Any], bare_numbers: bool = True) -> dict[str, Any]:
    """The numeric parameters of ``tool`` that the numbers in ``text`` settle, besides ``taken``
    (already settled by other words). A parameter already holding a signed direction ("turn
    left" as -1) gets the size said, with its sign. ``bare_numbers`` off: only numbers with a unit, or
    a time of day (what names the action, not just fills it)."""
    props = tool.parameters.get("properties") if isinstance(tool.parameters, dict) else None
    if not isinstance(props, dict):
        return {}
    said = quantities(text)
    clock = _clock_params(props)
    if not said and (clock is None or clock_time(text) is None):
        return {}   # no number in the words (most of what is said): nothing to read
    out: dict[str, Any] = {}
    used: set[int] = set()
    if clock and (when := clock_time(text)) is not None:
        out[clock[0]], out[clock[1]] = when.hour, when.minute
        said = [q for q in said if q.unit not in (None, "h", "min")]   # its numbers are the time
    open_params = [(n, s) for n, s in props.items() if _numeric(s) and n not in out
                   and (n not in taken or _signed(taken.get(n)))]
    measured = [(n, s, param_unit(n, str(s.get("description", "")))) for n, s in open_params]
    _split_time(measured, said, used, out, taken)   # "two and a half minutes": 2 min and 30 s
    for i, q in enumerate(said):   # units first: "drive 2 metres at speed 3"
        if i in used or q.unit is None:
            continue
        fitting = [(n, sp, u) for n, sp, u in measured if u is not None and n not in out
                   and convert(q.value, q.unit, u) is not None]
        pointed = [f for f in fitting if _signed(taken.get(f[0]))]
        if len(fitting) > 1:   # metres for x or for y? only the axis a direction named, if one did
            fitting = pointed if len(pointed) == 1 else []
        if fitting:
            name, spec, wanted = fitting[0]
            used.add(i)
            _put(out, name, spec, convert(q.value, q.unit, wanted or "") or 0.0, taken)
    loose = [i for i, q in enumerate(said) if i not in used and (q.unit is None or q.unit == "percent")]
    still = [(n, s, u) for n, s, u in measured if n not in out and not _COUNT.search(f"{n} {s.get('description', '')}")]
    if bare_numbers and len(still) == 1 and loose:
        name, spec, measures = still[0]
        q = said[loose[0]]
        if q.unit is None or measures in (None, "percent"):
            _put(out, name, spec, q.value, taken)
    return out


_OFF = re.compile(r"\b(?:off|zero|out)\b|消して|消灯|オフ|ゼロ|关掉|关上|关了|熄灭|关闭", re.IGNORECASE)
_FULL = re.compile(r"\ball the way\b|\bfull(?:y)?\b|\bmax(?:imum)?\b|\bas (?:bright|loud|high|warm|open) as\b|"
                   r"\b(?:brightest|loudest|highest)\b|全開|最大|いっぱい|最高|最亮|最大声|开到最大|全开", re.IGNORECASE)
# "a little", in the three languages: a smaller step (slots.py) or what a description says it is (here)
LITTLE = re.compile(r"\b(?:a little|a bit|a touch|slightly|a tad)\b|少し|すこし|ちょっと|ちょこっと|一点|稍微|一些|一下子",
                    re.IGNORECASE)
_SHUT = re.compile(r"\b(?:close|closed|shut)\b|閉め|閉じ|关上|拉上", re.IGNORECASE)


def extremes(tool: Tool, text: str, taken: dict[str, Any]) -> dict[str, Any]:
    """A level said as an end of its range: "turn the bedroom light off" 0, "all the way up" or
    "最大" the maximum, "close the curtains" the bottom of an ``open`` amount. Only numeric
    parameters with both bounds and no signed direction; a number said wins (``numbers_for``)."""
    props = tool.parameters.get("properties") if isinstance(tool.parameters, dict) else None
    out: dict[str, Any] = {}
    if not _says_a_level(text):
        return out
    levels = [(n, s) for n, s in (props or {}).items() if _numeric(s) and n not in taken
              and isinstance(s.get("minimum"), (int, float)) and isinstance(s.get("maximum"), (int, float))
              and not _COUNT.search(f"{n} {s.get('description', '')}")]
    if len(levels) != 1:
        return out
    name, spec = levels[0]
    opening = "open" in name.lower() or "開" in name
    if LITTLE.search(text) and not quantities(text) and (small := _little_amount(name, spec)) is not None:
        out[name] = _as(small, spec)   # "'a little' is about 10 cm": the file says how much
    elif _FULL.search(text):
        out[name] = _as(spec["maximum"], spec)
    elif _OFF.search(text) or opening and _SHUT.search(text):
        out[name] = _as(spec["minimum"], spec)
    return out


_FINER = {"h": "min", "min": "s"}


def _split_time(measured: list[tuple[str, dict[str, Any], str | None]], said: list[Quantity], used: set[int],
                out: dict[str, Any], taken: dict[str, Any]) -> None:
    """A time with a fraction, for an action that takes it in two parameters (minutes and
    seconds, hours and minutes): the whole part in the one, the rest in the finer one."""
    by_unit = {u: (n, s) for n, s, u in measured if u is not None}
    for i, q in enumerate(said):
        finer = _FINER.get(q.unit or "")
        if i in used or finer is None or q.value.is_integer() or q.unit not in by_unit or finer not in by_unit:
            continue
        whole, rest = int(q.value), convert(q.value - int(q.value), q.unit, finer)
        (coarse_name, coarse_spec), (fine_name, fine_spec) = by_unit[q.unit], by_unit[finer]
        if rest is not None and _fits(whole, coarse_spec) and _fits(round(rest), fine_spec):
            used.add(i)
            _put(out, coarse_name, coarse_spec, whole, taken)
            _put(out, fine_name, fine_spec, round(rest), taken)


def says_numbers(text: str) -> bool:
    """Whether the words say a number, a time of day or a level at all (most sentences do not,
    and are then not read per action)."""
    return bool(quantities(text)) or clock_time(text) is not None or _says_a_level(text)


@functools.lru_cache(maxsize=1024)
def _says_a_level(text: str) -> bool:
    """Whether the words name an end of a range or "a little" at all (read once per sentence)."""
    return any(rx.search(text) for rx in (LITTLE, _FULL, _OFF, _SHUT))


def _little_amount(name: str, spec: dict[str, Any]) -> float | None:
    """How much "a little" is, when the parameter's description says so ("'a little' is about
    10 cm", "“一点/稍微”大约15度"), in the parameter's unit."""
    description = str(spec.get("description", ""))
    m = LITTLE.search(description)
    if m is None:
        return None
    said = quantities(description[m.end():m.end() + 30])
    if not said:
        return None
    unit = param_unit(name, description)
    value = convert(said[0].value, said[0].unit, unit) if said[0].unit and unit else said[0].value
    return value if value is not None and _fits(value, spec) else None


def _signed(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value != 0


def _put(out: dict[str, Any], name: str, spec: dict[str, Any], value: float, taken: dict[str, Any]) -> None:
    """``value`` into ``out[name]`` when the schema allows it, with the sign a direction gave."""
    if _signed(taken.get(name)):
        value = math.copysign(abs(value), taken[name])
    if _fits(value, spec):
        out[name] = _as(value, spec)


def measures_said(tool: Tool, text: str) -> bool:
    """The words say a number in a unit one of the action's parameters measures ("二十度" for a
    pan and tilt in degrees), or a time of day for its hour and minute: they name the action."""
    props = tool.parameters.get("properties") if isinstance(tool.parameters, dict) else None
    if not isinstance(props, dict):
        return False
    clock = _clock_params(props)
    if clock and clock_time(text) is not None:
        return True
    if not quantities(text):
        return False
    # a time of day's hour and minute are named by a time of day only: "a timer for 12 minutes" is no reminder at :12
    measured = [(s, param_unit(n, str(s.get("description", "")))) for n, s in props.items()
                if _numeric(s) and n not in (clock or ())]
    for q in quantities(text):
        for spec, unit in measured:
            value = convert(q.value, q.unit, unit) if q.unit is not None and unit is not None else None
            if value is not None and _fits(value, spec):   # 30 度 is no temperature for a kettle of 40..100
                return True
    return False


# A number a description names with a word: "最高100度（烧开）", "100 (boiling)", "warm (2700)"
_NUMBER_THEN_WORD = re.compile(r"(\d+(?:\.\d+)?)\s*[^\s\d（(,，、。;；]{0,3}\s*[（(]([^）)]{2,16})[）)]")
_WORD_THEN_NUMBER = re.compile(r"([^\s（(,，、。;；:：]{2,12})\s*[（(]\s*(\d+(?:\.\d+)?)\s*[^）)\d]{0,4}[）)]")


def described_levels(tool: Tool, text: str, taken: dict[str, Any]) -> dict[str, Any]:
    """A numeric parameter set by a word its description gives a number ("水得烧开": 100 where the
    description says "最高100度（烧开）"), when the sentence says that word and no number for it."""
    props = tool.parameters.get("properties") if isinstance(tool.parameters, dict) else None
    lowered = text.lower()
    out: dict[str, Any] = {}
    for name, spec in (props or {}).items():
        if name in taken or not _numeric(spec):
            continue
        description = str(spec.get("description", ""))
        pairs = [(float(m.group(1)), m.group(2)) for m in _NUMBER_THEN_WORD.finditer(description)]
        pairs += [(float(m.group(2)), m.group(1)) for m in _WORD_THEN_NUMBER.finditer(description)]
        named = {value for value, words in pairs for word in re.split(r"[,，、/・]\s*", words)
                 if len(word.strip()) >= 2 and word.strip().lower() in lowered}
        if len(named) == 1:
            out[name] = _as(named.pop(), spec)
    return out

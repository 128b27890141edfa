"""A setting asked to change from where it is: "brighter by twenty percent", "a little louder",
"再调亮一点点", "少し暗くして", "warmer light".

A sentence like these names no value to set: the value is the last one this companion set for
that parameter, moved the way the words say, by the amount they say ("by 20"), or by a step
("a little": a tenth of the parameter's range; otherwise a fifth). Read without the last value,
"brighter by twenty percent" set the lamp to 20 %. With no earlier value to start from, nothing is
decided here.
"""

from __future__ import annotations

import re
from typing import Any

from edge.brain.quantities import quantities
from edge.brain.slot_numbers import LITTLE
from edge.providers.base import Tool

# Which way the words move a setting (English, Japanese, Chinese)
_UP = re.compile(r"\b(?:brighter|louder|higher|hotter|warmer|more|increase|raise|turn (?:it )?up|up a (?:bit|notch)|stronger|"
                 r"faster|boost)\b|明るく|大きく|上げ|強く|高く|暖かく|亮一点|调亮|调高|调大|大一点|亮点|高一点|更亮|加大|提高|热一点",
                 re.IGNORECASE)
_DOWN = re.compile(r"\b(?:dimmer|darker|quieter|softer|lower|colder|cooler|less|decrease|reduce|turn (?:it )?down|"
                   r"down a (?:bit|notch)|weaker|slower|dim)\b|暗く|小さく|下げ|弱く|低く|涼しく|暗一点|调暗|调低|调小|小一点|"
                   r"暗点|低一点|更暗|降低|减小|冷一点", re.IGNORECASE)
# Colour temperature runs the other way: warmer light has fewer kelvin
_WARM = re.compile(r"\bwarm(?:er)?\b|暖か|暖色|暖一点|暖光", re.IGNORECASE)
_COOL = re.compile(r"\bcool(?:er)?\b|\bcold(?:er)?\b|涼し|冷たい|冷色|冷一点|白一点", re.IGNORECASE)
# "by twenty percent", "再...20": the number is the step, not the value
_BY = re.compile(r"\bby\s*$|再\s*$|多\s*$|もう\s*$", re.IGNORECASE)
# What a parameter measures, from its name and description
_FAMILIES = (
    (re.compile(r"bright|dim|dark|light|lamp|lux|明る|暗|亮|灯", re.I), re.compile(r"bright|light|lamp|level|percent|明る|亮度|亮", re.I)),
    (re.compile(r"loud|quiet|soft|volume|sound|声|音|大声|小声", re.I), re.compile(r"volume|loud|音量|声", re.I)),
    (re.compile(r"warm|cool|cold|hot|heat|temperatur|暖|涼|冷|热|温", re.I), re.compile(r"temp|kelvin|heat|温", re.I)),
    (re.compile(r"fast|slow|speed|速|快|慢", re.I), re.compile(r"speed|速", re.I)),
)


def _bounds(spec: dict[str, Any]) -> tuple[float, float] | None:
    low, high = spec.get("minimum"), spec.get("maximum")
    if isinstance(low, (int, float)) and isinstance(high, (int, float)) and high > low:
        return float(low), float(high)
    return None


def _kelvin(name: str, spec: dict[str, Any]) -> bool:
    bounds = _bounds(spec)
    return "kelvin" in f"{name} {spec.get('description', '')}".lower() or (bounds is not None and bounds[0] >= 1000)


def _target(tool: Tool, text: str, last: dict[str, Any]) -> str | None:
    """The numeric parameter the words move: the only one with a last value, or the one whose
    name or description measures what the words name (brighter: brightness)."""
    props = tool.parameters.get("properties") if isinstance(tool.parameters, dict) else None
    numeric = [n for n, s in (props or {}).items() if isinstance(s, dict) and s.get("type") in ("number", "integer")
               and isinstance(last.get(n), (int, float)) and _bounds(s) is not None]
    if len(numeric) == 1:
        return numeric[0]
    for said, measures in _FAMILIES:
        if said.search(text):
            fitting = [n for n in numeric if measures.search(f"{n} {props[n].get('description', '')}")]  # type: ignore[index]
            if len(fitting) == 1:
                return fitting[0]
    return None


def relative_values(tool: Tool, text: str, last: dict[str, Any] | None) -> dict[str, Any]:
    """The parameter the words move from its ``last`` value, moved; empty when the words name
    no change, the change is to an absolute value ("brighter, 80 percent"), or nothing was set before."""
    if not last:
        return {}
    name = _target(tool, text, last)
    if name is None:
        return {}
    spec = tool.parameters["properties"][name]
    low, high = _bounds(spec) or (0.0, 0.0)
    if _kelvin(name, spec) and (_WARM.search(text) or _COOL.search(text)):
        sign = -1 if _WARM.search(text) else 1
    elif _UP.search(text) and not _DOWN.search(text):
        sign = 1
    elif _DOWN.search(text) and not _UP.search(text):
        sign = -1
    else:
        return {}
    said = quantities(text)
    if said and not any(_BY.search(text[:q.start]) for q in said):
        return {}   # "brighter, to 80 percent": a value, read elsewhere
    step = next((q.value for q in said if _BY.search(text[:q.start])), None)
    if step is None:
        step = (high - low) * (0.1 if LITTLE.search(text) else 0.2)
    value = min(high, max(low, float(last[name]) + sign * step))
    return {name: int(round(value)) if spec.get("type") == "integer" else round(value, 3)}

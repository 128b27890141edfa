"""One test of one field of a sensor reading, as an event condition says it ("battery below 20",
"hour 23 to 5", "below 10 or above 32"): read by event_rules.py, judged here for each reading.
A judgement is True, False, or None when the reading cannot tell (the field is missing, or not
a number where a number is compared)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

LESS, MOST, MORE, LEAST = "<", "<=", ">", ">="
HOUR_NAME = re.compile(r"hour|時|时|点", re.I)   # a field that holds the hour of the day


@dataclass(frozen=True)
class Test:
    field: str
    op: str
    value: Any

    def judge(self, body: dict[str, Any], before: dict[str, Any] | None = None) -> bool | None:
        got = body.get(self.field)
        if self.op == "became":   # "present が false から true に変わったら": this reading, not the last
            if before is None or self.field not in before or got is None:
                return None
            return got == self.value and before.get(self.field) != self.value
        if self.op == "contains":
            if not isinstance(got, list):
                return None
            words = " ".join(str(item).lower() for item in got)
            return any(re.search(rf"(?<![a-z]){re.escape(w)}(?![a-z])", words) for w in self.value)
        if self.op == "==":
            return None if got is None else got == self.value
        if self.op == "in":
            return None if got is None else got in self.value
        if self.op == "between":
            if isinstance(got, bool) or not isinstance(got, (int, float)):
                return None
            return self.value[0] <= got <= self.value[1]
        if self.op == "wraps":   # across midnight: from the first hour on, or up to the second
            if isinstance(got, bool) or not isinstance(got, (int, float)):
                return None
            return got >= self.value[0] or got <= self.value[1]
        if self.op == "outside":
            if isinstance(got, bool) or not isinstance(got, (int, float)):
                return None
            return got < self.value[0] or got > self.value[1]
        value = self.value
        if isinstance(value, tuple) and value[:1] == ("field",):   # compared with another field
            value = body.get(value[1])
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                return None
        if isinstance(got, bool) or not isinstance(got, (int, float)):
            return None
        return {LESS: got < value, MOST: got <= value, MORE: got > value, LEAST: got >= value}[self.op]


def range_test(field: str, spec: dict[str, Any], low: float, high: float) -> Test:
    """"hour 8 to 17" is between; "hour 23 to 5" runs across midnight, for an hour of the day
    (a field named for hours, or whose values stop at 23 or 24); any other range said the wrong
    way round is the same range."""
    if low <= high:
        return Test(field, "between", (low, high))
    top = spec.get("maximum")
    if HOUR_NAME.search(field) or isinstance(top, (int, float)) and 23 <= top <= 24:
        return Test(field, "wraps", (low, high))
    return Test(field, "between", (high, low))


def either_side(tests: list[Test]) -> list[Test]:
    """"below 10 °C or above 32 °C": one field below a value and above a larger one is one test
    (outside the range), not two that can never both hold."""
    out: list[Test] = []
    for t in tests:
        other = next((o for o in out if o.field == t.field and {o.op, t.op} <= {LESS, MORE, MOST, LEAST}
                      and (o.op in (LESS, MOST)) != (t.op in (LESS, MOST))), None)
        if other is None:
            out.append(t)
            continue
        low, high = (other.value, t.value) if other.op in (LESS, MOST) else (t.value, other.value)
        if low < high:
            out[out.index(other)] = Test(t.field, "outside", (low, high))
        else:
            out.append(t)
    return out

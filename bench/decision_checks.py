"""Rules a person would agree with, for judging one companion decision.

Each check takes the decision the brain carried out, ``(action, params)`` (``("none", {})`` when it
chose to do nothing), and returns None when it passes or a short reason why it does not. They judge
behaviour, not shape: a ``look`` must turn the way that was asked, a spoken line must answer rather
than repeat the words it heard, and must be in the companion's language.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from typing import Any, Callable

Decision = tuple[str, dict[str, Any]]
Check = Callable[[Decision], "str | None"]


def _norm(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    return " ".join(re.sub(r"[^\w ]", " ", text).split())


def copies(message: str, heard: str) -> bool:
    """True when a spoken line is (nearly) the words it answers: parroting."""
    m, h = _norm(message), _norm(heard)
    if not m:
        return True
    return m == h or (len(h) > 8 and h in m) or difflib.SequenceMatcher(None, m, h).ratio() > 0.75


def loops(message: str) -> bool:
    """True when one sentence comes three times or more: "I am Pip! I am Pip! I am Pip! ..."."""
    parts = [_norm(x) for x in re.split(r"[.!?,。！？、]+", message)]
    parts = [x for x in parts if x]
    return any(parts.count(x) >= 3 for x in set(parts))


def japanese(text: str) -> bool:
    """Japanese or Chinese script (kana or Han): what the older sets call Japanese."""
    return re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", text) is not None


def kana(text: str) -> bool:
    return re.search(r"[\u3040-\u30ff]", text) is not None


def han(text: str) -> bool:
    return re.search(r"[\u4e00-\u9fff]", text) is not None


def _language_problem(message: str, lang: str) -> str | None:
    """Why ``message`` is not in ``lang`` (en, ja, zh), or None. Japanese of more than a few
    characters has kana in it; Chinese has Han and no kana."""
    if lang == "ja" and (not japanese(message) or len(message) > 6 and not kana(message)):
        return f"not Japanese: {message!r}"
    if lang == "zh" and (not han(message) or kana(message)):
        return f"not Chinese: {message!r}"
    if lang == "en" and japanese(message):
        return f"not English: {message!r}"
    return None


def speak(heard: str = "", mentions: str | None = None, what: str = "", lang: str = "en",
          action: str = "speak", param: str = "message") -> Check:
    """speak (or the companion's own speech ``action`` and its text ``param``); in the companion's
    language (en, ja, zh); not a copy of ``heard``; not one sentence over and over; when
    ``mentions`` (a regex, case-insensitive) is given, the line matches it."""
    def check(d: Decision) -> str | None:
        name, params = d
        if name != action:
            return f"expected {action}, got {name}"
        message = str(params.get(param, ""))
        wrong_language = _language_problem(message, lang)
        if wrong_language:
            return wrong_language
        if heard and copies(message, heard):
            return f"parrots the input: {message!r}"
        if loops(message):
            return f"repeats itself: {message[:60]!r}..."
        if mentions and re.search(mentions, unicodedata.normalize("NFKC", message).lower()) is None:
            return f"does not {what or 'match ' + mentions}: {message!r}"
        return None
    return check


def _towards(action: str, bounds: dict[str, Callable[[float], bool]], main_axis: bool = True) -> Check:
    def check(d: Decision) -> str | None:
        name, params = d
        if name != action:
            return f"expected {action}, got {name}"
        for axis, test in bounds.items():
            value = params.get(axis)
            if not isinstance(value, (int, float)) or not test(value):
                return f"{action} {axis}={value} goes the wrong way ({test.__doc__})"
            other = {"x": "y", "y": "x"}.get(axis)
            if test is near_zero or not main_axis:
                continue
            if other and other not in bounds and abs(params.get(other) or 0) >= abs(value):
                return f"{action} {axis}={value} but {other}={params.get(other)}: mostly the wrong direction"
        return None
    return check


def look(**bounds: Callable[[float], bool]) -> Check:
    """look, each named axis passing its test (x=neg: to the left), and that axis the main one:
    "look left" is not a turn of (-1, -1)."""
    return _towards("look", bounds)


def look_at(**bounds: Callable[[float], bool]) -> Check:
    """look towards something seen, on that side (x=pos: to the right); the other axis may be as
    large (a ball low on the right is looked at low and right)."""
    return _towards("look", bounds, main_axis=False)


def move(**bounds: Callable[[float], bool]) -> Check:
    """move, checked like ``look``; no bounds: any move passes."""
    return _towards("move", bounds)


def named(action: str, /, **params: Any) -> Check:
    """That action, and where given, those params: a value, or a tuple of the values allowed.
    (``action`` is positional-only, so a param may be called ``name``: gesture(name="bow").)"""
    def check(d: Decision) -> str | None:
        if d[0] != action:
            return f"expected {action}, got {d[0]}"
        for key, want in params.items():
            got = d[1].get(key)
            if (got not in want) if isinstance(want, tuple) else (got != want):
                return f"{action} {key}={got!r}, expected {'one of ' if isinstance(want, tuple) else ''}{want!r}"
        return None
    return check


def within(action: str, /, **ranges: tuple[float, float]) -> Check:
    """That action with each named number in its range, ends included: within("set_level",
    percent=(28, 32)). A number missing or not a number fails."""
    def check(d: Decision) -> str | None:
        if d[0] != action:
            return f"expected {action}, got {d[0]}"
        for key, (low, high) in ranges.items():
            got = d[1].get(key)
            if isinstance(got, bool) or not isinstance(got, (int, float)) or not low <= got <= high:
                return f"{action} {key}={got!r}, expected {low}..{high}"
        return None
    return check


def text_param(action: str, key: str, pattern: str) -> Check:
    """That action with a text ``key`` matching ``pattern`` (a regex, case-insensitive, NFKC)."""
    def check(d: Decision) -> str | None:
        if d[0] != action:
            return f"expected {action}, got {d[0]}"
        got = d[1].get(key)
        if not isinstance(got, str) or re.search(pattern, unicodedata.normalize("NFKC", got).lower()) is None:
            return f"{action} {key}={got!r} does not match {pattern!r}"
        return None
    return check


def nothing() -> Check:
    """No action: nothing new happened."""
    def check(d: Decision) -> str | None:
        return None if d[0] == "none" else f"expected no action, got {d[0]} {d[1]}"
    return check


def either(*checks: Check) -> Check:
    """Passes when any check passes; otherwise reports the failure that concerns this action."""
    def check(d: Decision) -> str | None:
        failures = [c(d) for c in checks]
        if any(f is None for f in failures):
            return None
        relevant = [f for f in failures if f and not f.startswith("expected ")]
        return relevant[0] if relevant else f"got {d[0]}, expected one of the sensible actions"
    return check


def neg(v: float) -> bool:
    """< 0"""
    return v < 0


def pos(v: float) -> bool:
    """> 0"""
    return v > 0


def near_zero(v: float) -> bool:
    """about 0"""
    return abs(v) <= 0.25


def moves_by(axis: str, low: float, high: float, other_max: float = 0.3) -> Check:
    """A move along ``axis`` by low..high metres (signed), hardly any along the other floor axis:
    "1 metre to the left" is x about -1, not -0.1 or -10, and not forward."""
    other = "y" if axis == "x" else "x"

    def check(d: Decision) -> str | None:
        if d[0] != "move":
            return f"expected move, got {d[0]}"
        value, side = d[1].get(axis), d[1].get(other) or 0
        if not isinstance(value, (int, float)) or not low <= value <= high:
            return f"move {axis}={value}, expected {low}..{high} m"
        if not isinstance(side, (int, float)) or abs(side) > other_max:
            return f"move {other}={side}, expected hardly any ({other_max} m at most)"
        return None
    return check


def wag_speed(low: float, high: float, what: str | None = None) -> Check:
    """A wag whose speed lies in low..high: "slowly" is not an excited wag, "fast" not a calm one."""
    def check(d: Decision) -> str | None:
        if d[0] != "wag":
            return f"expected wag, got {d[0]}"
        speed = d[1].get("speed")
        if not isinstance(speed, (int, float)) or not low <= speed <= high:
            return f"wag speed={speed}, asked for {what} ({low}..{high})" if what else f"wag speed={speed}, expected {low}..{high}"
        return None
    return check


def gesture(*names: str) -> Check:
    """One of these gestures (the shipped companions' ``gesture`` action)."""
    return named("gesture", name=names if len(names) > 1 else names[0])


# -- bounds and checks the held-out sets share (bench/heldout/: their cases stay as written) ----


def at_least(low: float) -> Callable[[float], bool]:
    """A bound for one value: ``low`` or more."""
    def test(v: float) -> bool:
        return v >= low
    test.__doc__ = f"{low} or more"
    return test


def at_most(high: float) -> Callable[[float], bool]:
    """A bound for one value: ``high`` or less."""
    def test(v: float) -> bool:
        return v <= high
    test.__doc__ = f"{high} or less"
    return test


def between(low: float, high: float) -> Callable[[float], bool]:
    """A bound for one value: low..high (a distance that was asked for, roughly)."""
    def test(v: float) -> bool:
        return low <= v <= high
    test.__doc__ = f"between {low} and {high}"
    return test


def clearly_left(v: float) -> bool:
    """< -0.3: well to the left, not the person straight ahead"""
    return v < -0.3


def clearly_right(v: float) -> bool:
    """> 0.3: well to the right, not the person straight ahead"""
    return v > 0.3


def wag_at(speed: Callable[[float], bool]) -> Check:
    """wag, at the speed that was asked for ("slowly", "as fast as you can"): ``speed`` is a bound."""
    def check(d: Decision) -> str | None:
        if d[0] != "wag":
            return f"expected wag, got {d[0]}"
        value = d[1].get("speed")
        if not isinstance(value, (int, float)) or not speed(value):
            return f"wag speed={value!r}, expected {speed.__doc__}"
        return None
    return check


def move_towards(**bounds: Callable[[float], bool]) -> Check:
    """move towards something seen, each named axis passing its test; the other axis may be as
    large (going after a thing on the left may also go forward)."""
    return _towards("move", bounds, main_axis=False)


def move_ahead_right(d: Decision) -> str | None:
    """move towards something ahead on the right: not backwards, not to the left."""
    if d[0] != "move":
        return f"expected move, got {d[0]}"
    x, y = d[1].get("x"), d[1].get("y")
    if not isinstance(x, (int, float)) or not isinstance(y, (int, float)):
        return f"move x={x!r} y={y!r}: not numbers"
    if x < 0 or y < 0 or (x == 0 and y == 0):
        return f"move x={x} y={y}: not towards the thing ahead on the right"
    return None


def backs_off(d: Decision) -> str | None:
    """A move that makes room: backwards or to a side, never forward into the person."""
    if d[0] != "move":
        return f"expected move, got {d[0]}"
    x, y = d[1].get("x") or 0, d[1].get("y") or 0
    if not isinstance(x, (int, float)) or not isinstance(y, (int, float)):
        return f"move x={x} y={y}: not numbers"
    if y > 0:
        return f"move y={y}: goes closer, was asked for room"
    if y > -0.1 and abs(x) < 0.1:
        return f"move x={x} y={y}: hardly moves away"
    return None


def talk_or_stay(heard: str, lang: str = "en", mentions: str | None = None) -> Check:
    """No physical reaction: either a reply in words or nothing at all."""
    return either(nothing(), speak(heard=heard, mentions=mentions, what="reply to what was said", lang=lang))


# -- words that are not speech: an action written out instead of done -----------------------------

_CALL = r"\b{name}\s*\("                       # wag(0), stop_music()
_JSON_CALL = re.compile(r'[{\[]\s*"(?:action|name|tool|function|params|arguments)"\s*:')
_SAYS = r"^\s*[\"'「]?{name}\s*(?:says|said|:)\s*[:：]?"   # "Pip says: ...", "Pip: ..."


def spoken_action(text: str, action_titles: list[str], companion_name: str) -> str | None:
    """Why ``text`` (a value an action carried, e.g. the words a ``speak`` says aloud) is not
    speech, or None: it calls an action by name ("stop_music()"), holds the JSON of a call, or
    begins by naming its speaker ("Pip says: ...")."""
    for title in action_titles:
        if re.search(_CALL.format(name=re.escape(title)), text):
            return f"calls {title}() aloud: {text[:80]!r}"
    if _JSON_CALL.search(text):
        return f"says the JSON of a call aloud: {text[:80]!r}"
    if companion_name and re.search(_SAYS.format(name=re.escape(companion_name)), text, re.IGNORECASE):
        return f"names its speaker: {text[:80]!r}"
    return None

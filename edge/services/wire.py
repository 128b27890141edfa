"""Strict JSON in, bounded text out: what every HTTP, WebSocket and MCP entry point decodes with.

Python's ``json`` accepts NaN and Infinity, turns ``1e400`` into ``inf``, raises
``RecursionError`` on deep nesting and ``ValueError`` on huge integers, and happily returns
lone surrogates that break the first UTF-8 encode downstream. ``decode_json`` refuses all of
these *before* a handler sees the document, with a ``WireError`` that names the JSON pointer
of the bad value, so nothing is ever published from a request that cannot be answered.

``excerpt`` and ``clip`` keep error messages and logs short: a client that sends a 900 kB
value gets a message quoting at most a few dozen characters of it.

When the shared codec (``edge.protocol.codec``) lands, ``decode_json`` is the one place to
switch over to it.
"""

from __future__ import annotations

import json
import math
import reprlib
from typing import Any

MAX_DEPTH = 64           # arrays/objects inside each other; real requests use < 10
MAX_INT_DIGITS = 40      # beyond any id or count a client has reason to send
EXCERPT_CHARS = 60
MESSAGE_CHARS = 300


class WireError(ValueError):
    """A body that is not acceptable JSON; ``pointer`` locates the bad value ("" = the whole body)."""

    def __init__(self, message: str, pointer: str = "") -> None:
        super().__init__(f"{pointer}: {message}" if pointer else message)
        self.message = message
        self.pointer = pointer


class _Refused:
    """Stands in for a value the parser must not return (NaN, 1e400, a 5000-digit integer),
    so the walk below can report *where* it was."""

    __slots__ = ("why",)

    def __init__(self, why: str) -> None:
        self.why = why


def _constant(name: str) -> _Refused:
    return _Refused(f"{name} is not a JSON number")


def _float(text: str) -> float | _Refused:
    value = float(text)
    return value if math.isfinite(value) else _Refused(f"{excerpt(text, raw=True)} overflows a 64-bit float")


def _int(text: str) -> int | _Refused:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        return _Refused(f"an integer of {digits} digits (at most {MAX_INT_DIGITS})")
    return int(text)


def decode_json(data: bytes | str) -> Any:
    """The JSON document in ``data``, or WireError naming the first problem and where it is."""
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise WireError(f"body is not UTF-8 ({exc.reason} at byte {exc.start})") from None
    else:
        text = data
    try:
        document = json.loads(text, parse_constant=_constant, parse_float=_float, parse_int=_int)
    except json.JSONDecodeError as exc:
        raise WireError(f"body is not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except RecursionError:
        raise WireError(f"body is nested too deeply (at most {MAX_DEPTH} levels)") from None
    except ValueError as exc:  # an int the parser itself refuses
        raise WireError(f"body is not acceptable JSON ({clip(str(exc), 80)})") from None
    check_document(document)
    return document


def check_document(document: Any) -> None:
    """WireError if a decoded document (from any parser) breaks our rules: too deep, a refused
    number, or a lone surrogate in a string or key. Iterative, so depth itself cannot crash it."""
    stack: list[tuple[Any, str, int]] = [(document, "", 0)]
    while stack:
        value, pointer, depth = stack.pop()
        if isinstance(value, _Refused):
            raise WireError(value.why, pointer or "/")
        if isinstance(value, float) and not math.isfinite(value):
            raise WireError(f"{value} is not a JSON number", pointer or "/")
        if isinstance(value, str):
            _text(value, pointer)
        elif isinstance(value, (dict, list)):
            if depth >= MAX_DEPTH:
                raise WireError(f"nested more than {MAX_DEPTH} levels deep", clip(pointer, 80))
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                child = f"{pointer}/{_escape(key)}" if isinstance(key, str) else f"{pointer}/{key}"
                if isinstance(key, str):
                    _text(key, clip(child, 80))
                stack.append((item, child, depth + 1))


def _text(value: str, pointer: str) -> None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise WireError(f"a lone surrogate \\u{ord(value[exc.start]):04x} is not text", clip(pointer, 80) or "/") \
            from None


def _escape(key: str) -> str:
    """A key as a JSON-pointer segment, lone surrogates written as ``\\udXXX`` so it can be sent."""
    return scrub(key.replace("~", "~0").replace("/", "~1"))


def scrub(text: str) -> str:
    """``text`` with anything UTF-8 cannot carry (lone surrogates) written as an escape."""
    return text if text.isascii() else text.encode("utf-8", "backslashreplace").decode("utf-8")


def encode_json(document: Any) -> str:
    """Compact JSON that is always valid JSON (no NaN); ValueError if the document cannot be."""
    return json.dumps(document, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _short_repr() -> reprlib.Repr:
    r = reprlib.Repr()
    r.maxlevel, r.maxstring, r.maxother, r.maxlong = 3, EXCERPT_CHARS, EXCERPT_CHARS, EXCERPT_CHARS
    r.maxlist = r.maxtuple = r.maxdict = r.maxset = 6
    return r


_REPR = _short_repr()


def excerpt(value: Any, limit: int = EXCERPT_CHARS, *, raw: bool = False) -> str:
    """A short quote of a (bad) value: its repr, or the text itself with ``raw``, never over
    ``limit`` characters plus its size; cheap even for a megabyte string or a deep list."""
    if raw and isinstance(value, str):
        text = scrub(value[: limit + 1])
    else:
        try:
            text = _REPR.repr(value)
        except RecursionError:
            text = f"<a deeply nested {type(value).__name__}>"
    if len(text) <= limit and not (isinstance(value, str) and len(value) > limit):
        return text
    size = f", {len(value)} chars" if isinstance(value, str) else ""
    return f"{text[:limit]}…({type(value).__name__}{size})"


def clip(text: str, limit: int = MESSAGE_CHARS) -> str:
    """A message of at most about ``limit`` characters: its start and end, the middle elided."""
    if len(text) <= limit:
        return scrub(text)
    tail = min(60, limit // 3)
    return scrub(f"{text[: limit - tail]} … {text[-tail:]}")

"""The one JSON codec of every wire: MQTT payloads, HTTP bodies, WebSocket and MCP messages.

Strict and bounded on the way in, so that no message can crash or fool the code behind it:
``decode`` refuses invalid UTF-8, lone surrogates (in keys too), ``NaN``/``Infinity``, numbers
a double cannot hold, integers beyond the signed 64-bit range, nesting deeper than a limit and
payloads over a size limit. On the way out ``encode`` refuses to write what ``decode`` would
refuse, so nothing we send is rejected (or silently changed) by a strict peer.

Parsing is orjson's (a C parser without recursion limits to trip over, NaN and bad UTF-8
refused; see docs/dependencies.md); the few rules it lacks are one iterative walk over the
result. Every refusal is a ``CodecError`` naming what is wrong and where, as a JSON pointer,
quoting at most ``EXCERPT_CHARS`` characters of the bad value.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

import orjson

EXCERPT_CHARS = 60
INT_MIN, INT_MAX = -(2 ** 63), 2 ** 63 - 1


@dataclass(frozen=True)
class Limits:
    """What one use of the codec accepts; each wire picks its own size."""

    max_bytes: int = 1 << 20
    max_depth: int = 32  # objects/arrays inside each other; our payloads use fewer than 8


DEFAULT_LIMITS = Limits()


class CodecError(ValueError):
    """A document the codec refuses; ``pointer`` is where ("" = the whole document)."""

    def __init__(self, reason: str, pointer: str = "", near: str | None = None):
        self.reason = reason
        self.pointer = pointer
        self.near = near
        text = f"{pointer or '/'}: {reason}"
        super().__init__(f"{text} (near {near})" if near else text)


# -- quoting --------------------------------------------------------------------------------


def excerpt(value: Any, limit: int = EXCERPT_CHARS) -> str:
    """A short, printable quote of a value for messages and logs: never over ``limit`` characters
    of the value itself, with its size when it was cut; safe to encode (surrogates escaped)."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value[: limit * 4])
        text = raw.decode("utf-8", "backslashreplace")
        return _cut(text, limit, len(value), "bytes")
    if isinstance(value, str):
        return _cut(value, limit, len(value), "chars")
    if isinstance(value, (dict, list, tuple)):
        return f"<{type(value).__name__} of {len(value)}>"
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}…"


def clip(text: str, limit: int = 300) -> str:
    """A message cut to about ``limit`` characters (for reasons that may quote a payload)."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} chars)"


_SURROGATE = re.compile("[\ud800-\udfff]")


def scrub(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD, so it can always be encoded."""
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)


def _cut(text: str, limit: int, size: int, unit: str) -> str:
    quoted = repr(text[:limit])
    return f"{quoted}… ({size} {unit})" if len(text) > limit or size > len(text) else quoted


def _segment(key: Any) -> str:
    """One JSON-pointer segment (RFC 6901 escapes), short and free of surrogates."""
    text = key if isinstance(key, str) else str(key)
    if len(text) > 40:
        text = text[:40] + "…"
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text.replace("~", "~0").replace("/", "~1")


# -- decoding -------------------------------------------------------------------------------


def decode(data: bytes | bytearray | memoryview | str, limits: Limits = DEFAULT_LIMITS) -> Any:
    """The JSON document in ``data``, or CodecError naming the first problem and where it is."""
    text = _text_of(data, limits)
    if not text.strip():
        raise CodecError("empty: expected a JSON document")
    try:
        document = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise _parse_error(text, exc.msg, exc.pos, limits) from None
    _check_integers(text)
    _walk(document, limits, strings=False)  # orjson already refused lone surrogates
    return document


def _text_of(data: bytes | bytearray | memoryview | str, limits: Limits) -> str:
    """The payload as text within the size limit, or CodecError (bad UTF-8 named by offset)."""
    if isinstance(data, str):
        size = len(data) if data.isascii() else len(data.encode("utf-8", "surrogatepass"))
    elif isinstance(data, (bytes, bytearray, memoryview)):
        size = len(data)
    else:
        raise CodecError(f"expected JSON text, got a {type(data).__name__}")
    if size > limits.max_bytes:
        raise CodecError(f"{size} bytes is over the {limits.max_bytes}-byte limit")
    if isinstance(data, str):
        if not data.isascii():
            try:
                data.encode("utf-8")
            except UnicodeEncodeError as exc:
                code = f"\\u{ord(data[exc.start]):04x}"
                raise CodecError(f"lone surrogate {code} at character {exc.start}: not text",
                                 _pointer_at(data, exc.start), excerpt(data[max(0, exc.start - 20):exc.start])) \
                    from None
        return data
    raw = bytes(data)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start].decode("utf-8")
        byte = raw[exc.start]
        what = "an encoded surrogate, which is not text" if byte == 0xED else exc.reason
        raise CodecError(f"not UTF-8: byte 0x{byte:02x} at offset {exc.start} ({what})",
                         _pointer_at(before, len(before)), excerpt(raw[max(0, exc.start - 20): exc.start + 4])) \
            from None


_SPECIALS = ("-Infinity", "Infinity", "NaN")


def _parse_error(text: str, msg: str, pos: int, limits: Limits) -> CodecError:
    """orjson's complaint in our words, with the pointer of where it happened."""
    near = excerpt(text[max(0, pos - 20): pos + 20])
    special = next((w for w in _SPECIALS if text.startswith(w, pos) or pos > 0 and w[0] == "-" and text.startswith(w, pos - 1)),
                   None)
    if "surrogate" in msg:
        start = text.find("\\u", pos)
        code = text[start:start + 6] if start >= 0 else "\\u"
        reason = f"lone surrogate {code} in a string: not text (it has no UTF-8 form)"
    elif msg.startswith("depth limit"):
        reason = f"nested deeper than {limits.max_depth} levels"
    elif "infinity when parsed" in msg:
        literal = _NUMBER.match(text, pos)
        digits = literal.group(1) if literal else ""
        reason = (f"an integer of {len(digits)} digits is beyond the 64-bit range"
                  if literal and not literal.group(2) else "a number beyond the range of a 64-bit float")
    elif special is not None:
        reason = f"{special} is not a JSON number"
    elif msg.startswith("Input is a zero-length"):
        reason = "empty: expected a JSON document"
    else:
        reason = f"not JSON: {msg} (character {pos})"
    return CodecError(reason, _pointer_at(text, pos), near)


_NUMBER = re.compile(r"-?([0-9]*+)([.eE]?)")
_LONG_DIGITS = re.compile(r"[0-9]{19}")
_TOKEN_OR_LONG_INT = re.compile(r'"(?:[^"\\]++|\\.)*+"|(?<![0-9.eE+-])-?[0-9]{19,}+(?![.eE])')


def _check_integers(text: str) -> None:
    """orjson reads an integer past 64 bits as a float (a 19-digit one below -2**63 too); our
    contract refuses it instead. Only valid JSON reaches here, so the string-aware scan is linear."""
    if _LONG_DIGITS.search(text) is None:
        return
    for match in _TOKEN_OR_LONG_INT.finditer(text):
        literal = match.group(0)
        if literal.startswith('"'):
            continue
        digits = len(literal.lstrip("-"))
        if digits > 19 or not INT_MIN <= int(literal) <= INT_MAX:
            raise CodecError(f"an integer of {digits} digits is beyond the 64-bit range",
                             _pointer_at(text, match.start()), excerpt(literal))


_SCAN = re.compile(r'[^"\[\]{},:]++|"(?:[^"\\]++|\\.)*+"?|.', re.S)


def _pointer_at(text: str, pos: int) -> str:
    """The JSON pointer of the value at character ``pos`` of a (possibly broken) document."""
    stack: list[list[Any]] = []  # [kind, key or index, expecting a key]
    i = 0
    while i < pos:
        match = _SCAN.match(text, i)
        if match is None:
            break
        token, i = match.group(0), match.end()
        if token == "{":
            stack.append(["{", None, True])
        elif token == "[":
            stack.append(["[", 0, False])
        elif token in "}]" and stack:
            stack.pop()
        elif token == "," and stack:
            if stack[-1][0] == "[":
                stack[-1][1] += 1
            else:
                stack[-1][1], stack[-1][2] = None, True
        elif token == ":" and stack:
            stack[-1][2] = False
        elif token.startswith('"') and stack and stack[-1][0] == "{" and stack[-1][2]:
            stack[-1][1] = _key_text(token)
    return _join(entry[1] for entry in stack if entry[1] is not None)


def _key_text(token: str) -> str:
    try:
        return str(json.loads(token))
    except ValueError:
        return token.strip('"')


# -- the walk (both directions) -------------------------------------------------------------

Path = tuple[Any, Any] | None
"""A location as a linked list (parent path, key), rendered as a pointer only when reporting."""


def check(value: Any, limits: Limits = DEFAULT_LIMITS) -> None:
    """Raise CodecError unless ``value`` is plain JSON data we would send or accept: for values
    another parser produced (an SDK's) or that are about to be encoded."""
    _walk(value, limits, strings=True)


def _walk(value: Any, limits: Limits, strings: bool) -> None:
    """Depth, key types, integer range, finite floats and (``strings``) lone surrogates, in
    document order and without recursion, so the first problem is the one named."""
    if not isinstance(value, (dict, list, tuple)):
        _scalar(value, None, strings)
        return
    stack: list[tuple[Any, bool, Path, int]] = [(_children(value), isinstance(value, dict), None, 1)]
    if limits.max_depth < 1:
        raise CodecError(f"nested deeper than {limits.max_depth} levels")
    while stack:
        children, is_object, path, depth = stack[-1]
        for key, child in children:
            where = (path, key)
            if is_object:
                if not isinstance(key, str):
                    raise CodecError(f"an object key must be a string, not the {type(key).__name__} {excerpt(key)}",
                                     _render(path))
                if strings and not key.isascii():
                    _text(key, where, "key")
            if isinstance(child, (dict, list, tuple)):
                if depth >= limits.max_depth:
                    raise CodecError(f"nested deeper than {limits.max_depth} levels", _render(where))
                stack.append((_children(child), isinstance(child, dict), where, depth + 1))
                break
            _scalar(child, where, strings)
        else:
            stack.pop()


def _children(container: Any) -> Any:
    return iter(container.items()) if isinstance(container, dict) else enumerate(container)


def _scalar(item: Any, where: Path, strings: bool) -> None:
    if isinstance(item, str):
        if strings and not item.isascii():
            _text(item, where, "string")
    elif item is None or isinstance(item, bool):
        return
    elif isinstance(item, int):
        if not INT_MIN <= item <= INT_MAX:
            raise CodecError(f"the integer {excerpt(str(item), 24)} is beyond the 64-bit range", _render(where))
    elif isinstance(item, float):
        if not math.isfinite(item):
            name = "NaN" if math.isnan(item) else "Infinity" if item > 0 else "-Infinity"
            raise CodecError(f"{name} is not a JSON number", _render(where))
    else:
        raise CodecError(f"{type(item).__name__} {excerpt(item)} is not a JSON value", _render(where))


def _text(value: str, where: Path, what: str) -> None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        code = f"\\u{ord(value[exc.start]):04x}"
        raise CodecError(f"lone surrogate {code} at character {exc.start} of a {what}: not text", _render(where),
                         excerpt(value[max(0, exc.start - 20): exc.start + 20])) from None


def _render(path: Path) -> str:
    keys: list[Any] = []
    while path is not None:
        path, key = path
        keys.append(key)
    return _join(reversed(keys))


def _join(keys: Any) -> str:
    """A JSON pointer from keys; a very deep one keeps its ends and elides the middle."""
    segments = [_segment(k) for k in keys]
    if len(segments) > 12:
        segments = [*segments[:5], f"…{len(segments) - 10} more…", *segments[-5:]]
    return "".join(f"/{s}" for s in segments)


# -- encoding -------------------------------------------------------------------------------


def encode(value: Any, limits: Limits = DEFAULT_LIMITS) -> bytes:
    """Compact UTF-8 JSON of plain data, or CodecError naming the field that cannot be sent
    (NaN, a lone surrogate, a 65-bit integer, too deep, too large)."""
    _walk(value, limits, strings=True)
    try:
        data = orjson.dumps(value, default=_plain_number)
    except orjson.JSONEncodeError as exc:  # only past orjson's own limits (nesting beyond 254)
        raise CodecError(f"cannot be encoded: {exc}") from None
    if len(data) > limits.max_bytes:
        raise CodecError(f"{len(data)} bytes is over the {limits.max_bytes}-byte limit")
    return data


def _plain_number(value: Any) -> Any:
    """orjson's hook for float and int subclasses it does not write itself (numpy's float64)."""
    if isinstance(value, float):
        return float(value)
    if isinstance(value, int):
        return int(value)
    raise TypeError(f"{type(value).__name__} is not a JSON value")


def encode_text(value: Any, limits: Limits = DEFAULT_LIMITS) -> str:
    """``encode`` as a str, for text transports (WebSocket frames, log lines)."""
    return encode(value, limits).decode("utf-8")


# -- reading what was refused ---------------------------------------------------------------


def salvage(data: bytes | bytearray | memoryview | str, limits: Limits = DEFAULT_LIMITS) -> dict[str, Any]:
    """Best effort, for answering a refused message: the top-level members that are plain,
    encodable strings, read leniently (NaN, a lone surrogate deeper down, ...); {} if nothing
    can be read. Never raises; size-limited like ``decode``."""
    if len(data) > limits.max_bytes:
        return {}
    text = data if isinstance(data, str) else bytes(data).decode("utf-8", "replace")
    try:
        document = json.loads(text, parse_constant=lambda _name: None)
    except (ValueError, RecursionError):
        return {}
    if not isinstance(document, dict):
        return {}
    out: dict[str, Any] = {}
    for key, value in document.items():
        if isinstance(value, str) and len(value) <= 1000:
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                continue
            out[key] = value
    return out

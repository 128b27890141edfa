"""The services' side of the wire codec: strict JSON in, bounded text out.

Every HTTP, WebSocket and MCP entry point decodes with ``decode_json``, which is the shared
strict codec (``edge.protocol.codec``: NaN, Infinity, 1e400, integers past 64 bits, nesting
past its limit, invalid UTF-8 and lone surrogates refused) with a size limit per service. A
refusal is a ``WireError`` naming the JSON pointer of the bad value, raised *before* a
handler sees the document, so nothing is ever published from a request that cannot be
answered (the request id is part of the document).

``excerpt`` and ``clip`` keep messages and logs short and always encodable: a client that
sends a 900 kB value gets a message quoting at most a few dozen characters of it.
"""

from __future__ import annotations

from typing import Any

from edge.protocol import codec

EXCERPT_CHARS = codec.EXCERPT_CHARS
MESSAGE_CHARS = 300
DEFAULT_MAX_BYTES = 4 << 20          # the gateway's body limit; callers pass their own
_OUT = codec.Limits(max_bytes=64 << 20, max_depth=codec.DEFAULT_LIMITS.max_depth)


class WireError(ValueError):
    """A body that is not acceptable JSON; ``pointer`` locates the bad value ("" = the whole body)."""

    def __init__(self, message: str, pointer: str = "") -> None:
        super().__init__(f"{pointer}: {message}" if pointer else message)
        self.message = message
        self.pointer = pointer


def _wire_error(exc: codec.CodecError) -> WireError:
    reason = f"{exc.reason} (near {exc.near})" if exc.near else exc.reason
    return WireError(clip(reason, 200), clip(exc.pointer, 100))


def decode_json(data: bytes | str, max_bytes: int = DEFAULT_MAX_BYTES) -> Any:
    """The JSON document in ``data``, or WireError naming the first problem and where it is."""
    try:
        return codec.decode(data, codec.Limits(max_bytes=max_bytes, max_depth=codec.DEFAULT_LIMITS.max_depth))
    except codec.CodecError as exc:
        raise _wire_error(exc) from None


def check_document(document: Any) -> None:
    """WireError if a document another parser produced breaks the codec's rules (for files)."""
    try:
        codec.check(document, _OUT)
    except codec.CodecError as exc:
        raise _wire_error(exc) from None


def encode_json(document: Any) -> str:
    """Compact JSON that a strict peer accepts; CodecError (a ValueError) if it cannot be."""
    return codec.encode_text(document, _OUT)


def excerpt(value: Any, limit: int = EXCERPT_CHARS, *, raw: bool = False) -> str:
    """A short quote of a (bad) value: the codec's (a repr, cut, with its size), or with
    ``raw`` the text itself, cut; never over ``limit`` characters of the value, always encodable."""
    if raw and isinstance(value, str):
        cut = codec.scrub(value[:limit])
        return cut if len(value) <= limit else f"{cut}…({len(value)} chars)"
    return codec.excerpt(value, limit)


def clip(text: str, limit: int = MESSAGE_CHARS) -> str:
    """A message of at most about ``limit`` characters, always encodable."""
    return codec.scrub(codec.clip(text, limit))

"""A JSON-RPC body checked by our strict decoder before a library parses it its own way.

The MCP SDK parses requests with pydantic, which takes ``NaN``, ``Infinity`` and ``1e400``
as numbers, so a tool call could reach the robot with ``{"x": NaN}``. This middleware reads
a POST body (bounded), runs ``wire.decode_json`` on it, and answers a JSON-RPC parse error
naming the bad field itself; a body that passes is handed on unchanged.
"""

from __future__ import annotations

from typing import Any

from edge.services.access import ASGIApp, Message, Receive, Scope, Send
from edge.services.wire import WireError, decode_json, encode_json


class StrictJsonBody:
    """Checks POST bodies on ``paths`` (every path when empty); ``max_bytes`` bounds the read."""

    def __init__(self, app: ASGIApp, max_bytes: int, paths: tuple[str, ...] = ()) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.paths = paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST" or (self.paths and scope["path"] not in self.paths):
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await _answer(send, 413, None, f"body is over the {self.max_bytes}-byte limit", -32600)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        if body.strip():
            try:
                decode_json(body)
            except WireError as exc:
                await _answer(send, 400, exc.pointer or None, f"Parse error: {exc}", -32700)
                return
        await self.app(scope, _replay(body, receive), send)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()  # after the body: the disconnect, when it comes

    return replay


async def _answer(send: Send, status: int, field: str | None, message: str, code: int) -> None:
    error: dict[str, Any] = {"code": code, "message": message}
    if field:
        error["data"] = {"field": field}
    body = encode_json({"jsonrpc": "2.0", "id": None, "error": error}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})

"""JSON-RPC 2.0 framing in one place: parse a request (or batch), call a method, frame the reply.

Transport-free on purpose: the gateway feeds it HTTP bodies and WebSocket messages alike and
only decides what a reply means on its own transport (an HTTP status, or nothing to send).
Methods take the request's ``params`` and return a JSON-able result, or raise ``RpcError``.
"""

from __future__ import annotations

import math
from typing import Any, Awaitable, Callable

from edge.log import get_logger
from edge.services.wire import WireError, clip, decode_json, excerpt

log = get_logger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

_TITLES = {PARSE_ERROR: "Parse error", INVALID_REQUEST: "Invalid Request", METHOD_NOT_FOUND: "Method not found",
           INVALID_PARAMS: "Invalid params", INTERNAL_ERROR: "Internal error"}

Method = Callable[[Any], Awaitable[Any]]
Reply = dict[str, Any] | list[dict[str, Any]] | None
"""A response object, a batch of them, or None when nothing is to be sent (notifications only)."""


class RpcError(Exception):
    """An error a method (or the framing) answers with; ``message`` says what was wrong."""

    def __init__(self, code: int, detail: str, data: Any = None):
        super().__init__(detail)
        self.code = code
        self.detail = detail
        self.data = data

    def to_dict(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code,
                                 "message": f"{_TITLES.get(self.code, 'Error')}: {clip(self.detail)}"}
        if self.data is not None:
            error["data"] = self.data
        return error


def result(request_id: Any, value: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "result": value, "id": request_id}


def error(request_id: Any, exc: RpcError) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "error": exc.to_dict(), "id": request_id}


def notification(method: str, params: Any) -> dict[str, Any]:
    """A server-to-client message that expects no answer (no ``id``)."""
    return {"jsonrpc": "2.0", "method": method, "params": params}


def parse(text: str | bytes) -> Any:
    """The decoded JSON document, or RpcError(PARSE_ERROR) saying what and where (strict: ``wire.py``)."""
    try:
        return decode_json(text)
    except WireError as exc:
        raise RpcError(PARSE_ERROR, str(exc), {"field": exc.pointer or None}) from None


def is_rpc(document: Any) -> bool:
    """True when a document is meant as JSON-RPC: a batch array, or an object naming ``jsonrpc``."""
    return isinstance(document, list) or (isinstance(document, dict) and "jsonrpc" in document)


def is_framing_failure(reply: Reply) -> bool:
    """True when the whole message was refused before any call (parse error or invalid request
    at the top level), which HTTP answers with 400 rather than 200."""
    return isinstance(reply, dict) and reply.get("error", {}).get("code") in (PARSE_ERROR, INVALID_REQUEST)


class Dispatcher:
    """Routes requests to methods by name; one malformed batch member never spoils the others."""

    def __init__(self, methods: dict[str, Method], max_batch: int = 100):
        self.methods = methods
        self.max_batch = max_batch

    async def handle_text(self, text: str | bytes) -> Reply:
        try:
            document = parse(text)
        except RpcError as exc:
            return error(None, exc)
        return await self.handle(document)

    async def handle(self, document: Any) -> Reply:
        if not isinstance(document, list):
            return await self._one(document)
        if not document:
            return error(None, RpcError(INVALID_REQUEST, "an empty batch array"))
        if len(document) > self.max_batch:
            return error(None, RpcError(INVALID_REQUEST, f"a batch of {len(document)} requests; at most "
                                                         f"{self.max_batch} are accepted in one message"))
        replies = [r for r in [await self._one(item) for item in document] if r is not None]
        return replies or None

    async def _one(self, request: Any) -> dict[str, Any] | None:
        try:
            method, params, request_id, answer = _unpack(request)
        except RpcError as exc:
            request_id = request.get("id") if isinstance(request, dict) else None
            return error(request_id if _valid_id(request_id) else None, exc)
        try:
            if method not in self.methods:
                known = ", ".join(sorted(self.methods))
                raise RpcError(METHOD_NOT_FOUND, f"no method {excerpt(method)}; this server has: {known}")
            value = await self.methods[method](params)
        except RpcError as exc:
            return error(request_id, exc) if answer else None
        except Exception as exc:  # a bug in a method must answer, not kill the connection
            log.error("jsonrpc.internal_error", method=method, error=excerpt(repr(exc), 200, raw=True), exc_info=True)
            return error(request_id, RpcError(INTERNAL_ERROR, f"{type(exc).__name__}: {clip(str(exc), 160)}")) \
                if answer else None
        return result(request_id, value) if answer else None


def _valid_id(value: Any) -> bool:
    """null, a string of at most 200 characters, or a finite number: what can be echoed back safely."""
    if isinstance(value, str):
        return len(value) <= 200
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and abs(value) < 10 ** 40)


def _unpack(request: Any) -> tuple[str, Any, Any, bool]:
    """(method, params, id, wants_answer) of a request object, or RpcError(INVALID_REQUEST)."""
    if not isinstance(request, dict):
        raise RpcError(INVALID_REQUEST, f"a request must be a JSON object, not {type(request).__name__}")
    if request.get("jsonrpc") != "2.0":
        raise RpcError(INVALID_REQUEST, '"jsonrpc" must be exactly "2.0"')
    method = request.get("method")
    if not isinstance(method, str) or not method:
        raise RpcError(INVALID_REQUEST, '"method" must be a non-empty string')
    if "id" in request and not _valid_id(request["id"]):
        raise RpcError(INVALID_REQUEST, '"id" must be a string (at most 200 characters), a finite number or null')
    params = request.get("params")
    if "params" in request and not isinstance(params, (dict, list)):
        raise RpcError(INVALID_REQUEST, '"params" must be an object or an array')
    extra = sorted(set(request) - {"jsonrpc", "method", "params", "id"})
    if extra:
        raise RpcError(INVALID_REQUEST, f"unknown member(s) {', '.join(excerpt(k, 40) for k in extra[:5])}")
    return method, params, request.get("id"), "id" in request

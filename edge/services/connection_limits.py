"""Time and connection limits uvicorn does not have: a header-read timeout and a connection cap.

uvicorn (0.30 … 0.54) arms a timer only *after* a response (keep-alive); a client that opens a
connection and sends half a request head, or trickles it a byte at a time, is kept forever.
Three hundred of those hold three hundred sockets and file descriptors. So every HTTP server
we run uses ``guarded_protocol(limits)``, uvicorn's own h11 protocol with three additions:

- a connection waiting for a request head (new, or idle between keep-alive requests) gets
  ``header_timeout_s`` for the whole head, however it trickles; then it is answered 408 and
  closed (closed silently when it sent nothing);
- a request body must arrive within ``body_timeout_s`` once its head has;
- at ``max_connections`` open connections a new one evicts the connection that has waited
  longest for a request head; idle connections are the only ones ever dropped, so a client
  holding many half-open requests cannot lock out one that sends a whole request. When
  every connection is busy the newcomer is answered 503 and closed.

Protocol errors are answered as JSON too (uvicorn's own 400 is plain text). And every
accepted socket gets TCP_NODELAY: asyncio sets it only when the listening socket says
``proto == IPPROTO_TCP``, which ``socket.create_server`` does not, and without it each
response waited ~40 ms for a delayed ACK between its head and its body (22 requests/s).
"""

from __future__ import annotations

import asyncio
import socket
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from edge.log import get_logger
from edge.services.wire import encode_json

log = get_logger(__name__)


@dataclass
class ConnectionLimits:
    """Per-server limits; ``max_connections`` stays well under the unit's ``LimitNOFILE``."""

    header_timeout_s: float = 10.0
    body_timeout_s: float = 30.0
    max_connections: int = 256
    max_header_bytes: int = 16 * 1024
    idle: "OrderedDict[GuardedH11Protocol, None]" = field(default_factory=OrderedDict, repr=False)
    evicted: int = 0
    timed_out: int = 0

    def uvicorn_options(self) -> dict[str, Any]:
        return {"http": guarded_protocol(self), "h11_max_incomplete_event_size": self.max_header_bytes}


def _raw_response(status: int, reason: str, message: str) -> bytes:
    body = encode_json({"error": {"message": message, "reason": reason.lower().replace(" ", "_")}}).encode()
    return (f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
            "connection: close\r\n\r\n").encode() + body


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a request-read deadline and a place in the idle queue."""

    limits: ConnectionLimits  # set on the subclass guarded_protocol() makes

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._phase = "new"      # head: waiting for a request head; body: reading one; busy: handled
        self._head_bytes = 0     # bytes received while waiting for the current head

    # -- uvicorn's hooks ----------------------------------------------------------------

    # uvicorn's own hook takes asyncio.Transport where asyncio.Protocol says BaseTransport (an
    # override its stubs allow only with an ignore, as uvicorn's source does itself)
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:
                pass
        super().connection_made(transport)
        self._enter_head()
        if len(self.connections) > self.limits.max_connections:
            self._make_room()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel()
        self.limits.idle.pop(self, None)
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._phase == "head":
            self._head_bytes += len(data)
        super().data_received(data)

    def handle_events(self) -> None:
        super().handle_events()
        self._follow_state()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._follow_state()

    def send_400_response(self, msg: str) -> None:
        if self.transport.is_closing():
            return
        self.transport.write(_raw_response(400, "Bad Request", "invalid HTTP request (malformed, or a head over "
                                           f"{self.limits.max_header_bytes} bytes)"))
        self.transport.close()

    # -- phases ---------------------------------------------------------------------------

    def _follow_state(self) -> None:
        if self.transport is None or self.transport.is_closing():
            return
        state = self.conn.their_state
        if state is h11.IDLE:
            if self._phase != "head":
                self._enter_head()
        elif state is h11.SEND_BODY:
            if self._phase != "body":
                self._phase = "body"
                self.limits.idle.pop(self, None)
                self._arm(self.limits.body_timeout_s)
        elif self._phase != "busy":  # request complete, closing, or switched to WebSocket
            self._phase = "busy"
            self.limits.idle.pop(self, None)
            self._cancel()

    def _enter_head(self) -> None:
        self._phase = "head"
        self._head_bytes = 0
        self.limits.idle[self] = None
        self._arm(self.limits.header_timeout_s)

    def _arm(self, seconds: float) -> None:
        self._cancel()
        self._deadline = self.loop.call_later(seconds, self._expired)

    def _cancel(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        self.limits.timed_out += 1
        client = self.client[0] if self.client else None
        if self._phase == "head":
            if self._head_bytes:  # half a request: tell it why; an idle keep-alive just closes
                log.info("http.header_timeout", client=client, received=self._head_bytes)
                self.transport.write(_raw_response(408, "Request Timeout", "the request head did not arrive within "
                                                   f"{self.limits.header_timeout_s:g} s"))
        elif self._phase == "body":
            log.info("http.body_timeout", client=client)
            if self.cycle is not None and not self.cycle.response_started:
                self.transport.write(_raw_response(408, "Request Timeout", "the request body did not arrive within "
                                                   f"{self.limits.body_timeout_s:g} s"))
        self.transport.close()

    def _make_room(self) -> None:
        """Over the cap: drop the longest-idle other connection, else refuse this one."""
        victim = next((p for p in self.limits.idle if p is not self and not p.transport.is_closing()), None)
        if victim is not None:
            self.limits.evicted += 1
            self.limits.idle.pop(victim, None)
            victim._cancel()
            victim.transport.close()
            return
        log.warning("http.connection_cap", max_connections=self.limits.max_connections,
                    reason="every connection is busy; refusing a new one")
        self.transport.write(_raw_response(503, "Service Unavailable", f"{self.limits.max_connections} connections "
                                           "are busy; retry shortly"))
        self.transport.close()


def guarded_protocol(limits: ConnectionLimits) -> type[GuardedH11Protocol]:
    """A protocol class bound to one server's limits (uvicorn instantiates it per connection)."""
    return type("GuardedH11Protocol", (GuardedH11Protocol,), {"limits": limits})

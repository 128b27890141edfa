"""The Gateway: the single-server seed's HTTP/WebSocket face, bridged to the MQTT bus, so its
clients (perceptions over HTTP, actions over a WebSocket) work beside the distributed nodes.

- ``POST /perceptions``: a plain perception (checked in ``perception_input.py``) ``{"title", "body", "format"?, "to"?, "from"?}``
  (202 ``{"id"}``) or a JSON-RPC 2.0 ``perception.send``; ``POST /rpc``: JSON-RPC only. Fields
  are checked (against the companion's own perception schema too) before anything is published.
- ``GET /ws``: every ``Action`` as an ``action.execute`` notification, every ``ActionResult`` as
  ``action.result``, every ``Reply`` (slash command answers) as ``companion.reply``; clients may
  send ``perception.send`` requests on it.
- Every request and socket passes the access guard (``access.py``): Host and Origin checks,
  and the bearer token (``Authorization: Bearer T``; ``?token=T`` on the socket), which clients
  off loopback must present. Bodies are decoded strictly (``wire.py``): NaN, 1e400, deep
  nesting or a lone surrogate anywhere, the request id included, is refused before anything
  is published, and no error message quotes more than a short excerpt of a bad value.

Bus handlers run on paho's thread, so they only put text on each client's bounded queue;
a client that reads too slowly loses its oldest notifications (logged), never stalls the bus.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import uuid
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket

from edge.runtime.broker import BrokerAddress
from edge.runtime.bus import Bus
from edge.log import get_logger
from edge.protocol.companion import Companion
from edge.protocol.payloads import Action, ActionResult, Perception, Reply
from edge.runtime.node import Node
from edge.runtime.transport import Transport
from edge.services import jsonrpc
from edge.services.access import AccessPolicy
from edge.services.connection_limits import ConnectionLimits
from edge.services.http_server import serve_forever
from edge.services.perception_input import FieldError, kind_of, perception_from
from edge.services.wire import clip, encode_json, excerpt

log = get_logger(__name__)

DEFAULT_PORT = 8765


@dataclass
class GatewayConfig:
    """Where to listen and whom to accept; with ``token`` None only loopback clients are served."""

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    token: str | None = None
    token_on_loopback: bool | None = None  # None: COMPANION_TOKEN_ON_LOOPBACK decides (default: optional)
    allowed_hosts: tuple[str, ...] = ()    # names besides loopback, IP literals and this machine's own
    allowed_origins: tuple[str, ...] = ()  # web pages allowed to call it, e.g. "http://robot.local:8080"
    limits: ConnectionLimits = field(default_factory=ConnectionLimits)
    max_body_bytes: int = 4 * 1024 * 1024  # an image perception as base64 fits; a runaway upload does not
    client_queue: int = 256                # notifications held per WebSocket client before dropping the oldest
    default_sender: str = "user"           # ``from`` when the client leaves it out


# -- WebSocket fan-out ----------------------------------------------------------------------


class WsClient:
    """One socket's outbox: bounded, filled from any thread, drained by its own asyncio task."""

    def __init__(self, loop: asyncio.AbstractEventLoop, limit: int, name: str):
        self.loop = loop
        self.limit = limit
        self.name = name
        self.dropped = 0
        self._pending: deque[str] = deque()
        self._lock = threading.Lock()
        self.wake = asyncio.Event()
        self.send_lock = asyncio.Lock()  # one frame at a time: notifications and replies share the socket

    def offer(self, text: str) -> None:
        """Queue a notification without ever blocking; when full the oldest one goes."""
        with self._lock:
            dropped = len(self._pending) >= self.limit
            if dropped:
                self._pending.popleft()
                self.dropped += 1
            self._pending.append(text)
        if dropped:
            log.warning("gateway.ws_dropped", client=self.name, dropped=self.dropped,
                        reason=f"the client reads too slowly; {self.limit} notifications waiting, oldest dropped")
        try:
            self.loop.call_soon_threadsafe(self.wake.set)
        except RuntimeError:  # the server's loop is gone: nobody left to send to
            pass

    def next(self) -> str | None:
        with self._lock:
            return self._pending.popleft() if self._pending else None

    async def pump(self, websocket: WebSocket) -> None:
        """Send queued notifications until cancelled, or until the socket breaks."""
        try:
            while True:
                await self.wake.wait()
                self.wake.clear()
                while (text := self.next()) is not None:
                    async with self.send_lock:
                        await websocket.send_text(text)
        except Exception as exc:  # the receive loop sees the disconnect and cleans up
            log.info("gateway.ws_send_failed", client=self.name, error=repr(exc))


class Hub:
    """Every connected WebSocket client; ``broadcast`` is safe to call from paho's thread."""

    def __init__(self, limit: int):
        self.limit = limit
        self._clients: set[WsClient] = set()
        self._lock = threading.Lock()

    def add(self, name: str) -> WsClient:
        client = WsClient(asyncio.get_running_loop(), self.limit, name)
        with self._lock:
            self._clients.add(client)
        return client

    def remove(self, client: WsClient) -> None:
        with self._lock:
            self._clients.discard(client)

    def __len__(self) -> int:
        return len(self._clients)

    def broadcast(self, method: str, params: Any) -> None:
        with self._lock:
            clients = list(self._clients)
        if clients:
            try:
                text = encode_json(jsonrpc.notification(method, params))
            except (ValueError, TypeError) as exc:  # NaN or a lone surrogate from some node: not JSON
                log.warning("gateway.not_forwarded", method=method, reason=clip(str(exc), 120))
                return
            for client in clients:
                client.offer(text)


# -- the service ----------------------------------------------------------------------------


class Gateway:
    """The bridge: one Bus in, HTTP and WebSocket out. ``app()`` is the Starlette application."""

    def __init__(self, bus: Transport, companions: Sequence[Companion] = (), config: GatewayConfig | None = None):
        self.bus = bus
        self.node = Node(bus, command="companion run gateway")   # its handlers first, then ``serve`` connects
        self.companions = list(companions)
        self.config = config or GatewayConfig()
        self.hub = Hub(self.config.client_queue)
        self.rpc = jsonrpc.Dispatcher({"perception.send": self._rpc_perception})
        self.node.on(Action, self._on_action)
        self.node.on(ActionResult, self._on_result)
        self.node.on(Reply, self._on_reply)

    def _on_action(self, action: Action) -> None:  # paho's thread: encode once, queue per client
        self.hub.broadcast("action.execute", action.to_dict())

    def _on_result(self, result: ActionResult) -> None:
        self.hub.broadcast("action.result", result.to_dict())

    def _on_reply(self, reply: Reply) -> None:
        self.hub.broadcast("companion.reply", reply.to_dict())

    def app(self) -> Starlette:
        """The routes alone; ``serve`` and tests wrap them in ``policy()`` through HttpServer."""
        return Starlette(routes=[
            Route("/perceptions", self._http_perceptions, methods=["POST"]),
            Route("/rpc", self._http_rpc, methods=["POST"]),
            Route("/health", self._http_health, methods=["GET"]),
            WebSocketRoute("/ws", self._websocket),
        ], exception_handlers={HTTPException: _http_error})

    def policy(self) -> AccessPolicy:
        c = self.config
        return AccessPolicy.build("gateway", c.token, hosts=c.allowed_hosts, origins=c.allowed_origins,
                                  token_on_loopback=c.token_on_loopback)

    # -- perceptions ----------------------------------------------------------------------

    def send_perception(self, fields: Any) -> Perception:
        """Check and publish; FieldError for bad input, RuntimeError if paho refuses the send."""
        perception = perception_from(fields, self.companions, self.config.default_sender)
        rc = self.bus.publish(perception).rc
        if rc not in (0, 4):  # 4 = MQTT_ERR_NO_CONN: paho keeps QoS-1 sends until it reconnects
            raise RuntimeError(f"the bus refused the perception (paho error {rc})")
        log.info("gateway.perception", id=perception.id, title=perception.title, to=perception.to,
                 queued=rc == 4)
        return perception

    async def _rpc_perception(self, params: Any) -> dict[str, str]:
        if not isinstance(params, dict):
            raise jsonrpc.RpcError(jsonrpc.INVALID_PARAMS, "params must be an object with title and body"
                                   f" (got {kind_of(params)})", {"field": None})
        try:
            return {"id": self.send_perception(params).id}
        except FieldError as exc:
            raise jsonrpc.RpcError(jsonrpc.INVALID_PARAMS, str(exc), {"field": exc.field}) from None

    # -- HTTP -----------------------------------------------------------------------------

    async def _http_perceptions(self, request: Request) -> Response:
        body = await self._read_body(request)
        if isinstance(body, Response):
            return body
        try:
            document = jsonrpc.parse(body)
        except jsonrpc.RpcError as exc:  # neither form can be told apart yet: answer in both shapes
            return JSONResponse(jsonrpc.error(None, exc), status_code=400)
        if jsonrpc.is_rpc(document):
            return _rpc_response(await self.rpc.handle(document))
        try:
            perception = self.send_perception(document)
        except FieldError as exc:
            return _error(400, str(exc), exc.field)
        except RuntimeError as exc:
            return _error(503, clip(str(exc)))
        except Exception as exc:  # a bug answers 500 with its name; the server keeps running
            log.error("gateway.internal_error", error=excerpt(repr(exc), 200, raw=True), exc_info=True)
            return _error(500, f"internal error: {type(exc).__name__}: {clip(str(exc), 160)}")
        return JSONResponse({"id": perception.id}, status_code=202)

    async def _http_rpc(self, request: Request) -> Response:
        body = await self._read_body(request)
        if isinstance(body, Response):
            return body
        return _rpc_response(await self.rpc.handle_text(body))

    async def _http_health(self, request: Request) -> Response:
        return JSONResponse({"service": "gateway", "bus": "connected" if self.bus.connected else "disconnected",
                             "clients": len(self.hub)})

    async def _read_body(self, request: Request) -> bytes | Response:
        """The body, or the 413 refusing it; access was checked before the route (``policy()``)."""
        limit = self.config.max_body_bytes
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            return _error(413, f"body of {declared} bytes is over the {limit}-byte limit")
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                return _error(413, f"body is over the {limit}-byte limit")
            chunks.append(chunk)
        return b"".join(chunks)

    # -- WebSocket ------------------------------------------------------------------------

    async def _websocket(self, websocket: WebSocket) -> None:
        await websocket.accept()
        client = self.hub.add(f"ws-{uuid.uuid4().hex[:6]}")
        log.info("gateway.ws_open", client=client.name, clients=len(self.hub))
        pump = asyncio.create_task(client.pump(websocket))
        try:
            while True:
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    break
                text = message.get("text")
                reply = await self.rpc.handle_text(text if text is not None else message.get("bytes") or b"")
                if reply is not None:
                    async with client.send_lock:
                        await websocket.send_text(encode_json(reply))
        except Exception as exc:  # a broken socket ends this client only
            log.info("gateway.ws_error", client=client.name, error=excerpt(repr(exc), 200, raw=True))
        finally:
            self.hub.remove(client)
            pump.cancel()
            log.info("gateway.ws_closed", client=client.name, dropped=client.dropped, clients=len(self.hub))


def _error(status: int, message: str, field: str | None = None) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "field": field}}, status_code=status)


def _guard_error(status: int, message: str, reason: str) -> dict[str, Any]:
    """The access guard's refusals in the gateway's own error shape, plus the failed check."""
    return {"error": {"message": message, "field": None, "reason": reason}}


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    what = {404: f"no endpoint {excerpt(request.url.path, raw=True)} (POST /perceptions, POST /rpc, GET /health, "
                 "GET /ws)",
            405: f"method {excerpt(request.method, 20, raw=True)} is not allowed on {request.url.path}"}
    return JSONResponse({"error": {"message": what.get(exc.status_code, str(exc.detail)), "field": None}},
                        status_code=exc.status_code, headers=exc.headers)


def _rpc_response(reply: jsonrpc.Reply) -> Response:
    """200 with the reply; 204 when only notifications came; 400 when the framing itself failed."""
    if reply is None:
        return Response(status_code=204)
    return JSONResponse(reply, status_code=400 if jsonrpc.is_framing_failure(reply) else 200)


# -- entry point ----------------------------------------------------------------------------


def _access_line(policy: AccessPolicy) -> str:
    if not policy.token:
        return "no token: clients on this machine only"
    return "bearer token required" + ("" if policy.token_on_loopback else " off loopback")


def http_server_options(gateway: Gateway) -> dict[str, Any]:
    """HttpServer keywords a gateway needs besides app, host and port (tests use them too)."""
    return {"policy": gateway.policy(), "limits": gateway.config.limits, "error_body": _guard_error,
            "ws_max_size": gateway.config.max_body_bytes}


def serve(broker: BrokerAddress | str = BrokerAddress(), *, namespace: str | None = None,
          companions: Sequence[Companion] = (), config: GatewayConfig | None = None,
          ready: threading.Event | None = None, stop: threading.Event | None = None,
          on_ready: Callable[[str], None] | None = None, broker_timeout_s: float = 60.0,
          node_id: str | None = None, transport: Transport | None = None) -> int:
    """``companion run gateway``: connect, then serve until SIGINT/SIGTERM or ``stop``.

    Runs on the node runtime (docs/nodes.md): exit status 0 once stopped; 1, with the reason
    printed, when no broker answers within ``broker_timeout_s``. Raises OSError (port taken)
    before serving. No persistent MQTT session: actions queued while it is down would reach no
    socket. ``node_id`` defaults to ``gateway-<port>``: the same on every start (one retained
    status), and different for two gateways on one machine. ``transport`` (not yet connected)
    replaces the MQTT bus (the stack's, or a ``LocalHub``'s in tests).
    """
    config = config or GatewayConfig()
    bus = transport or Bus(node_id or f"gateway-{config.port}", "gateway", broker, namespace=namespace,
                           persistent=False)
    gateway = Gateway(bus, companions, config)
    print(f"gateway: waiting for the MQTT broker at {bus.broker} ...", file=sys.stderr, flush=True)

    def main(node: Node) -> int:
        def started(server: Any) -> None:
            ws = server.url.replace("http://", "ws://", 1) + "/ws"
            node.status(None, gateway=server.url, websocket=ws)
            where = f" (namespace {bus.namespace})" if bus.namespace else ""
            print(f"gateway: bridging {bus.broker}{where}: POST {server.url}/perceptions, POST {server.url}/rpc, "
                  f"{ws}; {_access_line(gateway.policy())}", file=sys.stderr, flush=True)
            if on_ready is not None:
                on_ready(server.url)

        serve_forever(gateway.app(), config.host, config.port, node.stop_event, name="gateway", ready=ready,
                      on_ready=started, **http_server_options(gateway))
        return 0

    return gateway.node.run(main, stop=stop, timeout=broker_timeout_s)

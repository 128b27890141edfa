"""Fuzzed requests against every endpoint of the gateway, the registry and the MCP body server,
over real sockets: never a 5xx, every answer JSON, and a good request still answered after.
Also the connection limits: idle half-requests neither block a real client nor stay open."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import socket
import threading
from typing import Iterator

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect as ws_connect

from edge.services.mcp_server import MCP_PATH, start as start_mcp
from edge.runtime.bus import Bus
from edge.config import DEFAULT_COMPANION
from edge.paths import COMPANIONS_DIR
from edge.protocol.companion import load_companion
from edge.services.connection_limits import ConnectionLimits
from edge.services.gateway import Gateway, GatewayConfig, http_server_options
from edge.services.http_server import HttpServer
from edge.services.registry import serve as serve_registry
from service_fuzz import Fuzzer, Tally, raw_exchange, run

N = 300
TOKEN = "fuzz-token"
HELLO = {"title": "input", "body": "hello Pip"}
MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "0"}}}


def _assert_clean(tally: Tally) -> None:
    assert tally.server_errors == 0 and tally.not_json == 0, tally.examples
    assert tally.sent >= N // 3


@pytest.fixture(scope="module")
def pip():
    return load_companion(DEFAULT_COMPANION)


@contextlib.contextmanager
def gateway(broker, pip, **config) -> Iterator[HttpServer]:
    bus = Bus("gateway-fuzz", "gateway", broker.address, persistent=False).connect()
    gw = Gateway(bus, [pip], GatewayConfig(port=0, **config))
    server = HttpServer(gw.app(), port=0, name="gateway-fuzz", **http_server_options(gw)).start()
    try:
        yield server
    finally:
        server.stop()
        bus.close()


@pytest.fixture
def gw(broker, pip):
    with gateway(broker, pip) as server:
        yield server


@pytest.fixture
def mcp(broker, pip):
    """The MCP server with no body behind it: valid calls time out at once (no_result), fast."""
    bus = Bus("mcp-fuzz", "mcp", broker.address).connect()
    _, http = start_mcp(pip, bus, result_timeout_s=0.05)
    yield http
    http.stop()
    bus.close()


@pytest.fixture
def registry(tmp_path):
    for path in COMPANIONS_DIR.glob("*.json"):
        shutil.copy(path, tmp_path / path.name)
    stop, ready, urls = threading.Event(), threading.Event(), []
    thread = threading.Thread(target=serve_registry, args=([tmp_path],), daemon=True,
                              kwargs={"port": 0, "stop": stop, "ready": ready, "on_ready": urls.append})
    thread.start()
    assert ready.wait(10)
    yield urls[0]
    stop.set()
    thread.join(10)


def _sender(client: httpx.Client, method: str, path: str):
    def send(body: bytes) -> tuple[int, bytes]:
        r = client.request(method, path, content=body, headers={"content-type": "application/json"})
        return r.status_code, r.content
    return send


# -- gateway ----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/perceptions", "/rpc"])
def test_gateway_http_endpoints_survive_fuzzing(gw, path):
    fuzz = Fuzzer(seed=hash(path) % 1000)
    with httpx.Client(base_url=gw.url, timeout=10) as client:
        tally = run(_sender(client, "POST", path), (fuzz.gateway_body() for _ in range(N)))
        _assert_clean(tally)
        assert client.post("/perceptions", json=HELLO).status_code == 202


def test_gateway_websocket_survives_fuzzing(gw):
    """Each fuzzed frame is followed by a probe; every reply before the probe's is JSON, none internal."""
    fuzz, tally = Fuzzer(seed=7), Tally()
    ws_url = gw.url.replace("http://", "ws://") + "/ws"
    n = 0
    while n < N:
        with ws_connect(ws_url, max_size=None) as ws:
            try:
                while n < N:
                    frame = fuzz.gateway_body()
                    ws.send(frame.decode("utf-8", "replace") if n % 2 else frame)
                    ws.send(json.dumps({"jsonrpc": "2.0", "method": "probe", "id": f"probe-{n}"}))
                    while True:
                        reply = json.loads(ws.recv(timeout=10))  # raises if a reply is not JSON
                        replies = reply if isinstance(reply, list) else [reply]
                        if any(r.get("id") == f"probe-{n}" for r in replies):
                            break
                        internal = any(r.get("error", {}).get("code") == -32603 for r in replies)
                        tally.count(500 if internal else 200, b"{}", frame[:200].decode("utf-8", "replace"))
                    n += 1
            except ConnectionClosed:  # a frame the server may refuse by closing: reconnect, go on
                tally.count(400, b"{}")
                n += 1
    assert tally.server_errors == 0, tally.examples
    with ws_connect(ws_url) as ws:
        ws.send(json.dumps({"jsonrpc": "2.0", "method": "perception.send", "params": HELLO, "id": "last"}))
        assert "result" in json.loads(ws.recv(timeout=10))


# -- registry ---------------------------------------------------------------------------------


def test_registry_endpoints_survive_fuzzing(registry):
    fuzz, tally = Fuzzer(seed=11), Tally()
    with httpx.Client(base_url=registry, timeout=10) as client:
        for _ in range(N):
            path = fuzz.rng.choice(["/companions/" + fuzz.path_segment(), "/metadata", "/metadata/errors", "/healthz",
                                    "/" + fuzz.path_segment()])
            if fuzz.rng.random() < 0.3:
                path += "?" + fuzz.path_segment()
            method = fuzz.rng.choice(["GET", "GET", "GET", "HEAD", "POST", "DELETE"])
            body = fuzz.gateway_body() if method == "POST" else b""
            r = client.request(method, path, content=body)
            tally.count(r.status_code, r.content, f"{method} {path[:100]}")
        _assert_clean(tally)
        assert len(client.get("/metadata").json()) >= 4


# -- MCP ---------------------------------------------------------------------------------------


def test_mcp_endpoint_survives_fuzzing(mcp, pip):
    url = mcp.url + MCP_PATH
    fuzz = Fuzzer(seed=5)
    tools = [a.title for a in pip.actions] + ["action-play", "fly"]
    with httpx.Client(timeout=10) as client:
        opened = client.post(url, json=INIT, headers=MCP_HEADERS)
        session = {**MCP_HEADERS, "mcp-session-id": opened.headers["mcp-session-id"]}
        client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)

        def send(body: bytes) -> tuple[int, bytes]:
            r = client.post(url, content=body, headers=session)
            return r.status_code, r.content

        _assert_clean(run(send, (fuzz.mcp_body(tools) for _ in range(N))))

    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def still_answering() -> list[str]:
        async with streamable_http_client(url) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                return [t.name for t in (await s.list_tools()).tools]

    assert "look" in asyncio.run(still_answering())


# -- the HTTP layer itself ----------------------------------------------------------------------


def test_malformed_http_is_answered_in_json_by_every_server(gw, registry, mcp):
    for name, url, path in (("gateway", gw.url, "/rpc"), ("registry", registry, "/metadata"),
                            ("mcp", mcp.url, MCP_PATH)):
        fuzz, tally = Fuzzer(seed=len(name)), Tally()
        port = int(url.rsplit(":", 1)[1])
        for _ in range(60):
            request = fuzz.raw_head(path, port)
            status, body = raw_exchange("127.0.0.1", port, request)
            tally.count(status or 400, body, request[:120].decode("latin-1"))
        assert tally.server_errors == 0 and tally.not_json == 0, (name, tally.examples)
        assert httpx.get(f"{url}/{'health' if name == 'gateway' else 'healthz'}").status_code in (200, 404)


def test_idle_half_requests_neither_block_a_client_nor_stay_open(broker, pip):
    """300 connections each holding half a request head: the client with a whole request is
    answered at once (an idle one is evicted for it), and the rest are closed at the timeout."""
    limits = ConnectionLimits(header_timeout_s=1.0, max_connections=64)
    with gateway(broker, pip, token=TOKEN, token_on_loopback=True, limits=limits) as server:
        held = []
        for _ in range(300):
            sock = socket.create_connection(("127.0.0.1", server.port))
            sock.sendall(b"POST /perceptions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le")
            held.append(sock)
        with httpx.Client(base_url=server.url, timeout=5) as client:
            r = client.post("/perceptions", json=HELLO, headers={"Authorization": f"Bearer {TOKEN}"})
            assert r.status_code == 202
        assert limits.evicted >= 300 - 64
        answers = []
        for sock in held:  # every one is closed by the server: evicted, or 408 at the timeout
            sock.settimeout(10)
            data = b""
            with contextlib.suppress(ConnectionResetError):
                while chunk := sock.recv(4096):
                    data += chunk
            answers.append(data)
            sock.close()
        timed_out = [a for a in answers if a.startswith(b"HTTP/1.1 408")]
        assert timed_out and all(b'"reason":"request_timeout"' in a for a in timed_out)
        assert all(a == b"" or a.startswith(b"HTTP/1.1 408") for a in answers)
        assert limits.timed_out >= len(timed_out)

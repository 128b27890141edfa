"""The gateway over real HTTP and WebSocket, bridged to a real broker with the simulated body behind it."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import os
import queue
import socket
import threading
import time

import httpx
import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect as ws_connect

from body_drivers.sim import SimConfig
from edge.app import Stack
from edge.runtime.bus import Bus
from edge.config import DEFAULT_COMPANION, Settings
from edge.protocol.companion import load_companion
from edge.protocol.payloads import Action, Perception, Reply
from edge.services.gateway import FieldError, Gateway, GatewayConfig, WsClient, http_server_options, perception_from
from edge.services.http_server import HttpServer

TOKEN = "s3cret-token"


@pytest.fixture(scope="module")
def pip():
    return load_companion(DEFAULT_COMPANION)


class Gw:
    """A running gateway: its bridge, its base URLs, and an httpx client."""

    def __init__(self, broker, companions, namespace=None, host="127.0.0.1", **config):
        self.bus = Bus("gateway-test", "gateway", broker.address, namespace=namespace, persistent=False).connect()
        self.gateway = Gateway(self.bus, companions, GatewayConfig(host=host, port=0, **config))
        self.server = HttpServer(self.gateway.app(), host, 0, name="gateway-test",
                                 **http_server_options(self.gateway)).start()
        self.url = self.server.url
        self.ws_url = self.url.replace("http://", "ws://") + "/ws"
        self.http = httpx.Client(base_url=self.url, timeout=5)

    def close(self):
        self.http.close()
        self.server.stop()
        self.bus.close()


@pytest.fixture
def gw(broker, pip):
    g = Gw(broker, [pip])
    yield g
    g.close()


@pytest.fixture
def secured(broker, pip):
    """A gateway that wants its token from every client, loopback included."""
    g = Gw(broker, [pip], token=TOKEN, token_on_loopback=True)
    yield g
    g.close()


class Tap:
    """A plain paho subscriber: sees exactly the bytes on the wire, whatever the topic."""

    def __init__(self, broker, pattern="#"):
        self.messages: queue.Queue = queue.Queue()
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2)
        self.client.on_message = lambda c, u, m: self.messages.put((m.topic, m.payload))
        subscribed = threading.Event()
        self.client.on_subscribe = lambda *a: subscribed.set()
        self.client.on_connect = lambda c, *a: c.subscribe(pattern, qos=1)
        self.client.connect(broker.address.host, broker.address.port)
        self.client.loop_start()
        assert subscribed.wait(5)

    def perception(self, perception_id: str | None, timeout: float = 5.0, topic: str = "perceptions") -> Perception:
        """The perception with this id (None: the next one) as published on ``topic``."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            got_topic, raw = self.messages.get(timeout=max(0.01, deadline - time.time()))
            if got_topic == topic:
                p = Perception.decode(raw)  # raises if the payload breaks the wire schema
                if perception_id in (None, p.id):
                    return p
        raise AssertionError(f"perception {perception_id} never reached {topic}")

    def close(self):
        self.client.disconnect()   # first: the network thread then ends at once, not after its 1 s select
        self.client.loop_stop()


@pytest.fixture
def tap(broker):
    t = Tap(broker)
    yield t
    t.close()


@pytest.fixture
def body(broker, pip):
    """``companion run body --node-id body-test`` on the test's broker."""
    stack = Stack(Settings(broker=broker.address, body_id="body-test"), speaker=None, kinds=("body",),
                  start_broker=False, companions=[pip]).start()
    stack.sim.config = SimConfig(move_speed=5.0, look_speed=5.0)
    yield stack.body
    stack.stop()


def rpc(method="perception.send", params=None, id=1, **extra):
    request = {"jsonrpc": "2.0", "method": method, **extra}
    if params is not None:
        request["params"] = params
    if id is not None:
        request["id"] = id
    return request


HELLO = {"title": "input", "body": "hello Pip"}


# -- perceptions over HTTP --------------------------------------------------------------------


def test_plain_perception_is_published_as_a_valid_payload(gw, tap, pip):
    r = gw.http.post("/perceptions", json={**HELLO, "to": pip.id, "from": "tester"})
    assert r.status_code == 202
    p = tap.perception(r.json()["id"])
    assert (p.title, p.body, p.format, p.to, p.sender) == ("input", "hello Pip", "text", pip.id, "tester")


def test_defaults_and_object_format(gw, tap):
    p = tap.perception(gw.http.post("/perceptions", json=HELLO).json()["id"])
    assert (p.to, p.sender, p.format) == ("all", "user", "text")
    seen = {"objects": [{"label": "person", "x": 0.2, "y": 0.1}]}
    r = gw.http.post("/perceptions", json={"title": "vision", "format": "object", "body": seen})
    assert tap.perception(r.json()["id"]).body == seen


def test_namespace_prefixes_the_topic(broker, tap, pip):
    g = Gw(broker, [pip], namespace="robot1")
    try:
        r = g.http.post("/perceptions", json=HELLO)
        assert tap.perception(r.json()["id"], topic="robot1/perceptions").body == "hello Pip"
    finally:
        g.close()


@pytest.mark.parametrize("body, field, words", [
    ({"body": "hi"}, "title", "required"),
    ({"title": "input"}, "body", "required"),
    ({"title": "", "body": "hi"}, "title", "non-empty"),
    ({"title": "input", "body": 42}, "body", "must be a string"),
    ({"title": "input", "body": "hi", "format": "video"}, "format", "'video'"),
    ({"title": "input", "body": "hi", "to": "nobody"}, "to", "nobody"),
    ({"title": "smell", "body": "hi"}, "title", "known: input, vision"),
    ({"title": "input", "body": "hi", "format": "object"}, "format", "'text' was expected"),
    ({"title": "input", "body": {"a": 1}, "format": "object"}, "body", "/format: 'text' was expected"),
    ({"titel": "input", "body": "hi"}, "titel", "unknown field"),
    ("just a string", None, "expected a JSON object"),
])
def test_bad_plain_bodies_get_400_naming_the_field(gw, body, field, words):
    r = gw.http.post("/perceptions", json=body)
    assert r.status_code == 400
    error = r.json()["error"]
    assert error["field"] == field and words in error["message"]
    assert gw.http.post("/perceptions", json=HELLO).status_code == 202  # still serving


def test_unparseable_and_oversized_bodies(gw):
    r = gw.http.post("/perceptions", content=b"{not json")
    assert r.status_code == 400 and r.json()["error"]["code"] == -32700 and "not JSON" in r.json()["error"]["message"]
    big = {"title": "input", "body": "x" * (gw.gateway.config.max_body_bytes + 10)}
    r = gw.http.post("/perceptions", json=big)
    assert r.status_code == 413 and "limit" in r.json()["error"]["message"]


# -- JSON-RPC 2.0 -----------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/perceptions", "/rpc"])
def test_jsonrpc_perception_send(gw, tap, path):
    r = gw.http.post(path, json=rpc(params=HELLO, id=7))
    assert r.status_code == 200
    reply = r.json()
    assert reply["jsonrpc"] == "2.0" and reply["id"] == 7 and "error" not in reply
    assert tap.perception(reply["result"]["id"]).body == "hello Pip"


@pytest.mark.parametrize("content, code, words, echoed", [
    (b'{"jsonrpc": "2.0", "method": ', -32700, "not JSON", None),
    (b'{"a": "\xff"}', -32700, "not UTF-8", None),
    (json.dumps({"jsonrpc": "1.0", "method": "perception.send", "id": 1}), -32600, '"jsonrpc"', 1),
    (json.dumps({"jsonrpc": "2.0", "method": "perception.send", "id": {"x": 1}}), -32600, '"id"', None),
    (json.dumps({"jsonrpc": "2.0", "method": 5, "id": "m"}), -32600, '"method"', "m"),
    (json.dumps({"title": "input", "body": "hi"}), -32600, '"jsonrpc"', None),
    (b"[]", -32600, "empty batch", None),
])
def test_framing_errors_answer_400(gw, content, code, words, echoed):
    r = gw.http.post("/rpc", content=content)
    assert r.status_code == 400
    reply = r.json()
    assert reply["error"]["code"] == code and words in reply["error"]["message"] and reply["id"] == echoed


def test_method_not_found_and_invalid_params(gw):
    reply = gw.http.post("/rpc", json=rpc("perception.sned", HELLO, id="a")).json()
    assert reply["error"]["code"] == -32601 and "perception.sned" in reply["error"]["message"] and reply["id"] == "a"
    reply = gw.http.post("/rpc", json=rpc(params={"title": "input"}, id=2)).json()
    assert reply["error"]["code"] == -32602 and "body" in reply["error"]["message"]
    assert reply["error"]["data"] == {"field": "body"}
    reply = gw.http.post("/rpc", json=rpc(params=["input", "hi"], id=3)).json()
    assert reply["error"]["code"] == -32602 and "object" in reply["error"]["message"]


def test_internal_error_is_answered_and_the_server_survives(gw, monkeypatch):
    def broken(payload):
        raise ZeroDivisionError("boom")
    monkeypatch.setattr(gw.bus, "publish", broken)
    reply = gw.http.post("/rpc", json=rpc(params=HELLO, id=9)).json()
    assert reply["error"]["code"] == -32603 and "boom" in reply["error"]["message"] and reply["id"] == 9
    monkeypatch.undo()
    assert "result" in gw.http.post("/rpc", json=rpc(params=HELLO, id=10)).json()


def test_notifications_get_no_body_but_are_published(gw, tap):
    r = gw.http.post("/rpc", json=rpc(params={"title": "input", "body": "fire and forget"}, id=None))
    assert r.status_code == 204 and r.content == b""
    assert tap.perception(None).body == "fire and forget"


def test_batch_answers_each_request_and_skips_notifications(gw, tap):
    batch = [rpc(params=HELLO, id=1), rpc(params={"title": "input", "body": "quiet"}, id=None),
             rpc("nope", {}, id=2), 5]
    replies = gw.http.post("/rpc", json=batch).json()
    assert [r["id"] for r in replies] == [1, 2, None]
    assert "result" in replies[0]
    assert [r["error"]["code"] for r in replies[1:]] == [-32601, -32600]
    assert gw.http.post("/rpc", json=[rpc(params=HELLO, id=None)]).status_code == 204


# -- auth -------------------------------------------------------------------------------------


def test_bearer_token_guards_http(secured):
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"}):
        r = secured.http.post("/perceptions", json=HELLO, headers=headers)
        assert r.status_code == 401 and r.headers["www-authenticate"].startswith("Bearer")
        assert secured.http.post("/rpc", json=rpc(params=HELLO), headers=headers).status_code == 401
    good = {"Authorization": f"Bearer {TOKEN}"}
    assert secured.http.post("/perceptions", json=HELLO, headers=good).status_code == 202
    assert "result" in secured.http.post("/rpc", json=rpc(params=HELLO), headers=good).json()


def test_bearer_token_guards_the_websocket(secured):
    with pytest.raises(InvalidStatus) as refused:
        ws_connect(secured.ws_url, open_timeout=5)
    assert refused.value.response.status_code == 401
    with pytest.raises(InvalidStatus):
        ws_connect(secured.ws_url + "?token=wrong", open_timeout=5)
    with ws_connect(secured.ws_url, additional_headers={"Authorization": f"Bearer {TOKEN}"}) as ws:
        ws.send(json.dumps(rpc(params=HELLO)))
        assert "result" in json.loads(ws.recv(timeout=5))
    with ws_connect(f"{secured.ws_url}?token={TOKEN}") as ws:
        ws.send(json.dumps(rpc(params=HELLO)))
        assert "result" in json.loads(ws.recv(timeout=5))


def test_token_is_optional_on_loopback_by_default(broker, pip):
    g = Gw(broker, [pip], token=TOKEN)
    try:
        r = g.http.post("/perceptions", json=HELLO)
        assert r.status_code == 202, r.text
        wrong = g.http.post("/perceptions", json=HELLO, headers={"Authorization": "Bearer wrong"})
        assert wrong.status_code == 401 and wrong.json()["error"]["reason"] == "token"  # a mistake is still named
        with ws_connect(g.ws_url) as ws:
            ws.send(json.dumps(rpc(params=HELLO)))
            assert "result" in json.loads(ws.recv(timeout=5))
    finally:
        g.close()


def _lan_address() -> str | None:
    """This machine's address on its first non-loopback interface, if it has one."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("203.0.113.1", 9))  # no packet is sent: this only picks the outgoing interface
        address = probe.getsockname()[0]
    except OSError:
        return None
    finally:
        probe.close()
    return None if address.startswith("127.") else address


@pytest.mark.parametrize("token", [TOKEN, None])
def test_clients_off_loopback_need_the_token(broker, pip, token):
    lan = _lan_address()
    if lan is None:
        pytest.skip("this machine has no non-loopback IPv4 address")
    g = Gw(broker, [pip], host="0.0.0.0", token=token)
    base, ws_base = f"http://{lan}:{g.server.port}", f"ws://{lan}:{g.server.port}/ws"
    try:
        with httpx.Client(base_url=base, timeout=5) as lan_client:
            refused = lan_client.post("/perceptions", json=HELLO)
            assert refused.status_code == (401 if token else 403)
            assert refused.json()["error"]["reason"] == "token"
            if token is None:
                assert "no token configured" in refused.json()["error"]["message"]
            with pytest.raises(InvalidStatus) as denied:
                ws_connect(ws_base, open_timeout=5)
            assert denied.value.response.status_code == (401 if token else 403)
            if token:
                good = {"Authorization": f"Bearer {TOKEN}"}
                assert lan_client.post("/perceptions", json=HELLO, headers=good).status_code == 202
                with ws_connect(f"{ws_base}?token={TOKEN}") as ws:
                    ws.send(json.dumps(rpc(params=HELLO)))
                    assert "result" in json.loads(ws.recv(timeout=5))
        assert g.http.post("/perceptions", json=HELLO).status_code == 202  # loopback: no token needed
    finally:
        g.close()


@pytest.mark.parametrize("headers, reason", [
    ({"host": "evil.example"}, "host"),                        # DNS rebinding: the page's own name
    ({"host": "evil.example:8765"}, "host"),
    ({"origin": "http://evil.example"}, "origin"),             # a cross-site page in a local browser
    ({"origin": "null"}, "origin"),                            # a sandboxed iframe or a file:// page
    ({"origin": "http://localhost:1"}, "origin"),              # another local web app
])
def test_foreign_host_or_origin_is_refused_with_a_named_reason(gw, tap, headers, reason):
    r = gw.http.post("/perceptions", json={"title": "input", "body": "from a web page"}, headers=headers)
    assert r.status_code == 403 and r.headers["content-type"] == "application/json"
    error = r.json()["error"]
    assert error["reason"] == reason and reason.capitalize() in error["message"]
    ws_url, sock = gw.ws_url, None
    if "host" in headers:  # the client writes Host from the URL: dial our port under the foreign name
        ws_url = f"ws://{headers['host'].split(':')[0]}:{gw.server.port}/ws"
        sock = socket.create_connection(("127.0.0.1", gw.server.port))
    with pytest.raises(InvalidStatus) as denied:
        ws_connect(ws_url, sock=sock, additional_headers={k: v for k, v in headers.items() if k != "host"},
                   open_timeout=5)
    assert denied.value.response.status_code == 403 and b'"reason":"%s"' % reason.encode() in denied.value.response.body
    ok = gw.http.post("/perceptions", json=HELLO)  # nothing was published before this one
    assert tap.perception(None).id == ok.json()["id"]


def test_own_origin_ip_hosts_and_configured_names_are_accepted(broker, pip):
    g = Gw(broker, [pip], allowed_hosts=("robot.example",), allowed_origins=("http://app.example:3000",))
    try:
        port = g.server.port
        for headers in ({"origin": g.url}, {"host": f"localhost:{port}", "origin": f"http://localhost:{port}"},
                        {"host": f"[::1]:{port}"}, {"host": "robot.example"}, {"origin": "http://app.example:3000"},
                        {"host": "10.1.2.3"}):
            assert g.http.post("/perceptions", json=HELLO, headers=headers).status_code == 202, headers
        with ws_connect(g.ws_url, additional_headers={"origin": "http://app.example:3000"}) as ws:
            ws.send(json.dumps(rpc(params=HELLO)))
            assert "result" in json.loads(ws.recv(timeout=5))
    finally:
        g.close()


@pytest.mark.parametrize("raw, words", [
    (b'{"jsonrpc": "2.0", "method": "perception.send", "params": {"title": "input", "body": "x"}, "id": NaN}',
     "/id: NaN"),
    (b'{"jsonrpc": "2.0", "method": "perception.send", "params": {"title": "input", "body": "x"}, "id": 1e400}',
     "/id: a number beyond the range of a 64-bit float"),
    (b'{"jsonrpc": "2.0", "method": "perception.send", "params": {"title": "input", "body": "x"}, "id": '
     + b"[" * 3000 + b"]" * 3000 + b"}", "nested"),
    (b'{"jsonrpc": "2.0", "method": "perception.send", "params": {"title": "input", "body": "\\ud800"}, "id": 1}',
     "/params/body: lone surrogate \\ud800"),
    (b'{"title": "vision", "format": "object", "body": {"x": Infinity}}', "/body/x: Infinity"),
])
def test_bad_numbers_nesting_and_surrogates_are_refused_before_publishing(gw, tap, raw, words):
    for path in ("/perceptions", "/rpc"):
        r = gw.http.post(path, content=raw)
        assert r.status_code == 400, r.text
        assert r.json()["error"]["code"] == -32700 and words in r.json()["error"]["message"]
    with ws_connect(gw.ws_url) as ws:
        ws.send(raw.decode())
        assert words in json.loads(ws.recv(timeout=5))["error"]["message"]
    ok = gw.http.post("/perceptions", json=HELLO)
    assert tap.perception(None).id == ok.json()["id"]  # the first perception on the wire is the good one


def test_a_huge_value_is_quoted_by_a_short_excerpt(gw):
    huge = "x" * 900_000
    cases = [({"title": "input", "body": "hi", "format": huge}, "format"), ({"title": huge, "body": "hi"}, "title"),
             ({"title": "input", "body": "hi", huge: 1}, None)]
    for body, field in cases:
        r = gw.http.post("/perceptions", json=body)
        assert r.status_code == 400 and len(r.content) < 1000, len(r.content)
        if field:
            assert r.json()["error"]["field"] == field
    reply = gw.http.post("/rpc", json=rpc(huge, HELLO, id=1)).json()
    assert reply["error"]["code"] == -32601 and len(json.dumps(reply)) < 1000


# -- WebSocket --------------------------------------------------------------------------------


def _notification(ws, method: str, action_id: str, timeout: float = 5.0) -> dict:
    deadline = time.time() + timeout
    while time.time() < deadline:
        message = json.loads(ws.recv(timeout=max(0.01, deadline - time.time())))
        if message.get("method") == method and message["params"]["id"] == action_id:
            assert message["jsonrpc"] == "2.0" and "id" not in message
            return message["params"]
    raise AssertionError(f"no {method} for {action_id}")


def _wait_clients(gw, n):
    deadline = time.time() + 5
    while len(gw.gateway.hub) < n and time.time() < deadline:
        time.sleep(0.01)
    assert len(gw.gateway.hub) == n


def test_actions_and_results_reach_every_socket(gw, body, broker, pip):
    brain = Bus("brain-test", "brain", broker.address, persistent=False).connect()
    try:
        with ws_connect(gw.ws_url) as a, ws_connect(gw.ws_url) as b:
            _wait_clients(gw, 2)
            look = Action(name="look", params={"x": 0.5, "y": 0, "z": 1}, sender=pip.id)
            fly = Action(name="fly", params={}, sender=pip.id)
            brain.publish(look)
            brain.publish(fly)
            for ws in (a, b):
                assert _notification(ws, "action.execute", look.id) == look.to_dict()
                ok = _notification(ws, "action.result", look.id)
                assert ok["ok"] is True and ok["name"] == "look" and ok["finished"] >= ok["started"]
                failed = _notification(ws, "action.result", fly.id)
                assert failed["ok"] is False and failed["error"]["code"] == "unknown_action"
    finally:
        brain.close()


def test_slash_replies_reach_the_socket(gw, broker, pip):
    """A brain's answer to ``/help`` (a Reply) is streamed as ``companion.reply``."""
    brain = Bus("brain-test", "brain", broker.address, persistent=False).connect()
    try:
        with ws_connect(gw.ws_url) as ws:
            _wait_clients(gw, 1)
            reply = Reply(sender=pip.id, to="user", in_reply_to="p1", text="/look x:number y:number z:number")
            brain.publish(reply)
            assert _notification(ws, "companion.reply", reply.id) == reply.to_dict()
    finally:
        brain.close()


def test_perception_over_the_socket(gw, tap):
    with ws_connect(gw.ws_url) as ws:
        ws.send(json.dumps(rpc(params={"title": "input", "body": "over the socket"}, id="p1")))
        reply = json.loads(ws.recv(timeout=5))
        assert reply["id"] == "p1" and tap.perception(reply["result"]["id"]).body == "over the socket"
        ws.send(json.dumps(rpc(params={"title": "input", "body": 3}, id="p2")))
        reply = json.loads(ws.recv(timeout=5))
        assert reply["error"]["code"] == -32602 and reply["error"]["data"]["field"] == "body"
        ws.send("hello?")
        assert json.loads(ws.recv(timeout=5))["error"]["code"] == -32700
        ws.send(json.dumps(rpc(params=HELLO, id=None)))  # a notification: nothing comes back
        ws.send(json.dumps(rpc(params=HELLO, id="last")))
        assert json.loads(ws.recv(timeout=5))["id"] == "last"


def test_a_stalled_socket_loses_its_oldest_notifications_not_the_bus(broker, pip, caplog):
    """One client stops reading; the other still gets every action, and the bus thread never waits."""
    g = Gw(broker, [pip], client_queue=4)
    brain = Bus("brain-test", "brain", broker.address, persistent=False).connect()
    caplog.set_level(logging.WARNING, logger="edge.services.gateway")
    try:
        with ws_connect(g.ws_url, max_queue=1) as stalled, ws_connect(g.ws_url, max_size=None) as reader:
            _wait_clients(g, 2)
            stalled.send(json.dumps(rpc(params=HELLO, id=1)))
            assert "result" in json.loads(stalled.recv(timeout=5))
            # incompressible, and more than loopback's auto-tuned socket buffers can absorb (~16 MB
            # in all), so the stalled client's notifications really pile up in the gateway
            filler = base64.b64encode(os.urandom(180_000)).decode()   # under the 256 kB payload limit
            for n in range(80):  # lock-step with the reader, so only the stalled client falls behind
                action = Action(name="speak", params={"message": filler, "n": n}, sender=pip.id)
                brain.publish(action)
                assert _notification(reader, "action.execute", action.id, timeout=10)["params"]["n"] == n
            # once it reads again, the stalled client catches up to the newest action
            assert _notification(stalled, "action.execute", action.id, timeout=10)["params"]["n"] == 79
        dropped = {r.getMessage().split()[1] for r in caplog.records if "gateway.ws_dropped" in r.getMessage()}
        assert len(dropped) == 1  # the stalled client only
    finally:
        brain.close()
        g.close()


def test_client_outbox_drops_oldest_without_blocking():
    loop = asyncio.new_event_loop()
    try:
        client = WsClient(loop, limit=3, name="slow")
        worker = threading.Thread(target=lambda: [client.offer(str(i)) for i in range(10)])
        worker.start()
        worker.join(2)
        assert not worker.is_alive()
        assert [client.next(), client.next(), client.next(), client.next()] == ["7", "8", "9", None]
        assert client.dropped == 7
    finally:
        loop.close()


def test_health(gw):
    assert gw.http.get("/health").json() == {"service": "gateway", "bus": "connected", "clients": 0}


def test_perception_from_without_companions_checks_only_the_wire():
    p = perception_from({"title": "anything", "body": "x", "to": "someone"})
    assert p.title == "anything" and p.to == "someone"
    with pytest.raises(FieldError) as err:
        perception_from({"title": "t", "body": "x", "from": "y" * 201})
    assert err.value.field == "from"


def test_serve_runs_until_stopped(broker, tap, pip, capsys):
    from edge.services.gateway import serve

    ready, stop, urls = threading.Event(), threading.Event(), []
    worker = threading.Thread(target=serve, args=(broker.address,), kwargs={
        "namespace": "robot2", "companions": [pip], "config": GatewayConfig(port=0, token=TOKEN),
        "ready": ready, "stop": stop, "on_ready": urls.append})
    worker.start()
    try:
        assert ready.wait(15)
        deadline = time.time() + 5
        while time.time() < deadline:  # the retained status tells other nodes where the gateway is
            topic, raw = tap.messages.get(timeout=5)
            if topic.startswith("robot2/status/gateway-") and json.loads(raw).get("gateway") == urls[0]:
                break
        else:
            raise AssertionError("no status with the gateway's URL")
        r = httpx.post(f"{urls[0]}/perceptions", json=HELLO, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=5)
        assert tap.perception(r.json()["id"], topic="robot2/perceptions").body == "hello Pip"
    finally:
        stop.set()
        worker.join(10)
    assert not worker.is_alive()
    err = capsys.readouterr().err
    assert f"waiting for the MQTT broker at {broker.address}" in err and f"{urls[0]}/perceptions" in err

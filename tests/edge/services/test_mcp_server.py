"""The Body server over MCP: the official MCP client over real HTTP, the simulated body.

The server and the body meet on the in-process transport (the same decode-and-validate path as
on a broker), since MCP is the subject here; the tests whose subject includes the broker (the
error naming it, ``serve`` connecting to it) keep a real one."""

from __future__ import annotations

import asyncio
import json
import queue
import threading
from contextlib import asynccontextmanager
from typing import AsyncIterator

import httpx
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from edge.services.mcp_server import MCP_PATH, PLAY_TOOL, SPEC_URI, serve, start
from body_drivers.sim import SimConfig
from edge.app import Stack
from edge.runtime.bus import Bus
from edge.config import DEFAULT_COMPANION, Settings
from edge.protocol.companion import load_companion
from edge.protocol.payloads import Action
from edge.runtime.local import LocalHub

HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "0"}}}


@pytest.fixture
def pip():
    return load_companion(DEFAULT_COMPANION)


@pytest.fixture
def hub() -> LocalHub:
    """Where the server, the body and the test's probes meet; ``settle()`` returns once every
    message sent so far was handled."""
    return LocalHub()


def _body(hub, pip, tmp_path, namespace=None):
    """``companion run body --node-id body-test`` on the hub: handlers first, then connect."""
    settings = Settings(timeline=tmp_path / "timeline.jsonl", namespace=namespace, body_id="body-test")
    stack = Stack(settings, speaker=None, kinds=("body",), start_broker=False, transport=hub.transport,
                  companions=[pip]).start()
    stack.sim.config = SimConfig(move_speed=5.0, look_speed=5.0)
    return stack.body, stack.sim, stack.buses[0]


@pytest.fixture
def sim(hub, pip, tmp_path):
    node, sim, bus = _body(hub, pip, tmp_path)
    yield sim
    node.stop()
    bus.close()


def _serve(bus, pip, timeout=10.0):
    """The MCP server on ``bus`` (a hub's transport, or a ``Bus`` on a real broker)."""
    body, http = start(pip, bus.connect(), result_timeout_s=timeout)
    return http, bus


@pytest.fixture
def url(hub, pip):
    http, bus = _serve(hub.transport("mcp-test", "mcp"), pip)
    yield http.url + MCP_PATH
    http.stop()
    bus.close()


@pytest.fixture
def actions_seen(hub):
    """Every Action published, to prove a refused call published nothing (after ``hub.settle()``)."""
    bus = hub.transport("probe", "test", persistent=False, announce=False)
    seen: queue.Queue = queue.Queue()
    bus.subscribe(Action, seen.put)
    bus.connect()
    yield seen
    bus.close()


@asynccontextmanager
async def _session(url: str, headers: dict[str, str] | None = None) -> AsyncIterator[ClientSession]:
    client = create_mcp_http_client(headers=headers) if headers else None
    async with streamable_http_client(url, http_client=client) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


def _run(coro):
    return asyncio.run(coro)


def test_lists_every_action_as_a_tool_with_its_schema(url, pip):
    async def go():
        async with _session(url) as s:
            return (await s.list_tools()).tools

    tools = {t.name: t for t in _run(go())}
    assert list(tools) == [a.title for a in pip.actions] + [PLAY_TOOL]
    for action in pip.actions:
        assert tools[action.title].description == action.description
        assert tools[action.title].input_schema == action.schema
    play = tools[PLAY_TOOL].input_schema
    assert play["properties"]["actionName"]["enum"] == [a.title for a in pip.actions]
    assert play["properties"]["parameters"]["type"] == "object"


def test_spec_main_is_the_companion_definition(url):
    async def go():
        async with _session(url) as s:
            listed = (await s.list_resources()).resources
            read = await s.read_resource(SPEC_URI)
            with pytest.raises(MCPError, match="unknown resource"):
                await s.read_resource("spec://other")
            return listed, read

    listed, read = _run(go())
    assert [str(r.uri) for r in listed] == [SPEC_URI] and listed[0].mime_type == "application/json"
    content = read.contents[0]
    assert content.mime_type == "application/json"
    assert json.loads(content.text) == json.loads(DEFAULT_COMPANION.read_text(encoding="utf-8"))


def test_a_japanese_companion_round_trips(hub):
    path = DEFAULT_COMPANION.parent / "azabu-mai.json"
    http, bus = _serve(hub.transport("mcp-test", "mcp"), load_companion(path))
    try:
        async def go():
            async with _session(http.url + MCP_PATH) as s:
                return (await s.list_tools()).tools, await s.read_resource(SPEC_URI)

        tools, read = _run(go())
    finally:
        http.stop()
        bus.close()
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert json.loads(read.contents[0].text) == doc
    assert [t.name for t in tools] == [a["title"] for a in doc["actions"]] + [PLAY_TOOL]
    assert [t.description for t in tools][:-1] == [a["description"] for a in doc["actions"]]


def test_session_less_2026_clients_work_too(url, sim):
    """``mcp.Client`` negotiates the 2026-07-28 protocol (no sessions); the same tools answer."""
    from mcp import Client

    async def go():
        async with Client(url) as client:
            return await client.call_tool("look", {"x": 0.3, "y": 0, "z": 1})

    result = _run(go())
    assert not result.is_error, result.content
    assert sim.pose.gaze == pytest.approx((0.3, 0.0, 1.0))


def test_look_moves_the_simulated_head(url, sim, pip):
    async def go():
        async with _session(url) as s:
            return await s.call_tool("look", {"x": -0.5, "y": 0.25, "z": 1})

    result = _run(go())
    assert not result.is_error, result.content
    assert result.content[0].text.startswith("ok: look")
    assert result.structured_content["ok"] is True and result.structured_content["from"] == "body-test"
    assert sim.pose.gaze == pytest.approx((-0.5, 0.25, 1.0))


def test_action_play_speaks(url, sim, actions_seen, pip):
    async def go():
        async with _session(url) as s:
            return await s.call_tool(PLAY_TOOL, {"actionName": "speak", "parameters": {"message": "Hi, I am Pip"}})

    result = _run(go())
    assert not result.is_error, result.content
    assert [entry["text"] for entry in sim.spoken] == ["Hi, I am Pip"]
    sent = actions_seen.get(timeout=2)
    assert (sent.name, sent.sender, sent.id) == ("speak", pip.id, result.structured_content["id"])


@pytest.mark.parametrize("tool, arguments, words", [
    ("look", {"x": 5, "y": 0, "z": 0}, "/x"),
    ("look", {"x": 0, "y": 0}, "'z' is a required property"),
    ("speak", {"text": "wrong key"}, "/text"),
    (PLAY_TOOL, {"actionName": "wag", "parameters": {"speed": "fast"}}, "/parameters/speed"),
    (PLAY_TOOL, {"actionName": "wag", "parameters": 3}, "/parameters"),
    (PLAY_TOOL, {"parameters": {}}, "'actionName' is a required property"),
])
def test_invalid_arguments_name_the_field_and_publish_nothing(url, sim, hub, actions_seen, tool, arguments, words):
    async def go():
        async with _session(url) as s:
            return await s.call_tool(tool, arguments)

    result = _run(go())
    assert result.is_error
    text = result.content[0].text
    assert text.startswith("error invalid_params:") and words in text
    assert result.structured_content["error"]["code"] == "invalid_params"
    assert hub.settle()   # a publish goes on its way before the call returns: none is in flight now
    assert actions_seen.empty() and sim.pose.gaze == (0.0, 0.0, 1.0)


def test_unknown_action_and_tool_name_the_known_ones(url, hub, actions_seen):
    async def go():
        async with _session(url) as s:
            return (await s.call_tool(PLAY_TOOL, {"actionName": "fly", "parameters": {}}),
                    await s.call_tool("fly", {}))

    played, direct = _run(go())
    assert played.is_error and direct.is_error
    assert "unknown action 'fly'" in played.content[0].text and "speak, look, move, wag, nod" in played.content[0].text
    assert "unknown tool 'fly'" in direct.content[0].text and "action-play" in direct.content[0].text
    assert hub.settle() and actions_seen.empty()


def test_concurrent_calls_each_get_their_own_result(url, sim):
    async def go():
        async with _session(url) as s:
            return await asyncio.gather(
                s.call_tool("look", {"x": 0.5, "y": 0, "z": 1}),
                s.call_tool("nod", {"times": 2}),
                s.call_tool(PLAY_TOOL, {"actionName": "speak", "parameters": {"message": "one"}}),
                s.call_tool("speak", {"message": "two"}),
            )

    results = _run(go())
    assert all(not r.is_error for r in results), [r.content for r in results]
    assert [r.structured_content["name"] for r in results] == ["look", "nod", "speak", "speak"]
    assert len({r.structured_content["id"] for r in results}) == 4
    assert sorted(entry["text"] for entry in sim.spoken) == ["one", "two"]


def test_body_failures_come_back_as_tool_errors(url, sim, hub):
    """The body's own refusal (here: estop) reaches the caller with its code."""
    from edge.protocol.payloads import Estop

    bus = hub.transport("estop-test", "test", persistent=False, announce=False).connect()
    bus.publish(Estop(sender="test", engaged=True)).wait_for_publish(2)
    assert hub.settle()   # the body has handled the estop

    async def go():
        async with _session(url) as s:
            return await s.call_tool("nod", {"times": 1})

    try:
        result = _run(go())
    finally:
        bus.publish(Estop(sender="test", engaged=False)).wait_for_publish(2)
        bus.close()
    assert result.is_error and result.content[0].text.startswith("error estop_engaged:")


def test_no_body_running_times_out_with_a_clear_error(broker, pip):
    http, bus = _serve(Bus("mcp-test", "mcp", broker.address), pip, timeout=0.5)   # the error names the broker
    try:
        async def go():
            async with _session(http.url + MCP_PATH) as s:
                return await s.call_tool("nod", {"times": 1})

        result = _run(go())
    finally:
        http.stop()
        bus.close()
    assert result.is_error
    text = result.content[0].text
    assert text.startswith("error no_result: no body answered 'nod' within 0.5 s") and str(broker.address) in text


def test_namespaced_server_reaches_a_namespaced_body(hub, pip, tmp_path):
    node, sim, body_bus = _body(hub, pip, tmp_path, namespace="robot1")
    http, bus = _serve(hub.transport("mcp-test", "mcp", "robot1"), pip)
    try:
        async def go():
            async with _session(http.url + MCP_PATH) as s:
                return await s.call_tool("move", {"x": 0.2, "y": 0, "z": 0})

        result = _run(go())
    finally:
        http.stop()
        bus.close()
        node.stop()
        body_bus.close()
    assert not result.is_error, result.content
    assert sim.pose.position == pytest.approx((0.2, 0.0, 0.0))


def test_sessions_have_ids_and_bad_http_is_answered_not_crashed(url):
    with httpx.Client(timeout=5) as client:
        opened = client.post(url, json=INIT, headers=HEADERS)
        assert opened.status_code == 200
        session_id = opened.headers["mcp-session-id"]
        assert session_id
        not_json = client.post(url, content=b"{not json", headers={**HEADERS, "mcp-session-id": session_id})
        assert not_json.status_code == 400 and not_json.json()["error"]["code"] == -32700
        unknown = client.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                              headers={**HEADERS, "mcp-session-id": "no-such-session"})
        assert unknown.status_code == 404
        huge = client.post(url, content=b" " * (2 << 20), headers=HEADERS)
        assert huge.status_code == 413
        not_rpc = client.post(url, json={"hello": 1}, headers={**HEADERS, "mcp-session-id": session_id})
        assert not_rpc.status_code == 400 and "jsonrpc" in not_rpc.json()["error"]["message"]
        foreign = client.post(url, json=INIT, headers={**HEADERS, "host": "evil.example"})
        assert foreign.status_code == 403 and foreign.json()["error"]["reason"] == "host"
        # ...and the server still serves the session it opened.
        ok = client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                         headers={**HEADERS, "mcp-session-id": session_id})
        assert ok.status_code == 202


def test_serve_runs_until_stopped(broker, tmp_path, capsys):
    """The ``companion run mcp`` entry point: ready, answering, then a clean stop."""
    ready, stop = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def run() -> None:
        try:
            serve(DEFAULT_COMPANION, broker.address, port=0, ready=ready, stop=stop)
        except BaseException as exc:  # surfaced in the test thread below
            errors.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(15), errors
    line = capsys.readouterr().out
    endpoint = line.split(" at ", 1)[1].split(" ", 1)[0]
    assert endpoint.endswith(MCP_PATH)

    async def go():
        async with _session(endpoint) as s:
            return [t.name for t in (await s.list_tools()).tools]

    assert PLAY_TOOL in _run(go())
    stop.set()
    thread.join(10)
    assert not thread.is_alive() and not errors


# -- hardening: access, strict JSON, bounded errors ------------------------------------------


def _lan_address() -> str | None:
    """This machine's address on a non-loopback interface, if it has one."""
    import socket
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("203.0.113.1", 9))  # no packet is sent: this only picks the outgoing interface
        address = probe.getsockname()[0]
    except OSError:
        return None
    finally:
        probe.close()
    return None if address.startswith("127.") else address


def test_a_huge_argument_comes_back_as_a_short_readable_error(url, sim, actions_seen):
    """900 kB in one param: the official client reads a small error; nothing is published."""
    huge = "x" * 900_000

    async def go():
        async with _session(url) as s:
            return (await s.call_tool("look", {"x": huge, "y": 0, "z": 1}),
                    await s.call_tool(PLAY_TOOL, {"actionName": "speak", "parameters": {"message": 1, huge: 2}}),
                    await s.call_tool(huge, {}),
                    await s.call_tool("look", {"x": 0.1, "y": 0, "z": 1}))

    bad, play, unknown, good = _run(go())
    for result in (bad, play, unknown):
        assert result.is_error and len(json.dumps(result.structured_content)) < 2000, len(str(result))
        assert len(result.content[0].text) < 1000
    assert "/x" in bad.content[0].text and "unknown tool" in unknown.content[0].text
    assert not good.is_error
    assert actions_seen.get(timeout=5).id == good.structured_content["id"]  # the first action published


@pytest.mark.parametrize("arguments, words", [
    (b'{"x": NaN, "y": 0, "z": 1}', "/params/arguments/x: NaN"),
    (b'{"x": 1e400, "y": 0, "z": 1}', "/params/arguments/x: a number beyond the range"),
    (b'{"x": -Infinity, "y": 0, "z": 1}', "-Infinity"),
    (b'{"x": ' + b"[" * 5000 + b"]" * 5000 + b', "y": 0, "z": 1}', "nested"),
])
def test_non_json_numbers_and_deep_nesting_are_refused_before_anything_moves(url, sim, actions_seen,
                                                                            arguments, words):
    with httpx.Client(timeout=5) as client:
        opened = client.post(url, json=INIT, headers=HEADERS)
        session = {**HEADERS, "mcp-session-id": opened.headers["mcp-session-id"]}
        for request_id in (b"7", b"NaN", b"1e400"):
            call = (b'{"jsonrpc": "2.0", "id": ' + request_id + b', "method": "tools/call", '
                    b'"params": {"name": "look", "arguments": ' + arguments + b'}}')
            refused = client.post(url, content=call, headers=session)
            assert refused.status_code == 400 and refused.json()["error"]["code"] == -32700
            assert refused.json()["id"] is None
            if request_id == b"7":
                assert words in refused.json()["error"]["message"]

    async def good():
        async with _session(url) as s:
            return await s.call_tool("look", {"x": 0.2, "y": 0, "z": 1})

    result = _run(good())
    assert actions_seen.get(timeout=5).id == result.structured_content["id"]
    assert sim.pose.gaze == pytest.approx((0.2, 0.0, 1.0))


@pytest.mark.parametrize("headers, reason", [({"origin": "http://evil.example"}, "origin"),
                                             ({"host": "evil.example:8780"}, "host")])
def test_foreign_origin_and_host_get_a_json_403(url, headers, reason):
    r = httpx.post(url, json=INIT, headers={**HEADERS, **headers}, timeout=5)
    assert r.status_code == 403 and r.json()["error"]["reason"] == reason
    assert reason.capitalize() in r.json()["error"]["message"]


def test_token_is_required_off_loopback_and_the_official_client_can_send_it(hub, pip, sim):
    from edge.services.access import AccessPolicy

    lan = _lan_address()
    if lan is None:
        pytest.skip("this machine has no non-loopback IPv4 address")
    bus = hub.transport("mcp-test", "mcp").connect()
    body, http = start(pip, bus, host="0.0.0.0", policy=AccessPolicy.build("mcp", "mcp-secret"))
    lan_url = f"http://{lan}:{http.port}{MCP_PATH}"
    try:
        refused = httpx.post(lan_url, json=INIT, headers=HEADERS, timeout=5)
        assert refused.status_code == 401 and refused.json()["error"]["reason"] == "token"

        async def go(endpoint, headers=None):
            async with _session(endpoint, headers) as s:
                return await s.call_tool("look", {"x": 0.4, "y": 0, "z": 1})

        result = _run(go(lan_url, {"Authorization": "Bearer mcp-secret"}))
        assert not result.is_error and sim.pose.gaze == pytest.approx((0.4, 0.0, 1.0))
        assert not _run(go(f"{http.url}{MCP_PATH}")).is_error  # loopback: the token is optional
    finally:
        http.stop()
        bus.close()

"""The Body server over MCP (the distributed seed's section 5.2): a companion's actions as MCP tools.

A Companion server (or any MCP host, e.g. an LLM desktop app) connects to ``POST /mcp``
(streamable HTTP, the SDK's session ids in the ``mcp-session-id`` header) and finds:

- one tool per action of the companion definition: name = the action's title, description =
  its description, input schema = the action object itself (it *is* the params' JSON Schema);
- the seed's ``action-play`` tool, ``{actionName, parameters}``, for hosts written against
  the seed's prompt;
- the seed's ``spec://main`` resource: the companion definition as JSON.

A tool call never drives hardware itself. The arguments are checked against the action's
schema here (so a bad call costs no broker round trip and the caller learns which field was
wrong), then an ``Action`` goes out on the bus from the companion's id, and the call waits for
the ``ActionResult`` carrying the same id, which whatever body node is running publishes.
That keeps one executor (``body_drivers/node.py``) for the LLM brain and for MCP alike, with
estop, duplicate suppression and one-action-at-a-time behaviour in one place.

In front of the SDK: the access guard (Host and Origin checks for every bind address, the
token off loopback; ``edge/services/access.py``), the connection limits every server of ours
has, and the strict JSON check (``edge/services/json_body.py``), so ``NaN`` or ``1e400`` never
becomes a tool argument. Error texts quote at most a short excerpt of a bad value.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.context import ServerRequestContext
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError

from edge import environment
from edge.runtime.broker import BrokerAddress
from edge.runtime.bus import Bus
from edge.runtime.transport import Transport
from edge.paths import DEFAULT_COMPANION
from edge.log import get_logger
from edge.protocol import codec
from edge.protocol.action_codes import ActionCode
from edge.protocol.codec import CodecError
from edge.protocol.companion import ActionSpec, Companion, Problem, load_companion, validate_params
from edge.protocol.payloads import Action, ActionResult
from edge.runtime.action_client import ActionClient
from edge.runtime.node import Node
from edge.services.access import ASGIApp, AccessKeys, AccessPolicy, policy_keys
from edge.services.connection_limits import ConnectionLimits
from edge.services.http_server import HttpServer, serve_forever
from edge.services.json_body import StrictJsonBody
from edge.services.wire import clip, excerpt

log = get_logger(__name__)

DEFAULT_PORT = 8780
MCP_PATH = "/mcp"
SPEC_URI = "spec://main"
PLAY_TOOL = "action-play"
MAX_BODY_BYTES = 1 << 20  # a tool call is a few hundred bytes; 1 MiB leaves room and stops abuse

# What every tool returns as structured content: the body's ActionResult, or the same shape
# (without id and times) when the call was refused before anything was published.
RESULT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["name", "ok"],
    "properties": {
        "id": {"type": "string"}, "from": {"type": "string"}, "name": {"type": "string"},
        "ok": {"type": "boolean"},
        "error": {"type": "object", "required": ["code", "message"],
                  "properties": {"code": {"type": "string"}, "message": {"type": "string"}}},
        "started": {"type": "number"}, "finished": {"type": "number"},
    },
}


def _problems_text(problems: list[Problem], prefix: str = "") -> str:
    """``/field: message; ...`` with pointers into the arguments (``prefix`` for action-play's), bounded."""
    text = "; ".join(f"{clip(prefix + p.pointer, 80) or '/'}: {clip(p.message, 160)}" for p in problems[:5])
    return clip(text + (f"; and {len(problems) - 5} more" if len(problems) > 5 else ""), 600)


def _outcome(name: str, ok: bool, code: str = "", message: str = "",
             result: ActionResult | None = None) -> types.CallToolResult:
    """The tool result: a line for the model to read plus the ActionResult as structured content."""
    data: dict[str, Any] = result.to_dict() if result is not None else {"name": name, "ok": ok}
    if not ok and "error" not in data:
        data["error"] = {"code": code, "message": message}
    if ok:
        seconds = f" in {result.finished - result.started:.2f} s" if result is not None else ""
        text = f"ok: {name} done{seconds}"
    else:
        text = f"error {data['error']['code']}: {data['error']['message']}"
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                structured_content=data, is_error=not ok)


class BodyMcpServer:
    """The MCP face of one companion's body: tools and ``spec://main`` over one bus connection."""

    def __init__(self, companion: Companion, bus: Transport, result_timeout_s: float = 60.0):
        if result_timeout_s <= 0:
            raise ValueError(f"result_timeout_s must be positive, got {result_timeout_s}")
        self.companion = companion
        self.bus = bus
        self.node = Node(bus, command="companion run mcp")
        self.result_timeout_s = result_timeout_s
        self.actions = ActionClient(bus, subscribe=False)
        self.node.on(ActionResult, self.actions.deliver)   # before the bus connects (docs/nodes.md)
        titles = [a.title for a in companion.actions]
        if PLAY_TOOL in titles:
            log.warning("mcp.tool_shadowed", action=PLAY_TOOL,
                        reason="the seed's action-play tool takes this name; call the action through it")
        self.play = ActionSpec(PLAY_TOOL, self._play_description(), self._play_schema(titles))
        self.server: Server[Any] = Server(
            f"{companion.name} body", version=companion.version,
            instructions=(f"The body of the companion {companion.name}. Read {SPEC_URI} for who it is and "
                          f"when to act (its events); act by calling an action's tool or {PLAY_TOOL}."),
            get_tool_input_schema=self._input_schema,
            on_list_tools=self._list_tools, on_call_tool=self._call_tool,
            on_list_resources=self._list_resources, on_read_resource=self._read_resource,
        )

    # -- the catalogue --------------------------------------------------------------------

    def _play_description(self) -> str:
        names = ", ".join(a.title for a in self.companion.actions) or "(none)"
        return (f"Play one of {self.companion.name}'s actions: actionName is the action ({names}), "
                "parameters its params as that action's own tool describes them.")

    @staticmethod
    def _play_schema(titles: list[str]) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "actionName": {"type": "string", "enum": titles, "description": "The action to play."},
                "parameters": {"type": "object", "description": "The action's params; {} when it takes none."},
            },
            "required": ["actionName"],
            "additionalProperties": False,
        }

    def tools(self) -> list[types.Tool]:
        listed = [types.Tool(name=a.title, description=a.description, input_schema=a.schema,
                             output_schema=RESULT_SCHEMA)
                  for a in self.companion.actions if a.title != PLAY_TOOL]
        listed.append(types.Tool(name=PLAY_TOOL, description=self.play.description,
                                 input_schema=self.play.schema, output_schema=RESULT_SCHEMA))
        return listed

    def _input_schema(self, name: str) -> dict[str, Any] | None:
        if name == PLAY_TOOL:
            return self.play.schema
        spec = self.companion.action(name)
        return spec.schema if spec is not None else None

    def spec_json(self) -> str:
        return json.dumps(self.companion.source, ensure_ascii=False, indent=2)

    # -- MCP handlers ---------------------------------------------------------------------

    async def _list_tools(self, ctx: ServerRequestContext[Any],
                          params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=self.tools())

    async def _list_resources(self, ctx: ServerRequestContext[Any],
                              params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        spec = types.Resource(uri=SPEC_URI, name="spec", title=f"{self.companion.name}: companion definition",
                              description="The companion definition file: identity, actions, perceptions, events.",
                              mime_type="application/json")
        return types.ListResourcesResult(resources=[spec])

    async def _read_resource(self, ctx: ServerRequestContext[Any],
                             params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        if str(params.uri) != SPEC_URI:
            raise MCPError(types.INVALID_PARAMS, f"unknown resource {excerpt(str(params.uri))} (this server has "
                           f"{SPEC_URI})", data={"uri": excerpt(str(params.uri), raw=True)})
        return types.ReadResourceResult(contents=[
            types.TextResourceContents(uri=SPEC_URI, mime_type="application/json", text=self.spec_json())])

    async def _call_tool(self, ctx: ServerRequestContext[Any],
                         params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments: dict[str, Any] = dict(params.arguments or {})
        try:  # the SDK's parser lets NaN and Infinity through; the wire codec's rules apply here too
            codec.check(arguments, Action.LIMITS)
        except CodecError as exc:
            name = codec.scrub(codec.clip(params.name, 60))
            return _outcome(name, False, ActionCode.INVALID_PARAMS, f"{name}: {exc}")
        if params.name == PLAY_TOOL:
            wanted = arguments.get("actionName")
            if isinstance(wanted, str) and self.companion.action(wanted) is None:
                known = ", ".join(a.title for a in self.companion.actions) or "(none)"
                return _outcome(excerpt(wanted, 40, raw=True), False, ActionCode.UNKNOWN_ACTION,
                                f"{PLAY_TOOL}: /actionName: unknown action {excerpt(wanted)} (known actions: {known})")
            problems = validate_params(self.play, arguments)
            if problems:
                return _outcome(PLAY_TOOL, False, ActionCode.INVALID_PARAMS, f"{PLAY_TOOL}: {_problems_text(problems)}")
            return await self.play_action(arguments["actionName"], arguments.get("parameters", {}), "/parameters")
        if self.companion.action(params.name) is None:
            known = ", ".join(t.name for t in self.tools())
            return _outcome(excerpt(params.name, 40, raw=True), False, ActionCode.UNKNOWN_TOOL,
                            f"unknown tool {excerpt(params.name)} (tools: {known})")
        return await self.play_action(params.name, arguments)

    async def play_action(self, name: str, parameters: dict[str, Any], where: str = "") -> types.CallToolResult:
        """Check, publish and await one action; every outcome is a tool result, never an exception."""
        spec = self.companion.action(name)
        if spec is None:  # unreachable through the schemas above; kept for direct callers
            return _outcome(excerpt(name, 40, raw=True), False, ActionCode.UNKNOWN_ACTION, f"unknown action {excerpt(name)}")
        problems = validate_params(spec, parameters)
        if problems:
            log.info("mcp.rejected", action=name, reason=_problems_text(problems, where))
            return _outcome(name, False, ActionCode.INVALID_PARAMS, f"{name}: {_problems_text(problems, where)}")
        action = Action(name=name, params=parameters, sender=self.companion.id)
        log.info("mcp.action", action=name, id=action.id)
        result = await self.actions.perform_async(action, self.result_timeout_s)
        if result is None:
            return _outcome(name, False, ActionCode.NO_RESULT, self._no_body_message(name))
        return _outcome(name, result.ok, result=result)

    def _no_body_message(self, name: str) -> str:
        where = f" under the namespace {self.bus.namespace!r}" if self.bus.namespace else ""
        broker = "" if self.bus.connected else " (the broker is unreachable right now)"
        return (f"no body answered {name!r} within {self.result_timeout_s:g} s: is a body node "
                f"(`companion run body`) connected to the MQTT broker at {self.bus.broker}{where}?{broker}")

    # -- HTTP -----------------------------------------------------------------------------

    def asgi_app(self, host: str = "127.0.0.1") -> ASGIApp:
        """Streamable HTTP at ``/mcp`` with sessions, behind the strict JSON check; one app per
        server run (the SDK's rule). The SDK's own DNS-rebinding check is off: ours
        (``mcp_policy``) applies to every bind address, and answers in JSON."""
        app = self.server.streamable_http_app(
            streamable_http_path=MCP_PATH, host=host, max_request_body_size=MAX_BODY_BYTES,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
        return StrictJsonBody(app, MAX_BODY_BYTES, (MCP_PATH,))


def mcp_policy(token: str | None = None, token_on_loopback: bool | None = None,
               access: AccessKeys | None = None) -> AccessPolicy:
    """Host/Origin checks; the token (argument or COMPANION_MCP_TOKEN) is required off loopback."""
    token = token or environment.value("COMPANION_MCP_TOKEN")
    keys = policy_keys(access)
    if token_on_loopback is not None:
        keys["token_on_loopback"] = token_on_loopback
    return AccessPolicy.build("mcp", token, **keys)


def start(companion: Companion, bus: Transport, host: str = "127.0.0.1", port: int = 0,
          result_timeout_s: float = 60.0, *, policy: AccessPolicy | None = None,
          limits: ConnectionLimits | None = None) -> tuple[BodyMcpServer, HttpServer]:
    """Serve on a background thread (tests, ``companion up``); the endpoint is ``http.url + MCP_PATH``."""
    body = BodyMcpServer(companion, bus, result_timeout_s)
    http = HttpServer(body.asgi_app(host), host, port, name="mcp", policy=policy or mcp_policy(),
                      limits=limits).start()
    body.node.status(None, companion=companion.id, mcp=http.url + MCP_PATH)
    return body, http


def serve(companion: str | Path = DEFAULT_COMPANION, broker: BrokerAddress | str = BrokerAddress(), *,
          namespace: str | None = None, host: str = "127.0.0.1", port: int = DEFAULT_PORT,
          result_timeout_s: float = 60.0, ready: threading.Event | None = None,
          stop: threading.Event | None = None, broker_timeout_s: float = 60.0, node_id: str | None = None,
          token: str | None = None, access: AccessKeys | None = None, transport: Transport | None = None) -> int:
    """``companion run mcp``: serve until SIGINT/SIGTERM or ``stop``; ``node_id`` defaults to mcp-<companion id>;
    ``transport`` (not yet connected) replaces the MQTT bus (the stack's, or a ``LocalHub``'s).

    ``token`` (default: COMPANION_MCP_TOKEN) is required from clients off loopback; without
    one the server answers only clients on this machine.

    Runs on the node runtime (docs/nodes.md): exit status 0 once stopped; 1, with the reason
    printed, when no broker answers within ``broker_timeout_s``. Raises CompanionError (bad
    file) or OSError (the port is taken) before serving; the CLI prints them.
    """
    loaded = load_companion(companion)
    address = BrokerAddress.parse(broker) if isinstance(broker, str) else broker
    log.info("mcp.waiting", companion=loaded.name, reason=f"waiting for the MQTT broker at {address}")
    body = BodyMcpServer(loaded, transport or Bus(node_id or f"mcp-{loaded.id}", "mcp", address, namespace=namespace),
                         result_timeout_s)   # its result handler first; the node connects in run()

    def main(node: Node) -> int:
        def announce(http: HttpServer) -> None:
            url = http.url + MCP_PATH
            node.status(None, companion=loaded.id, mcp=url)
            print(f"companion mcp: {loaded.name}'s body at {url} (actions on {Action.topic_pattern(namespace)}, "
                  f"broker {address})", flush=True)

        serve_forever(body.asgi_app(host), host, port, node.stop_event, name="mcp", ready=ready, on_ready=announce,
                      policy=mcp_policy(token, access=access))
        return 0

    return body.node.run(main, stop=stop, timeout=broker_timeout_s)

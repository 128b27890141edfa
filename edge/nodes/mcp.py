"""The Body server over MCP: one companion's actions as MCP tools, sent on the bus;
``mcp-<companion id>`` unless ``node_id`` names it."""

from __future__ import annotations

import threading
from pathlib import Path

from edge.config import ConfigError
from edge.nodes.lifecycle import BuildContext, NodeThread
from edge.protocol.companion import load_companion


def build(ctx: BuildContext) -> NodeThread:
    s, section = ctx.settings, ctx.settings.section("mcp")
    if section.companion is not None:
        served: Path | str = section.companion
    elif len(s.companions) == 1:
        served = s.companions[0]
    else:
        raise ConfigError("mcp: serves one companion; give exactly one --companion, or [mcp] companion")
    from edge.services import mcp_server as service

    transport = ctx.transport(section.node_id or f"mcp-{load_companion(served).id}", "mcp")

    def run(stop: threading.Event, ready: threading.Event) -> int:
        return service.serve(served, s.broker, namespace=s.namespace, host=section.host,
                             port=section.port if section.port is not None else service.DEFAULT_PORT,
                             result_timeout_s=s.result_timeout_s, node_id=section.node_id, ready=ready, stop=stop,
                             access=section, transport=transport)
    return NodeThread("mcp", run)

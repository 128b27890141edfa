"""The HTTP/WebSocket gateway: perceptions in, actions, results and replies out to its clients;
``gateway-<port>`` unless ``node_id`` names it."""

from __future__ import annotations

import threading

from edge import environment
from edge.nodes.lifecycle import BuildContext, NodeThread


def build(ctx: BuildContext) -> NodeThread:
    s, section = ctx.settings, ctx.settings.section("gateway")
    from edge.services import gateway as service

    token = section.token or environment.value("COMPANION_GATEWAY_TOKEN")
    config = service.GatewayConfig(host=section.host, token=token,
                                   port=section.port if section.port is not None else service.DEFAULT_PORT,
                                   allowed_hosts=section.allowed_hosts, allowed_origins=section.allowed_origins,
                                   token_on_loopback=section.token_on_loopback or None)
    transport = ctx.transport(section.node_id or f"gateway-{config.port}", "gateway", persistent=False)

    def run(stop: threading.Event, ready: threading.Event) -> int:
        return service.serve(s.broker, namespace=s.namespace, companions=ctx.companions, config=config,
                             node_id=section.node_id, ready=ready, stop=stop, transport=transport)
    return NodeThread("gateway", run)

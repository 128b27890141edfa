"""The seed's Registry: the companions' metadata over HTTP (``GET /metadata``), node ``registry``."""

from __future__ import annotations

import threading

from edge.nodes.lifecycle import BuildContext, NodeThread


def build(ctx: BuildContext) -> NodeThread:
    s, section = ctx.settings, ctx.settings.section("registry")
    from edge.services import registry as service

    sources = [section.folder] if section.folder else [str(p) for p in s.companions]

    def run(stop: threading.Event, ready: threading.Event) -> int:
        return service.serve(sources, host=section.host, port=section.port if section.port is not None
                             else service.DEFAULT_PORT, broker=s.broker, namespace=s.namespace, ready=ready, stop=stop,
                             access=section, transport=lambda: ctx.transport("registry", "registry", persistent=False))
    return NodeThread("registry", run)

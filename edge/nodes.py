"""``companion run NODE``: one node per process, as systemd runs them on a device."""

from __future__ import annotations

import argparse
import os
import re
import sys
from typing import Any

from edge.bus import NODE_ID_KINDS, Bus
from edge.config import Settings
from edge.log import get_logger
from edge.runtime.signals import wait_for_signal

log = get_logger(__name__)

LATER: dict[str, int] = {}

# A node's id names its retained ``status/<id>`` and its MQTT client id (``<id>@<namespace>``), so it
# must be the same on every start: a random one would leave a new retained topic per restart
# that dashboards and ACLs cannot name. Defaults: body; camera-<source>, mic-<source> (from the
# source); gateway-<port>; mcp-<companion id>; a brain is brain-<companion id>.
DEFAULT_BODY_ID = "body"
_NODE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def node_id_arg(text: str) -> str:
    """``--node-id``: one MQTT topic level (no ``/``, ``+`` or ``#``), readable in a dashboard."""
    if not _NODE_ID.fullmatch(text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a node id: use up to 64 letters, digits, '-', '_' or '.' (it becomes status/ID)")
    return text


def run_node(node: str, settings: Settings, args: Any = None) -> int:
    """Run one node until SIGINT/SIGTERM; ``args`` carries the node's own flags (port, token, ...)."""
    as_json = bool(getattr(args, "json", False))
    if node in LATER:
        print(f"companion run {node}: not available in this version yet (issue {LATER[node]})", file=sys.stderr)
        return 2
    node_id = getattr(args, "node_id", None)
    if node_id and node not in NODE_ID_KINDS:
        print(f"companion run {node}: --node-id is for {', '.join(NODE_ID_KINDS)}; "
              f"{'a brain is brain-<companion id>' if node == 'brain' else 'the registry is registry'}",
              file=sys.stderr)
        return 2
    if node == "camera":
        from edge.perception.camera_node import run_camera
        if not getattr(args, "source", None):
            print("companion run camera: --source SRC is required (device index, video file, image folder or URL)",
                  file=sys.stderr)
            return 2
        from edge.perception.camera_cli import camera_settings
        return run_camera(args.source, args.detector or "haar,hog", settings.broker, settings.namespace,
                          args.companion_id, node_id=node_id, track=bool(getattr(args, "track", False)),
                          **camera_settings(args))
    if node == "mic":
        from edge.app import load_companions as _companions
        from edge.perception.mic_node import run_mic
        if not getattr(args, "source", None):
            print("companion run mic: --source SRC is required (an input device name/index, or a WAV file)",
                  file=sys.stderr)
            return 2
        from edge.perception.mic_cli import mic_settings
        return run_mic(args.source, settings.broker, settings.namespace, args.companion_id,
                       companions=_companions(settings), node_id=node_id, **mic_settings(args))
    if node == "registry":
        from edge.services.registry import DEFAULT_PORT as REGISTRY_PORT, serve as serve_registry
        sources = [args.folder] if getattr(args, "folder", None) else (getattr(args, "companion", None) or None)
        return serve_registry(sources, host=getattr(args, "host", None) or "127.0.0.1",
                              port=getattr(args, "port", None) or REGISTRY_PORT,
                              broker=settings.broker, namespace=settings.namespace)
    if node == "gateway":
        from edge.app import load_companions as _load
        from edge.services.gateway import GatewayConfig, serve as serve_gateway
        token = getattr(args, "token", None) or os.environ.get("COMPANION_GATEWAY_TOKEN") or None
        config = GatewayConfig(host=getattr(args, "host", None) or "127.0.0.1",
                               port=getattr(args, "port", None) or GatewayConfig().port, token=token)
        return serve_gateway(settings.broker, namespace=settings.namespace, companions=_load(settings), config=config,
                             node_id=node_id)
    if node == "mcp":
        from edge.services.mcp_server import DEFAULT_PORT, serve
        if len(settings.companions) != 1:
            print("companion run mcp: serves one companion; give exactly one --companion", file=sys.stderr)
            return 2
        serve(settings.companions[0], settings.broker, namespace=settings.namespace,
              host=getattr(args, "host", None) or "127.0.0.1", port=getattr(args, "port", None) or DEFAULT_PORT,
              result_timeout_s=settings.result_timeout_s, node_id=node_id)
        return 0
    from edge.app import default_memory, load_companions, make_peers, make_speaker

    companions = load_companions(settings)
    if node == "body":
        from body_drivers.node import BodyNode
        from body_drivers.timeline import Timeline
        from edge.app import make_executor

        timeline = Timeline(settings.timeline)
        bus = Bus(node_id or DEFAULT_BODY_ID, "body", settings.broker, namespace=settings.namespace)
        executor, safety = make_executor(settings, make_speaker(settings), timeline, bus)
        body = BodyNode(bus, executor, companions, timeline).start()
        bus.connect()  # after the handlers: actions queued for the body while it was down are handled
        try:
            wait_for_signal()
        finally:
            if safety is not None:
                safety.stop()
            body.stop()
            if hasattr(executor, "close"):
                executor.close()
            bus.close()
        return 0
    # brain
    from edge.brain.loop import BrainConfig, CompanionBrain
    from edge.console import ConsoleObserver
    from edge.providers.factory import make_provider

    provider = make_provider(settings.provider)
    brain_config = BrainConfig(queue_size=settings.queue_size, result_timeout_s=settings.result_timeout_s,
                               memory_messages=default_memory(settings.provider))
    peers = make_peers(settings, companions)
    running = []
    try:
        for companion in companions:
            bus = Bus(f"brain-{companion.id}", "brain", settings.broker, namespace=settings.namespace,
                      status={"companion": companion.id})
            brain = CompanionBrain(companion, provider, bus, brain_config, ConsoleObserver(as_json, name=companion.name),
                                   peers=peers)
            bus.connect()                          # handlers are registered when the brain is built
            running.append((brain.start(), bus))
        wait_for_signal()
    finally:
        for brain, bus in running:
            brain.stop()
            bus.close()
        provider.close()
    return 0

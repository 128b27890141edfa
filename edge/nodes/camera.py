"""The camera: frames from ``[camera] source`` through the detector to ``vision`` perceptions
(and ``look`` actions with ``track``); ``camera-<source>`` unless ``node_id`` names it."""

from __future__ import annotations

import threading

from edge.config import ConfigError
from edge.nodes.lifecycle import BuildContext, NodeThread


def build(ctx: BuildContext) -> NodeThread:
    s, section = ctx.settings, ctx.settings.section("camera")
    if section.source is None:
        raise ConfigError("camera: a source is required: --source SRC or [camera] source (device index, "
                          "video file, image folder or stream URL)")
    from edge.perception.camera import node as camera_node
    from edge.perception.camera.options import camera_settings

    node_id = section.node_id or camera_node.default_node_id(section.source)
    transport = ctx.transport(node_id, "camera")

    def run(stop: threading.Event, ready: threading.Event) -> int:
        ready.set()
        return camera_node.run_camera(section.source, section.detector or "haar,hog", s.broker, s.namespace,
                                      section.companion_id, node_id=section.node_id, track=bool(section.track),
                                      stop=stop, transport=transport, **camera_settings(section))
    return NodeThread("camera", run)

"""The microphone: speech from ``[mic] source`` to ``input`` perceptions, barge-in on ``voice``;
``mic-<source>`` unless ``node_id`` names it."""

from __future__ import annotations

import threading

from edge.config import ConfigError
from edge.nodes.lifecycle import BuildContext, NodeThread


def build(ctx: BuildContext) -> NodeThread:
    s, section = ctx.settings, ctx.settings.section("mic")
    if section.source is None:
        raise ConfigError("mic: a source is required: --source SRC or [mic] source (an input device "
                          "name/index, or a WAV file)")
    from edge.perception.microphone import run as mic_run
    from edge.perception.microphone.node import default_node_id
    from edge.perception.microphone.options import mic_settings

    transport = ctx.transport(section.node_id or default_node_id(section.source), "mic")

    def run(stop: threading.Event, ready: threading.Event) -> int:
        ready.set()
        return mic_run.run_mic(section.source, s.broker, s.namespace, section.companion_id,
                               companions=ctx.companions, node_id=section.node_id, stop=stop,
                               transport=transport, **mic_settings(section))
    return NodeThread("mic", run)

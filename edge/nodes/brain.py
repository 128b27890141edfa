"""The brains: one ``CompanionBrain`` per companion file, each its own node ``brain-<companion id>``,
all deciding with the one provider the stack built (the model loads once)."""

from __future__ import annotations

from typing import Any

from edge.config import Settings
from edge.nodes.lifecycle import BuildContext, Lasting
from edge.protocol.companion import Companion


def default_memory(provider_spec: str) -> int:
    """Conversation window by model size: SmolLM2-135M copies from its history instead of
    deciding (docs/embedded-model.md: 20/48 without memory, 10/48 with 4 turns), so the
    embedded model decides from the rules and the perception alone."""
    return 0 if provider_spec.split(",")[0].strip().startswith("embedded") else 4


def make_peers(settings: Settings, companions: list[Companion]) -> Any:
    """Other companions: those in this process, plus the Registry's when one is configured."""
    local = [c.metadata_json()["metadata"] for c in companions]
    if settings.registry:
        from edge.brain.peers import RegistryPeers
        return RegistryPeers(settings.registry, local=lambda: local)
    return lambda: local


class BrainsRun(Lasting):
    """Every companion's brain (``brains``): each registers its handlers when built, connects
    before its warm-up (what is said meanwhile waits in its inbox), and is ready once warm."""

    def __init__(self, ctx: BuildContext):
        from edge.brain.loop import BrainConfig, CompanionBrain
        from edge.brain.ranker_choice import use_ranker

        super().__init__("brain")
        s = ctx.settings
        use_ranker(s.retrieval)
        config = ctx.brain_config or BrainConfig(queue_size=s.queue_size, result_timeout_s=s.result_timeout_s,
                                                 memory_messages=default_memory(s.provider))
        args = {"peers": make_peers(s, ctx.companions), **ctx.brain_args}
        self.brains: list[Any] = []
        for companion in ctx.companions:
            transport = ctx.transport(f"brain-{companion.id}", "brain", status={"companion": companion.id})
            observer = ctx.observer_factory(companion.name) if ctx.observer_factory else None
            self.brains.append(CompanionBrain(companion, ctx.provider, transport, config, observer, **args))

    def start(self) -> None:
        for brain in self.brains:
            brain.node.start()
            brain.start()

    def stop(self) -> None:
        for brain in self.brains:
            brain.stop()


def build(ctx: BuildContext) -> BrainsRun:
    return BrainsRun(ctx)

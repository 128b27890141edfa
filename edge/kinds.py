"""The node kinds: one row each, and everything that lists kinds reads it.

A row says what a kind is: its robot.toml section, the module that builds it, its place in the
start order (the row's place in ``KINDS``), whether it serves a port (the start waits until it
does), how its node id is chosen, and the topics it publishes and reads (the payload classes of
``edge/protocol/payloads.py``, which own their topics). The CLI's ``run`` choices, the stack,
robot.toml's sections, ``companion doctor``, the deploy scripts (through ``companion kinds``),
the broker ACL and the tests of the systemd units all read it. Adding a kind: docs/nodes.md,
"Adding a node kind".
"""

from __future__ import annotations

from dataclasses import dataclass

from edge.config_sections import (BodySection, BrainSection, CameraSection, GatewaySection, McpSection,
                                  MicSection, RegistrySection)
from edge.protocol.payloads import (Action, ActionResult, CompanionMessage, Estop, Payload, Perception, Reply,
                                    Speaking, Status, VoiceActivity)


@dataclass(frozen=True)
class Variant:
    """A way of running a kind that needs more topics, chosen by the key ``name`` of its section
    being true (a camera with ``track = true`` also sends ``look`` actions)."""

    name: str
    publishes: tuple[type[Payload], ...]


@dataclass(frozen=True)
class Kind:
    """One node kind. Every node also writes its own ``status/<node id>`` (not listed here)."""

    name: str
    section: type                               # its robot.toml [name] section (edge/config_sections.py)
    builder: str                                # the module whose ``build`` makes it; imported only to start it
    default_id: str                             # its node id when not named, as the docs say it
    serves: bool = False                        # listens on a port: the start waits until it serves
    node_id_flag: bool = False                  # `companion run KIND --node-id ID` names it
    always_up: bool = False                     # `companion up` starts it without a robot.toml section
    uses_companions: bool = False               # it reads the companion files robot.toml names
    profiles: tuple[str, ...] = ()              # install profiles whose systemd units include it
    unit_place: int = 99                        # where its unit is listed (the broker's is BROKER_UNIT_PLACE)
    publishes: tuple[type[Payload], ...] = ()
    subscribes: tuple[type[Payload], ...] = ()
    variants: tuple[Variant, ...] = ()


ALL_PROFILES = ("minimal", "standard", "jetson")
BROKER_UNIT_PLACE = 1   # the seed's order for the units: Registry, Relay (the broker), Body, Companion, the rest
BIGGER_PROFILES = ("standard", "jetson")

# in start order; the stack stops them in reverse
KINDS: tuple[Kind, ...] = (
    Kind("body", BodySection, "edge.nodes.body", "body", node_id_flag=True, always_up=True,
         uses_companions=True, profiles=ALL_PROFILES, unit_place=2,
         publishes=(ActionResult, Speaking), subscribes=(Action, Estop, Status, VoiceActivity)),
    Kind("brain", BrainSection, "edge.nodes.brain", "brain-<companion id>", always_up=True,
         uses_companions=True, profiles=ALL_PROFILES, unit_place=3,
         publishes=(Action, Reply, CompanionMessage),
         subscribes=(Perception, ActionResult, Estop, CompanionMessage, VoiceActivity)),
    Kind("registry", RegistrySection, "edge.nodes.registry", "registry", serves=True,
         profiles=BIGGER_PROFILES, unit_place=0),
    Kind("mcp", McpSection, "edge.nodes.mcp", "mcp-<companion id>", serves=True, node_id_flag=True, unit_place=7,
         publishes=(Action,), subscribes=(ActionResult,)),
    Kind("gateway", GatewaySection, "edge.nodes.gateway", "gateway-<port>", serves=True, node_id_flag=True,
         uses_companions=True, profiles=BIGGER_PROFILES, unit_place=6,
         publishes=(Perception,), subscribes=(Action, ActionResult, Reply)),
    Kind("camera", CameraSection, "edge.nodes.camera", "camera-<source>", node_id_flag=True,
         profiles=BIGGER_PROFILES, unit_place=4, publishes=(Perception,),
         variants=(Variant("track", publishes=(Action,)),)),
    Kind("mic", MicSection, "edge.nodes.mic", "mic-<source>", node_id_flag=True, uses_companions=True,
         profiles=BIGGER_PROFILES, unit_place=5, publishes=(Perception, VoiceActivity), subscribes=(Action, ActionResult, Speaking)),
)

BY_NAME: dict[str, Kind] = {k.name: k for k in KINDS}
NAMES: tuple[str, ...] = tuple(BY_NAME)
NODE_ID_KINDS: tuple[str, ...] = tuple(k.name for k in KINDS if k.node_id_flag)


def kind(name: str) -> Kind:
    """The row of a kind; a ValueError naming the known ones otherwise."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown node kind {name!r} (known: {', '.join(NAMES)})") from None


def units(profile: str | None = None) -> list[str]:
    """The systemd units (``companion-NAME.service``) by name, in the seed's order: the broker and
    every kind, or those of an install profile."""
    chosen = [(k.unit_place, k.name) for k in KINDS if profile is None or profile in k.profiles]
    return [name for _, name in sorted([(BROKER_UNIT_PLACE, "broker"), *chosen])]

"""``companion kinds``: the node-kind table (edge/kinds.py) for the deploy scripts and the docs.

``--json`` is every row; ``--sh`` is ``deploy/lib/kinds.sh``, the unit lists the installer reads
before any Python package is installed (a test fails when the shipped file differs); ``--acl``
is each kind's lines of the broker ACL, made from the topics it publishes and reads (what
``deploy/lib/broker_accounts.py`` renders per account).
"""

from __future__ import annotations

import json
from typing import Any

from edge.kinds import ALL_PROFILES, KINDS, Kind, units
from edge.protocol.payloads import Payload, Status

SH_HEADER = ("# shellcheck shell=bash\n"
             "# The systemd units of each install profile, from edge/kinds.py. Generated: `companion kinds --sh`;\n"
             "# tests/deploy/test_kinds_table.py fails when this file differs from the table.\n")


def topic(payload: type[Payload]) -> str:
    """A payload's topic as a subscription filter, without a namespace (``status/+``)."""
    return payload.topic_pattern(None)


def row_json(row: Kind) -> dict[str, Any]:
    return {"name": row.name, "section": row.section.__name__, "builder": row.builder, "serves": row.serves,
            "node_id_flag": row.node_id_flag, "default_id": row.default_id, "always_up": row.always_up,
            "uses_companions": row.uses_companions, "profiles": list(row.profiles),
            "publishes": [topic(p) for p in row.publishes], "subscribes": [topic(p) for p in row.subscribes],
            "variants": [{"name": v.name, "publishes": [topic(p) for p in v.publishes]}
                         for v in row.variants]}


def shell() -> str:
    lines = [f'ALL_UNITS="{" ".join(units())}"']
    lines += [f'UNITS_{profile}="{" ".join(units(profile))}"' for profile in ALL_PROFILES]
    return SH_HEADER + "\n".join(lines) + "\n"


def _acl_topic(payload: type[Payload]) -> str:
    """``@NS@`` stands for the namespace and its ``/``; ``messages`` never has one."""
    return topic(payload) if payload.GLOBAL else f"@NS@{topic(payload)}"


def acl_blocks() -> dict[str, list[str]]:
    """kind (and kind-variant, e.g. camera-track) -> its ACL lines: its own status, what it
    publishes, what it reads (``@NODE@`` is the node's id)."""
    blocks: dict[str, list[str]] = {}
    for row in KINDS:
        lines = [f"topic write @NS@{Status.TOPIC}/@NODE@"]
        lines += [f"topic write {_acl_topic(p)}" for p in row.publishes]
        lines += [f"topic read {_acl_topic(p)}" for p in row.subscribes]
        blocks[row.name] = lines
        for variant in row.variants:
            blocks[f"{row.name}-{variant.name}"] = [f"topic write {_acl_topic(p)}" for p in variant.publishes]
    return blocks


def acl_text() -> str:
    return "".join(f"kind {name}\n" + "".join(f"{line}\n" for line in lines) + "\n"
                   for name, lines in acl_blocks().items())


def run_kinds(json_out: bool = False, sh: bool = False, acl: bool = False) -> int:
    if json_out:
        print(json.dumps([row_json(row) for row in KINDS], indent=2))
    elif sh:
        print(shell(), end="")
    elif acl:
        print(acl_text(), end="")
    else:
        for row in KINDS:
            print(row.name)
    return 0

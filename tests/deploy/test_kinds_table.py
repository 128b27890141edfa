"""The node-kind table (edge/kinds.py) against everything that lists kinds outside Python: the
systemd units, the installer's unit lists, the broker ACL and the docs' tables. Adding a kind
without its unit, or a doc that forgets it, fails here with the kind named."""

from __future__ import annotations

import json
import re

from deploy_harness import DEPLOY
from edge.cli import build_parser, main
from edge.kinds import KINDS, NAMES, units
from edge.kinds_cli import acl_blocks, shell
from repo_paths import REPO

# what each node publishes and reads today (every publish and subscribe in edge/ and body_drivers/)
GRANTS = {
    "body": ["topic write @NS@status/@NODE@", "topic write @NS@actions/results", "topic write @NS@speaking",
             "topic read @NS@actions", "topic read @NS@estop", "topic read @NS@status/+", "topic read @NS@voice"],
    "brain": ["topic write @NS@status/@NODE@", "topic write @NS@actions", "topic write @NS@replies",
              "topic write messages", "topic read @NS@perceptions", "topic read @NS@actions/results",
              "topic read @NS@estop", "topic read messages", "topic read @NS@voice"],
    "registry": ["topic write @NS@status/@NODE@"],
    "mcp": ["topic write @NS@status/@NODE@", "topic write @NS@actions", "topic read @NS@actions/results"],
    "gateway": ["topic write @NS@status/@NODE@", "topic write @NS@perceptions", "topic read @NS@actions",
                "topic read @NS@actions/results", "topic read @NS@replies"],
    "camera": ["topic write @NS@status/@NODE@", "topic write @NS@perceptions"],
    "camera-track": ["topic write @NS@actions"],
    "mic": ["topic write @NS@status/@NODE@", "topic write @NS@perceptions", "topic write @NS@voice",
            "topic read @NS@actions", "topic read @NS@actions/results", "topic read @NS@speaking"],
}


def test_the_acl_of_each_kind_grants_what_its_node_uses():
    assert acl_blocks() == GRANTS
    template = (DEPLOY / "mosquitto/acl.template").read_text()
    written = re.findall(r"^kind (\S+)$", template, re.M)
    assert written == ["estop", "observer"], "a node kind's ACL lines come from edge/kinds.py, not the template"


def test_every_kind_has_its_systemd_unit_and_every_unit_a_kind():
    shipped = sorted(p.name for p in (DEPLOY / "systemd").glob("companion-*.service"))
    assert shipped == sorted(f"companion-{u}.service" for u in units())
    for row in KINDS:
        text = (DEPLOY / f"systemd/companion-{row.name}.service").read_text()
        exec_start = re.search(r"^ExecStart=(.*)$", text, re.M)
        assert exec_start and re.match(rf"/opt/companion-edge/venv/bin/companion run {row.name}\b",
                                       exec_start.group(1)), row.name
        assert "PartOf=companion.target" in text and "WantedBy=companion.target" in text, row.name


def test_the_installers_unit_lists_are_the_tables():
    assert (DEPLOY / "lib/kinds.sh").read_text() == shell(), "run `companion kinds --sh > deploy/lib/kinds.sh`"
    assert units("minimal") == ["broker", "body", "brain"]
    assert units() == ["registry", "broker", "body", "brain", "camera", "mic", "gateway", "mcp"]


def test_the_cli_runs_every_kind_and_no_other(capsys):
    parser = build_parser()
    run = next(a for a in parser._subparsers._group_actions[0].choices["run"]._actions if a.dest == "node")
    assert tuple(run.choices) == NAMES
    assert main(["kinds"]) == 0 and capsys.readouterr().out.split() == list(NAMES)
    assert main(["kinds", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows] == list(NAMES)
    assert {r["name"]: r["default_id"] for r in rows}["gateway"] == "gateway-<port>"
    assert {r["name"]: r["variants"] for r in rows}["camera"] == [{"name": "track", "publishes": ["actions"]}]


def _table_rows(text: str, heading: str) -> list[str]:
    """The first column of the markdown table after ``heading``."""
    part = text[text.index(heading):]
    rows = []
    for line in part.splitlines()[1:]:
        if line.startswith("|"):
            rows.append(line.split("|")[1].strip().strip("`"))
        elif rows:
            break
    return [r for r in rows if r and set(r) != {"-"}][1:]   # without the header row


def test_the_docs_tables_list_every_kind():
    deploy = (REPO / "docs/deploy.md").read_text()
    assert _table_rows(deploy, "## 4. The services") == [f"companion-{u}" for u in units()]
    assert _table_rows(deploy, "**Each account writes only its own status") == [*NAMES, "estop", "observer"]
    nodes = (REPO / "docs/nodes.md").read_text()
    assert _table_rows(nodes, "## The node kinds") == list(NAMES)
    protocol = (REPO / "docs/protocol.md").read_text()
    listed = re.search(r"one node, for systemd: (.*)", protocol)
    assert listed and set(listed.group(1).split(" | ")) == set(NAMES)

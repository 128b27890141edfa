"""One module reads the environment (edge/environment.py), every variable is declared there with
its kind, and docs/configuration.md lists exactly those variables."""

from __future__ import annotations

import re

import pytest
from repo_paths import REPO

from edge import environment
from edge.environment import DEPRECATED, LIBRARY, PATH, SECRET, VARIABLES

READS = re.compile(r"\bos\.environ\b|\bgetenv\(|\bfrom os import\b.*\benviron\b")


def test_no_module_but_environment_reads_the_environment():
    readers = [str(p.relative_to(REPO)) for folder in ("edge", "body_drivers") for p in (REPO / folder).rglob("*.py")
               if READS.search(p.read_text(encoding="utf-8"))]
    assert readers == ["edge/environment.py"]


def test_every_name_the_code_asks_for_is_declared():
    asked = {m.group(1) for folder in ("edge", "body_drivers") for p in (REPO / folder).rglob("*.py")
             for m in re.finditer(r'environment\.(?:value|is_set|set_default)\("(\w+)"', p.read_text(encoding="utf-8"))}
    assert asked and asked <= set(VARIABLES)
    with pytest.raises(KeyError, match="COMPANION_CAMERA_SOURCE is not declared in edge/environment.py"):
        environment.value("COMPANION_CAMERA_SOURCE")


def test_only_secrets_paths_library_switches_and_settings_that_moved_to_robot_toml():
    assert {v.kind for v in VARIABLES.values()} == {SECRET, PATH, LIBRARY, DEPRECATED}
    assert all(v.instead for v in VARIABLES.values() if v.kind == DEPRECATED)


def test_the_docs_table_lists_every_variable_with_its_kind():
    docs = (REPO / "docs/configuration.md").read_text(encoding="utf-8")
    rows = {name: line.split("|")[2].strip() for line in docs.splitlines() if line.startswith("| `")
            for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", line.split("|")[1])}
    assert rows == {v.name: v.kind for v in VARIABLES.values()}


def test_value_strips_and_treats_empty_as_unset_and_library_switches_keep_the_users(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "  sk-1 \n")
    assert environment.value("OPENAI_API_KEY") == "sk-1"
    monkeypatch.setenv("OPENAI_API_KEY", " ")
    assert environment.value("OPENAI_API_KEY") is None and environment.is_set("OPENAI_API_KEY")
    monkeypatch.setenv("YOLO_OFFLINE", "0")
    environment.set_default("YOLO_OFFLINE", "1")
    assert environment.value("YOLO_OFFLINE") == "0"
    with pytest.raises(ValueError, match="OPENAI_API_KEY is not a library switch"):
        environment.set_default("OPENAI_API_KEY", "x")

"""No import cycle between ``edge`` and ``body_drivers``, counting imports inside functions.

The layers: ``body_drivers`` builds on edge's core (the protocol, the node runtime, the bus, the
log, ``ConfigError``); only edge's wiring (the CLI, the stack, ``robot.toml`` loading, the doctor,
audio device listing) imports ``body_drivers``. So every edge module that ``body_drivers`` reaches
must never reach ``body_drivers`` back: that is what this test holds, reading the sources with
``ast`` (an import hidden in a function counts like one at the top).
"""

from __future__ import annotations

import ast
from collections import deque
from pathlib import Path
from repo_paths import REPO

ROOT = REPO
PACKAGES = ("edge", "body_drivers")


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imports(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    """Every module of ours that ``module`` imports, anywhere in its body; importing a.b.c
    also runs a and a.b, so those count too."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1] + ([base] if base else []))
            names.add(base)
            names.update(f"{base}.{a.name}" for a in node.names)
    out = set()
    for name in names:
        parts = name.split(".")
        out.update(m for m in (".".join(parts[:i]) for i in range(1, len(parts) + 1)) if m in known and m != module)
    return out


def _graph() -> dict[str, set[str]]:
    known = _modules()
    return {m: _imports(m, p, known) for m, p in known.items()}


def _path(graph: dict[str, set[str]], start: str, goal: str) -> list[str] | None:
    """A shortest import chain from ``start`` to any module under ``goal`` (None when there is none)."""
    came: dict[str, str | None] = {start: None}
    todo = deque([start])
    while todo:
        here = todo.popleft()
        if here.split(".")[0] == goal:
            chain = [here]
            while (prev := came[chain[-1]]) is not None:
                chain.append(prev)
            return chain[::-1]
        for nxt in sorted(graph[here]):
            if nxt not in came:
                came[nxt] = here
                todo.append(nxt)
    return None


def test_the_scan_sees_imports_inside_functions():
    graph = _graph()
    assert "body_drivers.body_config" in graph["edge.config"]   # imported inside load_toml
    assert "edge.runtime.transport" in graph["body_drivers.node"]


def test_nothing_body_drivers_builds_on_imports_body_drivers_back():
    graph = _graph()
    cycles = []
    for module in sorted(m for m in graph if m.startswith("body_drivers")):
        for used in sorted(m for m in graph[module] if m.startswith("edge")):
            back = _path(graph, used, "body_drivers")
            if back is not None:
                cycles.append(" -> ".join([module, *back]))
    assert not cycles, "import cycles between edge and body_drivers:\n" + "\n".join(cycles)


def test_the_mcp_server_is_a_service():
    graph = _graph()
    assert "edge.services.mcp_server" in graph and "body_drivers.mcp_server" not in graph
    assert _path(graph, "edge.services.mcp_server", "body_drivers") is None

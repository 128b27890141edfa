"""The import structure of ``edge`` and ``body_drivers``: layers that never import back, and no
import circle at all, counting imports inside functions and under ``if TYPE_CHECKING:``.

The layers: ``body_drivers`` builds on edge's core (the protocol, the node runtime, the bus, the
log, ``ConfigError``); only edge's wiring (the CLI, the stack, ``robot.toml`` loading, the doctor,
audio device listing) imports ``body_drivers``. So every edge module that ``body_drivers`` reaches
must never reach ``body_drivers`` back.

Circles: two modules that need each other (even lazily, even only for type hints) cannot be read,
tested or replaced one at a time, so none is allowed. This reads the sources with ``ast``: an
import hidden in a function or a ``TYPE_CHECKING`` block counts like one at the top.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections import deque
from pathlib import Path
from repo_paths import REPO

ROOT = REPO
PACKAGES = ("edge", "body_drivers")


def _modules(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> dict[str, Path]:
    found = {}
    for package in packages:
        for path in (root / package).rglob("*.py"):
            parts = path.relative_to(root).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _named(module: str, path: Path) -> set[str]:
    """Every dotted name ``module`` imports, anywhere in its body (functions, ``TYPE_CHECKING``
    blocks): ``from a.b import c`` names a.b.c, which is the module c or a name in a.b."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1] + ([base] if base else []))
            names.update(f"{base}.{a.name}" for a in node.names)
    return names


def _imports(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    """Every module of ours that importing ``module`` runs: importing a.b.c also runs the
    packages a and a.b, so those count too."""
    out = set()
    for name in _named(module, path):
        parts = name.split(".")
        out.update(m for m in (".".join(parts[:i]) for i in range(1, len(parts) + 1)) if m in known and m != module)
    return out


def _uses(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of ours that ``module`` takes something from: for each import the longest
    known prefix. The parent packages Python runs first are left out: a package is always set up
    before its modules, so its ``__init__`` handing them on is no circle."""
    out = set()
    for name in _named(module, path):
        parts = name.split(".")
        prefixes = (".".join(parts[:i]) for i in range(len(parts), 0, -1))
        used = next((m for m in prefixes if m in known), None)
        if used is not None and used != module:
            out.add(used)
    return out


def _graph() -> dict[str, set[str]]:
    known = _modules()
    return {m: _imports(m, p, known) for m, p in known.items()}


def _use_graph(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> dict[str, set[str]]:
    known = _modules(root, packages)
    return {m: _uses(m, p, known) for m, p in known.items()}


def _circles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """The import circles: each a largest set of modules that all reach each other (Tarjan's
    strongly connected components, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: set[frozenset[str]] = set()
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            here, todo = work[-1]
            nxt = next(todo, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in on_stack:
                    low[here] = min(low[here], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[here])
            if low[here] == index[here]:
                members = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.add(member)
                    if member == here:
                        break
                if len(members) > 1 or here in graph[here]:
                    circles.add(frozenset(members))
    return circles


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


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_the_scan_sees_imports_inside_functions():
    graph = _graph()
    assert "body_drivers.body_config" in graph["edge.config"]   # imported inside load_toml
    assert "edge.runtime.transport" in graph["body_drivers.node"]


def test_the_circle_scan_sees_lazy_and_type_checking_imports(tmp_path):
    _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/interface.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.impl import Impl\n",
        "pkg/impl.py": "def make():\n    from . import interface\n    return interface\n",
        "pkg/alone.py": "import pkg.interface\n",
    })
    graph = _use_graph(tmp_path, ("pkg",))
    assert graph["pkg.interface"] == {"pkg.impl"}
    assert graph["pkg.impl"] == {"pkg.interface"}
    assert _circles(graph) == {frozenset({"pkg.interface", "pkg.impl"})}


def test_a_package_that_hands_on_its_modules_is_no_circle(tmp_path):
    _write(tmp_path, {
        "pkg/__init__.py": "from pkg.store import Store\n",
        "pkg/store.py": "from pkg.errors import StoreError\n",
        "pkg/errors.py": "",
        "pkg/user.py": "from pkg import Store\n",
        "pkg/back.py": "from pkg import Store\n",
        "pkg/sub/__init__.py": "from pkg.sub.a import A\n",
        "pkg/sub/a.py": "from pkg.sub import helper\n",
        "pkg/sub/helper.py": "",
        "pkg/loop/__init__.py": "from pkg.loop.a import A\nLIMIT = 3\n",
        "pkg/loop/a.py": "from pkg.loop import helper, LIMIT\n",
        "pkg/loop/helper.py": "",
    })
    graph = _use_graph(tmp_path, ("pkg",))
    assert graph["pkg.sub.a"] == {"pkg.sub.helper"}
    assert graph["pkg.loop.a"] == {"pkg.loop", "pkg.loop.helper"}
    assert _circles(graph) == {frozenset({"pkg.loop", "pkg.loop.a"})}   # a takes LIMIT back from its package


def test_nothing_body_drivers_builds_on_imports_body_drivers_back():
    graph = _graph()
    cycles = []
    for module in sorted(m for m in graph if m.startswith("body_drivers")):
        for used in sorted(m for m in graph[module] if m.startswith("edge")):
            back = _path(graph, used, "body_drivers")
            if back is not None:
                cycles.append(" -> ".join([module, *back]))
    assert not cycles, "import cycles between edge and body_drivers:\n" + "\n".join(cycles)


def _describe(graph: dict[str, set[str]], circle: frozenset[str]) -> str:
    edges = [f"{a} -> {b}" for a in sorted(circle) for b in sorted(graph[a] & circle)]
    return "{" + ", ".join(sorted(circle)) + "}\n    " + "\n    ".join(edges)


def test_no_import_circle_among_edge_and_body_drivers_modules():
    graph = _use_graph()
    circles = _circles(graph)
    assert not circles, "import circles (lazy and TYPE_CHECKING imports count):\n" + "\n".join(
        _describe(graph, c) for c in sorted(circles, key=sorted))


def test_the_mcp_server_is_a_service():
    graph = _graph()
    assert "edge.services.mcp_server" in graph and "body_drivers.mcp_server" not in graph
    assert _path(graph, "edge.services.mcp_server", "body_drivers") is None


def test_every_package_says_what_it_is_for():
    silent = [str(path.relative_to(ROOT)) for package in PACKAGES for path in sorted((ROOT / package).rglob("__init__.py"))
              if not ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))]
    assert not silent, f"packages without a docstring saying what they are for and what is public: {silent}"


# Libraries that take a noticeable time to import; the CLI and ``companion validate`` load none.
HEAVY = ("numpy", "cv2", "torch", "onnxruntime", "ultralytics", "faster_whisper", "vosk", "pocketsphinx",
         "httpx", "sounddevice", "serial", "starlette", "uvicorn")


def test_the_command_line_and_companion_validate_load_no_heavy_library():
    probe = ("import sys, edge.cli, edge.protocol.validate_cli, edge.protocol.companion; "
             f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))")
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=120, check=True)
    assert run.stdout.split() == []

"""Where the checkout's own files are, for tests and benches wherever they sit in the tree."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
COMPANIONS = REPO / "companions"
DEPLOY = REPO / "deploy"

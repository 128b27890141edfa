"""Where the shipped data lives: beside the code in a checkout, else in the install's data files."""

from __future__ import annotations

import sys
from pathlib import Path


def _companions_dir() -> Path:
    """``companions/`` of a checkout (or an editable install), else where a wheel install puts
    its data files (``<prefix>/share/companion-edge/companions``)."""
    in_checkout = Path(__file__).resolve().parent.parent / "companions"
    if in_checkout.is_dir():
        return in_checkout
    return Path(sys.prefix) / "share" / "companion-edge" / "companions"


COMPANIONS_DIR = _companions_dir()
DEFAULT_COMPANION = COMPANIONS_DIR / "pip.json"

"""No source file in ``edge`` or ``body_drivers`` over 400 lines: a file that long holds more than
one concern (split it by concern, not by line count)."""

from __future__ import annotations

from repo_paths import REPO

LIMIT = 400
PACKAGES = ("edge", "body_drivers")


def _lines() -> dict[str, int]:
    return {path.relative_to(REPO).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
            for package in PACKAGES for path in sorted((REPO / package).rglob("*.py"))}


def test_no_source_file_is_over_the_limit():
    lines = _lines()
    over = {name: n for name, n in lines.items() if n > LIMIT}
    assert not over, f"files over {LIMIT} lines: {over}"

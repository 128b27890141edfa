"""No source file in ``edge`` or ``body_drivers`` over 400 lines: a file that long holds more than
one concern (split it by concern, not by line count)."""

from __future__ import annotations

from repo_paths import REPO

LIMIT = 400
PACKAGES = ("edge", "body_drivers")

# Files still being split on other branches (issue 21), each with who splits it. The list only
# shrinks: a file over the limit not listed here fails, and so does an entry back under it (its
# split deletes the entry). When it is empty, delete it.
BEING_SPLIT: dict[str, str] = {
    "edge/brain/loop.py": "brain",
}


def _lines() -> dict[str, int]:
    return {path.relative_to(REPO).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
            for package in PACKAGES for path in sorted((REPO / package).rglob("*.py"))}


def test_no_source_file_is_over_the_limit():
    lines = _lines()
    over = {name: n for name, n in lines.items() if n > LIMIT and name not in BEING_SPLIT}
    assert not over, f"files over {LIMIT} lines: {over}"
    done = {name: lines.get(name) for name in BEING_SPLIT if lines.get(name, 0) <= LIMIT}
    assert not done, f"these files are split (or gone): remove them from BEING_SPLIT: {done}"

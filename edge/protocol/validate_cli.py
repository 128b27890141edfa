"""`companion validate FILE...`: one line per problem, exit status 1 if there was any."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TextIO

from edge.protocol.companion import format_problem, validate_file

_METASCHEMA_HOSTS = ("https://json-schema.org/", "http://json-schema.org/")


def is_json_schema(path: str) -> bool:
    """True for a JSON Schema document (its ``$schema`` is a json-schema.org metaschema), such as
    companions/schema.json itself: ``companion validate companions/*.json`` then skips it."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False  # validate_file reports what is wrong with it
    declared = doc.get("$schema") if isinstance(doc, dict) else None
    return isinstance(declared, str) and declared.startswith(_METASCHEMA_HOSTS)


def run_validate(paths: list[str], out: TextIO | None = None, notes: TextIO | None = None) -> int:
    """Print ``FILE: /json/pointer: message`` for every problem (``/`` is the whole file).

    Valid files print nothing, so the output is exactly the list of things to fix and
    scripts can grep it; the exit status says whether that list is empty. A JSON Schema
    document is not a companion file: it is skipped with a note on ``notes``.
    """
    out, notes = out or sys.stdout, notes or sys.stderr   # looked up now: a caller may have replaced them
    failed = False
    for path in paths:
        if is_json_schema(path):
            print(f"{path}: skipped: a JSON Schema, not a companion file", file=notes)
            continue
        try:
            problems = [format_problem(problem, path) for problem in validate_file(path)]
        except Exception as exc:   # a bug of ours: say so for this file and go on with the next
            problems = [f"{path}: /: could not be checked ({type(exc).__name__}: {exc}); please report this"]
        for line in problems:
            failed = True
            print(line, file=out)
    return 1 if failed else 0

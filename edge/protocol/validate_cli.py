"""`companion validate FILE...`: one line per problem, exit status 1 if there was any."""

from __future__ import annotations

import sys
from typing import TextIO

from edge.protocol.companion import format_problem, validate_file


def run_validate(paths: list[str], out: TextIO = sys.stdout) -> int:
    """Print ``FILE: /json/pointer: message`` for every problem (``/`` is the whole file).

    Valid files print nothing, so the output is exactly the list of things to fix and
    scripts can grep it; the exit status says whether that list is empty.
    """
    failed = False
    for path in paths:
        for problem in validate_file(path):
            failed = True
            print(format_problem(problem, path), file=out)
    return 1 if failed else 0

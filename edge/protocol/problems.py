"""A problem in a JSON document, located by an RFC 6901 pointer, and the words for what a JSON
Schema found wrong: what ``companion validate`` prints for a file and what an action's params are
checked into (``validate_params``)."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any, Iterable

from jsonschema.exceptions import ValidationError, best_match


@dataclass(frozen=True)
class Problem:
    """One thing wrong, located by an RFC 6901 pointer ("" is the whole document)."""
    pointer: str
    message: str


def format_problem(problem: Problem, path: str | None = None) -> str:
    """One report line, ``FILE: /pointer: message``; the root is shown as ``/``."""
    where = path if path is not None else "<companion>"
    message = " ".join(problem.message.splitlines())
    return f"{where}: {problem.pointer or '/'}: {message}"


def json_pointer(path: Iterable[Any]) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _sort_key(problem: Problem) -> tuple:
    parts = problem.pointer.split("/")[1:] if problem.pointer else []
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts), problem.message


def finish(problems: Iterable[Problem]) -> list[Problem]:
    """Drop exact duplicates (two schema branches may say the same thing) and sort by location."""
    return sorted(dict.fromkeys(problems), key=_sort_key)


def short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def explain(error: ValidationError) -> list[Problem]:
    """Turn one jsonschema error into problems with the clearest message we can give."""
    path = list(error.absolute_path)
    schema = error.schema if isinstance(error.schema, dict) else {}
    # "x-error": {keyword: message} beside a keyword replaces jsonschema's wording for it.
    custom = schema.get("x-error")
    template = custom.get(error.validator) if isinstance(custom, dict) else None
    if isinstance(template, str):
        try:
            message = template.format(instance=short(error.instance))
        except (KeyError, IndexError, ValueError):  # an author's template with stray braces
            message = template
        return [Problem(json_pointer(path), message)]
    if error.validator in ("anyOf", "oneOf") and error.context:
        return explain(best_match(error.context))
    if error.validator == "type":
        expected = error.validator_value
        wanted = " or ".join(map(repr, expected)) if isinstance(expected, list) else repr(expected)
        return [Problem(json_pointer(path), f"{short(error.instance)} is not of type {wanted}")]
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        return _unknown_properties(error.instance, schema, path)
    return [Problem(json_pointer(path), error.message)]


def _unknown_properties(instance: dict, schema: dict, path: list) -> list[Problem]:
    """One problem per unexpected key, pointing at the key, with a hint when it looks like a typo."""
    known = list(schema.get("properties", {}))
    patterns = list(schema.get("patternProperties", {}))
    out = []
    for key in instance:
        if key in known or any(re.search(p, key) for p in patterns):
            continue
        close = difflib.get_close_matches(key, known, n=1, cutoff=0.75)
        if close:
            hint = f" (did you mean {close[0]!r}?)"
        else:
            hint = f" (allowed: {', '.join(known)})" if known else ""
        out.append(Problem(json_pointer([*path, key]), f"unknown property {key!r}{hint}"))
    return out


def unknown_name(kind: str, name: str, defined: list[str]) -> str:
    if not defined:
        return f"unknown {kind} {name!r} (this file defines no {kind}s)"
    return f"unknown {kind} {name!r} (defined: {', '.join(defined)})"

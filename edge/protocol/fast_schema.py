"""A yes/no schema check fast enough for every message and every decision.

Every payload received is validated against its topic's schema (payload_base.py), and every
action's params against its companion's schema, in the brain and again in the body
(companion_types.py). ``jsonschema`` walks a schema in Python: 45-100 µs for a perception, a
result or a nod's params on a quiet core, more than the rest of a hop's own work.
``jsonschema-rs`` compiles the same Draft 2020-12 schema into native code and answers
``is_valid`` in under a microsecond.

It only ever says yes quickly. A payload it refuses is walked again by ``jsonschema`` for the
messages the contract promises (every violation at its JSON pointer), and ``jsonschema``'s
verdict stands, so what a sender is told never changes. A schema written by someone else (a
companion file's action) gets the fast check only when it uses no keyword whose meaning
differs between implementations (regular-expression dialects, formats, ``multipleOf`` on
floats, references); otherwise, and on a machine without the wheel, ``jsonschema`` alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

FastCheck = Callable[[Any], bool]

# Keywords two correct validators may read differently: Python's ``re`` against ECMA-262,
# which formats are checked, float remainders, and what a reference resolves to.
UNSAFE_KEYWORDS = frozenset({"pattern", "patternProperties", "format", "multipleOf", "$ref", "$dynamicRef",
                             "$anchor", "$dynamicAnchor", "$id", "$schema", "$vocabulary"})


def _uses(schema: Any, keywords: frozenset[str]) -> bool:
    """Whether any of ``keywords`` appears as a key anywhere in ``schema``."""
    if isinstance(schema, dict):
        return any(k in keywords or _uses(v, keywords) for k, v in schema.items())
    if isinstance(schema, list):
        return any(_uses(v, keywords) for v in schema)
    return False


def fast_check(schema: Any, *, ours: bool = False) -> FastCheck | None:
    """``is_valid`` for a Draft 2020-12 ``schema`` in native code, or None where the caller should
    use ``jsonschema`` alone: no wheel here, a schema it cannot compile, or (unless ``ours``: a
    schema of this repository, tested against both) a keyword in ``UNSAFE_KEYWORDS``."""
    if not ours and _uses(schema, UNSAFE_KEYWORDS):
        return None
    try:
        import jsonschema_rs
    except ImportError:   # no wheel for this machine
        return None
    try:
        is_valid = jsonschema_rs.Draft202012Validator(schema, validate_formats=True).is_valid
    except Exception:     # a schema it refuses to compile: jsonschema reports its problems
        return None

    def check(instance: Any) -> bool:
        try:
            return bool(is_valid(instance))
        except Exception:   # a value with no JSON form (a tuple, a NaN): jsonschema says why
            return False
    return check

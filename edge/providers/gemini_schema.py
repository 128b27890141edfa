"""JSON Schema -> the Gemini API's ``Schema`` (a documented subset of OpenAPI 3.0).

Gemini rejects a request whose function parameters or response schema hold a key its
``Schema`` message does not define (``Invalid JSON payload received. Unknown name
"additionalProperties"``), so every schema is rebuilt from the keys Gemini documents:
type, format, description, nullable, enum, properties, required, items, anyOf, minItems,
maxItems, minLength, maxLength, pattern, minimum, maximum, minProperties, maxProperties,
propertyOrdering. What the conversion does with the rest:

* ``type`` is written in Gemini's enum spelling (``OBJECT`` ...); ``["string", "null"]`` becomes
  ``STRING`` + ``nullable``, several types become ``anyOf``; an untyped schema with properties,
  items or a string enum gets the type they imply;
* ``const`` becomes a one-value ``enum``; Gemini's ``enum`` holds strings only, so an enum or
  const of numbers or booleans is dropped and its values are named in the description instead;
* ``oneOf`` becomes ``anyOf`` (the brain validates the result against the full schema anyway);
  ``allOf`` is merged into its parent; local ``$ref`` (``#/$defs/X``, ``#/definitions/X``) are
  inlined up to ``MAX_DEPTH`` levels, so a recursive schema ends in an open object;
* ``exclusiveMinimum`` / ``exclusiveMaximum`` become the inclusive bound (exact for integers);
* ``format`` is kept only where Gemini accepts it (``enum``/``date-time`` for strings,
  ``float``/``double``, ``int32``/``int64``); a ``uri`` or ``email`` format would fail the call;
* a property that is an object without declared properties (no parameters, or a free-form
  map) is left out, with its ``required`` entry: Gemini rejects an empty OBJECT;
* dropped: ``additionalProperties``, ``$schema``, ``$id``, ``title``, ``default``, ``examples``,
  ``not``, ``if``/``then``/``else``, ``prefixItems`` and every other keyword: they either do not
  exist in Gemini's Schema or only inform humans.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

MAX_DEPTH = 12

_TYPES = {"string": "STRING", "number": "NUMBER", "integer": "INTEGER", "boolean": "BOOLEAN",
          "array": "ARRAY", "object": "OBJECT"}
_FORMATS = {"STRING": {"enum", "date-time"}, "NUMBER": {"float", "double"}, "INTEGER": {"int32", "int64"}}
_COPIED = ("description", "nullable", "minItems", "maxItems", "minLength", "maxLength", "pattern", "minimum",
           "maximum", "minProperties", "maxProperties")


def gemini_schema(schema: Any, ordered: bool = False) -> dict[str, Any]:
    """Rebuild ``schema`` from the keys Gemini accepts. ``ordered`` adds ``propertyOrdering``
    (the declared order), which Gemini follows in JSON replies instead of the alphabetical one."""
    root = schema if isinstance(schema, Mapping) else {}
    defs = {**_mapping(root.get("definitions")), **_mapping(root.get("$defs"))}
    return _convert(root, defs, ordered, 0)


def function_parameters(schema: Any) -> dict[str, Any] | None:
    """A tool's parameters for a ``functionDeclaration``, or None for a tool that takes none:
    Gemini rejects an OBJECT whose ``properties`` is empty, so ``parameters`` is left out."""
    converted = gemini_schema(schema)
    if not converted.get("properties") and not converted.get("anyOf"):
        return None
    converted.setdefault("type", "OBJECT")
    return converted


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _convert(schema: Any, defs: Mapping[str, Any], ordered: bool, depth: int) -> dict[str, Any]:
    if not isinstance(schema, Mapping) or depth > MAX_DEPTH:
        return {}
    schema = _resolve(schema, defs, depth)
    out: dict[str, Any] = {k: schema[k] for k in _COPIED if k in schema}
    notes: list[str] = []

    gemini_type, nullable, alternatives = _type(schema.get("type"))
    if nullable:
        out["nullable"] = True

    values = [schema["const"]] if "const" in schema else schema.get("enum")
    if isinstance(values, list):
        if None in values:
            out["nullable"] = True
            values = [v for v in values if v is not None]
        if values and all(isinstance(v, str) for v in values):
            out["enum"] = values
            gemini_type = gemini_type or "STRING"
        elif values:
            notes.append("one of: " + ", ".join(json.dumps(v) for v in values))

    _bound(schema, out, "exclusiveMinimum", "minimum", 1, gemini_type)
    _bound(schema, out, "exclusiveMaximum", "maximum", -1, gemini_type)

    props = schema.get("properties")
    if isinstance(props, Mapping):
        converted_props = {str(k): _convert(v, defs, ordered, depth + 1) for k, v in props.items()}
        converted_props = {k: v for k, v in converted_props.items() if not _empty_object(v)}
        if converted_props:
            out["properties"] = converted_props
            required = schema.get("required")
            kept = [r for r in required if r in converted_props] if isinstance(required, list) else []
            if kept:
                out["required"] = kept
            if ordered:
                out["propertyOrdering"] = list(converted_props)
        gemini_type = gemini_type or "OBJECT"

    items = schema.get("items")
    if isinstance(items, Mapping):
        out["items"] = _convert(items, defs, ordered, depth + 1)
        gemini_type = gemini_type or "ARRAY"

    branches = schema.get("anyOf", schema.get("oneOf"))
    if isinstance(branches, list):
        converted = []
        for branch in branches:
            if isinstance(branch, Mapping) and branch.get("type") == "null" and len(branch) == 1:
                out["nullable"] = True
            else:
                converted.append(_convert(branch, defs, ordered, depth + 1))
        if len(converted) == 1 and not out.get("properties"):
            out.update({k: v for k, v in converted[0].items() if k not in out})
        elif converted:
            out["anyOf"] = converted
    elif alternatives:
        out["anyOf"] = [{"type": t} for t in alternatives]

    if gemini_type:
        out["type"] = gemini_type
        fmt = schema.get("format")
        if isinstance(fmt, str) and fmt in _FORMATS.get(gemini_type, ()):
            out["format"] = fmt
    if notes:
        out["description"] = f"{out['description']} ({'; '.join(notes)})" if out.get("description") \
            else "; ".join(notes)
    return out


def _empty_object(schema: Mapping[str, Any]) -> bool:
    """An OBJECT with nothing declared: Gemini rejects it ("properties: should be non-empty for
    OBJECT type"), so such a property is left out (a free-form map cannot be expressed)."""
    return schema.get("type") == "OBJECT" and not schema.get("properties") and not schema.get("anyOf")


def _resolve(schema: Mapping[str, Any], defs: Mapping[str, Any], depth: int) -> Mapping[str, Any]:
    """Inline a local ``$ref`` and merge ``allOf`` into one schema (siblings win)."""
    merged: dict[str, Any] = {}
    ref = schema.get("$ref")
    if isinstance(ref, str):
        for prefix in ("#/$defs/", "#/definitions/"):
            if ref.startswith(prefix) and isinstance(defs.get(ref[len(prefix):]), Mapping) and depth < MAX_DEPTH:
                merged.update(_resolve(defs[ref[len(prefix):]], defs, depth + 1))
    parts = schema.get("allOf")
    if isinstance(parts, list):
        for part in parts:
            if isinstance(part, Mapping):
                _merge(merged, _resolve(part, defs, depth + 1))
    _merge(merged, {k: v for k, v in schema.items() if k not in ("$ref", "allOf")})
    return merged


def _merge(into: dict[str, Any], extra: Mapping[str, Any]) -> None:
    """Later keys win, except that properties and required accumulate (how allOf combines objects)."""
    for key, value in extra.items():
        if key == "properties" and isinstance(value, Mapping) and isinstance(into.get(key), Mapping):
            into[key] = {**into[key], **value}
        elif key == "required" and isinstance(value, list) and isinstance(into.get(key), list):
            into[key] = into[key] + [r for r in value if r not in into[key]]
        else:
            into[key] = value


def _type(value: Any) -> tuple[str | None, bool, list[str]]:
    """(Gemini type or None, nullable, alternative types when several are allowed)."""
    names = value if isinstance(value, list) else [value] if isinstance(value, str) else []
    nullable = "null" in names
    mapped = [_TYPES[n] for n in names if n in _TYPES]
    if len(mapped) == 1:
        return mapped[0], nullable, []
    return None, nullable, mapped


def _bound(schema: Mapping[str, Any], out: dict[str, Any], exclusive: str, inclusive: str, step: int,
           gemini_type: str | None) -> None:
    value = schema.get(exclusive)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or inclusive in out:
        return
    out[inclusive] = value + step if gemini_type == "INTEGER" and float(value).is_integer() else value

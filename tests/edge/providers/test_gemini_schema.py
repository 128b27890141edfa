"""JSON Schema -> the Gemini API's Schema subset (edge/providers/gemini_schema.py)."""

from __future__ import annotations

from edge.providers.gemini_schema import function_parameters, gemini_schema

# Every key the Gemini API's Schema message defines.
SCHEMA_KEYS = {"type", "format", "title", "description", "nullable", "enum", "maxItems", "minItems", "properties",
               "required", "minProperties", "maxProperties", "minLength", "maxLength", "pattern", "example",
               "anyOf", "propertyOrdering", "default", "items", "minimum", "maximum"}


def schema_keys(schema: object) -> set[str]:
    """Every key used at a schema position (property names excluded)."""
    if isinstance(schema, list):
        return set().union(*(schema_keys(s) for s in schema)) if schema else set()
    if not isinstance(schema, dict):
        return set()
    found = set(schema)
    for key, value in schema.items():
        if key == "properties":
            found |= set().union(*(schema_keys(v) for v in value.values())) if value else set()
        elif key in ("items", "anyOf"):
            found |= schema_keys(value)
    return found


def test_unsupported_keywords_are_removed_everywhere():
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "x", "title": "Args",
              "type": "object", "additionalProperties": False, "properties": {
                  "where": {"type": "object", "additionalProperties": {"type": "string"}, "default": {},
                            "properties": {"x": {"type": "number", "examples": [1], "minimum": 0}}},
                  "tags": {"type": "array", "items": {"type": "string", "format": "uri", "not": {"const": ""}},
                           "prefixItems": [], "maxItems": 3},
                  "when": {"type": "string", "format": "date-time"}}}
    out = gemini_schema(schema)
    assert schema_keys(out) <= SCHEMA_KEYS - {"title", "default", "example"}
    assert out["properties"]["where"] == {"type": "OBJECT", "properties": {"x": {"type": "NUMBER", "minimum": 0}}}
    assert out["properties"]["tags"] == {"type": "ARRAY", "items": {"type": "STRING"}, "maxItems": 3}
    assert out["properties"]["when"] == {"type": "STRING", "format": "date-time"}


def test_types_nullable_const_and_enums():
    out = gemini_schema({"type": "object", "properties": {
        "name": {"type": ["string", "null"]},
        "mode": {"const": "fast"},
        "level": {"type": "integer", "enum": [1, 2, 3], "description": "How loud"},
        "mood": {"enum": ["calm", None]},
        "either": {"type": ["string", "number"]},
        "speed": {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10},
        "ratio": {"type": "number", "exclusiveMaximum": 1.0},
    }, "required": ["name", "ghost"]})
    props = out["properties"]
    assert props["name"] == {"type": "STRING", "nullable": True}
    assert props["mode"] == {"type": "STRING", "enum": ["fast"]}
    assert props["level"] == {"type": "INTEGER", "description": "How loud (one of: 1, 2, 3)"}
    assert props["mood"] == {"type": "STRING", "enum": ["calm"], "nullable": True}
    assert props["either"] == {"anyOf": [{"type": "STRING"}, {"type": "NUMBER"}]}
    assert props["speed"] == {"type": "INTEGER", "minimum": 1, "maximum": 9}
    assert props["ratio"] == {"type": "NUMBER", "maximum": 1.0}
    assert out["required"] == ["name"]


def test_refs_all_of_and_one_of():
    schema = {"type": "object", "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}},
                                                    "required": ["x"]},
                                          "Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
              "properties": {
                  "at": {"$ref": "#/$defs/Point", "description": "where"},
                  "both": {"allOf": [{"$ref": "#/definitions/Named"}, {"properties": {"y": {"type": "number"}},
                                                                         "required": ["y"]}]},
                  "pick": {"oneOf": [{"type": "string"}, {"type": "null"}, {"type": "integer"}]},
                  "maybe": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                  "chain": {"$ref": "#/$defs/Node"}},
              "definitions": {"Named": {"type": "object", "properties": {"name": {"type": "string"}},
                                        "required": ["name"]}}}
    out = gemini_schema(schema)
    props = out["properties"]
    assert props["at"] == {"type": "OBJECT", "description": "where", "properties": {"x": {"type": "NUMBER"}},
                           "required": ["x"]}
    assert props["both"] == {"type": "OBJECT", "properties": {"name": {"type": "STRING"}, "y": {"type": "NUMBER"}},
                             "required": ["name", "y"]}
    assert props["pick"] == {"nullable": True, "anyOf": [{"type": "STRING"}, {"type": "INTEGER"}]}
    assert props["maybe"] == {"nullable": True, "type": "STRING"}
    depth, node = 0, props["chain"]
    while "properties" in node:            # a recursive $ref is inlined a bounded number of times
        node, depth = node["properties"]["next"], depth + 1
    assert 5 < depth < 20
    assert schema_keys(out) <= SCHEMA_KEYS


def test_objects_without_properties_are_left_out():
    out = gemini_schema({"type": "object", "properties": {
        "meta": {"type": "object", "additionalProperties": {"type": "string"}},
        "inner": {"type": "object", "properties": {"nothing": {"type": "object"}}},
        "name": {"type": "string"}}, "required": ["meta", "name"]})
    assert out == {"type": "OBJECT", "properties": {"name": {"type": "STRING"}}, "required": ["name"]}



def test_function_parameters_leave_out_empty_objects():
    assert function_parameters({}) is None
    assert function_parameters({"type": "object", "properties": {}}) is None
    assert function_parameters({"properties": {"a": {"type": "string"}}}) == {
        "type": "OBJECT", "properties": {"a": {"type": "STRING"}}}

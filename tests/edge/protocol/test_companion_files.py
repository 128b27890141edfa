"""Companion definition files: shipped files are valid, and every kind of bad file is named precisely."""

from __future__ import annotations

import copy
import io
import json
import uuid
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from edge.protocol.companion import (
    ActionSpec,
    Companion,
    CompanionError,
    Problem,
    load_companion,
    parse_companion,
    validate_document,
    validate_file,
    validate_params,
)
from edge.protocol.validate_cli import run_validate
from repo_paths import REPO

COMPANIONS = REPO / "companions"
SHIPPED = sorted(p for p in COMPANIONS.glob("*.json") if p.name != "schema.json")


def base_doc() -> dict:
    """A small valid document in the first seed's layout, rebuilt fresh for each mutation."""
    xyz = {
        "type": "object",
        "properties": {k: {"type": "number", "minimum": -1, "maximum": 1} for k in "xyz"},
        "required": ["x", "y", "z"],
        "additionalProperties": False,
    }
    text_payload = {"type": "object", "properties": {"body": {"type": "string"}}}
    return {
        "name": "Testy",
        "personality": "calm",
        "story": "made for tests",
        "version": "1.0.0",
        "metadata": {"id": "9b2f7c1e-4a3d-4e8f-b6a1-2c5d8e0f1a3b", "author": "qa", "tags": ["test"]},
        "actions": [
            {"title": "move", "description": "go", **copy.deepcopy(xyz)},
            {"title": "look", "description": "gaze", **copy.deepcopy(xyz)},
            {"title": "speak", "description": "talk", "type": "object",
             "properties": {"message": {"type": "string", "maxLength": 20}}, "required": ["message"]},
        ],
        "perceptions": [
            {"title": "input", "description": "text in", **copy.deepcopy(text_payload)},
            {"title": "vision", "description": "camera", **copy.deepcopy(text_payload)},
        ],
        "events": [
            {"perception": "input", "action": ["speak"], "condition": "always answer"},
            {"perception": "vision", "action": ["look", "speak"], "condition": "a person appears"},
        ],
    }


def write(tmp_path: Path, doc: object, name: str = "c.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return path


def only(problems: list[Problem]) -> Problem:
    assert len(problems) == 1, problems
    return problems[0]


# ---------------------------------------------------------------- shipped files


def test_schema_file_is_valid_json_schema() -> None:
    Draft202012Validator.check_schema(json.loads((COMPANIONS / "schema.json").read_text(encoding="utf-8")))


def test_three_companions_are_shipped() -> None:
    assert {p.name for p in SHIPPED} >= {"nikoni-rittai-chan.json", "azabu-mai.json", "pip.json"}


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_shipped_file_validates_and_loads(path: Path) -> None:
    assert validate_file(path) == []
    companion = load_companion(path)
    assert isinstance(companion, Companion)
    assert str(uuid.UUID(companion.id)) == companion.id
    assert companion.name and companion.personality and companion.actions and companion.events
    for event in companion.events:
        assert companion.perception(event.perception) is not None
        assert all(companion.action(a) is not None for a in event.actions)


def test_shipped_ids_are_distinct() -> None:
    ids = [load_companion(p).id for p in SHIPPED]
    assert len(ids) == len(set(ids))


def test_nikoni_keeps_the_seed_sample() -> None:
    c = load_companion(COMPANIONS / "nikoni-rittai-chan.json")
    assert c.name == "ニコニ立体ちゃん" and c.version == "1.0.0" and c.author == "maril"
    assert [a.title for a in c.actions] == ["move", "look", "speak"]
    assert [p.title for p in c.perceptions] == ["vision", "input"]
    assert [(e.perception, e.actions) for e in c.events] == [
        ("vision", ("speak",)), ("vision", ("speak",)), ("input", ("speak",)), ("input", ("move", "speak"))]
    assert c.thumbnail == "https://3d.nicovideo.jp/alicia/img/model_character.png"
    assert c.created == "2025-08-05T00:00:00Z"


def test_azabu_mai_metadata_is_the_registry_example() -> None:
    c = load_companion(COMPANIONS / "azabu-mai.json")
    assert c.metadata_json() == {"metadata": {
        "id": "15022737-901c-4d72-b06d-bb20b1782086",
        "name": "麻布麻衣",
        "personality": "合理的で人見知りな性格",
        "story": "プログラムと論理的思考を愛する1年生",
        "sample": "いいわ 先週あったプログラミング...",
        "version": "1.0.0",
        "author": "maril",
        "tags": ["ikizulive", "asakusa"],
        "icon": "https://example.com/icon.png",
    }}
    assert {"move", "look", "speak"} <= {a.title for a in c.actions}
    assert {"vision", "input"} == {p.title for p in c.perceptions}


def test_pip_has_tight_schemas_for_a_small_model() -> None:
    c = load_companion(COMPANIONS / "pip.json")
    speak, look, move = c.action("speak"), c.action("look"), c.action("move")
    assert speak and look and move
    assert speak.schema["properties"]["message"]["maxLength"] <= 120
    for axis in "xyz":
        bounds = look.schema["properties"][axis]
        # x, y: a place in the view (docs/protocol.md "Spatial frame"); z: metres ahead
        assert (bounds["minimum"], bounds["maximum"]) == ((-1, 1) if axis != "z" else (0.1, 2))
        assert "minimum" in move.schema["properties"][axis] and "maximum" in move.schema["properties"][axis]
    assert validate_params(look, {"x": 0.5, "y": 0, "z": 1}) == []
    assert only(validate_params(look, {"x": 1.5, "y": 0, "z": 1})).pointer == "/x"


# ---------------------------------------------------------------- the model


def test_model_lookups_and_metadata() -> None:
    c = parse_companion(base_doc())
    assert c.id == "9b2f7c1e-4a3d-4e8f-b6a1-2c5d8e0f1a3b"
    assert c.action("look").title == "look" and c.action("fly") is None
    assert c.perception("vision").description == "camera" and c.perception("smell") is None
    assert [e.condition for e in c.events_for("vision")] == ["a person appears"]
    assert c.events_for("smell") == ()
    assert c.metadata_json()["metadata"]["tags"] == ["test"]
    assert c.action("speak").schema["required"] == ["message"]


def test_distributed_layout_and_derived_id() -> None:
    doc = {"metadata": {"name": "麻衣", "personality": "shy", "version": "2.1.0-beta.1", "icon": "i.png"}}
    c = parse_companion(doc)
    assert (c.name, c.personality, c.version, c.icon) == ("麻衣", "shy", "2.1.0-beta.1", "i.png")
    assert c.id == str(uuid.uuid5(uuid.NAMESPACE_URL, "urn:companion-edge:companion:麻衣"))
    assert parse_companion(copy.deepcopy(doc)).id == c.id
    assert (c.actions, c.perceptions, c.events) == ((), (), ())


def test_uppercase_uuid_is_normalised() -> None:
    doc = base_doc()
    doc["metadata"]["id"] = doc["metadata"]["id"].upper()
    assert parse_companion(doc).id == "9b2f7c1e-4a3d-4e8f-b6a1-2c5d8e0f1a3b"


def test_same_field_in_both_places_is_fine_when_equal() -> None:
    doc = base_doc()
    doc["metadata"]["name"] = "Testy"
    assert validate_document(doc) == []


def test_parse_raises_with_every_problem() -> None:
    doc = base_doc()
    doc["name"] = 5
    doc["events"][0]["perception"] = "smell"
    with pytest.raises(CompanionError) as info:
        parse_companion(doc, "x.json")
    assert [p.pointer for p in info.value.problems] == ["/events/0/perception", "/name"]
    assert info.value.path == "x.json"
    assert "x.json: /name: 5 is not of type 'string'" in str(info.value)


# ---------------------------------------------------------------- bad files, one kind each


def test_not_json_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text('{"name": "x",\n  "version" "1.0.0"}', encoding="utf-8")
    problem = only(validate_file(path))
    assert problem.pointer == ""
    assert "not valid JSON" in problem.message and "line 2, column 13" in problem.message


def test_not_utf8_names_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_bytes(b'{"name": "\xff"}')
    problem = only(validate_file(path))
    assert problem.pointer == ""
    assert "not UTF-8" in problem.message and "0xff" in problem.message and "offset 10" in problem.message


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(base_doc()).encode())
    assert validate_file(path) == []


@pytest.mark.parametrize("text, words", [("", "empty"), ('{"name": NaN}', "NaN")])
def test_empty_file_and_nan_are_not_json(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "c.json"
    path.write_text(text, encoding="utf-8")
    problem = only(validate_file(path))
    assert problem.pointer == "" and "not valid JSON" in problem.message and words in problem.message


def test_missing_file_is_a_problem(tmp_path: Path) -> None:
    problem = only(validate_file(tmp_path / "nope.json"))
    assert problem.pointer == "" and "cannot read file" in problem.message
    with pytest.raises(CompanionError) as info:
        load_companion(tmp_path / "nope.json")
    assert info.value.path == str(tmp_path / "nope.json")


def test_root_must_be_an_object() -> None:
    problem = only(validate_document([1, 2]))
    assert problem == Problem("", "[1, 2] is not of type 'object'")


def mutated(change) -> list[Problem]:
    doc = base_doc()
    change(doc)
    return validate_document(doc)


BAD_DOCUMENTS = {
    "wrong type": (lambda d: d.update(version=1), "/version", "1 is not of type 'string'"),
    "missing name": (lambda d: d.pop("name"), "", "no name"),
    "missing event field": (lambda d: d["events"][1].pop("condition"), "/events/1", "'condition' is a required"),
    "event action not a list": (lambda d: d["events"][0].update(action="speak"), "/events/0/action",
                                "'speak' is not of type 'array'"),
    "not json schema": (lambda d: d["actions"][2]["properties"]["message"].update(type="banana"),
                        "/actions/2/properties/message/type", "'banana' is not one of"),
    "bad regex in action": (lambda d: d["actions"][2]["properties"]["message"].update(pattern="(["),
                            "/actions/2/properties/message/pattern", "'([' is not a 'regex'"),
    "action params not object": (lambda d: d["actions"][0].update(type="array"), "/actions/0/type",
                                 '"type" must be "object"'),
    "action title unusable": (lambda d: d["actions"].append({**d["actions"][0], "title": "say hi"}), "/actions/3/title",
                              "'say hi' is not a usable action name"),
    "action without description": (lambda d: d["actions"][1].pop("description"), "/actions/1",
                                    "'description' is a required property"),
    "duplicate action": (lambda d: d["actions"].append(copy.deepcopy(d["actions"][0])), "/actions/3/title",
                         "duplicate action title 'move' (first defined at /actions/0)"),
    "duplicate perception": (lambda d: d["perceptions"].append(copy.deepcopy(d["perceptions"][0])),
                             "/perceptions/2/title",
                             "duplicate perception title 'input'"),
    "dangling perception": (lambda d: d["events"][1].update(perception="smell"), "/events/1/perception",
                            "unknown perception 'smell' (defined: input, vision)"),
    "dangling action": (lambda d: d["events"][1]["action"].append("dance"), "/events/1/action/2",
                        "unknown action 'dance' (defined: move, look, speak)"),
    "bad uuid": (lambda d: d["metadata"].update(id="1234"), "/metadata/id", "'1234' is not a UUID"),
    "uuid with stray newline": (lambda d: d["metadata"].update(id=d["metadata"]["id"] + "\n"), "/metadata/id",
                                "is not a UUID"),
    "bad semver": (lambda d: d.update(version="1.0"), "/version", "'1.0' is not a semantic version"),
    "bad date shape": (lambda d: d["metadata"].update(created="5 Aug 2025"), "/metadata/created", "RFC 3339"),
    "impossible date": (lambda d: d["metadata"].update(created="2025-02-30T00:00:00Z"), "/metadata/created",
                        "not a real date-time"),
    "updated before created": (lambda d: d["metadata"].update(created="2025-08-05T00:00:00Z",
                                                               updated="2025-08-04T23:00:00Z"),
                               "/metadata/updated", "earlier than metadata.created"),
    "conflicting name": (lambda d: d["metadata"].update(name="Other"), "/metadata/name",
                         "'Other' differs from the top-level 'name' 'Testy'"),
    "unknown key": (lambda d: d.update(perception=[]), "/perception",
                    "unknown property 'perception' (did you mean 'perceptions'?)"),
    "unknown metadata key": (lambda d: d["metadata"].update(iconn="x"), "/metadata/iconn", "did you mean 'icon'?"),
}


@pytest.mark.parametrize("change, pointer, words", BAD_DOCUMENTS.values(), ids=BAD_DOCUMENTS.keys())
def test_each_bad_document_names_exactly_its_problem(change, pointer: str, words: str) -> None:
    problem = only(mutated(change))
    assert problem.pointer == pointer
    assert words in problem.message


@pytest.mark.parametrize("change, pointer, words", BAD_DOCUMENTS.values(), ids=BAD_DOCUMENTS.keys())
def test_bad_files_report_the_same_through_the_file_path(tmp_path: Path, change, pointer: str, words: str) -> None:
    doc = base_doc()
    change(doc)
    problem = only(validate_file(write(tmp_path, doc)))
    assert (problem.pointer, words in problem.message) == (pointer, True)


def test_extension_keys_are_allowed() -> None:
    doc = base_doc()
    doc["x-robot"] = {"wheels": 2}
    doc["metadata"]["x-note"] = "ok"
    doc["events"][0]["x-priority"] = 1
    assert validate_document(doc) == []


def test_duplicate_json_key_points_at_the_key(tmp_path: Path) -> None:
    text = json.dumps(base_doc())
    text = text.replace('"author": "qa"', '"author": "qa", "author": "zz"')
    path = tmp_path / "c.json"
    path.write_text(text, encoding="utf-8")
    problem = only(validate_file(path))
    assert problem.pointer == "/metadata/author" and "duplicate key 'author'" in problem.message


def test_all_problems_are_reported_sorted_by_pointer() -> None:
    doc = base_doc()
    for event in doc["events"]:
        event["perception"] = "smell"
    doc["actions"].extend(copy.deepcopy(doc["actions"][0]) for _ in range(9))  # /actions/3 .. /actions/11
    doc["metadata"]["id"] = "nope"
    pointers = [p.pointer for p in validate_document(doc)]
    assert pointers == [f"/actions/{i}/title" for i in range(3, 12)] + [
        "/events/0/perception", "/events/1/perception", "/metadata/id"]


def test_pointers_escape_slash_and_tilde() -> None:
    doc = base_doc()
    doc["actions"][0]["properties"]["a/b~c"] = {"type": "banana"}
    assert only(validate_document(doc)).pointer == "/actions/0/properties/a~1b~0c/type"


# ---------------------------------------------------------------- action params


def test_validate_params_accepts_good_and_points_into_bad() -> None:
    look = parse_companion(base_doc()).action("look")
    assert validate_params(look, {"x": 0, "y": -1, "z": 1}) == []
    problems = validate_params(look, {"x": 2, "y": "up", "w": 0})
    assert problems == [
        Problem("", "'z' is a required property"),
        Problem("/w", "unknown property 'w' (allowed: x, y, z)"),
        Problem("/x", "2 is greater than the maximum of 1"),
        Problem("/y", "'up' is not of type 'number'"),
    ]
    assert validate_params(look, ["x"]) == [Problem("", "['x'] is not of type 'object'")]


def test_validate_params_on_a_hand_built_spec_and_length_limit() -> None:
    schema = {"type": "object", "properties": {"message": {"type": "string", "maxLength": 5}}}
    spec = ActionSpec("speak", "talk", schema)
    assert validate_params(spec, {"message": "hi"}) == []
    problem = only(validate_params(spec, {"message": "far too long"}))
    assert problem.pointer == "/message" and "is too long" in problem.message


def test_validate_params_reports_an_unusable_schema() -> None:
    spec = ActionSpec("odd", "", {"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}})
    problem = only(validate_params(spec, {"a": 1}))
    assert problem.pointer == "" and "cannot be applied" in problem.message


# ---------------------------------------------------------------- companion validate


def test_run_validate_quiet_and_zero_for_valid_files() -> None:
    out = io.StringIO()
    assert run_validate([str(p) for p in SHIPPED], out=out) == 0
    assert out.getvalue() == ""


def test_run_validate_prints_one_line_per_problem(tmp_path: Path) -> None:
    doc = base_doc()
    doc["events"][1]["action"].append("dance")
    doc.pop("name")
    bad = write(tmp_path, doc, "bad.json")
    good = write(tmp_path, base_doc(), "good.json")
    missing = tmp_path / "missing.json"
    out = io.StringIO()
    assert run_validate([str(good), str(bad), str(missing)], out=out) == 1
    assert out.getvalue().splitlines() == [
        f'{bad}: /: no name: set "name" at the top level or "name" inside "metadata"',
        f"{bad}: /events/1/action/2: unknown action 'dance' (defined: move, look, speak)",
        f"{missing}: /: cannot read file: No such file or directory",
    ]


def test_run_validate_keeps_each_problem_on_one_line(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text("{\n\n", encoding="utf-8")
    out = io.StringIO()
    assert run_validate([str(path)], out=out) == 1
    (line,) = out.getvalue().splitlines()
    assert line.startswith(f"{path}: /: not valid JSON: ") and "line 3" in line


def test_specs_and_companions_are_hashable_for_caches() -> None:
    a, b = parse_companion(base_doc()), parse_companion(base_doc())
    assert a == b and hash(a) == hash(b)
    assert len({a.action("look"), b.action("look"), a.action("move")}) == 2
    assert len({*a.perceptions, *b.perceptions}) == 2

"""A companion file whose action schema is not a schema, and whose sentence templates use that
action: `companion validate` and `companion up --companion` say so in one line per problem, at
its pointer, and go on to the next file (they used to end in a traceback)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edge.cli import main
from edge.protocol.companion import ActionSpec, validate_params
from repo_paths import REPO

SHIPPED = sorted(p for p in (REPO / "companions").glob("*.json") if p.name != "schema.json")


def break_a_templated_action(source: Path, folder: Path) -> tuple[Path, str]:
    """A copy of ``source`` whose first action named in its x-sentences has a param of type
    'integr'; the pointer of that type is returned."""
    doc = json.loads(source.read_text(encoding="utf-8"))
    templates = json.dumps(doc["x-sentences"], ensure_ascii=False)
    for i, action in enumerate(doc["actions"]):
        if f'"{action["title"]}"' in templates and action.get("properties"):
            param = next(iter(action["properties"]))
            action["properties"][param]["type"] = "integr"
            broken = folder / f"broken-{source.name}"
            broken.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
            return broken, f"/actions/{i}/properties/{param}/type"
    raise AssertionError(f"{source.name}: no templated action with params")


def test_every_shipped_file_broken_this_way_gets_one_line_at_its_pointer_and_the_next_file_is_checked(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = [break_a_templated_action(p, tmp_path) for p in SHIPPED]
    fine = REPO / "companions" / "pip.json"
    status = main(["validate", *[str(b) for b, _ in broken], str(fine)])
    out, err = capsys.readouterr()
    assert status == 1 and "Traceback" not in out + err
    lines = out.splitlines()
    assert lines == [f"{path}: {pointer}: 'integr' is not one of ['array', 'boolean', 'integer', 'null', "
                     "'number', 'object', 'string']" for path, pointer in broken]


def test_up_names_every_bad_file_and_starts_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (first, first_at), (second, second_at) = [break_a_templated_action(p, tmp_path) for p in SHIPPED[:2]]
    status = main(["up", "--sim", "--tts", "none", "--provider", "scripted:" + str(REPO / "bench" / "nod.jsonl"),
                   "--broker", "127.0.0.1:1", "--companion", str(first), "--companion",
                   str(REPO / "companions" / "pip.json"), "--companion", str(second)])
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err
    assert f"{first}: {first_at}: 'integr'" in err and f"{second}: {second_at}: 'integr'" in err


def test_params_against_a_schema_that_is_not_one_are_a_problem_not_an_exception() -> None:
    spec = ActionSpec("turn", "", {"type": "object", "properties": {"deg": {"type": "integr"}}})
    problems = validate_params(spec, {"deg": 5})
    assert [p.message for p in problems] == [
        "the schema of action 'turn' is not a valid JSON Schema (UnknownType); fix the problems reported at its "
        "own pointer first"]

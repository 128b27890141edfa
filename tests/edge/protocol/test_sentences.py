"""Sentence templates (x-sentences): what the shipped companions recognise locally, what they must
leave to the LLM, and how `companion validate` points at a broken template."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from edge.protocol.companion import CompanionError, load_companion, parse_companion
from edge.protocol.sentence_template import normalise
from edge.protocol.sentences import SentenceMatcher
from repo_paths import REPO

COMPANIONS = REPO / "companions"
LEFT, RIGHT = {"x": -1, "y": 0, "z": 1}, {"x": 1, "y": 0, "z": 1}


def matcher(name: str) -> SentenceMatcher:
    return SentenceMatcher.for_companion(load_companion(COMPANIONS / name))


@pytest.fixture(scope="module")
def pochi() -> SentenceMatcher:
    return matcher("pochi.json")


def decided(m: SentenceMatcher, text: str) -> tuple[str, dict] | None:
    found = m.match(text)
    return None if found is None else (found.action, found.params)


@pytest.mark.parametrize("text, expected", [
    ("Pochi, please bark two times", ("bark", {"times": 2})),
    ("Pochi, please bark two times.", ("bark", {"times": 2})),
    ("BARK 3 TIMES!", ("bark", {"times": 3})),
    ("bark ３ times", ("bark", {"times": 3})),               # full-width digit
    ("Bark once, Pochi.", ("bark", {"times": 1})),
    ("bark twice", ("bark", {"times": 2})),
    ("hey Pochi could you bark five times for me", ("bark", {"times": 5})),
    ("Bark!", ("bark", {"times": 1})),
    ("ポチ、2回吠えて", ("bark", {"times": 2})),
    ("二回吠えてください", ("bark", {"times": 2})),
    ("三度ほえて", ("bark", {"times": 3})),
    ("一回吠えて", ("bark", {"times": 1})),
    ("Sit!", ("sit", {})),
    ("Pochi, sit down please.", ("sit", {})),
    ("Can you sit?", ("sit", {})),
    ("Lie down, Pochi.", ("lie_down", {})),
    ("ポチ、伏せ！", ("lie_down", {})),
    ("Give me your paw!", ("give_paw", {"paw": "right"})),
    ("give me your left paw", ("give_paw", {"paw": "left"})),
    ("Shake hands!", ("give_paw", {"paw": "right"})),
    ("おかわり", ("give_paw", {"paw": "left"})),
    ("Look left, Pochi.", ("look", LEFT)),
    ("Please look to your left", ("look", LEFT)),
    ("Pochi, turn your head to the right.", ("look", RIGHT)),
    ("Look up!", ("look", {"x": 0, "y": 1, "z": 1})),
    ("Wag your tail for me.", ("wag", {"speed": 0.9})),
    ("wag your tail slowly", ("wag", {"speed": 0.3})),
    ("Come here, Pochi!", ("move", {"x": 0, "y": 0.5, "z": 0})),
    ("Go back a bit, Pochi.", ("move", {"x": 0, "y": -0.5, "z": 0})),
])
def test_pochi_recognises_its_commands(pochi: SentenceMatcher, text: str, expected: tuple) -> None:
    assert decided(pochi, text) == expected


@pytest.mark.parametrize("text", [
    "don't bark",                       # negation
    "Pochi, never bark at night",
    "why do you bark?",                 # questions
    "what is on your left?",
    "do you sit?",
    "bark at the cat",                  # longer sentences
    "look left and tell me what you see",
    "sit down and be quiet for a while",
    "bark six times",                   # a count the schema does not allow: the LLM answers
    "bark 22 times",
    "吠えないで",                        # Japanese negation
    "左を見て",                          # Pochi has no Japanese look template
    "Pochi",                            # a name alone is no command
    "please",
    "",
])
def test_pochi_leaves_everything_else_to_the_llm(pochi: SentenceMatcher, text: str) -> None:
    assert pochi.match(text) is None


@pytest.mark.parametrize("name, text, expected", [
    ("pip.json", "Please look to your left.", ("look", LEFT)),
    ("pip.json", "Pip, look straight ahead", ("look", {"x": 0, "y": 0, "z": 1})),
    ("pip.json", "nod three times", ("nod", {"times": 3})),
    ("pip.json", "come closer", ("move", {"x": 0, "y": 0.4, "z": 0})),
    ("nikoni-rittai-chan.json", "左を見て", ("look", LEFT)),
    ("nikoni-rittai-chan.json", "ニコニ立体ちゃん、右を向いてください。", ("look", RIGHT)),
    ("nikoni-rittai-chan.json", "上を見て", ("look", {"x": 0, "y": 1, "z": 1})),
    ("azabu-mai.json", "麻衣さん、左を見て", ("look", LEFT)),
    ("azabu-mai.json", "下を向いて", ("look", {"x": 0, "y": -1, "z": 1})),
    ("azabu-mai.json", "うなずいて", ("gesture", {"name": "nod"})),
])
def test_the_other_shipped_companions(name: str, text: str, expected: tuple) -> None:
    assert decided(matcher(name), text) == expected


@pytest.mark.parametrize("name, text", [
    ("pip.json", "nod four times"),         # nod allows 1..3
    ("pip.json", "what do you see on your left?"),
    ("nikoni-rittai-chan.json", "左を見ないで"),
    ("nikoni-rittai-chan.json", "左に何がある？"),
    ("azabu-mai.json", "右を見てから話して"),
])
def test_the_other_shipped_companions_leave_the_rest(name: str, text: str) -> None:
    assert matcher(name).match(text) is None


def test_normalising_folds_case_width_punctuation_and_japanese_spacing() -> None:
    assert normalise("  Pochi,  DON’T  bark!! ") == "pochi dont bark"
    assert normalise("ＢＡＲＫ　２") == "bark 2"
    assert normalise("ポチ、 左 を 見て。") == "ポチ左を見て"


def test_a_match_names_its_template_and_gives_fresh_params(pochi: SentenceMatcher) -> None:
    first = pochi.match("look left")
    assert first is not None and first.template.startswith("(look|turn") and first.pointer.startswith("/x-sentences/rules/")
    first.params["x"] = 99
    assert pochi.match("look left").params == LEFT


def test_extra_names_and_honorifics_are_vocatives() -> None:
    doc = json.loads((COMPANIONS / "azabu-mai.json").read_text(encoding="utf-8"))
    m = SentenceMatcher.for_companion(parse_companion(doc))
    for said in ("麻布麻衣、左を見て", "マイちゃん左を見て", "左を見て、麻衣"):
        assert decided(m, said) == ("look", LEFT), said


def test_a_companion_without_sentences_matches_nothing() -> None:
    doc = json.loads((COMPANIONS / "pip.json").read_text(encoding="utf-8"))
    doc.pop("x-sentences")
    m = SentenceMatcher.for_companion(parse_companion(doc))
    assert len(m) == 0 and m.match("look left") is None


# ---------------------------------------------------------------- companion validate


def broken(tmp_path: Path, change) -> Path:
    doc = json.loads((COMPANIONS / "pochi.json").read_text(encoding="utf-8"))
    change(doc["x-sentences"])
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return path


def validate(*paths: Path) -> tuple[int, list[str]]:
    run = subprocess.run([sys.executable, "-m", "edge.cli", "validate", *map(str, paths)],
                         capture_output=True, text=True, timeout=60)
    return run.returncode, run.stdout.splitlines()


def rule(section: dict, action: str) -> dict:
    return next(r for r in section["rules"] if r["action"] == action)


POCHI_RULES = json.loads((COMPANIONS / "pochi.json").read_text(encoding="utf-8"))["x-sentences"]["rules"]
LOOK_RULE = next(i for i, r in enumerate(POCHI_RULES) if r["action"] == "look")


def test_shipped_companions_validate() -> None:
    """`companion validate companions/*.json`: every companion passes; the schema beside them is skipped."""
    run = subprocess.run([sys.executable, "-m", "edge.cli", "validate", *map(str, sorted(COMPANIONS.glob("*.json")))],
                         capture_output=True, text=True, timeout=60)
    assert (run.returncode, run.stdout) == (0, "")
    assert run.stderr.strip().endswith("schema.json: skipped: a JSON Schema, not a companion file")


def _many_problems(s: dict) -> None:
    s["rules"][0]["sentences"][1] = "give me {times} (barks|bark"        # unbalanced (
    s["rules"][1]["sentences"][0] = "[bark"                                # unbalanced [
    s["rules"][2]["sentences"][0] = "sit (down|)"                          # empty choice
    s["rules"][3]["sentences"][0] = "{pose} down"                          # unknown slot
    s["rules"][4]["params"] = {"paw": "{side}"}                            # params name no list
    s["rules"].append({"action": "fetch", "sentences": ["fetch"]})         # unknown action
    s["lists"]["times"] = {"range": [1, 9]}                                # bark allows 1..5
    s["lists"]["paw"] = {"values": {}}                                     # a list with no values
    s["rules"].append({"action": "sit", "sentences": ["[please]"]})        # matches nothing but fillers


def test_validate_points_at_every_broken_template(tmp_path: Path) -> None:
    path = broken(tmp_path, _many_problems)
    code, lines = validate(path)
    assert code == 1
    p = f"{path}: /x-sentences"
    expected = [
        f"{p}/lists/paw/values: list 'paw' has no values",
        f"{p}/rules/0/params: not valid params for 'bark' for {{times}}='6': /times: 6 is greater than the maximum of 5 (4 of 9 fail)",
        f"{p}/rules/0/sentences/1: unbalanced '(': no ')' after it (column 17)",
        f"{p}/rules/1/sentences/0: unbalanced '[': no ']' after it (column 1)",
        f"{p}/rules/2/sentences/0: an empty choice in '(…)' (column 11)",
        f"{p}/rules/3/sentences/0: unknown slot {{pose}} (lists: direction, times, speed) (column 1)",
    ]
    for line in expected:
        assert line in lines, (line, lines)
    assert any(line.startswith(f"{p}/rules/4/params/paw: {{side}} names no list") for line in lines), lines
    assert any(line.startswith(f"{p}/rules/4/sentences/0: ") for line in lines), lines  # {paw} now unknown
    fetch = len(json.loads(path.read_text(encoding="utf-8"))["x-sentences"]["rules"]) - 2
    assert f"{p}/rules/{fetch}/action: unknown action 'fetch' (defined: speak, look, move, bark, wag, sit, " \
           "lie_down, give_paw)" in lines
    assert f"{p}/rules/{fetch + 1}/sentences/0: every word is optional, so it would match an empty sentence " \
           "(column 1)" in lines


@pytest.mark.parametrize("change, pointer, words", [
    (lambda s: rule(s, "look").update(params={"x": "{direction.x}", "y": "{direction.y}", "z": 5}),
     f"/rules/{LOOK_RULE}/params", "5 is greater than the maximum of 2"),
    (lambda s: rule(s, "look").update(params={"x": "{direction.q}", "y": 0, "z": 1}),
     f"/rules/{LOOK_RULE}/params", "the value has no 'q'"),
    (lambda s: rule(s, "sit")["sentences"].append("sit {times} times"),
     "/rules/2/sentences/3", "matches {times} but params never use it"),
    (lambda s: rule(s, "bark")["sentences"].append("bark loudly"),
     "/rules/0/sentences/3", "has no {times}, which params use"),
    (lambda s: s["rules"][2]["sentences"].append("sit) down"), "/rules/2/sentences/3", "')' closes nothing"),
    (lambda s: s["rules"][2]["sentences"].append("sit|stay"), "/rules/2/sentences/3", "'|' outside ( ) or [ ]"),
    (lambda s: s["rules"][2]["sentences"].append("!?"), "/rules/2/sentences/3", "no words to match"),
    (lambda s: s["lists"].update(times={"range": [5, 1]}), "/lists/times/range", "not a range"),
    (lambda s: s["lists"].update(times={"values": {"two": 2}, "range": [1, 2]}), "/lists/times",
     'exactly one of "values" or "range"'),
    (lambda s: s["lists"].update({"bad name": {"range": [1, 2]}}), "/lists", "is not a list name"),
    (lambda s: s["rules"][0].update(sentence=["x"]), "/rules/0/sentence", "did you mean 'sentences'"),
    (lambda s: s["rules"][0].update(sentences=[]), "/rules/0/sentences", "should be non-empty"),
    (lambda s: s.update(names=[""]), "/names/0", "should be non-empty"),
])
def test_validate_names_each_problem(tmp_path: Path, change, pointer: str, words: str) -> None:
    path = broken(tmp_path, change)
    code, lines = validate(path)
    assert code == 1
    assert any(line.startswith(f"{path}: /x-sentences{pointer}: ") and words in line for line in lines), lines


def test_a_broken_template_stops_the_companion_loading(tmp_path: Path) -> None:
    path = broken(tmp_path, lambda s: s["rules"][2]["sentences"].append("sit (down"))
    with pytest.raises(CompanionError) as caught:
        load_companion(path)
    assert [p.pointer for p in caught.value.problems] == ["/x-sentences/rules/2/sentences/3"]


def test_params_may_be_a_whole_slot_value() -> None:
    doc = copy.deepcopy(json.loads((COMPANIONS / "pochi.json").read_text(encoding="utf-8")))
    assert rule(doc["x-sentences"], "look")["params"] == "{direction}"
    m = SentenceMatcher.for_companion(parse_companion(doc))
    assert decided(m, "face forward") == ("look", {"x": 0, "y": 0, "z": 1})

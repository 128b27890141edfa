"""Which action is a companion's voice (edge/protocol/speech_action.py): marked, named, or shaped
like one; and what ``companion validate`` says about the mark."""

from __future__ import annotations

from typing import Any

from edge.protocol.companion import validate_document
from edge.protocol.speech_action import SpokenAction, speech_mark_problems, spoken_action_of


def act(name: str, description: str, **props: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    required = [k for k, v in props.items() if not v.pop("optional", False)]
    return name, description, {"type": "object", "properties": props, "required": required}


TEXT: dict[str, Any] = {"type": "string"}


def text(**extra: Any) -> dict[str, Any]:
    return {**TEXT, **extra}


def test_a_voice_named_otherwise_is_found_by_its_shape_in_english_japanese_and_chinese():
    assert spoken_action_of([act("nod", "Nod the head.", times={"type": "integer"}),
                             act("whisper", "Say something softly to the parents.", message=text())]) \
        == SpokenAction("whisper", "message")
    assert spoken_action_of([act("shaberu", "子どもや家族に、声に出して話しかける。", ことば=text())]) \
        == SpokenAction("shaberu", "ことば")
    assert spoken_action_of([act("jiang", "用中文对学生说话。", 内容=text())]) == SpokenAction("jiang", "内容")
    # optional parameters beside the words (a volume) do not hide it
    assert spoken_action_of([act("talk", "Talk to the user.", words=text(), volume={"type": "integer", "optional": True})]) \
        == SpokenAction("talk", "words")


def test_speak_or_say_stays_the_voice_when_the_file_has_one():
    voice = spoken_action_of([act("whisper", "Say something softly.", message=text()),
                              act("say", "Say something out loud.", text=text())])
    assert voice == SpokenAction("say", "text")


def test_what_is_not_talking_to_someone_is_not_a_voice():
    assert spoken_action_of([act("calm_pets", "Play calming words to the dog through the speaker.", words=text())]) is None
    assert spoken_action_of([act("notify", "Send a short note to the owner's phone.", message=text())]) is None
    assert spoken_action_of([act("read_step", "Read one step of the recipe aloud.", step=text())]) is None
    assert spoken_action_of([act("mode", "Say which mode to use.", mode=text(enum=["a", "b"]))]) is None   # no free text
    assert spoken_action_of([act("set_reminder", "Set a reminder that it will say out loud.",
                                 text=text(), hour={"type": "integer"})]) is None   # more than the words required
    # two that could be: the file must say which
    assert spoken_action_of([act("whisper", "Say something softly.", message=text()),
                             act("shout", "Say something loudly.", message=text())]) is None


def test_the_mark_decides_either_way():
    marked = act("announce", "Put words on the hall display.", line=text())
    marked[2]["x-speech"] = True
    assert spoken_action_of([act("speak", "Say something.", message=text()), marked]) == SpokenAction("announce", "line")
    unmarked = act("speak", "Say something.", message=text())
    unmarked[2]["x-speech"] = False
    assert spoken_action_of([unmarked]) is None


def _doc(*actions: dict[str, Any]) -> dict[str, Any]:
    return {"name": "Test", "personality": "p", "story": "s", "version": "1.0.0", "sample": "x",
            "actions": list(actions), "perceptions": [], "events": []}


def _action(title: str, mark: object, props: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"title": title, "description": "Say it.", "type": "object", "x-speech": mark,
            "properties": props if props is not None else {"message": {"type": "string"}}, "required": []}


def test_validate_names_a_mark_that_is_not_a_yes_or_no_and_a_second_voice():
    doc = _doc(_action("a", "yes"), _action("b", True), _action("c", True),
               _action("d", True, {"times": {"type": "integer"}}))
    problems: dict[str, str] = {}
    for p in speech_mark_problems(doc):
        problems[p.pointer] = problems.get(p.pointer, "") + p.message + "; "
    assert "must be true" in problems["/actions/0/x-speech"] and "'yes'" in problems["/actions/0/x-speech"]
    assert "already /actions/1" in problems["/actions/2/x-speech"]
    assert "needs a text parameter" in problems["/actions/3/x-speech"]
    assert {p.pointer for p in validate_document(doc)} >= set(problems)   # the file check reports them
    assert speech_mark_problems(_doc(_action("a", True), _action("b", False))) == []

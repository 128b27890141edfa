"""A spoken line that is an action written out is done, not said (edge/brain/spoken_calls.py),
for every action of every companion file we have, in English and Japanese."""

from __future__ import annotations

from pathlib import Path

import pytest

from edge.brain.names import spoken_names
from edge.brain.spoken_calls import SpokenCalls, is_silence
from edge.protocol.action_names import SPEECH_ACTIONS
from edge.protocol.companion import Companion, load_companion, validate_params
from edge.providers.base import ContentSegment, ProviderResponse, Tool, ToolCall
from repo_paths import REPO

FILES = sorted([*(REPO / "companions").glob("*.json"), *(REPO / "bench" / "blind" / "companions").glob("*.json")])
FILES = [f for f in FILES if f.name != "schema.json"]


def tools_of(companion: Companion) -> list[Tool]:
    return [Tool(a.title, a.description, a.schema) for a in companion.actions]


def said(message: str, action: str = "speak") -> ProviderResponse:
    return ProviderResponse([ContentSegment(type="tool_call", tool_call=ToolCall(action, {"message": message}))])


def calls(response: ProviderResponse) -> list[tuple[str, dict]]:
    return [(s.tool_call.name, s.tool_call.args) for s in response.segments if s.tool_call is not None]


def reader(companion: Companion) -> SpokenCalls:
    return SpokenCalls(spoken_names(companion), lambda: SPEECH_ACTIONS)


def example_args(schema: dict) -> dict:
    """Params that satisfy the schema: each property's first enum value, its minimum, or a word."""
    out = {}
    for key, prop in (schema.get("properties") or {}).items():
        if "enum" in prop:
            out[key] = prop["enum"][0]
        elif prop.get("type") in ("integer", "number"):
            out[key] = prop.get("minimum", 1)
        elif prop.get("type") == "boolean":
            out[key] = True
        elif prop.get("type") == "string":
            out[key] = "x" * max(1, prop.get("minLength", 1))
    return out


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_action_written_out_as_a_call_is_done_with_its_arguments(path: Path) -> None:
    companion = load_companion(path)
    tools, read = tools_of(companion), reader(companion)
    acted = [t for t in tools if t.name not in SPEECH_ACTIONS]
    assert acted
    for tool in acted:
        args = example_args(tool.parameters)
        keywords = ", ".join(f"{k}={v!r}" if isinstance(v, str) else f"{k}={str(v).lower() if isinstance(v, bool) else v}"
                             for k, v in args.items())
        out = calls(read.repair(said(f"{tool.name}({keywords})"), tools))
        assert out == [(tool.name, args)], tool.name
        spec = companion.action(tool.name)
        assert spec is not None and validate_params(spec, out[0][1]) == []
        # the JSON of the call, with words around it: the words are still said
        import json
        line = f'Okay! {json.dumps({"action": tool.name, "params": args}, ensure_ascii=False)}'
        assert calls(read.repair(said(line), tools)) == [("speak", {"message": "Okay!"}), (tool.name, args)]


def test_positional_arguments_follow_the_schema_and_the_rest_is_left_to_the_schema_check() -> None:
    tool = Tool("wag", "", {"type": "object", "properties": {"speed": {"type": "number"}, "times": {"type": "integer"}},
                            "required": ["times"]})
    read = SpokenCalls(["Pip"], lambda: SPEECH_ACTIONS)
    assert calls(read.repair(said("wag(3, 0.5)"), [tool])) == [("wag", {"times": 3, "speed": 0.5})]
    assert calls(read.repair(said("wag(0)"), [tool])) == [("wag", {"times": 0})]
    assert calls(read.repair(said("wag()を実行します"), [tool])) == [("wag", {})]


def test_a_line_that_only_mentions_an_action_is_still_said_and_a_speaker_prefix_goes() -> None:
    tools = [Tool("wag", "", {"type": "object", "properties": {}}), Tool("stop_music", "", {"type": "object"})]
    read = SpokenCalls(["Pochi", "ポチ"], lambda: SPEECH_ACTIONS)
    kept = said("I love to wag my tail when the music stops (it's fun).")
    assert read.repair(kept, tools) is kept
    assert calls(read.repair(said("Pochi says: Woof! Nice to see you."), tools)) == \
        [("speak", {"message": "Woof! Nice to see you."})]
    assert calls(read.repair(said("ポチ：わん！"), tools)) == [("speak", {"message": "わん！"})]
    assert calls(read.repair(said("Sure, stopping it now. stop_music()"), tools)) == \
        [("speak", {"message": "Sure, stopping it now."}), ("stop_music", {})]
    # a call of something not offered is not ours to carry out: the words stay
    other = said("dance()")
    assert read.repair(other, tools) is other


def test_a_streamed_clause_holding_a_call_is_not_said_early() -> None:
    tools = [Tool("stop_music", "", {"type": "object"})]
    read = SpokenCalls(["Pip"], lambda: SPEECH_ACTIONS)
    assert read.clause("stop_music()", tools) is None
    assert read.clause("Pip: All right.", tools) == "All right."
    assert read.clause("All right.", tools) == "All right."


def test_an_action_not_offered_this_turn_is_still_read_and_none_is_silence() -> None:
    every = [Tool("stop_music", "", {"type": "object"}), Tool("speak", "", {"type": "object"})]
    read = SpokenCalls(["Nell"], lambda: SPEECH_ACTIONS, every)
    offered = [Tool("speak", "", {"type": "object"})]
    assert calls(read.repair(said("stop_music()"), offered)) == [("stop_music", {})]
    for quiet in ("none.", "None: do nothing.", "none. None.", "なし", "None: do nothing (when no calls for an action)"):
        assert is_silence(quiet), quiet
    assert not is_silence("Nothing beats a cup of tea in the morning.") and not is_silence("None of them, sorry!")
    assert read.clause("set_light(living_room,", [Tool("set_light", "", {"type": "object"})]) is None
    assert read.clause("none.", offered) is None
    kept = said("Nothing beats a cup of tea in the morning.")
    assert read.repair(kept, offered) is kept

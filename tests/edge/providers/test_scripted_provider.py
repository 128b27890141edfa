"""The scripted provider: replay, recording, exhaustion, looping, bad scripts; and the factory."""

from __future__ import annotations

import json

import pytest

from edge.providers.base import Message, Provider, ProviderContext, ProviderError, Tool
from edge.providers.factory import make_provider, parse_spec
from edge.providers.scripted import ScriptedProvider, ScriptError

SPEAK = Tool("speak", "Say something.", {"type": "object", "properties": {"text": {"type": "string"}}})


def write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_replays_every_kind_of_item_in_order(tmp_path):
    lines = [
        {"action": "speak", "params": {"text": "hi"}},
        {"text": "just words"},
        {"none": True},
        {"raw": '{"action":"speak","params":{"text":"parsed"}}'},
        {"raw": "I refuse to answer in JSON"},
        {"segments": [{"type": "text", "text": "ok"},
                      {"type": "tool_call", "toolCall": {"id": "c1", "name": "speak", "args": {"text": "x"}}}],
         "metadata": {"usage": {"prompt_tokens": 3}}},
        {"error": {"code": "E2001", "message": "slow down"}},
    ]
    path = write(tmp_path, "s.jsonl", "# a comment\n\n" + "\n".join(json.dumps(x) for x in lines) + "\n")
    provider = ScriptedProvider(path)
    assert isinstance(provider, Provider)
    context = ProviderContext(tools=[SPEAK])

    r = provider.generate("p1", context)
    assert [(c.name, c.args) for c in r.tool_calls] == [("speak", {"text": "hi"})]
    assert r.metadata["finish_reason"] == "tool_use" and r.metadata["item"] == 1
    assert provider.generate("p2", context).text == "just words"
    none = provider.generate("p3", context)
    assert none.segments == [] and none.metadata["finish_reason"] == "end_turn"
    assert provider.generate("p4", context).tool_calls[0].args == {"text": "parsed"}
    bad = provider.generate("p5", context)
    assert bad.tool_calls == [] and "not JSON" in bad.errors[0]
    full = provider.generate("p6", context)
    assert full.text == "ok" and full.tool_calls[0].id == "c1"
    assert full.metadata["usage"] == {"prompt_tokens": 3}
    with pytest.raises(ProviderError) as info:
        provider.generate("p7", context)
    assert info.value.code == "E2001" and info.value.retryable and info.value.message == "slow down"
    assert [p for p, _ in provider.calls] == [f"p{i}" for i in range(1, 8)]


def test_raw_items_are_checked_against_the_offered_tools_shorthand_is_not():
    provider = ScriptedProvider([{"raw": '{"action":"dance","params":{}}'}, {"action": "dance"}])
    assert "unknown action 'dance'" in provider.generate("x", ProviderContext(tools=[SPEAK])).errors[0]
    assert provider.generate("x", ProviderContext(tools=[SPEAK])).tool_calls[0].name == "dance"


def test_records_a_snapshot_of_each_context():
    provider = ScriptedProvider([{"none": True}, {"none": True}])
    context = ProviderContext(tools=[SPEAK], system="You are Pico.")
    provider.generate("first", context)
    context.history = [Message("user", "first"), Message("assistant", "{}")]
    provider.generate("again", context)
    (p1, c1), (p2, c2) = provider.calls
    assert (p1, c1.history, c1.system, c1.tools[0].name) == ("first", [], "You are Pico.", "speak")
    assert (p2, [m.content for m in c2.history]) == ("again", ["first", "{}"])


def test_exhaustion_is_a_clear_error_and_loop_starts_over():
    provider = ScriptedProvider([{"text": "a"}, {"text": "b"}])
    provider.generate("", ProviderContext())
    provider.generate("", ProviderContext())
    with pytest.raises(ProviderError, match="exhausted: all 2 replies used"):
        provider.generate("", ProviderContext())
    looping = ScriptedProvider([{"text": "a"}, {"text": "b"}], loop=True)
    assert [looping.generate("", ProviderContext()).text for _ in range(5)] == list("ababa")


def test_each_reply_gets_fresh_objects():
    provider = ScriptedProvider([{"action": "speak", "params": {"text": "hi"}}], loop=True)
    first = provider.generate("", ProviderContext()).tool_calls[0]
    first.args["text"] = "changed"
    second = provider.generate("", ProviderContext()).tool_calls[0]
    assert second.args == {"text": "hi"} and second.id != first.id


def test_json_array_scripts_work(tmp_path):
    path = write(tmp_path, "s.json", json.dumps([{"text": "one"}, {"none": True}], indent=2))
    assert ScriptedProvider(path).generate("", ProviderContext()).text == "one"


@pytest.mark.parametrize("text, where, why", [
    ('{"text": "ok"}\n{"text": "broken"\n', ":2:", "invalid JSON"),
    ('{"text": "ok"}\n\n["not", "an", "object"]\n', ":3:", "must be a JSON object"),
    ('{"speak": "hi"}\n', ":1:", "needs exactly one of"),
    ('{"text": "a", "none": true}\n', ":1:", "found text, none"),
    ('{"action": "speak", "params": [1]}\n', ":1:", '"params" an object'),
    ('{"error": {"message": "no code"}}\n', ":1:", '"error" must be'),
    ('{"segments": [{"type": "tool_call"}]}\n', ":1:", "segment 0: a tool_call needs"),
    ('{"segments": [{"type": "song"}]}\n', ":1:", "segment 0: needs a type"),
    ('# only a comment\n', "", "no items"),
    ('[{"text": "a"}, 5]', " item 2", "must be a JSON object"),
    ('[{"text": "a"},\n oops]', ":2", "invalid JSON"),
])
def test_bad_scripts_name_the_file_and_line(tmp_path, text, where, why):
    path = write(tmp_path, "bad.jsonl", text)
    with pytest.raises(ScriptError) as info:
        ScriptedProvider(path)
    assert str(info.value).startswith(f"{path}{where}")
    assert why in str(info.value)


def test_missing_script_file(tmp_path):
    with pytest.raises(ScriptError, match="nope.jsonl: cannot read script"):
        ScriptedProvider(tmp_path / "nope.jsonl")


def test_delay(tmp_path):
    """The delay comes before the answer (its length is measured in bench/pacing.py)."""
    provider = ScriptedProvider([{"text": "late"}], delay_s=0.05)
    assert provider.generate("", ProviderContext()).text == "late"
    assert provider.delay_s == 0.05 and len(provider.calls) == 1


# -- the factory ---------------------------------------------------------------------------


def test_factory_builds_scripted_with_options(tmp_path):
    path = write(tmp_path, "s.jsonl", '{"text": "a"}\n')
    provider = make_provider(f"scripted:{path}?delay=0&loop=1")
    assert isinstance(provider, ScriptedProvider) and provider.loop and provider.delay_s == 0
    assert [provider.generate("", ProviderContext()).text for _ in range(2)] == ["a", "a"]


def test_factory_parses_embedded_specs_without_loading():
    assert parse_spec("embedded") == ("embedded", None, {})
    assert parse_spec("embedded:m.gguf?ctx=512&threads=2&seed=7") == \
        ("embedded", "m.gguf", {"ctx": 512, "threads": 2, "seed": 7})


@pytest.mark.parametrize("spec, message", [
    ("", "empty provider spec"),
    ("llamafile:x", "unknown provider 'llamafile'"),
    ("scripted", "needs an argument"),
    ("scripted:", "nothing after 'scripted:'"),
    ("scripted:f.jsonl?speed=2", "unknown option 'speed'"),
    ("scripted:f.jsonl?delay=soon", "option delay='soon'"),
    ("scripted:f.jsonl?loop=maybe", "option loop='maybe'"),
    ("embedded?ctx", "malformed options"),
    ("ollama", "needs an argument"),
    ("openai:gpt-4o-mini?colour=red", "unknown option 'colour'"),
    ("anthropic:claude?timeout=-1", "option timeout='-1'"),
    ("embedded,", "empty entry in the fallback chain"),
])
def test_factory_errors_name_the_spec(spec, message):
    with pytest.raises(ValueError) as info:
        make_provider(spec)
    assert message in str(info.value)
    if spec and not spec.endswith(","):
        assert repr(spec) in str(info.value)

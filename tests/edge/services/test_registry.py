"""The Registry over real HTTP: the shipped companions, live reload of a folder, errors, MQTT status."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Iterator

import httpx
import pytest

from edge.runtime.broker import LocalBroker
from edge.runtime.bus import Bus
from edge.paths import COMPANIONS_DIR
from edge.protocol.companion import load_companion
from edge.protocol.payloads import Status
from edge.services.catalog import Catalog
from edge.services.http_server import bind_socket
from edge.services.registry import serve
from repo_paths import REPO

SHIPPED = sorted(p for p in COMPANIONS_DIR.glob("*.json") if p.name != "schema.json")
SEED_KEYS = ["id", "name", "personality", "story", "sample", "version", "author", "tags", "icon"]
PIP = COMPANIONS_DIR / "pip.json"
AZABU_ID = "15022737-901c-4d72-b06d-bb20b1782086"  # the distributed seed's own example id


@contextlib.contextmanager
def running(sources=None, **options) -> Iterator[str]:
    """``serve`` (the CLI entry point) on a free port in a thread; yields its base URL."""
    stop, ready, urls, failed = threading.Event(), threading.Event(), [], []

    def target() -> None:
        try:
            serve(sources, port=0, stop=stop, ready=ready, on_ready=urls.append, **options)
        except BaseException as exc:  # surfaced below instead of vanishing in the thread
            failed.append(exc)
            ready.set()

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    assert ready.wait(10), "registry did not start"
    if failed:
        raise failed[0]
    try:
        yield urls[0]
    finally:
        stop.set()
        thread.join(10)
        assert not thread.is_alive(), "registry did not stop"


def _write(path: Path, doc: dict | str) -> None:
    """Replace the file the way editors do (write aside, rename), so every write is a new inode."""
    text = doc if isinstance(doc, str) else json.dumps(doc, ensure_ascii=False)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _companion(name: str, ident: str) -> dict:
    return {"metadata": {"id": ident, "name": name, "version": "1.0.0", "author": "tests", "tags": ["t"]},
            "actions": [{"title": "speak", "description": "Say something.", "type": "object",
                         "properties": {"message": {"type": "string"}}, "required": ["message"]}]}


def _ids(client: httpx.Client) -> list[str]:
    return [item["metadata"]["id"] for item in client.get("/metadata").json()]


def test_metadata_serves_every_shipped_companion_in_the_seed_format():
    expected = sorted((load_companion(p) for p in SHIPPED), key=lambda c: (c.name.casefold(), c.name, c.id))
    with running() as url, httpx.Client(base_url=url) as client:
        response = client.get("/metadata")
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/json"
        items = response.json()
        assert items == [c.metadata_json() for c in expected]
        assert all(list(item) == ["metadata"] and list(item["metadata"]) == SEED_KEYS for item in items)
        assert AZABU_ID in _ids(client)
        assert "麻布麻衣" in response.content.decode("utf-8")  # real UTF-8, not \u escapes
        assert client.get("/metadata").json() == items  # stable order
        assert client.get("/metadata/errors").json() == []
        assert client.get("/healthz").json() == {"status": "ok", "companions": len(SHIPPED), "errors": 0}


def test_companion_endpoint_returns_the_whole_definition():
    with running() as url, httpx.Client(base_url=url) as client:
        for path in SHIPPED:
            companion = load_companion(path)
            response = client.get(f"/companions/{companion.id}")
            assert response.status_code == 200
            assert response.json() == json.loads(path.read_text(encoding="utf-8"))
        assert client.get(f"/companions/{AZABU_ID.upper()}").json()["metadata"]["id"] == AZABU_ID


def test_unknown_id_route_and_method_are_clear_json_errors():
    with running() as url, httpx.Client(base_url=url) as client:
        missing = "00000000-0000-4000-8000-000000000000"
        response = client.get(f"/companions/{missing}")
        assert response.status_code == 404 and missing in response.json()["error"]
        response = client.get("/companions/pip")
        assert response.status_code == 404 and "'pip'" in response.json()["error"]
        assert "UUID" in response.json()["error"]
        response = client.get("/nowhere")
        assert response.status_code == 404 and "/metadata" in response.json()["error"]
        for method, path in (("POST", "/metadata"), ("DELETE", f"/companions/{AZABU_ID}"), ("PUT", "/healthz")):
            response = client.request(method, path, content=b"{not json")
            assert response.status_code == 405
            assert "GET" in response.headers["allow"]
            assert method in response.json()["error"] and path in response.json()["error"]
        assert client.head("/metadata").status_code == 200
        assert client.get("/metadata").status_code == 200  # still serving after all that


def test_folder_changes_are_followed(tmp_path):
    shutil.copy(PIP, tmp_path / "pip.json")
    shutil.copy(COMPANIONS_DIR / "schema.json", tmp_path / "schema.json")  # skipped, never an error
    (tmp_path / "notes.txt").write_text("not a companion")
    pip_id = load_companion(PIP).id
    new_id = "7d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6"
    with running([tmp_path], min_interval=0) as url, httpx.Client(base_url=url) as client:
        assert _ids(client) == [pip_id]

        _write(tmp_path / "ada.json", _companion("Ada", new_id))  # added
        assert _ids(client) == [new_id, pip_id]  # ordered by name: Ada before Pip

        _write(tmp_path / "ada.json", _companion("Zoe", new_id))  # modified
        assert _ids(client) == [pip_id, new_id]
        assert client.get(f"/companions/{new_id}").json()["metadata"]["name"] == "Zoe"

        _write(tmp_path / "ada.json", '{"metadata": {"id": "%s", "name": "Zoe",}}' % new_id)  # broken JSON
        assert _ids(client) == [pip_id]
        [report] = client.get("/metadata/errors").json()
        assert report["file"] == str(tmp_path / "ada.json")
        assert report["problems"][0]["pointer"] == "" and "not valid JSON" in report["problems"][0]["message"]

        doc = _companion("Zoe", new_id)
        doc["metadata"]["version"] = "one"
        doc["actoins"] = []
        _write(tmp_path / "ada.json", doc)  # valid JSON, invalid companion: every problem named
        [report] = client.get("/metadata/errors").json()
        pointers = {p["pointer"] for p in report["problems"]}
        assert {"/metadata/version", "/actoins"} <= pointers
        assert any("did you mean 'actions'" in p["message"] for p in report["problems"])
        response = client.get(f"/companions/{new_id}")
        assert response.status_code == 404 and "ada.json" in response.json()["error"]
        assert client.get("/healthz").json() == {"status": "ok", "companions": 1, "errors": 1}

        _write(tmp_path / "ada.json", _companion("Ada", new_id))  # fixed
        assert _ids(client) == [new_id, pip_id] and client.get("/metadata/errors").json() == []

        (tmp_path / "pip.json").unlink()  # removed
        assert _ids(client) == [new_id]
        assert client.get(f"/companions/{pip_id}").status_code == 404


def test_duplicate_ids_serve_the_first_file_and_report_the_rest(tmp_path):
    ident = "7d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6"
    _write(tmp_path / "a.json", _companion("First", ident))
    _write(tmp_path / "b.json", _companion("Copy", ident))
    with running([tmp_path], min_interval=0) as url, httpx.Client(base_url=url) as client:
        assert [i["metadata"]["name"] for i in client.get("/metadata").json()] == ["First"]
        [report] = client.get("/metadata/errors").json()
        assert report["file"] == str(tmp_path / "b.json")
        [problem] = report["problems"]
        assert problem["pointer"] == "/metadata/id"
        assert ident in problem["message"] and str(tmp_path / "a.json") in problem["message"]

        (tmp_path / "a.json").unlink()  # the copy takes over once the id is free
        assert [i["metadata"]["name"] for i in client.get("/metadata").json()] == ["Copy"]
        assert client.get("/metadata/errors").json() == []


def test_a_list_of_files_and_a_file_that_disappears(tmp_path):
    mine = tmp_path / "mine.json"
    shutil.copy(PIP, mine)
    azabu = COMPANIONS_DIR / "azabu-mai.json"
    with running([mine, azabu], min_interval=0) as url, httpx.Client(base_url=url) as client:
        assert sorted(_ids(client)) == sorted([load_companion(PIP).id, AZABU_ID])
        mine.unlink()
        assert _ids(client) == [AZABU_ID]
        [report] = client.get("/metadata/errors").json()
        assert report["file"] == str(mine) and "cannot read file" in report["problems"][0]["message"]


def test_disk_is_checked_at_most_once_per_interval(tmp_path):
    now = [0.0]
    catalog = Catalog([tmp_path], min_interval=0.5, clock=lambda: now[0])
    assert catalog.snapshot().companions == {}
    _write(tmp_path / "pip.json", PIP.read_text(encoding="utf-8"))
    now[0] = 0.3
    assert catalog.snapshot().companions == {}  # too soon: the cached answer
    now[0] = 0.8
    assert list(catalog.snapshot().companions) == [load_companion(PIP).id]


def test_bad_start_arguments_fail_at_once(tmp_path):
    with pytest.raises(FileNotFoundError, match="no-such-folder"):
        serve([tmp_path / "no-such-folder"], port=0, stop=threading.Event())
    taken = bind_socket("127.0.0.1", 0)
    try:
        with pytest.raises(OSError, match="in use"):
            serve(port=taken.getsockname()[1], stop=threading.Event())
    finally:
        taken.close()


def _status_of(statuses: "queue.Queue[Status]", node: str, timeout: float) -> Status:
    deadline = time.monotonic() + timeout
    while True:
        status = statuses.get(timeout=max(0.01, deadline - time.monotonic()))
        if status.node == node:
            return status


def test_status_is_published_once_a_broker_appears(tmp_path):
    """The seed starts the Registry before the broker: HTTP works at once, status follows."""
    broker = LocalBroker(data_dir=tmp_path / "mosquitto")
    registry = running(broker=broker.address, namespace="robot1")
    watcher = Bus("watcher", "test", broker.address, namespace="robot1", announce=False, persistent=False)
    statuses: queue.Queue = queue.Queue()
    watcher.subscribe(Status, statuses.put)
    stopped = False
    try:
        url = registry.__enter__()
        assert httpx.get(f"{url}/healthz").status_code == 200  # no broker yet
        broker.start()
        watcher.connect()
        status = _status_of(statuses, "registry", timeout=20)
        while "url" not in status.extra:  # the first online may come before the one with the URL
            status = _status_of(statuses, "registry", timeout=5)
        assert status.state == "online" and status.kind == "registry" and status.extra["url"] == url
        stopped = True
        registry.__exit__(None, None, None)
        assert _status_of(statuses, "registry", timeout=5).state == "offline"
    finally:
        if not stopped:
            registry.__exit__(None, None, None)
        watcher.close()
        broker.stop()


def test_sigterm_stops_the_server_cleanly(tmp_path):
    """As under systemd: the process prints where it serves, answers, and exits 0 on SIGTERM."""
    code = "from edge.services.registry import serve; raise SystemExit(serve(port=0))"
    proc = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True,
                            cwd=REPO)
    try:
        line = proc.stderr.readline()
        match = re.search(r"at (http://\S+)/metadata", line)
        assert match, line
        assert len(httpx.get(f"{match.group(1)}/metadata").json()) == len(SHIPPED)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_no_file_in_the_folder_can_stop_start_or_reload(tmp_path):
    """Hostile or unlucky files are each one entry of /metadata/errors; the rest is served."""
    shutil.copy(PIP, tmp_path / "pip.json")
    deep = "[" * 100_000 + "]" * 100_000
    (tmp_path / os.fsdecode(b"caf\xe9.json")).write_text("{")                   # a name that is not UTF-8
    (tmp_path / "deep.json").write_text(deep)                                     # RecursionError in json
    (tmp_path / "deep-meta.json").write_text('{"metadata": {"id": %s}}' % ("[" * 200 + "]" * 200))
    with open(tmp_path / "huge.json", "wb") as f:                                 # sparse: no disk used
        f.truncate(64 << 20)
    os.symlink(tmp_path / "loop.json", tmp_path / "loop.json")                   # a symlink loop
    os.mkfifo(tmp_path / "fifo.json")                                             # would block a reader
    (tmp_path / "folder.json").mkdir()
    surrogate = _companion("\\ud800", "1d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6")
    (tmp_path / "surrogate.json").write_text(json.dumps(surrogate).replace("\\\\ud800", "\\ud800"))
    long_value = _companion("Long", "2d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6")
    long_value["metadata"]["version"] = "v" * 900_000
    (tmp_path / "long.json").write_text(json.dumps(long_value))
    expected = {"deep.json": "nested too deeply", "deep-meta.json": "", "huge.json": "over the",
                "loop.json": "symlink loop", "fifo.json": "not a regular file", "folder.json": "not a file",
                "surrogate.json": "lone surrogate", "long.json": "", "caf\\xe9.json": "not valid JSON"}
    if os.geteuid() != 0:  # root reads anything
        (tmp_path / "locked.json").write_text("{}")
        (tmp_path / "locked.json").chmod(0)
        expected["locked.json"] = "Permission denied"
    with running([tmp_path], min_interval=0) as url, httpx.Client(base_url=url, timeout=10) as client:
        assert _ids(client) == [load_companion(PIP).id]
        response = client.get("/metadata/errors")
        assert response.status_code == 200
        reports = {Path(r["file"]).name: r["problems"] for r in response.json()}
        assert set(reports) == set(expected)
        for name, words in expected.items():
            assert words in reports[name][0]["message"], (name, reports[name])
            assert all(len(p["message"]) <= 400 for p in reports[name]), name
        assert len(response.content) < 20_000
        # reload: a new bad file and a changed good one are both followed, nothing stops serving
        (tmp_path / "deeper.json").write_text("{" * 50_000)
        _write(tmp_path / "ada.json", _companion("Ada", "7d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6"))
        assert _ids(client) == ["7d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6", load_companion(PIP).id]
        assert "deeper.json" in {Path(r["file"]).name for r in client.get("/metadata/errors").json()}
        assert client.get("/healthz").json()["errors"] == len(expected) + 1

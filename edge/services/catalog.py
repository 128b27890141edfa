"""The registry's view of companion files on disk: valid companions, invalid files, live reload.

A ``Catalog`` is built from *sources*: folders (every ``*.json`` in them except
``schema.json`` and dotfiles) and single files. ``snapshot()`` returns an immutable
``Snapshot``; at most every ``min_interval`` seconds it first re-lists the sources and
compares each file's stat signature, and only files whose signature changed are read and
validated again. That is cheap enough to do on every request, needs no file-watching
dependency, and sees edits, atomic renames (editors), new and deleted files alike.

Two files with the same companion id: the first in listing order (sources in the order
given, a folder's files by name) is served; the others are reported as invalid with a
problem naming the file that holds the id. Deterministic, and a stray copy never hides the
companion everyone already uses when the original sorts first.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from edge.log import get_logger
from edge.protocol.companion import Companion, CompanionError, Problem, load_companion

log = get_logger(__name__)

SKIPPED_NAMES = frozenset({"schema.json"})

Signature = tuple[int, int, int, int] | None  # mtime_ns, size, inode, ctime_ns; None: cannot stat


@dataclass(frozen=True)
class FileReport:
    """An invalid file and everything wrong with it."""
    file: str
    problems: tuple[Problem, ...]

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "problems": [{"pointer": p.pointer, "message": p.message} for p in self.problems]}


@dataclass(frozen=True)
class _Loaded:
    """One file's outcome, kept until its signature changes."""
    signature: Signature
    companion: Companion | None
    problems: tuple[Problem, ...]
    named_id: str | None  # the id an invalid file claims, to explain a 404


@dataclass(frozen=True)
class Snapshot:
    """What the registry serves at one moment; never mutated once built."""
    companions: dict[str, Companion] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)         # id -> file serving it
    errors: tuple[FileReport, ...] = ()
    broken: dict[str, str] = field(default_factory=dict)        # id -> invalid file that names it

    def metadata(self) -> list[dict[str, Any]]:
        """The seed's ``GET /metadata`` array, ordered by name then id (independent of file names)."""
        ordered = sorted(self.companions.values(), key=lambda c: (c.name.casefold(), c.name, c.id))
        return [c.metadata_json() for c in ordered]


def normalize_id(text: str) -> str | None:
    """The canonical (lower-case, hyphenated) form of a UUID, or None when it is not one."""
    try:
        return str(uuid.UUID(text))
    except (ValueError, TypeError, AttributeError):
        return None


class Catalog:
    """Companion files from folders and files, re-read when they change."""

    def __init__(self, sources: Iterable[str | os.PathLike], min_interval: float = 0.5,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.sources: tuple[Path, ...] = tuple(Path(s) for s in sources)
        if not self.sources:
            raise ValueError("the registry needs at least one companion folder or file")
        self.min_interval = min_interval
        self._clock = clock
        self._lock = threading.Lock()
        self._loaded: dict[str, _Loaded] = {}
        self._fingerprint: tuple | None = None
        self._checked_at = float("-inf")
        self._snapshot = Snapshot()

    def snapshot(self) -> Snapshot:
        """The current state, re-checking the disk if the last check is older than ``min_interval``."""
        with self._lock:
            if self._clock() - self._checked_at >= self.min_interval:
                self._refresh()
            return self._snapshot

    def refresh(self) -> Snapshot:
        """Re-check the disk now, whatever the interval."""
        with self._lock:
            self._refresh()
            return self._snapshot

    # -- internals (called with the lock held) ---------------------------------------------

    def _refresh(self) -> None:
        self._checked_at = self._clock()
        listed, unlistable = self._list()
        fingerprint = (tuple((str(p), _signature(p)) for p in listed), tuple(unlistable))
        if fingerprint == self._fingerprint:
            return
        self._fingerprint = fingerprint
        loaded: dict[str, _Loaded] = {}
        for (name, signature) in fingerprint[0]:
            previous = self._loaded.get(name)
            if previous is not None and previous.signature == signature:
                loaded[name] = previous
            else:
                loaded[name] = _load(Path(name), signature)
                _log_loaded(name, loaded[name], replaced=previous is not None)
        for name in self._loaded.keys() - loaded.keys():
            log.info("registry.file_removed", file=name)
        self._loaded = loaded
        self._snapshot = _assemble(loaded, unlistable)
        log.info("registry.reloaded", companions=len(self._snapshot.companions), errors=len(self._snapshot.errors))

    def _list(self) -> tuple[list[Path], list[FileReport]]:
        """Every candidate file in order, and a report for each folder that cannot be listed."""
        files: list[Path] = []
        unlistable: list[FileReport] = []
        seen: set[str] = set()
        for source in self.sources:
            if source.is_dir():
                try:
                    found = sorted(p for p in source.iterdir() if _is_candidate(p))
                except OSError as exc:
                    reason = exc.strerror or str(exc)
                    unlistable.append(FileReport(str(source), (Problem("", f"cannot list folder: {reason}"),)))
                    continue
            else:
                found = [source]  # a missing file stays listed, so it is reported
            for path in found:
                if str(path) not in seen:
                    seen.add(str(path))
                    files.append(path)
        return files, unlistable


def _is_candidate(path: Path) -> bool:
    return path.suffix == ".json" and not path.name.startswith(".") and path.name not in SKIPPED_NAMES \
        and path.is_file()


def _signature(path: Path) -> Signature:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)


def _load(path: Path, signature: Signature) -> _Loaded:
    try:
        companion = load_companion(path)
    except CompanionError as exc:
        return _Loaded(signature, None, tuple(exc.problems), _claimed_id(path))
    return _Loaded(signature, companion, (), None)


def _claimed_id(path: Path) -> str | None:
    """``metadata.id`` of a file that failed validation, if it can still be read."""
    try:
        doc = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    meta = doc.get("metadata") if isinstance(doc, dict) else None
    return normalize_id(meta.get("id")) if isinstance(meta, dict) else None


def _log_loaded(name: str, entry: _Loaded, replaced: bool) -> None:
    if entry.companion is not None:
        event = "registry.file_changed" if replaced else "registry.file_added"
        log.info(event, file=name, id=entry.companion.id, companion=entry.companion.name)
    else:
        first = entry.problems[0] if entry.problems else Problem("", "invalid")
        log.warning("registry.file_invalid", file=name, problems=len(entry.problems),
                    first=f"{first.pointer or '/'}: {first.message}")


def _assemble(loaded: dict[str, _Loaded], unlistable: Sequence[FileReport]) -> Snapshot:
    companions: dict[str, Companion] = {}
    files: dict[str, str] = {}
    errors: list[FileReport] = list(unlistable)
    broken: dict[str, str] = {}
    for name, entry in loaded.items():  # listing order: the first holder of an id wins
        companion = entry.companion
        if companion is None:
            errors.append(FileReport(name, entry.problems))
            if entry.named_id is not None:
                broken.setdefault(entry.named_id, name)
        elif companion.id in companions:
            errors.append(FileReport(name, (_duplicate(companion, files[companion.id]),)))
            log.warning("registry.duplicate_id", file=name, id=companion.id, served_from=files[companion.id])
        else:
            companions[companion.id] = companion
            files[companion.id] = name
    errors.sort(key=lambda r: r.file)
    return Snapshot(companions, files, tuple(errors), {k: v for k, v in broken.items() if k not in companions})


def _duplicate(companion: Companion, holder: str) -> Problem:
    explicit = isinstance(companion.source.get("metadata"), dict) and "id" in companion.source["metadata"]
    how = "" if explicit else " (derived from the name)"
    return Problem("/metadata/id" if explicit else "",
                   f"duplicate companion id {companion.id}{how}: already served from {holder}; "
                   "give this companion its own metadata.id")

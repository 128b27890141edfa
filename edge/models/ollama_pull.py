"""``ollama pull`` through the official client's streaming pull API, with progress.

Ollama downloads and verifies its own layers (by digest), so we only relay its progress:
one bar per layer digest, status lines ("pulling manifest", "verifying sha256 digest",
"writing manifest", "success") as they come, and every failure turned into one sentence
that names the server and what to do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, TextIO

from edge import environment
from edge.models.progress import Progress

if TYPE_CHECKING:
    import httpx

DEFAULT_HOST = "http://127.0.0.1:11434"
INSTALL_HINT = "install Ollama (https://ollama.com/download) and start it: `ollama serve` or `systemctl start ollama`"


class OllamaPullError(RuntimeError):
    pass


def ollama_host(host: str | None = None) -> str:
    return host or environment.value("OLLAMA_HOST") or DEFAULT_HOST


def _client(host: str | None, timeout: httpx.Timeout):
    try:
        import ollama
    except ImportError as exc:
        raise OllamaPullError(f"the ollama Python client is not installed ({exc}): pip install ollama") from None
    return ollama, ollama.Client(host=ollama_host(host), timeout=timeout)


def pull(model: str, *, host: str | None = None, say: Callable[[str], None] = print,
         stream: TextIO | None = None, progress: bool = True) -> None:
    """Pull ``model`` into the Ollama at ``host``; raises OllamaPullError with the reason."""
    import httpx
    where = ollama_host(host)
    # a pull can sit silent for a while (verifying a large layer), so no read timeout
    ollama, client = _client(host, httpx.Timeout(10.0, read=None))
    bars: dict[str, Progress] = {}
    last_status = None
    finished = False
    try:
        for part in client.pull(model, stream=True):
            status = part.status or ""
            if part.digest and part.total:
                bar = bars.get(part.digest)
                if bar is None:
                    bar = bars[part.digest] = Progress(f"{model} {part.digest.split(':')[-1][:12]}", part.total,
                                                       stream=stream, enabled=progress)
                bar.update(max((part.completed or 0) - bar.done, 0))
                if part.completed is not None and part.completed >= part.total:
                    bar.close()
            elif status and status != last_status:
                say(f"{model}: {status}")
            last_status = status
            finished = finished or status == "success"
    except ollama.ResponseError as exc:
        code = f" (HTTP {exc.status_code})" if getattr(exc, "status_code", -1) not in (-1, None) else ""
        raise OllamaPullError(f"Ollama at {where} could not pull {model!r}{code}: {exc.error}") from None
    except (ConnectionError, httpx.ConnectError, httpx.ConnectTimeout):
        raise OllamaPullError(f"nothing answers at {where} (Ollama): {INSTALL_HINT}; "
                              f"or point --ollama / OLLAMA_HOST at it") from None
    except httpx.TransportError as exc:
        raise OllamaPullError(f"the connection to Ollama at {where} broke while pulling {model!r} ({exc}); "
                              f"rerun to continue (Ollama keeps the layers it has)") from None
    finally:
        for bar in bars.values():
            bar.close()
    if not finished:
        raise OllamaPullError(f"Ollama at {where} ended the pull of {model!r} without reporting success "
                              f"(last status: {last_status or 'none'}); rerun to continue")


def installed(host: str | None = None) -> set[str] | None:
    """The model tags Ollama has, or None when it does not answer (within 2 s)."""
    try:
        import httpx
        _, client = _client(host, httpx.Timeout(2.0))
        listing = client.list()
    except Exception:  # noqa: BLE001  (unreachable, not Ollama, client missing: all mean "unknown")
        return None
    return {normalize(m.model) for m in listing.models if m.model}


def normalize(tag: str) -> str:
    """Ollama's names: ``qwen2.5`` is ``qwen2.5:latest``."""
    return tag if ":" in tag.rsplit("/", 1)[-1] else f"{tag}:latest"

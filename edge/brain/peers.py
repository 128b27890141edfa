"""Who else is around: other companions' metadata, for the prompt and for addressing messages.

In one process the stack knows its companions directly; across processes the Registry's
``GET /metadata`` (the seed's format) tells. The registry is asked at most every
``refresh_s``; when it cannot be reached the last answer is kept and one warning logged.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

from edge.log import get_logger

log = get_logger(__name__)


class RegistryPeers:
    """Callable returning a list of metadata dicts (id, name, personality, ...)."""

    def __init__(self, url: str, local: Callable[[], list[dict[str, Any]]] | None = None,
                 refresh_s: float = 30.0, timeout_s: float = 2.0):
        self.url = url.rstrip("/") + "/metadata"
        self.local = local or (lambda: [])
        self.refresh_s = refresh_s
        self.timeout_s = timeout_s
        self._cached: list[dict[str, Any]] = []
        self._fetched_at = float("-inf")
        self._warned = False
        self._lock = threading.Lock()

    def __call__(self) -> list[dict[str, Any]]:
        with self._lock:
            if time.monotonic() - self._fetched_at >= self.refresh_s:
                self._fetched_at = time.monotonic()
                self._cached = self._fetch() or self._cached
        merged = {p["id"]: p for p in self._cached if isinstance(p, dict) and p.get("id")}
        for p in self.local():
            merged.setdefault(p["id"], p)
        return list(merged.values())

    def _fetch(self) -> list[dict[str, Any]] | None:
        import httpx
        try:
            response = httpx.get(self.url, timeout=self.timeout_s)
            response.raise_for_status()
            items = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            if not self._warned:
                log.warning("peers.registry_unreachable", url=self.url, reason=str(exc), action="keeping the last list")
                self._warned = True
            return None
        self._warned = False
        if not isinstance(items, list):
            log.warning("peers.registry_bad_reply", url=self.url, reason="expected a JSON array")
            return None
        return [i["metadata"] for i in items if isinstance(i, dict) and isinstance(i.get("metadata"), dict)]

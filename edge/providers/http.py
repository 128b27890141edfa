"""HTTP plumbing shared by the remote providers (httpx + httpx-sse).

One place turns every transport failure into a standard error: a refused connection or a
reset is ``E3001`` (the server is not there: fall back; a refused connection is not retried
either), a timeout is ``E3003``, a non-2xx
status is classified by ``errors.code_for_status`` with the API's own error message and its
``Retry-After``. Streaming checks ``context.cancel`` between chunks (``E4002``).
"""

from __future__ import annotations

import json
import threading
from contextlib import contextmanager
from typing import Any, Iterator

import httpx
from httpx_sse import EventSource

from edge.providers.base import ProviderError
from edge.providers.errors import code_for_status, parse_retry_after

DEFAULT_TIMEOUT_S = 60.0


def error_message(body: bytes | str) -> str:
    """The human part of an API's error body: ``error.message``, ``message``, ``error`` or the raw text."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    try:
        data = json.loads(text)
    except ValueError:
        return text.strip()[:500] or "(empty body)"
    if isinstance(data, list) and data:
        data = data[0]
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict):
            for key in ("message", "error", "detail", "status"):
                if isinstance(err.get(key), str):
                    kind = err.get("type") or err.get("code") or err.get("status")
                    return f"{err[key]}" + (f" ({kind})" if isinstance(kind, str) and kind != err[key] else "")
        if isinstance(err, str):
            return err
    return text.strip()[:500]


class HttpApi:
    """A base URL, headers and a timeout; ``post_json`` and ``stream_sse`` / ``stream_lines``."""

    def __init__(self, provider: str, base_url: str, headers: dict[str, str] | None = None,
                 timeout_s: float = DEFAULT_TIMEOUT_S, client: httpx.Client | None = None):
        self.provider = provider
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        self.client = client or httpx.Client(headers=headers or {}, timeout=httpx.Timeout(timeout_s, connect=10.0))

    def url(self, path: str) -> str:
        return f"{self.base_url}/{path.lstrip('/')}"

    def close(self) -> None:
        self.client.close()

    def error_for_response(self, response: httpx.Response) -> ProviderError:
        """The ProviderError for a non-2xx response; API modules override it to read their own
        error types from the body (and call this for the generic part)."""
        body = response.read()
        message = error_message(body)
        return ProviderError(code_for_status(response.status_code, message),
                             f"{self.provider} answered HTTP {response.status_code}: {message}",
                             retry_after=parse_retry_after(response.headers), status=response.status_code,
                             provider=self.provider)

    @contextmanager
    def _transport_errors(self, timeout_s: float | None) -> Iterator[None]:
        try:
            yield
        except httpx.TimeoutException as exc:
            raise ProviderError("E3003", f"{self.provider} did not answer within "
                                         f"{timeout_s or self.timeout_s:.0f} s ({type(exc).__name__})",
                                provider=self.provider) from None
        except httpx.ConnectError as exc:  # nothing listens: waiting 1+2+4 s will not bring it up, fall back now
            raise ProviderError("E3001", f"{self.provider} unreachable at {self.base_url}: {exc}",
                                retryable=False, provider=self.provider) from None
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
            raise ProviderError("E3001", f"{self.provider} unreachable at {self.base_url}: {exc}",
                                provider=self.provider) from None

    def post_json(self, path: str, body: dict[str, Any], timeout_s: float | None = None,
                  params: dict[str, str] | None = None) -> dict[str, Any]:
        with self._transport_errors(timeout_s):
            response = self.client.post(self.url(path), json=body, params=params,
                                        timeout=timeout_s or self.timeout_s)
        if response.status_code >= 400:
            raise self.error_for_response(response)
        try:
            data = response.json()
        except ValueError:
            raise ProviderError("E9999", f"{self.provider} answered with a body that is not JSON: "
                                         f"{response.text[:200]!r}", provider=self.provider) from None
        if not isinstance(data, dict):
            raise ProviderError("E9999", f"{self.provider} answered with JSON that is not an object",
                                provider=self.provider)
        return data

    @contextmanager
    def _stream(self, path: str, body: dict[str, Any], timeout_s: float | None, params: dict[str, str] | None):
        with self._transport_errors(timeout_s):
            with self.client.stream("POST", self.url(path), json=body, params=params,
                                    timeout=timeout_s or self.timeout_s) as response:
                if response.status_code >= 400:
                    raise self.error_for_response(response)
                yield response

    def stream_sse(self, path: str, body: dict[str, Any], timeout_s: float | None = None,
                   cancel: threading.Event | None = None,
                   params: dict[str, str] | None = None) -> Iterator[tuple[str, str]]:
        """(event name, data) pairs of a server-sent-events reply."""
        with self._stream(path, body, timeout_s, params) as response:
            with self._transport_errors(timeout_s):
                for sse in EventSource(response).iter_sse():
                    _check_cancel(cancel, self.provider)
                    yield sse.event, sse.data

    def stream_lines(self, path: str, body: dict[str, Any], timeout_s: float | None = None,
                     cancel: threading.Event | None = None) -> Iterator[str]:
        """Non-empty lines of a newline-delimited reply (NDJSON)."""
        with self._stream(path, body, timeout_s, None) as response:
            with self._transport_errors(timeout_s):
                for line in response.iter_lines():
                    _check_cancel(cancel, self.provider)
                    if line.strip():
                        yield line


def _check_cancel(cancel: threading.Event | None, provider: str) -> None:
    if cancel is not None and cancel.is_set():
        raise ProviderError("E4002", f"{provider} call cancelled", provider=provider)


def parse_chunk(data: str, provider: str, what: str = "stream chunk") -> Any:
    """One chunk's JSON; a malformed chunk is an E9999 naming the provider and quoting it."""
    try:
        return json.loads(data)
    except ValueError:
        raise ProviderError("E9999", f"{provider} sent a malformed {what}: {data[:200]!r}", provider=provider) from None



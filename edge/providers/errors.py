"""The AI-Protocol's 13 standard error codes, and how a failure becomes one of them.

Every provider failure is reported as one code with two flags: *retryable* (the same call may
succeed after a backoff) and *fallbackable* (another provider in the chain may succeed). The
table is the spec's; the mapping from HTTP statuses and provider error types is ours, written
down here once so that every provider classifies the same failure the same way.
"""

from __future__ import annotations

import email.utils
import time
from dataclasses import dataclass
from typing import Mapping


@dataclass(frozen=True)
class ErrorClass:
    code: str
    name: str
    category: str
    retryable: bool
    fallbackable: bool


STANDARD_ERRORS: dict[str, ErrorClass] = {e.code: e for e in (
    ErrorClass("E1001", "invalid_request", "client", False, False),
    ErrorClass("E1002", "authentication", "client", False, True),
    ErrorClass("E1003", "permission_denied", "client", False, False),
    ErrorClass("E1004", "not_found", "client", False, False),
    ErrorClass("E1005", "request_too_large", "client", False, False),
    ErrorClass("E2001", "rate_limited", "rate", True, True),
    ErrorClass("E2002", "quota_exhausted", "rate", False, True),
    ErrorClass("E3001", "server_error", "server", True, True),
    ErrorClass("E3002", "overloaded", "server", True, True),
    ErrorClass("E3003", "timeout", "server", True, True),
    ErrorClass("E4001", "conflict", "operational", True, False),
    ErrorClass("E4002", "cancelled", "operational", False, False),
    ErrorClass("E9999", "unknown", "unknown", False, False),
)}

CODE_BY_NAME = {e.name: e.code for e in STANDARD_ERRORS.values()}

_BY_STATUS = {400: "E1001", 401: "E1002", 403: "E1003", 404: "E1004", 408: "E3003", 409: "E4001",
              413: "E1005", 422: "E1001", 429: "E2001", 499: "E4002", 500: "E3001", 502: "E3001",
              503: "E3002", 504: "E3003", 529: "E3002"}

_QUOTA_WORDS = ("quota", "billing", "insufficient_quota", "credit", "exceeded your current")
_TOO_LARGE_WORDS = ("context length", "context_length", "too many tokens", "maximum context", "prompt is too long",
                    "exceed_context", "request too large")


def code_for_status(status: int, message: str = "") -> str:
    """An HTTP status (and, where statuses are ambiguous, the message) -> a standard code."""
    lowered = message.lower()
    if status == 429 and any(w in lowered for w in _QUOTA_WORDS):
        return "E2002"  # a 429 that will not clear by waiting
    if status in (400, 422) and any(w in lowered for w in _TOO_LARGE_WORDS):
        return "E1005"
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    if 500 <= status < 600:
        return "E3001"
    if 400 <= status < 500:
        return "E1001"
    return "E9999"


# What an API's body type says when it says nothing specific: the HTTP status may say more.
_GENERIC_CODES = frozenset({"E1001", "E3001", "E9999"})


def prefer_status(body_code: str, status: int | None, message: str = "") -> str:
    """The code an API's error type gave, unless that type is a generic one and the HTTP status
    is specific: a 401 whose body says ``invalid_request_error`` (or ``api_error``) is still an
    authentication failure, and a 404 a missing model. A specific body code always stands."""
    if status is None or body_code not in _GENERIC_CODES:
        return body_code
    by_status = code_for_status(status, message)
    return body_code if by_status in _GENERIC_CODES else by_status


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds to wait from ``Retry-After`` (delta seconds or an HTTP date) or the
    ``retry-after-ms`` header some APIs send; None when absent or unreadable."""
    lowered = {k.lower(): v for k, v in headers.items()}
    if "retry-after-ms" in lowered:
        try:
            return max(0.0, float(lowered["retry-after-ms"]) / 1000)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when - (time.time() if now is None else now))

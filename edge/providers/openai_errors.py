"""How OpenAI-style error replies become standard error codes (for ``openai_api``).

The HTTP status alone misleads on OpenAI: a 429 is a rate limit or an empty balance, and
``code_for_status``'s word match reads "billing" in a *rate-limit* message (OpenAI's RPD message
links to the billing page) as quota. The ``error.code`` / ``error.type`` names are exact, so they
are read first; the status decides only where they say nothing specific. A 429 without
``Retry-After`` still carries OpenAI's ``x-ratelimit-reset-*`` headers, read as the wait.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx

from edge.providers.base import ProviderError
from edge.providers.errors import code_for_status
from edge.providers.http import HttpApi

# error.code / error.type names that say more than the HTTP status does.
_SPECIFIC_ERRORS = {
    "insufficient_quota": "E2002", "billing_hard_limit_reached": "E2002", "billing_not_active": "E2002",
    "rate_limit_exceeded": "E2001", "requests": "E2001", "tokens": "E2001",
    "context_length_exceeded": "E1005", "string_above_max_length": "E1005",
    "exceed_context_size_error": "E1005",            # llama.cpp's name for the same
    "invalid_api_key": "E1002", "model_not_found": "E1004",
}
# Generic type names, used only where no status tells more (an error inside a 200 stream).
_GENERIC_ERRORS = {
    "invalid_request_error": "E1001", "authentication_error": "E1002", "permission_error": "E1003",
    "not_found_error": "E1004", "rate_limit_error": "E2001", "server_error": "E3001",
    "overloaded_error": "E3002", "service_unavailable": "E3002", "timeout": "E3003",
}
_RESET_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")


def classify_error(error: Any, status: int | None = None) -> str:
    """OpenAI's ``{"error": {"message", "type", "code"}}`` (plus the HTTP status, if any) -> a standard code."""
    error = error if isinstance(error, dict) else {}
    names = [v for v in (error.get("code"), error.get("type")) if isinstance(v, str)]
    for name in names:
        if name in _SPECIFIC_ERRORS:
            return _SPECIFIC_ERRORS[name]
    message = str(error.get("message") or "")
    if status is None and isinstance(error.get("code"), int):
        status = error["code"]                       # llama.cpp puts the HTTP status there
    if status is not None:
        return code_for_status(status, message)
    for name in names:
        if name in _GENERIC_ERRORS:
            return _GENERIC_ERRORS[name]
    return "E9999"


def reset_seconds(value: str) -> float | None:
    """``x-ratelimit-reset-*`` durations (``20ms``, ``1s``, ``6m0s``, ``1h2m3.5s``) in seconds."""
    parts = _RESET_PART.findall(value.strip())
    if not parts or "".join(n + u for n, u in parts) != value.strip():
        return None
    scale = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
    return sum(float(n) * scale[u] for n, u in parts)


class OpenAIHttpApi(HttpApi):
    """HttpApi that reads OpenAI's error codes and rate-limit reset headers on a failed status."""

    def error_for_response(self, response: httpx.Response) -> ProviderError:
        generic = super().error_for_response(response)
        status = response.status_code
        try:
            error = json.loads(response.content).get("error")
        except (ValueError, AttributeError):
            error = None
        code = classify_error(error, status) if isinstance(error, dict) else generic.code
        retry_after = generic.retry_after
        if retry_after is None and status == 429:
            resets = [reset_seconds(v) for k, v in response.headers.items()
                      if k.lower().startswith("x-ratelimit-reset")]
            retry_after = max((r for r in resets if r is not None), default=None)
        return ProviderError(code, generic.message, retry_after=retry_after, status=status, provider=self.provider)

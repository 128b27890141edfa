"""The errors a fetch raises; each message names the model, the file or URL, and the fix."""

from __future__ import annotations


class FetchError(RuntimeError):
    """A fetch failed (unreachable, HTTP error, interrupted for good, no space, bad package...)."""


class ChecksumError(FetchError):
    """The downloaded bytes do not match the manifest (or the first-use digest)."""

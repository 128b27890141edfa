"""``ConfigError``: the one error for a bad setting, wherever it is read.

It lives apart from ``edge.config`` (which wires the node kinds of ``robot.toml``, the body's
included) so that ``body_drivers`` can raise it without importing the loader that imports it:
no import cycle between ``edge`` and ``body_drivers`` (tests/edge/test_import_layers.py).
"""

from __future__ import annotations


class ConfigError(ValueError):
    """A bad setting; the message names the file, the key and what was expected. The CLI exits 2
    on it: restarting will not help."""

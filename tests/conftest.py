"""Shared fixtures (a real mosquitto on a free loopback port for each test that asks), the run's
verdict on skips (tests/skips_allowed.toml) and the property tests' profile."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from edge.runtime.broker import LocalBroker
from edge.models.store import MODELS_DIR_ENV, default_models_dir
from skip_allowlist import (  # noqa: F401 (hooks: a skip not on tests/skips_allowed.toml fails the run)
    pytest_addoption, pytest_collectreport, pytest_configure, pytest_runtest_logreport, pytest_sessionfinish,
    pytest_terminal_summary)

# A deadline or a "too slow" health check is a timing assert, and the suite must pass with both
# cores busy: property tests judge what the code does, never how fast (timings live in bench/).
settings.register_profile("suite", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("suite")

# Tests that give a subprocess or themselves a throwaway HOME (the ALSA sinks) must still find
# the fetched models, the default embedded model among them: pin the folder before any of them runs.
os.environ.setdefault(MODELS_DIR_ENV, str(default_models_dir()))


@pytest.fixture
def broker(tmp_path):
    """A fresh mosquitto owned by the test (persistence in tmp_path, so it can be restarted)."""
    b = LocalBroker(data_dir=tmp_path / "mosquitto").start()
    yield b
    b.stop()

"""Shared fixtures: a real mosquitto on a free loopback port for each test that asks."""

from __future__ import annotations

import os

import pytest

from edge.runtime.broker import LocalBroker
from edge.models.store import MODELS_DIR_ENV, default_models_dir

# Tests that give a subprocess or themselves a throwaway HOME (the ALSA sinks) must still find
# the fetched models, the default embedded model among them: pin the folder before any of them runs.
os.environ.setdefault(MODELS_DIR_ENV, str(default_models_dir()))


@pytest.fixture
def broker(tmp_path):
    """A fresh mosquitto owned by the test (persistence in tmp_path, so it can be restarted)."""
    b = LocalBroker(data_dir=tmp_path / "mosquitto").start()
    yield b
    b.stop()

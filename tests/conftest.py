"""Shared fixtures: a real mosquitto on a free loopback port for each test that asks."""

from __future__ import annotations

import pytest

from edge.broker import LocalBroker


@pytest.fixture
def broker(tmp_path):
    """A fresh mosquitto owned by the test (persistence in tmp_path, so it can be restarted)."""
    b = LocalBroker(data_dir=tmp_path / "mosquitto").start()
    yield b
    b.stop()

"""Whole-stack fixtures: the real CLI in a subprocess, with its speaker routed to a WAV file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from alsa_sink import make_alsa_file_home


@pytest.fixture
def speaker_env(tmp_path) -> tuple[dict[str, str], Path]:
    """Environment for a subprocess whose default ALSA device writes WAV files; and the WAV path."""
    home, wav = make_alsa_file_home(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "ALSA_CONFIG_PATH"}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), PYTHONUNBUFFERED="1")
    return env, wav

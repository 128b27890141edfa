"""robot.toml: good files load, every mistake is named with its file and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from edge.runtime.broker import BrokerAddress
from edge.config import ConfigError, load_toml
from repo_paths import REPO

EXAMPLE = REPO / "deploy" / "robot.example.toml"


def test_example_config_loads():
    settings = load_toml(EXAMPLE)
    assert settings.broker == BrokerAddress("127.0.0.1", 1883)
    assert settings.provider == "embedded" and settings.tts == "piper"
    assert settings.companions[0].name == "pip.json" and settings.companions[0].exists()


@pytest.mark.parametrize("text, words", [
    ("[brain]\nprovidr = 'embedded'\n", "unknown key brain.providr"),
    ("[bodyy]\nsim = true\n", "unknown section [bodyy]"),
    ("[brain]\nqueue_size = 'eight'\n", "brain.queue_size has the wrong type"),
    ("[broker]\naddress = 'localhost:http'\n", "broker.address"),
    ("[body]\ntts = 'festival'\n", "body.tts: must be piper, espeak or none"),
    ("[brain\n", "not valid TOML"),
])
def test_mistakes_are_named(tmp_path, text, words):
    path = tmp_path / "robot.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_toml(path)
    assert words in str(err.value) and str(path) in str(err.value)


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="no such file"):
        load_toml(tmp_path / "nope.toml")

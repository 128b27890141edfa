"""The suite's verdict on skips: a skip that tests/skips_allowed.toml does not name fails the run,
with or without worker processes, whether a test or a whole module skipped."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from repo_paths import REPO
from skip_allowlist import ALLOWLIST, load_allowlist

TESTS = '''
import pytest

pytest.importorskip("no_such_module_for_this_test")
'''
SKIPPING = '''
import pytest

def test_runs():
    assert True

def test_skips():
    pytest.skip("the sound card is asleep")
'''


def run(tmp_path: Path, allowed: str, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "allowed.toml").write_text(allowed)
    (tmp_path / "test_skipping.py").write_text(SKIPPING)
    (tmp_path / "test_module_skip.py").write_text(TESTS)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "tests" / "rigs"), str(REPO)]),
           "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}   # only the plugins named here: a quicker start
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "skip_allowlist", "-p", "no:cacheprovider",
                           "-o", f"skip_allowlist={tmp_path / 'allowed.toml'}", "--rootdir", str(tmp_path), *args,
                           str(tmp_path)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)


@pytest.mark.parametrize("workers", [[], ["-p", "xdist.plugin", "-n", "2"]], ids=["one process", "two workers"])
def test_a_skip_not_on_the_list_fails_the_run_and_is_named(tmp_path, workers):
    listed_one = '[[skip]]\nreason = "sound card"\nwhy = "the machine has none"\n'
    run_ = run(tmp_path, listed_one, *workers)
    assert run_.returncode == 1, run_.stdout
    assert "skips not on the allow-list" in run_.stdout
    assert "test_module_skip.py: could not import 'no_such_module_for_this_test'" in run_.stdout
    assert "test_skipping.py::test_skips" not in run_.stdout.split("skips not on the allow-list")[1]

    listed_both = listed_one + '[[skip]]\ntest = "test_module_skip.py"\nwhy = "a module this test makes up"\n'
    run_ = run(tmp_path, listed_both, *workers)
    assert run_.returncode == 0, run_.stdout
    assert "skips not on the allow-list" not in run_.stdout and "1 passed, 2 skipped" in run_.stdout


def test_an_entry_without_a_why_stops_the_run(tmp_path):
    run_ = run(tmp_path, '[[skip]]\nreason = "sound card"\n')
    assert run_.returncode == 4 and "skip #1: says no 'why'" in run_.stderr


def test_every_entry_of_the_suites_list_says_why():
    assert all(entry.why.strip() and (entry.test or entry.reason.pattern) for entry in load_allowlist(ALLOWLIST))

"""A skip is a failure unless tests/skips_allowed.toml names it and says why.

A missing install step used to turn whole modules into skips and the run stayed green. The run's
verdict (its exit status) now fails on any skip that the allow-list does not name, so `.ci/run` and
the README's test command agree. The hooks are imported into tests/conftest.py; under xdist the
controller sees every worker's reports and alone decides the verdict.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

ALLOWLIST = Path(__file__).resolve().parent.parent / "skips_allowed.toml"


@dataclass(frozen=True)
class Allowed:
    """One entry: a skip whose test id starts with ``test`` and whose reason matches ``reason``."""

    test: str
    reason: re.Pattern[str]
    why: str

    def covers(self, nodeid: str, reason: str) -> bool:
        return nodeid.startswith(self.test) and self.reason.search(reason) is not None


def load_allowlist(path: Path = ALLOWLIST) -> list[Allowed]:
    """The entries of ``path``; a malformed entry stops the run with what is wrong with it."""
    try:
        entries = tomllib.loads(path.read_text(encoding="utf-8")).get("skip", [])
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise pytest.UsageError(f"{path}: {exc}") from exc
    allowed = []
    for number, entry in enumerate(entries, 1):
        where = f"{path.name}: skip #{number}"
        unknown = set(entry) - {"test", "reason", "why"}
        if unknown:
            raise pytest.UsageError(f"{where}: unknown keys {sorted(unknown)} (test, reason, why)")
        if not str(entry.get("why", "")).strip():
            raise pytest.UsageError(f"{where}: says no 'why': each allowed skip needs its reason to exist")
        if not entry.get("test") and not entry.get("reason"):
            raise pytest.UsageError(f"{where}: names neither a 'test' (node id prefix) nor a 'reason' pattern")
        try:
            pattern = re.compile(entry.get("reason", ""))
        except re.error as exc:
            raise pytest.UsageError(f"{where}: reason is not a regular expression: {exc}") from exc
        allowed.append(Allowed(entry.get("test", ""), pattern, entry["why"]))
    return allowed


def skip_reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    """The text given to ``pytest.skip`` (or a skipif's reason), without pytest's prefix."""
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return text.removeprefix("Skipped: ")


class SkipVerdict:
    """Collects the run's skips and fails the run on those the allow-list does not cover."""

    def __init__(self, allowed: list[Allowed]):
        self.allowed = allowed
        self.skips: dict[str, str] = {}     # node id -> reason (both xdist workers report a module skip)

    def note(self, report: pytest.TestReport | pytest.CollectReport) -> None:
        if report.skipped and not hasattr(report, "wasxfail"):
            self.skips[report.nodeid] = skip_reason(report)

    def unlisted(self) -> list[tuple[str, str]]:
        return [(nodeid, reason) for nodeid, reason in sorted(self.skips.items())
                if not any(entry.covers(nodeid, reason) for entry in self.allowed)]


_KEY = pytest.StashKey[SkipVerdict]()
_RUN: list[SkipVerdict] = []    # this process's verdict (the report hooks are given no config)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("skip_allowlist", "the skips a run may have and still pass", default=str(ALLOWLIST))


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):   # an xdist worker's reports reach the controller
        config.stash[_KEY] = SkipVerdict(load_allowlist(Path(config.getini("skip_allowlist"))))
        _RUN[:] = [config.stash[_KEY]]


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    for verdict in _RUN:
        verdict.note(report)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    for verdict in _RUN:
        verdict.note(report)


def pytest_sessionfinish(session: pytest.Session) -> None:
    verdict = session.config.stash.get(_KEY, None)
    if verdict is not None and verdict.unlisted() and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    verdict = config.stash.get(_KEY, None)
    unlisted = verdict.unlisted() if verdict is not None else []
    if not unlisted:
        return
    terminalreporter.section("skips not on the allow-list", sep="=", red=True, bold=True)
    for nodeid, reason in unlisted:
        terminalreporter.line(f"SKIPPED (not allowed) {nodeid}: {reason}")
    terminalreporter.line(f"{len(unlisted)} skip(s) not on tests/{ALLOWLIST.name}: install what is missing "
                          "(bash deploy/setup.sh --test) or add an entry that says why this skip may happen "
                          "on a CI machine; the run fails")

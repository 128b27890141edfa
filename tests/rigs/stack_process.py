"""``companion up`` as a user runs it: the real CLI in a subprocess, its output collected line by line."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from repo_paths import REPO

COMPANION = REPO / ".venv" / "bin" / "companion"


def companion_cmd(*args: str) -> list[str]:
    return [str(COMPANION), *args] if COMPANION.exists() else [sys.executable, "-m", "edge.cli", *args]


class RunningCompanion:
    """``companion up`` in the background; collects its stdout lines and waits for 'ready:'."""

    def __init__(self, args: list[str], env: dict[str, str], cwd: Path):
        self.proc = subprocess.Popen(companion_cmd("up", *args), env=env, cwd=cwd, text=True,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        self._ready = threading.Event()
        threading.Thread(target=self._pump, args=(self.proc.stdout, self.stdout), daemon=True).start()
        threading.Thread(target=self._pump, args=(self.proc.stderr, self.stderr), daemon=True).start()

    def _pump(self, stream, sink: list[str]) -> None:
        for line in stream:
            sink.append(line.rstrip("\n"))
            if line.startswith("ready:"):
                self._ready.set()

    def wait_ready(self, timeout: float = 120) -> None:
        deadline = time.time() + timeout
        while not self._ready.wait(0.2):
            if self.proc.poll() is not None or time.time() > deadline:
                raise AssertionError("companion up never became ready:\n" + "\n".join(self.stderr[-30:]))

    def wait_for_line(self, needle: str, timeout: float = 120) -> str:
        deadline = time.time() + timeout
        while time.time() < deadline:
            for line in list(self.stdout):
                if needle in line:
                    return line
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        raise AssertionError(f"no line with {needle!r}; stdout:\n" + "\n".join(self.stdout[-30:])
                             + "\nstderr:\n" + "\n".join(self.stderr[-30:]))

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(2)  # Ctrl-C
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.send_signal(signal.SIGUSR1)   # its threads' stacks to stderr: what it waits for
                try:
                    self.proc.wait(2)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
        return self.proc.returncode

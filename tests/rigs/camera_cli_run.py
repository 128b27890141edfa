"""Run `companion run camera` as a real process on a folder of sample images, recording what it
publishes on the broker until the node says it is offline."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from edge.runtime.bus import Bus
from edge.protocol.payloads import Perception, Status


@dataclass
class CameraRun:
    done: subprocess.CompletedProcess
    perceptions: list[Perception] = field(default_factory=list)
    statuses: list[Status] = field(default_factory=list)


def still_folder(folder: Path, image: Path, copies: int) -> Path:
    """An image folder showing the same picture ``copies`` times: an unchanging scene."""
    folder.mkdir()
    for n in range(copies):
        shutil.copy(image, folder / f"{n:02d}{image.suffix}")
    return folder


def run_camera_cli(broker, *args: str, timeout: float = 240) -> CameraRun:
    """`companion run camera ARGS --broker ...`; fails the test unless it exits 0."""
    run = CameraRun(done=subprocess.CompletedProcess([], 0))
    bus = Bus("listener", "test", broker.address, announce=False).connect()
    bus.subscribe(Perception, run.perceptions.append)
    bus.subscribe(Status, run.statuses.append)
    try:
        assert bus.wait_subscribed(10)   # SUBACKs in before the node can publish anything
        run.done = subprocess.run([sys.executable, "-m", "edge.cli", "run", "camera", *args,
                                   "--broker", f"{broker.address.host}:{broker.address.port}"],
                                  capture_output=True, text=True, timeout=timeout)
        assert run.done.returncode == 0, run.done.stderr[-2000:]
        # The node's "offline" is the last thing it publishes, and the broker keeps one client's
        # QoS-1 messages in order: once it is here, every perception before it is here too.
        deadline = time.monotonic() + 5
        while not any(s.state == "offline" and s.kind == "camera" for s in run.statuses) \
                and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        bus.close()
    return run

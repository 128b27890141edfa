"""What the perception nodes print for a person at the terminal (one line per event) and that
``-q`` silences it; the nodes' own runs are in test_mic.py (mic) and here for a camera recording."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from edge.perception.camera.lines import CameraLines
from edge.perception.narration import Narrator

DATA = Path("/usr/share/doc/opencv-doc/examples/data")


def test_lines_name_the_node_and_quiet_prints_nothing():
    out = io.StringIO()
    Narrator("mic-usb", stream=out).line("heard 'hello'")
    Narrator("mic-usb", quiet=True, stream=out).line("never")
    assert out.getvalue().endswith(" mic-usb: heard 'hello'\n") and "never" not in out.getvalue()


def test_camera_states_print_once_per_change_with_the_reason():
    out = io.StringIO()
    lines = CameraLines("camera-0", stream=out)
    for state, details in [("opening", {}), ("open", {}), ("open", {"fps": 9.5}), ("reopening",
                           {"reason": "no frame for 5 s", "retry_in_s": 0.5}), ("open", {}), ("ended", {})]:
        lines.status(state, **details)
    said = [line.split(": ", 1)[1] for line in out.getvalue().splitlines()]
    assert said == ["open", "reopening: no frame for 5 s (retry in 0.5 s)", "open"]


@pytest.mark.skipif(not (DATA / "messi5.jpg").is_file(), reason="opencv-doc's sample images not installed")
def test_companion_run_camera_prints_its_start_its_scene_changes_and_its_end(broker, tmp_path):
    folder = tmp_path / "frames"   # an empty room, then a football player: one scene change at least
    folder.mkdir()
    for n in range(10):
        (folder / f"{n:02d}.jpg").write_bytes((DATA / ("messi5.jpg" if n >= 3 else "basketball1.png")).read_bytes())

    def run(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "edge.cli", "run", "camera", "--source", str(folder),
                               "--fps", "20", "--detector", "haar,hog", *extra,
                               "--broker", f"{broker.address.host}:{broker.address.port}"],
                              capture_output=True, text=True, timeout=240)
    done = run()
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [line.split(": ", 1)[1] for line in done.stdout.splitlines()]
    assert any(line.startswith(f"watching {folder} · detector haar,hog · at most 20 fps") for line in lines)
    assert any(line.startswith("scene: ") and "In view" in line for line in lines)
    assert lines[-1].startswith("ended: ") and "frames at" in lines[-1]
    assert run("-q").stdout == ""

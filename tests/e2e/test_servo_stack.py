"""``companion up --config robot.toml`` driving a two-servo pan-tilt head, headless: the same
config as on the robot with its serial port pointed at a Feetech simulator on a pty."""

from __future__ import annotations

import json
import math
import os
import subprocess
from pathlib import Path

from body_drivers.servo.sim.simulator import start_simulator
from stack_process import REPO, RunningCompanion, companion_cmd

EXAMPLE = REPO / "deploy" / "pan-tilt.example.toml"
TICKS_PER_DEG = 4096 / 360
CENTER = 2048


def _config(tmp_path: Path, link: Path, broker) -> Path:
    text = EXAMPLE.read_text().replace('port = "/dev/ttyUSB0"', f'port = "{link}"')
    text = text.replace('provider = "embedded"', f'provider = "scripted:{REPO / "bench" / "nod.jsonl"}?loop=1"')
    text = text.replace('tts = "piper"', 'tts = "none"')
    text = text.replace('companions = ["../companions/pip.json"]', f'companions = ["{REPO / "companions" / "pip.json"}"]')
    text = text.replace('address = "127.0.0.1:1883"', f'address = "{broker.address}"')
    path = tmp_path / "robot.toml"
    path.write_text(text)
    return path


def test_look_moves_the_servos_and_stop_rests_them(broker, tmp_path):
    link = tmp_path / "servos"
    with start_simulator("feetech", str(link), ids=(1, 2)) as sim:
        config = _config(tmp_path, link, broker)
        up = RunningCompanion(["--config", str(config), "--json"], dict(os.environ), tmp_path)
        try:
            up.wait_ready(timeout=60)
            sent = subprocess.run(companion_cmd("perceive", "input", "/look 1 0.5 1", "--broker", str(broker.address)),
                                  capture_output=True, text=True, timeout=60)
            assert sent.returncode == 0, sent.stderr
            line = up.wait_for_line('"event": "reply"', timeout=60)
            pan, tilt = sim.position(1), sim.position(2)
        finally:
            assert up.stop() == 0, "\n".join(up.stderr[-20:])
        reply = json.loads(line)["reply"]
        assert reply["ok"] and reply["text"] == "/look: done", reply
        pan_deg = math.degrees(math.atan2(1, 1))                    # 45 degrees to the right
        tilt_deg = math.degrees(math.atan2(0.5, math.hypot(1, 1)))  # ~19.5 degrees up
        assert abs((pan - CENTER) / TICKS_PER_DEG - pan_deg) < 2.5
        assert abs((CENTER - tilt) / TICKS_PER_DEG - tilt_deg) < 2.5  # the tilt servo is mounted reversed (-1)
        # Ctrl-C: the body rests in its safe pose (tilt -20 degrees: head down) before torque goes off
        assert abs((CENTER - sim.position(2)) / TICKS_PER_DEG - (-20)) < 2.5

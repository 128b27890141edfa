"""The servo-sim command as a user runs it: a separate process, a link, a signal to stop."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from body_drivers.servo.bus import ServoError
from body_drivers.servo.buses import open_bus
from repo_paths import REPO

ROOT = str(REPO)


def _start(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "body_drivers.servo.sim", *args], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_servo_sim_serves_until_signalled_and_removes_its_link(tmp_path, sig):
    link = str(tmp_path / "ttySERVO")
    proc = _start("--protocol", "feetech", "--link", link, "--ids", "1,2",
                  "--fault", "echo", "--error", "2:overload")
    try:
        ready = proc.stdout.readline()
        assert "servo-sim feetech on" in ready and "ids 1,2" in ready
        assert os.path.islink(link)
        bus = open_bus("feetech", link)
        assert bus.ping(1) == 777
        assert bus.status(2) == {"overload"}
        bus.close()
        assert bus.echo is True                   # the --fault echo adapter was seen
    finally:
        proc.send_signal(sig)
        assert proc.wait(10) == 0
    assert not os.path.lexists(link)


def test_servo_sim_refuses_bad_arguments_in_one_line(tmp_path):
    proc = _start("--protocol", "maestro", "--link", str(tmp_path / "m"), "--fault", "gremlins")
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 2
    assert err.strip() == "servo-sim: bad --fault 'gremlins': unknown fault 'gremlins' " \
                          "(expected no_reply, checksum, garbage, truncate, echo)"
    regular = tmp_path / "file"
    regular.write_text("not a link")
    proc = _start("--protocol", "dynamixel", "--link", str(regular))
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 2 and "refusing to replace" in err
    assert regular.read_text() == "not a link"


def test_driver_on_a_link_nobody_serves(tmp_path):
    bus = open_bus("maestro", str(tmp_path / "nothing"))
    with pytest.raises(ServoError) as err:
        bus.read_position(0)
    assert err.value.code == "port" and "cannot open" in str(err.value)

"""The serial link when the driver's thread is starved: a busy robot (camera, model and voice on the
same CPU) can wake the driver after its reply deadline, with the servo's reply already waiting."""

from __future__ import annotations

import os
import time

from body_drivers.servo.link import SerialLink
from servo_harness import wait_for


def test_a_reply_waiting_when_the_driver_wakes_past_its_deadline_is_read_once():
    servo_side, driver_side = os.openpty()
    link = SerialLink(os.ttyname(driver_side), 1_000_000, timeout_s=0.05)
    try:
        link.ensure_open()
        os.write(servo_side, b"\xff\xff\x01\x02\x00\xfc")        # the reply came in time
        assert wait_for(lambda: link.available() == 6)
        woke_late = time.monotonic() - 1.0                       # ... the driver did not
        assert link.read_exact(6, woke_late) == b"\xff\xff\x01\x02\x00\xfc"
        os.write(servo_side, b"\x00" * 4)                        # a line that keeps babbling
        assert wait_for(lambda: link.available() == 4)
        assert link.read_some(woke_late) == b""                  # one late look per deadline: the wait ends
        assert link.read_some(time.monotonic() - 1.0) == b"\x00" * 4
    finally:
        link.close()
        os.close(servo_side)
        os.close(driver_side)

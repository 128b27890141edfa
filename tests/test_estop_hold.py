"""Estop stops a servo where it is, even in a motion nothing else may interrupt.

The servos here are the byte-level simulator on a real pty, slowed so that they lag behind
their goal the way a loaded servo does. A safe pose (homing speed, not cancellable by
``stop``) is under way when the estop engages: the servo's goal register must become where
the servo is at that moment, or it would go on travelling to the old goal while "held". A
move that arrives during the estop is refused and changes nothing; releasing the estop
carries out the safe pose it deferred.
"""

from __future__ import annotations

import threading

import pytest

from body_drivers.body_config import parse_body_config
from body_drivers.kinematics import scale_for, to_degrees
from body_drivers.node import ActionFailure
from body_drivers.servo.sim import start_simulator
from body_drivers.servo_body import build_servo_body
from edge.protocol.payloads import Action
from servo_harness import wait_for
from test_servo_body import body_table

SLOW_TICKS_S = 57      # ~5°/s on the simulated STS3215 (4096 ticks a turn): the goal runs ahead


def degrees(sim, config, name: str, register: str) -> float:
    """A joint's present position or goal, in degrees, as the servo itself holds it."""
    joint = config.joint(name)
    with sim.server.lock:
        servo = sim.servos[joint.id]
        servo.update()
        ticks = servo.goal() if register == "goal" else round(servo.position)
    return to_degrees(joint, scale_for(joint), ticks)


@pytest.fixture
def slow_body(tmp_path):
    link = str(tmp_path / "servos")
    sim = start_simulator("feetech", link, [1, 2], speed=SLOW_TICKS_S)
    config = parse_body_config(body_table(link, settle_s=10.0))   # a slow servo is not a blocked one
    body = build_servo_body(config).start()
    assert body.state == "active", list(body.faults)
    yield sim, config, body
    body.close()
    sim.stop()


def test_estop_during_a_safe_pose_holds_the_servo_where_it_is(slow_body):
    sim, config, body = slow_body
    outcome: list[bool] = []
    resting = threading.Thread(target=lambda: outcome.append(body.go_safe("brain went offline")))
    resting.start()
    # tilt heads for its safe -20°; its goal is there long before the servo is
    assert wait_for(lambda: degrees(sim, config, "tilt", "goal") <= -19.5, timeout=5)
    assert wait_for(lambda: degrees(sim, config, "tilt", "present") <= -2, timeout=10)

    body.set_estop(True)
    resting.join(10)
    held = degrees(sim, config, "tilt", "present")
    assert outcome == [False] and body.state == "estop"               # the safe pose waits for release
    assert -19 < held < -1.5
    assert degrees(sim, config, "tilt", "goal") == pytest.approx(held, abs=1.0)   # told to stay, not to go on

    with pytest.raises(ActionFailure) as refused:                     # a move arrives during the estop
        body.execute(Action(name="look", params={"x": 1, "y": 1, "z": 1}, sender="t"), threading.Event())
    assert refused.value.code == "estop_engaged"
    assert degrees(sim, config, "tilt", "goal") == pytest.approx(held, abs=1.0)
    assert degrees(sim, config, "pan", "goal") == pytest.approx(0, abs=1.0)
    assert degrees(sim, config, "tilt", "present") == pytest.approx(held, abs=1.0)
    with sim.server.lock:
        assert [sim.servos[i].get("torque_enable") for i in (1, 2)] == [1, 1]   # holding, not limp

    body.set_estop(False)                                             # released: the deferred safe pose
    assert body.state == "resting"
    assert degrees(sim, config, "tilt", "present") == pytest.approx(-20, abs=config.control.tolerance_deg)

"""The servo executor against the byte-level simulators over a real pty.

What a user would see: a look action moves the simulated servos to the angles the
kinematics promise; estop stops and holds mid-motion; a brain that vanishes (its last
will) puts the head in its safe pose with torque off and its leftover actions refused;
the watchdog does the same after silence; a servo fault fails the action naming the
joint and shows up on the body's status; a missing port is survived.

The rig's nodes meet on the in-process transport (the same decode-and-validate path as the
broker's); the vanished brain keeps a real broker, whose last will after a dropped socket is
part of what it checks.
"""

from __future__ import annotations

import queue
import threading
import time

import pytest

from body_drivers.body_config import parse_body_config
from body_drivers.kinematics import scale_for, to_degrees
from body_drivers.node import ActionFailure
from body_drivers.servo.sim.simulator import start_simulator
from body_drivers.servo_body import build_servo_body
from edge.runtime.bus import Bus
from edge.app import Stack
from edge.config import DEFAULT_COMPANION, Settings
from edge.protocol.companion import load_companion
from edge.protocol.payloads import Action, ActionResult, Estop, Status
from edge.runtime.local import LocalHub
from servo_harness import wait_for


def body_table(port: str, protocol: str = "feetech", pan_speed: float = 120, **servo) -> dict:
    joint = {"protocol": protocol, "port": port}
    return {
        "servo": {"home_speed_dps": 200, "settle_s": 0.5, **servo},
        "joints": [
            {**joint, "name": "pan", "id": 1, "min_deg": -80, "max_deg": 80, "max_speed_dps": pan_speed},
            {**joint, "name": "tilt", "id": 2, "min_deg": -30, "max_deg": 45, "direction": -1,
             "safe_deg": -20, "max_speed_dps": 120},
        ],
        "kinematics": {"look": {"kind": "pan_tilt", "pan": "pan", "tilt": "tilt"},
                       "nod": {"kind": "gesture", "frames": [{"tilt": -15}, {"tilt": 10}], "repeat": "times"}},
    }


def sim_degrees(sim, config, name: str) -> float:
    joint = config.joint(name)
    return to_degrees(joint, scale_for(joint), round(sim.position(joint.id)))


def sim_goal_degrees(sim, config, name: str) -> float:
    """Where the simulated servo is headed (its goal register): it moves only while this differs
    from its position."""
    joint = config.joint(name)
    with sim.server.lock:
        goal = sim.servos[joint.id].goal()
    return to_degrees(joint, scale_for(joint), goal)


def near(sim, config, name: str, degrees: float, tol: float):
    return lambda: abs(sim_degrees(sim, config, name) - degrees) <= tol


@pytest.mark.parametrize("protocol", ["feetech", "dynamixel", "maestro"])
def test_look_moves_the_simulated_servos_to_the_promised_angles(tmp_path, protocol):
    link = str(tmp_path / "servos")
    with start_simulator(protocol, link, [1, 2]) as sim:
        config = parse_body_config(body_table(link, protocol))
        body = build_servo_body(config).start()
        try:
            assert body.state == "active", list(body.faults)
            body.execute(Action(name="look", params={"x": -0.5, "y": 0.25, "z": 1}, sender="t"), threading.Event())
            tol = config.control.tolerance_deg
            # the servo finishes the last tolerance-degree on its own
            wait_for(lambda: near(sim, config, "pan", -26.57, tol)() and near(sim, config, "tilt", 12.6, tol)())
            assert sim_degrees(sim, config, "pan") == pytest.approx(-26.57, abs=tol)
            assert sim_degrees(sim, config, "tilt") == pytest.approx(12.6, abs=tol)
            body.execute(Action(name="look", params={"x": 0, "y": -1, "z": 1}, sender="t"), threading.Event())
            wait_for(near(sim, config, "tilt", -30, tol))
            assert sim_degrees(sim, config, "tilt") == pytest.approx(-30, abs=tol)   # -45° asked, min_deg -30
        finally:
            body.close()


@pytest.fixture
def pip():
    return load_companion(DEFAULT_COMPANION)


class Rig:
    """Simulator + the body's stack (ServoBody, BodyNode, SafetyMonitor), and a brain's bus: on a
    LocalHub, or on the test broker when one is given."""

    def __init__(self, broker, tmp_path, pip, **servo):
        hub = LocalHub() if broker is None else None

        def connect(node_id: str, kind: str, announce: bool = True, keepalive: int = 10):
            if hub is not None:
                return hub.transport(node_id, kind, announce=announce).connect()
            return Bus(node_id, kind, broker.address, announce=announce, keepalive=keepalive).connect()

        self.link = str(tmp_path / "servos")
        self.sim = start_simulator("feetech", self.link, [1, 2])
        self.config = parse_body_config(body_table(self.link, pan_speed=servo.pop("pan_speed", 120), **servo))
        # the body as `companion run body` starts it: servo body, node and safety monitor, one stack
        settings = Settings(sim=False, tts="none", body_config=self.config, body_id="body-rig")
        if broker is not None:
            settings.broker = broker.address
        self.stack = Stack(settings, speaker=None, kinds=("body",), start_broker=False, companions=[pip],
                           transport=hub.transport if hub is not None else None).start()
        self.body, self.node, self.monitor = self.stack.executor, self.stack.body, self.stack.safety
        self.body_bus = self.stack.buses[0]
        self.watch = connect("watcher", "test", announce=False)
        self.results: queue.Queue = queue.Queue()
        self.statuses: queue.Queue = queue.Queue()
        self.watch.subscribe(ActionResult, self.results.put)
        self.watch.subscribe(Status, lambda s: self.statuses.put(s) if s.node == "body-rig" else None)
        for bus in (self.body_bus, self.watch):
            assert bus.wait_subscribed(10)   # every SUBACK in: nothing sent from here on is missed
        self.brain = connect(f"brain-{pip.id}", "brain", keepalive=1)
        self.brain.set_status("online", companion=pip.id)
        self.pip = pip
        assert wait_for(lambda: self.brain.node_id in self.monitor.online, timeout=10), \
            "the safety monitor never saw the brain online"   # the monitor watches this brain now

    def act(self, name: str, params: dict, wait: bool = True, timeout: float = 8.0):
        action = Action(name=name, params=params, sender=self.pip.id)
        self.watch.publish(action)
        return self.result(action.id, timeout) if wait else action

    def result(self, action_id: str, timeout: float = 8.0) -> ActionResult:
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                r = self.results.get(timeout=0.1)
            except queue.Empty:
                continue
            if r.id == action_id:
                return r
        raise AssertionError(f"no result for {action_id}")

    def status_where(self, predicate, timeout: float = 8.0) -> Status:
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                s = self.statuses.get(timeout=0.1)
            except queue.Empty:
                continue
            if predicate(s):
                return s
        raise AssertionError("no matching status/body")

    def torque(self, servo_id: int) -> int:
        with self.sim.server.lock:
            return self.sim.servos[servo_id].get("torque_enable")

    def close(self) -> None:
        self.stack.stop()   # the monitor, the node, the servo body (safe pose, torque off), its connection
        for bus in (self.brain, self.watch):
            bus.close()
        self.sim.stop()


@pytest.fixture
def rig(tmp_path, pip):
    made: list[Rig] = []

    def make(broker=None, **servo) -> Rig:
        made.append(Rig(broker, tmp_path, pip, **servo))
        return made[-1]
    yield make
    for r in made:
        r.close()


def test_estop_stops_mid_motion_holds_and_refuses(rig):
    r = rig(pan_speed=30)   # 45° takes 1.5 s: time to press the button half-way
    action = r.act("look", {"x": 1, "y": 0, "z": 1}, wait=False)
    wait_for(lambda: sim_degrees(r.sim, r.config, "pan") >= 10, timeout=10, step=0.01)   # under way
    r.watch.publish(Estop(sender="operator", engaged=True))
    result = r.result(action.id)
    assert not result.ok and result.error.code == "cancelled"
    r.status_where(lambda s: s.extra.get("safety") == "estop")
    held = sim_degrees(r.sim, r.config, "pan")
    assert 5 < held < 40
    # holding, not drifting on: the servo's own goal is where it stopped, so it cannot move on
    assert sim_goal_degrees(r.sim, r.config, "pan") == pytest.approx(held, abs=0.5)
    assert r.torque(1) == 1 and r.torque(2) == 1                                  # and not limp
    refused = r.act("look", {"x": -1, "y": 0, "z": 1})
    assert refused.error.code == "estop_engaged"
    # and still there once the body has answered another action (in order, after the estop)
    assert sim_degrees(r.sim, r.config, "pan") == pytest.approx(held, abs=0.5)
    r.watch.publish(Estop(sender="operator", engaged=False))
    r.status_where(lambda s: s.extra.get("safety") == "active")
    done = r.act("look", {"x": 0, "y": 0, "z": 1})
    assert done.ok, done.error


def test_a_vanished_brain_puts_the_head_to_rest_and_its_leftovers_are_refused(broker, rig):   # the broker outlives the rig
    r = rig(broker=broker)
    assert r.act("look", {"x": 1, "y": 0.5, "z": 1}).ok
    r.brain.client._sock.close()   # the brain dies without DISCONNECT: the broker sends its will
    r.brain.client.loop_stop()
    status = r.status_where(lambda s: s.extra.get("safety") == "resting", timeout=10)
    assert status.state == "online"
    assert r.torque(1) == 0 and r.torque(2) == 0
    assert sim_degrees(r.sim, r.config, "tilt") == pytest.approx(-20, abs=2.5)   # safe_deg
    assert sim_degrees(r.sim, r.config, "pan") == pytest.approx(0, abs=2.5)      # neutral
    leftover = r.act("look", {"x": -1, "y": 0, "z": 1})
    assert leftover.error.code == "brain_offline" and r.pip.id in leftover.error.message
    assert r.torque(1) == 0
    back = Bus(f"brain-{r.pip.id}", "brain", r.brain.broker).connect()   # it restarts
    back.set_status("online", companion=r.pip.id)
    try:
        wait_for(lambda: r.pip.id not in r.body.blocked, timeout=5)
        woke = r.act("look", {"x": 0, "y": 0, "z": 1})
        assert woke.ok, woke.error
        assert r.torque(1) == 1
    finally:
        back.close()


def test_the_watchdog_rests_the_body_after_silence(rig):
    r = rig(watchdog_s=0.5)
    assert r.act("look", {"x": 0.3, "y": 0, "z": 1}).ok
    r.status_where(lambda s: s.extra.get("safety") == "resting", timeout=5)
    assert r.torque(1) == 0 and r.torque(2) == 0


def test_a_servo_fault_fails_the_action_naming_the_joint_and_reaches_status(rig):
    r = rig()
    r.sim.set_errors(2, ["overload"])
    result = r.act("nod", {"times": 1})
    assert not result.ok and result.error.code == "servo_fault"
    assert "'tilt'" in result.error.message and "overload" in result.error.message
    status = r.status_where(lambda s: s.extra.get("faults"))
    fault = status.extra["faults"][-1]
    assert fault["joint"] == "tilt" and fault["fault"] == "overload" and fault["during"] == "nod"
    r.sim.set_errors(2, [])
    assert r.act("look", {"x": 0.2, "y": 0, "z": 1}).ok     # the node kept running


def test_a_port_that_is_not_there_yet_fails_actions_then_works_once_it_appears(tmp_path):
    link = str(tmp_path / "later")
    config = parse_body_config(body_table(link))
    body = build_servo_body(config).start()
    try:
        assert body.state == "unhomed" and body.faults[-1]["fault"] == "port"
        with pytest.raises(ActionFailure) as err:
            body.execute(Action(name="look", params={"x": 1, "y": 0, "z": 1}, sender="t"), threading.Event())
        assert err.value.code == "servo_fault" and link in err.value.message
        with start_simulator("feetech", link, [1, 2]) as sim:
            deadline = time.monotonic() + 5
            while True:   # the driver reopens the port with backoff: the next tries succeed
                try:
                    body.execute(Action(name="look", params={"x": 1, "y": 0, "z": 1}, sender="t"), threading.Event())
                    break
                except ActionFailure as exc:
                    assert exc.code == "servo_fault" and time.monotonic() < deadline, exc.message
                    time.sleep(0.1)
            assert sim_degrees(sim, config, "pan") == pytest.approx(45, abs=config.control.tolerance_deg)
            body.close()
    finally:
        body.io.close()


def test_survey_reports_every_joint_without_moving_it(tmp_path):
    from body_drivers.joint_io import survey
    link = str(tmp_path / "servos")
    with start_simulator("feetech", link, [1]) as sim:     # tilt (id 2) is not on the bus
        config = parse_body_config(body_table(link))
        before = sim.position(1)
        rows = {r["joint"]: r for r in survey(config)}
        assert rows["pan"]["ok"] and rows["pan"]["degrees"] == pytest.approx(0, abs=0.1)
        assert rows["pan"]["within_limits"] and rows["pan"]["faults"] == []
        assert not rows["tilt"]["ok"] and "servo 2" in rows["tilt"]["error"] and "ping" in rows["tilt"]["error"]
        assert sim.position(1) == before

"""Estop stops a servo where it is, even in a motion nothing else may interrupt.

The servos here are the byte-level simulator on a real pty, slowed so that they lag behind
their goal the way a loaded servo does. A safe pose (homing speed, not cancellable by
``stop``) is under way when the estop engages: the servo's goal register must become where
the servo is at that moment, or it would go on travelling to the old goal while "held". A
move that arrives during the estop is refused and changes nothing. Releasing the estop
moves nothing by itself: the cut-short safe pose is not resumed, the body holds where it
stopped (torque on, as during the estop) until an action moves it.
"""

from __future__ import annotations

import collections
import queue
import threading
from typing import Callable, NamedTuple

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
from servo_harness import wait_for
from tests.body_drivers.test_servo_body import body_table

SLOW_TICKS_S = 57      # ~5°/s on the simulated STS3215 (4096 ticks a turn): the goal runs ahead


def degrees(sim, config, name: str, register: str) -> float:
    """A joint's present position or goal, in degrees, as the servo itself holds it."""
    joint = config.joint(name)
    with sim.server.lock:
        servo = sim.servos[joint.id]
        servo.update()
        ticks = servo.goal() if register == "goal" else round(servo.position)
    return to_degrees(joint, scale_for(joint), ticks)


class GoalWrite(NamedTuple):
    joint: str
    goal: float        # degrees, as the servo stored it
    present: float     # where the servo was when the goal arrived
    estop: bool        # whether the body's estop was engaged when the body sent it


class GoalLog:
    """Every goal the simulated servos take, in order; tests wait on it instead of sleeping.

    Whether the estop was engaged is taken when the body sends a goal, not when the simulator
    handles it: on a starved machine the simulator may read a tick sent before the estop after
    it, and that tick was no motion during the estop.
    """

    def __init__(self, sim, config, body) -> None:
        self.rows: list[GoalWrite] = []
        self._cond = threading.Condition()
        self._sent: dict[str, collections.deque[bool]] = collections.defaultdict(collections.deque)
        joints = {j.id: j for j in config.joints}
        handler, original = sim.handler, sim.handler._write
        send = body.io.write

        def sending(pose):
            with self._cond:       # the body's gate holds its lock here: send order is wire order
                for name in pose:
                    self._sent[name].append(body.gate.estop)
            return send(pose)

        def write(servo, address: int, data: bytes):
            extra = original(servo, address, data)
            if servo.covers("goal_position", address, len(data)):
                joint = joints[servo.servo_id]
                scale = scale_for(joint)
                with self._cond:
                    sent = self._sent[joint.name]
                    estop = sent.popleft() if sent else body.gate.estop
                    self.rows.append(GoalWrite(joint.name, to_degrees(joint, scale, servo.goal()),
                                               to_degrees(joint, scale, round(servo.position)), estop))
                    self._cond.notify_all()
            return extra
        handler._write = write
        body.io.write = sending

    def wait(self, predicate: Callable[[list[GoalWrite]], bool], timeout: float = 10) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: predicate(self.rows), timeout)

    def since(self, n: int, joint: str) -> list[GoalWrite]:
        with self._cond:
            return [r for r in self.rows[n:] if r.joint == joint]

    def __len__(self) -> int:
        with self._cond:
            return len(self.rows)


@pytest.fixture
def slow_servos(tmp_path):
    link = str(tmp_path / "servos")
    sim = start_simulator("feetech", link, [1, 2], speed=SLOW_TICKS_S)
    # a slow servo is not a blocked one; and a busy test machine may answer a read late (the
    # real 50 ms reply timeout would turn that into a servo fault, not what this test is about)
    config = parse_body_config(body_table(link, settle_s=10.0, timeout_s=0.3, retries=3))
    yield sim, config
    sim.stop()


@pytest.fixture
def slow_body(slow_servos):
    """The servo body alone, without a node: what the estop does to it directly."""
    sim, config = slow_servos
    body = build_servo_body(config).start()
    assert body.state == "active", list(body.faults)
    yield sim, config, body
    body.close()


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
    assert outcome == [False] and body.state == "estop"               # the safe pose stopped there
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

    body.set_estop(False)                                             # released: stays where it stopped
    assert body.state == "active"
    assert degrees(sim, config, "tilt", "goal") == pytest.approx(held, abs=1.0)
    with sim.server.lock:
        assert [sim.servos[i].get("torque_enable") for i in (1, 2)] == [1, 1]


def test_estop_from_the_bus_cuts_the_safe_pose_of_a_vanished_brain(broker, slow_servos):
    """The safe pose runs on the monitor's worker; the estop must not wait behind it. The body is
    ``companion run body`` on the slow servos: the servo body, its node and its safety monitor."""
    sim, config = slow_servos
    pip = load_companion(DEFAULT_COMPANION)
    stack = Stack(Settings(broker=broker.address, sim=False, tts="none", body_config=config, body_id="body-estop"),
                  speaker=None, kinds=("body",), start_broker=False, companions=[pip]).start()
    body, monitor, body_bus = stack.executor, stack.safety, stack.buses[0]
    assert body.state == "active", list(body.faults)
    watch = Bus("watcher", "test", broker.address, announce=False).connect()
    results: queue.Queue[ActionResult] = queue.Queue()
    safety: queue.Queue[str] = queue.Queue()
    watch.subscribe(ActionResult, results.put)
    watch.subscribe(Status, lambda s: safety.put(s.extra.get("safety")) if s.node == "body-estop" else None)
    brain = Bus(f"brain-{pip.id}", "brain", broker.address, keepalive=1).connect()
    back: Bus | None = None
    try:
        assert body_bus.wait_subscribed(5) and watch.wait_subscribed(5)
        brain.set_status("online", companion=pip.id)
        assert wait_for(lambda: brain.node_id in monitor.online, timeout=5)
        goals = GoalLog(sim, config, body)

        brain.client._sock.close()   # the brain dies without DISCONNECT: the broker sends its will
        brain.client.loop_stop()
        assert goals.wait(lambda rows: any(r.joint == "tilt" and r.goal <= -19.5 and r.present <= -2 for r in rows))
        watch.publish(Estop(sender="operator", engaged=True))
        until(safety, "estop")        # published by the monitor's worker, once its safe pose gave up

        engaged = goals.since(0, "tilt")
        during = [r for r in engaged if r.estop]
        assert during, f"no hold was written; tilt's last goal {engaged[-1].goal:.1f}° at {engaged[-1].present:.1f}°"
        hold = during[-1]
        assert -19 < hold.present < -1.5                    # stopped half-way, not at the safe -20°
        assert hold.goal == pytest.approx(hold.present, abs=1.0)   # the goal became where it stood
        assert len(during) <= 2                             # at most one tick in flight, then the hold
        n = len(goals)

        refused = Action(name="look", params={"x": 1, "y": 1, "z": 1}, sender=pip.id)
        watch.publish(refused)
        assert result_for(results, refused.id).error.code == "estop_engaged"
        assert len(goals) == n                              # no goal written while the estop holds
        assert degrees(sim, config, "tilt", "present") == pytest.approx(hold.present, abs=1.0)
        with sim.server.lock:
            assert [sim.servos[i].get("torque_enable") for i in (1, 2)] == [1, 1]   # holding, not limp

        watch.publish(Estop(sender="operator", engaged=False))
        until(safety, "active")       # after the release was handled: not resting, not moving
        back = Bus(f"brain-{pip.id}", "brain", broker.address).connect()   # the monitor keeps working
        back.set_status("online", companion=pip.id)
        assert wait_for(lambda: pip.id not in body.blocked, timeout=5)
        after = goals.since(n, "tilt")                      # only the release's own hold, if any
        assert all(r.goal == pytest.approx(hold.present, abs=1.0) for r in after), after
        assert degrees(sim, config, "tilt", "present") == pytest.approx(hold.present, abs=1.0)
        with sim.server.lock:
            assert [sim.servos[i].get("torque_enable") for i in (1, 2)] == [1, 1]   # torque as before

        moved = Action(name="look", params={"x": 0, "y": 0, "z": 1}, sender=pip.id)
        watch.publish(moved)                                # motion again only when asked
        done = result_for(results, moved.id)
        assert done.ok, done.error
    finally:
        for bus in (back, brain):
            if bus is not None:
                bus.close()
        watch.close()
        stack.stop()


def until(statuses: queue.Queue[str], state: str, timeout: float = 10) -> None:
    """Wait for the body's status to say ``state``; the states on the way are skipped."""
    seen: list[str] = []
    while True:
        try:
            seen.append(statuses.get(timeout=timeout))
        except queue.Empty:
            raise AssertionError(f"the body never said {state!r}; it said {seen}") from None
        if seen[-1] == state:
            return


def result_for(results: queue.Queue[ActionResult], action_id: str, timeout: float = 15) -> ActionResult:
    while True:
        try:
            result = results.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no result for action {action_id}") from None
        if result.id == action_id:
            return result

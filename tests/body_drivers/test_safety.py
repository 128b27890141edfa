"""The safety layer's promises, checked for any input hypothesis can think of.

For ANY sequence of goals or actions (NaN, infinities, huge numbers, wrong types, estop
pressed and released in between, safe-pose requests) no goal sent to a servo lies outside
its joint's limits and no step is larger than ``min(max_step, max_speed × elapsed)``.
The servos here are an in-memory bus that records every write with the time it was sent
(a fake clock, so thousands of control ticks take no wall time); the same executor against
the byte-level simulators over a pty is in test_servo_body.py.
"""

from __future__ import annotations

import math
import threading

import pytest
from hypothesis import HealthCheck, event, given, settings, strategies as st

from body_drivers.body_types import (BodyConfig, ControlConfig, Gesture, JointConfig, LinearMap, PanTilt)
from body_drivers.joint_io import JointIO
from body_drivers.kinematics import scale_for, tick_limits, to_degrees
from body_drivers.node import ActionFailure
from body_drivers.safety import SafetyError, SlewLimiter
from body_drivers.servo.bus import ServoError
from body_drivers.servo_body import ServoBody
from edge.protocol.payloads import Action


class FakeClock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.t += max(seconds, 1e-4)


class RecordingBus:
    """A ServoBus whose servos reach each goal at once; every write is kept with its time."""

    def __init__(self, clock: FakeClock, positions: dict[int, int], protocol: str = "feetech", port: str = "p"):
        self.clock, self.protocol, self.port = clock, protocol, port
        self.positions = dict(positions)
        self.torque = {i: False for i in positions}
        self.writes: list[tuple[float, dict[int, int]]] = []
        self.before: list[dict[int, int]] = []   # where the servos were when each write went out
        self.faults: dict[int, set[str]] = {}
        self.stuck: set[int] = set()    # servos that no longer follow their goal (blocked)

    def ping(self, servo_id: int):
        return 777 if servo_id in self.positions else False

    def read_position(self, servo_id: int) -> int:
        return self.read_positions([servo_id])[servo_id]

    def read_positions(self, ids: list[int]) -> dict[int, int]:
        self.clock.t += 0.001
        return {i: self.positions[i] for i in ids}

    def write_goal(self, servo_id: int, ticks: int, speed=None) -> None:
        self.sync_write_goals({servo_id: ticks})

    def sync_write_goals(self, goals: dict[int, int], speed=None) -> None:
        self.before.append(dict(self.positions))
        for i, t in goals.items():
            assert isinstance(t, int), f"tick {t!r} is not an int"
            if i in self.faults and "overload" in self.faults[i]:
                raise ServoError("overload", "overload error bit set", i, port=self.port)
            if i not in self.stuck:
                self.positions[i] = t
        self.writes.append((self.clock(), dict(goals)))

    def set_torque(self, ids: list[int], enabled: bool) -> None:
        for i in ids:
            self.torque[i] = enabled

    def status(self, servo_id: int) -> set[str]:
        return set(self.faults.get(servo_id, set()))

    def close(self) -> None:
        pass


PAN = JointConfig(name="pan", protocol="feetech", port="p", id=1, min_deg=-80, max_deg=80,
                  max_speed_dps=120, max_step_deg=8)
TILT = JointConfig(name="tilt", protocol="feetech", port="p", id=2, min_deg=-30, max_deg=45, direction=-1,
                   offset_deg=5, safe_deg=-20, max_speed_dps=90, max_step_deg=6)
KINEMATICS = {"look": PanTilt("pan", "tilt"),
              "move": LinearMap({"pan": {"x": 120}, "tilt": {"y": 40, "offset": -10}}),
              "nod": Gesture(({"tilt": -20}, {"tilt": 10}), repeat="times", max_repeat=3)}


def make_body(start: dict[str, float] | None = None, watchdog_s: float = 0.0):
    config = BodyConfig((PAN, TILT), KINEMATICS, ControlConfig(watchdog_s=watchdog_s, home_speed_dps=30), "test.toml")
    clock = FakeClock()
    scales = {j.name: scale_for(j) for j in config.joints}
    start = start or {"pan": 0.0, "tilt": 0.0}
    ticks = {j.id: round(scales[j.name].ticks_exact(j, start[j.name])) for j in config.joints}
    bus = RecordingBus(clock, ticks)
    io = JointIO(config, opener=lambda *a, **k: bus)
    body = ServoBody(config, io, clock=clock, sleep=clock.sleep)
    return body, bus, clock


def check_writes(bus: RecordingBus, joints=(PAN, TILT)) -> None:
    """Every write inside the limits; every step within the slew allowance (+ one tick of rounding).

    A step is measured from the previous goal, or from where the servo already was (after
    torque-off a joint may sag: taking its new position as the goal moves nothing).
    """
    last: dict[int, tuple[float, int]] = {}
    for joint in joints:
        scale = scale_for(joint)
        lo, hi = tick_limits(joint, scale)
        one_tick = 1 / scale.ticks_per_degree
        for (t, goals), before in zip(bus.writes, bus.before):
            if joint.id not in goals:
                continue
            ticks = goals[joint.id]
            assert lo <= ticks <= hi, f"{joint.name}: tick {ticks} outside {lo}..{hi}"
            deg = to_degrees(joint, scale, ticks)
            assert joint.min_deg - 1e-9 <= deg <= joint.max_deg + 1e-9
            if joint.id in last:
                t0, ticks0 = last[joint.id]
                step = min(abs(deg - to_degrees(joint, scale, ticks0)),
                           abs(deg - to_degrees(joint, scale, before[joint.id])))
                allowed = min(joint.max_step_deg, joint.max_speed_dps * min(t - t0, 0.1))
                assert step <= allowed + one_tick + 1e-9, \
                    f"{joint.name}: {step:.3f}° in {t - t0:.4f} s (allowed {allowed:.3f}°)"
            last[joint.id] = (t, ticks)


# -- the limiter alone ---------------------------------------------------------------------

anything = st.one_of(
    st.floats(), st.integers(), st.integers(min_value=10 ** 300, max_value=10 ** 400),
    st.none(), st.booleans(), st.text(max_size=5), st.lists(st.floats(), max_size=2),
    st.just(float("nan")), st.just(float("inf")), st.just(-float("inf")), st.just(1e308),
)
joint_st = st.builds(
    lambda lo, span, speed, step: JointConfig(name="j", protocol="feetech", port="p", id=1, min_deg=lo,
                                              max_deg=lo + span, max_speed_dps=speed, max_step_deg=step),
    st.floats(-170, 0), st.floats(1, 170), st.floats(0.5, 1000), st.floats(0.1, 60))


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(joint=joint_st, start=st.floats(0, 1), steps=st.lists(st.tuples(st.floats(-1, 5), anything), max_size=40))
def test_limiter_never_leaves_limits_or_exceeds_slew(joint, start, steps):
    limiter = SlewLimiter([joint], max_dt_s=0.1)
    now = 0.0
    limiter.reset({"j": joint.min_deg + start * (joint.max_deg - joint.min_deg)}, now)
    previous = limiter.commanded["j"]
    for dt, goal in steps:
        now += dt
        out = limiter.step({"j": goal}, now)["j"]
        assert joint.min_deg <= out <= joint.max_deg
        allowed = min(joint.max_step_deg, joint.max_speed_dps * max(0.0, min(dt, 0.1)))
        assert abs(out - previous) <= allowed + 1e-9
        previous = out


def test_limiter_reaches_a_reachable_goal_at_its_speed_and_stops_at_the_limit():
    limiter = SlewLimiter([PAN], max_dt_s=0.1)
    limiter.reset({"pan": 0.0}, 0.0)
    outs = [limiter.step({"pan": 500.0}, 0.02 * k)["pan"] for k in range(1, 60)]
    assert outs[0] == pytest.approx(2.4)                 # 120 °/s × 20 ms
    assert outs[9] == pytest.approx(24.0)
    assert outs[-1] == 80.0                              # clamped to max_deg
    assert limiter.step({"pan": "left"}, 2.0)["pan"] == 80.0   # not a number: holds
    with pytest.raises(SafetyError, match="unknown joint 'elbow'"):
        limiter.step({"elbow": 1.0}, 2.1)


# -- the whole executor --------------------------------------------------------------------

axis = st.floats(-2, 2)
params_st = st.one_of(
    st.dictionaries(st.sampled_from(["x", "y", "z", "times", "speed"]), anything, max_size=4),
    st.fixed_dictionaries({"x": axis, "y": axis, "z": axis, "times": st.integers(1, 3)}),
)
op_st = st.one_of(
    st.tuples(st.just("action"), st.sampled_from(["look", "move", "nod", "wag", "look"]), params_st),
    st.tuples(st.just("estop"), st.booleans(), st.just(None)),
    st.tuples(st.just("safe"), st.just(None), st.just(None)),
    st.tuples(st.just("idle"), st.floats(0, 3), st.just(None)),
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(start_pan=st.floats(-80, 80), start_tilt=st.floats(-30, 45), ops=st.lists(op_st, max_size=8))
def test_no_action_sequence_commands_past_limits_or_slew(start_pan, start_tilt, ops):
    body, bus, clock = make_body({"pan": start_pan, "tilt": start_tilt})
    body.start()
    estop_writes: list[dict[int, int]] = []
    for kind, a, b in ops:
        if kind == "action":
            before = len(bus.writes)
            try:
                body.execute(Action(name=a, params=b, sender="t"), threading.Event())
                event(f"{a}: ok")
            except ActionFailure as exc:
                event(f"{a}: {exc.code}")
                assert exc.code in {"invalid_params", "unknown_action", "estop_engaged"}, exc.message
            if body.gate.estop:
                estop_writes += [w for _, w in bus.writes[before:]]
        elif kind == "estop":
            held = dict(bus.positions)
            body.set_estop(a)
            if a:
                assert all(w == {i: held[i] for i in w} for _, w in bus.writes[-1:])
        elif kind == "safe":
            body.go_safe("test")
        else:
            clock.t += a
    check_writes(bus)
    assert not estop_writes, "something moved while the estop was engaged"


def test_first_move_starts_where_the_servo_is_and_homes_slowly():
    body, bus, clock = make_body({"pan": 60.0, "tilt": -25.0})
    t0 = clock()
    body.start()
    first = bus.writes[0][1]
    assert to_degrees(PAN, scale_for(PAN), first[1]) == pytest.approx(60, abs=0.1)   # goal = where it is
    assert bus.torque == {1: True, 2: True}
    assert body.gate.limiter.commanded == pytest.approx({"pan": 0, "tilt": 0}, abs=0.1)
    assert clock() - t0 == pytest.approx(60 / 30, rel=0.1)    # at home_speed_dps, not max_speed
    check_writes(bus)


def test_a_joint_found_far_outside_its_limits_is_not_driven_back():
    body, bus, _ = make_body({"pan": 120.0, "tilt": 0.0})
    body.start()
    assert bus.writes == [] and bus.torque == {1: False, 2: False}
    assert body.faults[-1]["fault"] == "out_of_range" and "'pan' is at 120.0°" in body.faults[-1]["message"]
    with pytest.raises(ActionFailure) as err:
        body.execute(Action(name="look", params={"x": 0, "y": 0, "z": 1}, sender="t"), threading.Event())
    assert err.value.code == "out_of_range"


def test_look_reaches_its_goal_and_clamps_what_is_out_of_reach():
    body, bus, _ = make_body()
    body.start()
    body.execute(Action(name="look", params={"x": 1, "y": 1, "z": 1}, sender="t"), threading.Event())
    pan = to_degrees(PAN, scale_for(PAN), bus.positions[1])
    tilt = to_degrees(TILT, scale_for(TILT), bus.positions[2])
    assert pan == pytest.approx(45, abs=0.1) and tilt == pytest.approx(35.26, abs=0.1)
    body.execute(Action(name="look", params={"x": 0, "y": -1, "z": 0}, sender="t"), threading.Event())
    assert to_degrees(TILT, scale_for(TILT), bus.positions[2]) == pytest.approx(-30, abs=0.1)   # min_deg
    assert any(e["event"] == "servo.clamped" for e in body.timeline.events)
    check_writes(bus)


def test_estop_holds_and_refuses_until_released():
    body, bus, clock = make_body()
    body.start()
    body.set_estop(True)
    n = len(bus.writes)
    with pytest.raises(ActionFailure) as err:
        body.execute(Action(name="look", params={"x": 1, "y": 0, "z": 1}, sender="t"), threading.Event())
    assert err.value.code == "estop_engaged" and len(bus.writes) == n
    assert body.state == "estop" and bus.torque == {1: True, 2: True}    # holding, not limp
    held = dict(bus.positions)
    assert body.go_safe("brain went offline") is False                   # not while held
    assert len(bus.writes) == n
    clock.t += 30
    body.set_estop(False)                                                # released: nothing moves by itself
    assert body.state == "active" and bus.torque == {1: True, 2: True}
    assert bus.positions == held and all(w == held for _, w in bus.writes[n:])
    assert body.idle_s() == 0                                            # the watchdog counts from the release
    check_writes(bus)


def test_safe_pose_then_torque_off_then_wake_from_where_it_drooped():
    body, bus, clock = make_body()
    body.start()
    assert body.go_safe("watchdog") is True and body.state == "resting"
    assert bus.torque == {1: False, 2: False}
    bus.positions[2] = round(scale_for(TILT).ticks_exact(TILT, -28))   # the head sagged while limp
    n = len(bus.writes)
    body.execute(Action(name="look", params={"x": 0, "y": 0, "z": 1}, sender="t"), threading.Event())
    assert to_degrees(TILT, scale_for(TILT), bus.writes[n][1][2]) == pytest.approx(-28, abs=0.1)
    assert bus.torque == {1: True, 2: True} and body.state == "active"
    check_writes(bus)


def test_a_blocked_joint_times_out_and_an_overloaded_one_is_named():
    body, bus, clock = make_body()
    body.start()
    bus.stuck.add(1)
    with pytest.raises(ActionFailure) as err:
        body.execute(Action(name="look", params={"x": 1, "y": 0, "z": 1}, sender="t"), threading.Event())
    assert err.value.code == "timeout" and "pan at 0.0° (goal 45.0°)" in err.value.message
    bus.faults[1] = {"overheat"}
    with pytest.raises(ActionFailure) as err:
        body.execute(Action(name="look", params={"x": -1, "y": 0, "z": 1}, sender="t"), threading.Event())
    assert err.value.code == "servo_fault" and "joint 'pan'" in err.value.message and "overheat" in err.value.message
    bus.faults[2] = {"overload"}
    seen: list[dict] = []
    body.on_fault = seen.append
    with pytest.raises(ActionFailure) as err:
        body.execute(Action(name="nod", params={"times": 1}, sender="t"), threading.Event())
    assert err.value.code == "servo_fault" and "joint 'tilt'" in err.value.message
    assert seen and seen[0]["joint"] == "tilt" and seen[0]["fault"] == "overload"


def test_cancel_stops_at_the_next_tick_and_holds():
    body, bus, clock = make_body()
    body.start()
    cancel = threading.Event()
    original = bus.sync_write_goals

    def write_then_cancel(goals, speed=None):
        original(goals, speed)
        if len(bus.writes) > 8:
            cancel.set()
    bus.sync_write_goals = write_then_cancel  # type: ignore[method-assign]
    with pytest.raises(ActionFailure) as err:
        body.execute(Action(name="look", params={"x": 1, "y": 0, "z": 1}, sender="t"), cancel)
    assert err.value.code == "cancelled" and "held at pan" in err.value.message
    pan = to_degrees(PAN, scale_for(PAN), bus.positions[1])
    assert 0 < pan < 45
    check_writes(bus)


def test_unknown_actions_and_speech_without_a_voice_fail_clearly():
    body, bus, _ = make_body()
    body.start()
    with pytest.raises(ActionFailure) as err:
        body.execute(Action(name="wag", params={"speed": 1}, sender="t"), threading.Event())
    assert err.value.code == "unknown_action" and "look, move, nod" in err.value.message
    with pytest.raises(ActionFailure) as err:
        body.execute(Action(name="speak", params={"message": "hi"}, sender="t"), threading.Event())
    assert err.value.code == "unsupported"


def test_idle_time_is_what_the_watchdog_reads():
    body, bus, clock = make_body(watchdog_s=5)
    body.start()
    body.execute(Action(name="look", params={"x": 0.2, "y": 0, "z": 1}, sender="t"), threading.Event())
    clock.t += 7
    assert body.idle_s() == pytest.approx(7)
    assert math.isfinite(body.idle_s())

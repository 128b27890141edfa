"""Action params -> joint angles -> ticks: the geometry, the param checks and the tick limits."""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given, strategies as st

from body_drivers.body_types import Gesture, JointConfig, LinearMap, PanTilt
from body_drivers.kinematics import (KinematicsError, look_angles, plan, scale_for, tick_limits, to_degrees,
                                     to_ticks)


@pytest.mark.parametrize("xy, pan, tilt", [
    ((0, 0), 0, 0),
    ((1, 0), 45, 0),          # the view's right edge: 45° right
    ((-1, 0), -45, 0),        # its left edge (the robot's left): 45° left
    ((0, 1), 0, 45),
    ((0, -1), 0, -45),
    ((1, 1), 45, math.degrees(math.atan2(1, math.sqrt(2)))),
])
def test_look_place_in_view_to_pan_tilt(xy, pan, tilt):
    assert look_angles(*xy) == pytest.approx((pan, tilt))


def test_look_plan_names_the_configured_joints_and_defaults_missing_axes():
    assert plan("look", PanTilt("yaw", "pitch"), {"x": 1, "y": 0, "z": 1}, {}) == [pytest.approx({"yaw": 45, "pitch": 0})]
    assert plan("look", PanTilt("yaw", "pitch"), {"y": 1}, {}) == [pytest.approx({"yaw": 0, "pitch": 45})]
    assert plan("look", PanTilt("yaw"), {"x": -1, "y": 1, "z": 1}, {}) == [pytest.approx({"yaw": -45})]


def _pan(params: dict) -> float:
    return plan("look", PanTilt("pan", "tilt"), params, {})[0]["pan"]


def test_looking_half_left_turns_less_than_looking_at_the_left_edge():
    half, edge = _pan({"x": -0.5, "y": 0, "z": 1}), _pan({"x": -1, "y": 0, "z": 1})
    assert edge < half < 0


@pytest.mark.parametrize("z", [None, 0, -1, 0.1, 2])
def test_distance_never_swings_the_head_past_the_place_looked_at(z):
    """Pip's look used to read z as near(-1)..far(1): z <= 0 put the target behind the head."""
    params = {"x": -0.5, "y": 0.2} if z is None else {"x": -0.5, "y": 0.2, "z": z}
    assert _pan(params) == pytest.approx(_pan({"x": -0.5, "y": 0.2, "z": 1}))
    assert -45 < _pan(params) < 0


@given(x=st.floats(-1, 1), y=st.floats(-1, 1), z=st.floats(0.1, 2))
def test_any_allowed_look_keeps_the_pan_on_the_side_of_x_and_within_the_view(x, y, z):
    pan, tilt = _pan({"x": x, "y": y, "z": z}), plan("look", PanTilt("pan", "tilt"), {"x": x, "y": y, "z": z}, {})[0]["tilt"]
    assert math.copysign(1, pan) == math.copysign(1, x) or pan == 0 == x
    assert abs(pan) <= 45 + 1e-9 and abs(tilt) <= 45 + 1e-9
    assert (tilt > 0) == (y > 0) or y == 0


@given(a=st.floats(-1, 1), b=st.floats(-1, 1))
def test_pan_grows_with_x(a, b):
    if a < b:
        assert look_angles(a, 0)[0] < look_angles(b, 0)[0]


@pytest.mark.parametrize("params, words", [
    ({"x": "left", "y": 0, "z": 1}, "look: x must be a number, got 'left'"),
    ({"x": True}, "look: x must be a number, got True"),
    ({"y": None}, "look: y must be a number, got None"),
    ({"z": [1]}, "look: z must be a number"),
    ({"x": float("nan")}, "look: x must be finite, got nan"),
    ({"x": float("-inf")}, "look: x must be finite, got -inf"),
    ({"x": 10 ** 400}, "look: x is too large"),
])
def test_bad_params_name_the_param(params, words):
    with pytest.raises(KinematicsError) as err:
        plan("look", PanTilt("pan", "tilt"), params, {})
    assert words in str(err.value)


def test_params_that_are_not_an_object():
    with pytest.raises(KinematicsError, match="params must be an object, got list"):
        plan("look", PanTilt("pan"), [1, 2, 3], {})  # type: ignore[arg-type]


def test_huge_but_finite_values_are_geometry_not_errors():
    (pose,) = plan("look", PanTilt("pan", "tilt"), {"x": 1e300, "y": 0, "z": 1}, {})
    assert pose["pan"] == pytest.approx(90)


def test_linear_map_moves_only_joints_whose_params_were_given():
    mapping = LinearMap({"pan": {"x": 120}, "tilt": {"y": 40, "offset": -10}, "base": {"x": 10, "y": 5}})
    assert plan("move", mapping, {"x": 0.5, "y": 0.25}, {}) == [pytest.approx({"pan": 60, "tilt": 0, "base": 6.25})]
    assert plan("move", mapping, {"x": -0.5}, {}) == [pytest.approx({"pan": -60, "base": -5})]
    with pytest.raises(KinematicsError, match=r"move: none of its params \(x, y\) were given"):
        plan("move", mapping, {"z": 0}, {})


def test_gesture_repeats_then_returns_to_where_it_was():
    nod = Gesture(({"tilt": -20}, {"tilt": 10}), repeat="times", max_repeat=3)
    frames = plan("nod", nod, {"times": 2}, {"tilt": 5.0, "pan": 1.0})
    assert frames == [{"tilt": -20}, {"tilt": 10}, {"tilt": -20}, {"tilt": 10}, {"tilt": 5.0}]
    assert plan("nod", nod, {}, {"tilt": 0.0}) == [{"tilt": -20}, {"tilt": 10}, {"tilt": 0.0}]
    for bad in (0, 4, 1.5, "2"):
        with pytest.raises(KinematicsError, match="nod: times"):
            plan("nod", nod, {"times": bad}, {"tilt": 0.0})


def _joint(**kw) -> JointConfig:
    base = dict(name="j", protocol="feetech", port="p", id=1, min_deg=-30.0, max_deg=45.0)
    return JointConfig(**{**base, **kw})


@pytest.mark.parametrize("joint, deg, ticks", [
    (_joint(), 0, 2048),                                       # STS3215: 0..4095 over ~360°, centre 2047.5
    (_joint(max_deg=60), 45, 2560),
    (_joint(), 45, 2559),                                      # the limit, rounded inward
    (_joint(direction=-1), 45, 1536),
    (_joint(offset_deg=90, max_deg=60), 0, 3072),
    (_joint(protocol="dynamixel"), -30, 1707),
    (_joint(protocol="maestro"), 0, 6000),                     # quarter-µs: 1500 µs centre
    (_joint(protocol="maestro"), 45, 8000),
    (_joint(protocol="feetech-scs", min_deg=-150, max_deg=150), 150, 1023),   # SCS0009: 0..1023 over 300°
])
def test_degrees_to_ticks(joint, deg, ticks):
    scale = scale_for(joint)
    assert to_ticks(joint, scale, deg) == ticks
    assert to_degrees(joint, scale, ticks) == pytest.approx(deg, abs=1 / scale.ticks_per_degree)


def test_ticks_never_leave_the_limits_even_for_absurd_angles():
    joint = _joint(direction=-1, offset_deg=12.3)
    scale = scale_for(joint)
    lo, hi = tick_limits(joint, scale)
    assert {to_ticks(joint, scale, d) for d in (1e9, -1e9, 45.0001, -30.0001)} <= {lo, hi}
    with pytest.raises(KinematicsError, match="not a finite number"):
        to_ticks(joint, scale, math.nan)


@given(deg=st.floats(allow_nan=False, allow_infinity=False), direction=st.sampled_from([1, -1]),
       offset=st.floats(-90, 90), protocol=st.sampled_from(["feetech", "dynamixel", "maestro", "feetech-scs"]))
@example(deg=25.0, direction=1, offset=0.0, protocol="feetech")   # the limit itself, rounded inward
def test_every_tick_sent_reads_back_inside_the_limits(deg, direction, offset, protocol):
    joint = _joint(direction=direction, offset_deg=offset if protocol != "maestro" else offset / 10,
                   protocol=protocol, min_deg=-20, max_deg=25)
    scale = scale_for(joint)
    back = to_degrees(joint, scale, to_ticks(joint, scale, deg))
    assert joint.min_deg - 1e-9 <= back <= joint.max_deg + 1e-9
    if joint.min_deg <= deg <= joint.max_deg:
        tick = 1 / scale.ticks_per_degree
        # the nearest tick, except within a tick of a limit, where it is rounded inward (never past it)
        near_limit = min(deg - joint.min_deg, joint.max_deg - deg) < tick
        assert abs(back - deg) <= (tick if near_limit else tick / 2) + 1e-9

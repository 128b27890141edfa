"""Every driver against its simulator over a real pty: the ServoBus contract end to end."""

from __future__ import annotations

import pytest

from body_drivers.servo.bus import PROTOCOLS, ServoBus, ServoError
from body_drivers.servo.buses import open_bus
from body_drivers.servo.tables import MODELS, degrees_from_ticks, ticks_from_degrees
from body_drivers.servo.sim.simulator import start_simulator
from servo_harness import CASES, PACKET_PROTOCOLS, sim_and_bus, wait_for


@pytest.fixture(params=list(CASES))
def protocol(request):
    return request.param


def test_every_protocol_has_a_case():
    assert set(CASES) == set(PROTOCOLS)


def test_ping_reports_the_model_and_absent_ids(protocol, tmp_path):
    ids = CASES[protocol][0]
    with sim_and_bus(protocol, str(tmp_path / "bus")) as (sim, bus):
        assert isinstance(bus, ServoBus)
        answer = bus.ping(ids[0])
        if protocol.startswith("maestro"):
            assert answer is True
        else:
            assert answer == MODELS[bus.model.name].model_number
            assert bus.ping(42) is False          # nobody there: False, not an exception


def test_goal_moves_the_position_over_time(protocol, tmp_path):
    ids, goal, other = CASES[protocol]
    # a servo slow enough that "moving" is observable: the move takes ~0.25 s
    with sim_and_bus(protocol, str(tmp_path / "bus"), speed=abs(other - goal) * 4) as (sim, bus):
        bus.set_torque(ids, True)
        bus.write_goal(ids[0], goal)       # first goal (maestro: pulses start at the target)
        start = bus.read_position(ids[0])
        bus.write_goal(ids[0], CASES[protocol][2])
        readings: list[int] = []

        def under_way() -> bool:   # past where it was, toward the new goal (it may still be heading for the first)
            readings.append(bus.read_position(ids[0]))
            return (readings[-1] - start) * (CASES[protocol][2] - start) > 0
        assert wait_for(under_way, step=0.005)
        midway = readings[-1]
        assert midway != CASES[protocol][2], "arrived instantly; the speed limit is not simulated"
        assert min(start, CASES[protocol][2]) <= midway <= max(start, CASES[protocol][2])
        assert wait_for(lambda: bus.read_position(ids[0]) == CASES[protocol][2], timeout=3)


def test_sync_write_then_read_back(protocol, tmp_path):
    ids, low, high = CASES[protocol]
    goals = {ids[0]: low, ids[1]: high}
    with sim_and_bus(protocol, str(tmp_path / "bus"), speed=20000) as (sim, bus):
        bus.set_torque(ids, True)
        bus.sync_write_goals(goals)
        assert wait_for(lambda: bus.read_positions(ids) == goals)
        assert {i: round(sim.position(i)) for i in ids} == goals


def test_sync_write_with_speed_limits_the_motion(protocol, tmp_path):
    ids, low, high = CASES[protocol]
    with sim_and_bus(protocol, str(tmp_path / "bus"), speed=20000) as (sim, bus):
        bus.set_torque(ids, True)
        bus.sync_write_goals({i: low for i in ids})
        assert wait_for(lambda: bus.read_positions(ids) == {i: low for i in ids})
        speed = 10 if protocol.startswith("maestro") else 100   # 1000 quarter-µs/s; ~100-1500 ticks/s
        bus.sync_write_goals({i: high for i in ids}, speed=speed)
        assert wait_for(lambda: all(p > low for p in bus.read_positions(ids).values()), step=0.01)   # all under way
        positions = bus.read_positions(ids)
        assert all(low < p < high for p in positions.values()), positions


def test_torque_off_stops_motion(protocol, tmp_path):
    ids, low, high = CASES[protocol]
    with sim_and_bus(protocol, str(tmp_path / "bus"), speed=8000) as (sim, bus):
        bus.set_torque(ids, True)
        bus.write_goal(ids[0], low)
        assert wait_for(lambda: bus.read_position(ids[0]) == low)
        bus.write_goal(ids[0], high)
        assert wait_for(lambda: bus.read_position(ids[0]) != low, step=0.005)   # under way
        bus.set_torque([ids[0]], False)
        if protocol.startswith("maestro"):
            assert bus.read_position(ids[0]) == 0           # no pulses at all
            bus.set_torque([ids[0]], True)                  # resumes the last goal
            assert wait_for(lambda: bus.read_position(ids[0]) == high)
        else:
            held = bus.read_position(ids[0])
            # a witness with torque on: once it has moved 100 ticks (~12 ms at this speed), this one
            # would have moved as far had it gone on
            witness = bus.read_position(ids[1])
            bus.write_goal(ids[1], high if witness != high else low)
            assert wait_for(lambda: abs(bus.read_position(ids[1]) - witness) >= 100, step=0.005)
            assert bus.read_position(ids[0]) == held and held != high


def test_registers_read_and_write(tmp_path):
    for protocol in PACKET_PROTOCOLS:
        with sim_and_bus(protocol, str(tmp_path / protocol)) as (sim, bus):
            assert bus.read_register(1, "torque_enable") == 0
            bus.write_register(1, "torque_enable", 1)
            assert bus.read_register(1, "torque_enable") == 1
            assert sim.servos[1].get("torque_enable") == 1
            with pytest.raises(ServoError, match="read-only") as err:
                bus.write_register(1, "present_position", 5)
            assert err.value.code == "value"


def test_goal_outside_the_servo_limits_is_reported(tmp_path):
    with sim_and_bus("dynamixel", str(tmp_path / "dxl")) as (sim, bus):
        bus.write_register(1, "max_position_limit", 3000)      # EEPROM: torque is off
        bus.set_torque([1], True)
        with pytest.raises(ServoError) as err:
            bus.write_goal(1, 3500)
        assert err.value.code == "angle_limit" and "servo 1" in str(err.value)
    with sim_and_bus("feetech", str(tmp_path / "ft")) as (sim, bus):
        bus.write_register(1, "max_position_limit", 3000)
        with pytest.raises(ServoError) as err:
            bus.write_goal(1, 3500)
        assert err.value.code == "angle_limit"
        assert sim.servos[1].goal() == 3000                     # the servo clamped it


@pytest.mark.parametrize("bad", [-1, 5000, 1.5, "100", True, None])
def test_bad_goals_are_refused_before_the_wire(tmp_path, bad):
    with sim_and_bus("feetech", str(tmp_path / "bus")) as (sim, bus):
        requests = sim.server.requests
        with pytest.raises(ServoError) as err:
            bus.write_goal(1, bad)
        assert err.value.code == "value" and repr(bad) in str(err.value)
        with pytest.raises(ServoError):
            bus.sync_write_goals({1: 100, 2: bad})
        with pytest.raises(ServoError, match="servo id"):
            bus.read_position(999)
        assert sim.server.requests == requests                  # nothing half-sent
        assert bus.read_position(1) == 2048                     # and the bus still works


def test_maestro_channel_range_and_crc(tmp_path):
    with sim_and_bus("maestro-pololu", str(tmp_path / "m"), crc7=True, device=5) as (sim, bus):
        bus.write_goal(3, 6000)
        assert bus.read_position(3) == 6000
        assert bus.status(3) == set()                             # every CRC was right
        with pytest.raises(ServoError, match="channel must be"):
            bus.write_goal(30, 6000)
    # a driver without CRC talking to a board that wants one: no answers, a clear error
    sim = start_simulator("maestro", str(tmp_path / "m2"), [0], crc7=True)
    try:
        plain = open_bus("maestro", sim.link, retries=1)
        with pytest.raises(ServoError) as err:
            plain.read_position(0)
        assert err.value.code == "no_reply" and "get position" in str(err.value)
        plain.close()
        with_crc = open_bus("maestro", sim.link, crc7=True)
        assert with_crc.status(0) & {"serial_crc", "serial_protocol"}   # the board noticed
        assert with_crc.status(0) == set()                              # and reading cleared it
        with_crc.close()
    finally:
        sim.stop()


def test_open_bus_rejects_bad_arguments(tmp_path):
    with pytest.raises(ServoError, match="unknown servo protocol"):
        open_bus("herkulex", "/dev/null")
    with pytest.raises(ServoError, match="retries"):
        open_bus("feetech", "/dev/null", retries=-1)
    with pytest.raises(ServoError, match="timeout_s"):
        open_bus("feetech", "/dev/null", timeout_s="fast")
    with pytest.raises(ServoError, match="bad option for feetech.*crc7"):
        open_bus("feetech", "/dev/null", crc7=True)
    with pytest.raises(ServoError, match="xl330-m288 is not a Feetech"):
        open_bus("feetech", "/dev/null", model="xl330-m288")
    with pytest.raises(ServoError, match="unknown servo model 'ax12'"):
        open_bus("dynamixel", "/dev/null", model="ax12")
    bus = open_bus("dynamixel", str(tmp_path / "missing"))
    with pytest.raises(ServoError) as err:
        bus.ping(1)
    assert err.value.code == "port" and "missing" in str(err.value)


def test_degree_conversion_round_trips():
    sts = MODELS["sts3215"]
    assert ticks_from_degrees(sts, 0) == 2048
    assert ticks_from_degrees(sts, 90) == 3072
    assert ticks_from_degrees(MODELS["maestro-12"], -90) == 2000          # 500 µs
    assert abs(degrees_from_ticks(sts, ticks_from_degrees(sts, 45.0)) - 45.0) < 0.1
    assert ticks_from_degrees(sts, 1000) == 4095                  # clamped to the range

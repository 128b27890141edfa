"""Each fault the simulator can inject → a clear ServoError, and a retry that succeeds
once the fault clears; echo and noise are survived without an error at all."""

from __future__ import annotations

import time

import pytest

from body_drivers.servo.bus import ServoError
from body_drivers.servo.sim.simulator import start_simulator
from servo_harness import CASES, PACKET_PROTOCOLS, sim_and_bus, wait_for

MAESTROS = ("maestro", "maestro-pololu")
# persistent bus fault → the error code the driver must give up with
PERSISTENT = {
    "packet": {"no_reply": "no_reply", "checksum": "checksum", "truncate": "timeout"},
    "maestro": {"no_reply": "no_reply", "checksum": "malformed", "truncate": "timeout",
                "garbage": "malformed"},
}


def family(protocol: str) -> str:
    return "maestro" if protocol.startswith("maestro") else "packet"


@pytest.mark.parametrize("protocol", list(CASES))
@pytest.mark.parametrize("kind", ["no_reply", "checksum", "truncate", "garbage"])
def test_a_passing_fault_is_retried_away(protocol, kind, tmp_path):
    ids = CASES[protocol][0]
    with sim_and_bus(protocol, str(tmp_path / "bus")) as (sim, bus):
        expected = bus.read_position(ids[0])
        sim.inject(kind, count=1)
        assert bus.read_position(ids[0]) == expected
        assert sim.faults.fired[kind] == 1
        if family(protocol) == "maestro" or kind != "garbage":
            assert bus.stats["retries"] == 1
        else:
            assert bus.stats["retries"] == 0       # packet drivers scan past noise, no retry


@pytest.mark.parametrize("protocol", list(CASES))
@pytest.mark.parametrize("kind", ["no_reply", "checksum", "truncate", "garbage"])
def test_a_lasting_fault_gives_a_clear_error_then_recovers(protocol, kind, tmp_path):
    ids = CASES[protocol][0]
    code = PERSISTENT[family(protocol)].get(kind)
    with sim_and_bus(protocol, str(tmp_path / "bus"), retries=1) as (sim, bus):
        expected = bus.read_position(ids[0])
        sim.inject(kind, ids=[ids[0]] if family(protocol) == "packet" else None)
        if code is None:                            # noise before every reply: still fine
            assert bus.read_position(ids[0]) == expected
        else:
            with pytest.raises(ServoError) as err:
                bus.read_position(ids[0])
            assert err.value.code == code
            assert err.value.servo_id == ids[0] and f"servo {ids[0]}" in str(err.value)
            assert "2 attempts" in str(err.value)
        sim.clear_faults()
        assert bus.read_position(ids[0]) == expected


@pytest.mark.parametrize("protocol", list(CASES))
def test_echoing_adapter_is_detected_and_skipped(protocol, tmp_path):
    ids, low, high = CASES[protocol]
    with sim_and_bus(protocol, str(tmp_path / "bus"), speed=50000) as (sim, bus):
        sim.inject("echo")
        assert bus.ping(ids[0])
        bus.set_torque(ids, True)
        bus.sync_write_goals({ids[0]: low, ids[1]: high})     # broadcast: only an echo comes back
        assert wait_for(lambda: bus.read_positions(ids) == {ids[0]: low, ids[1]: high})
        bus.write_goal(ids[1], low)
        assert wait_for(lambda: bus.read_position(ids[1]) == low)
        assert bus.echo is True
        assert bus.stats["retries"] == 0


@pytest.mark.parametrize("protocol", PACKET_PROTOCOLS)
def test_one_silent_servo_in_a_sync_read_is_named(protocol, tmp_path):
    with sim_and_bus(protocol, str(tmp_path / "bus"), [1, 2], retries=1) as (sim, bus):
        sim.inject("no_reply", ids=[2], count=1)
        assert set(bus.read_positions([1, 2])) == {1, 2}       # only id 2 was asked again
        with pytest.raises(ServoError) as err:
            bus.read_positions([1, 2, 9])
        assert err.value.code == "no_reply" and err.value.servo_id == 9 and "servo 9" in str(err.value)


@pytest.mark.parametrize("protocol", PACKET_PROTOCOLS)
@pytest.mark.parametrize("fault", ["overload", "overheat", "voltage"])
def test_servo_error_bits_fail_commands_and_clear(protocol, fault, tmp_path):
    ids, low, high = CASES[protocol]
    with sim_and_bus(protocol, str(tmp_path / "bus"), speed=50000) as (sim, bus):
        bus.set_torque(ids, True)
        sim.set_errors(ids[0], {fault})
        assert bus.status(ids[0]) == {fault}
        assert bus.status(ids[1]) == set()
        with pytest.raises(ServoError) as err:
            bus.write_goal(ids[0], low)
        assert err.value.code == fault
        assert f"servo {ids[0]}" in str(err.value) and fault in str(err.value)
        with pytest.raises(ServoError) as err:
            bus.read_position(ids[0])
        assert err.value.code == fault
        assert err.value.for_joint("pan").message.startswith("joint 'pan' servo")
        bus.set_torque([ids[0]], False)          # going limp is always allowed
        bus.write_goal(ids[1], low)              # the other servo is unaffected
        sim.set_errors(ids[0], set())            # the fault clears (cooled down / rebooted)
        assert bus.status(ids[0]) == set()
        bus.set_torque([ids[0]], True)
        bus.write_goal(ids[0], high)
        assert wait_for(lambda: bus.read_position(ids[0]) == high)


def test_overload_cuts_torque_like_the_real_servo(tmp_path):
    for protocol in PACKET_PROTOCOLS:
        with sim_and_bus(protocol, str(tmp_path / protocol)) as (sim, bus):
            bus.set_torque([1], True)
            sim.set_errors(1, {"overload"})
            assert sim.servos[1].get("torque_enable") == 0
            sim.set_errors(1, {"voltage"})       # not in the default shutdown mask
            bus.set_torque([1], False)
            sim.set_errors(1, set())


def test_maestro_reports_and_clears_controller_errors(tmp_path):
    with sim_and_bus("maestro", str(tmp_path / "m")) as (sim, bus):
        sim.set_errors(None, {"serial_overrun", "serial_buffer_full"})
        assert bus.status(0) == {"serial_overrun", "serial_buffer_full"}
        assert bus.status(0) == set()
        with pytest.raises(ValueError, match="cannot report overload"):
            sim.set_errors(None, {"overload"})


@pytest.mark.parametrize("protocol", ["dynamixel", "maestro"])
def test_a_vanished_port_is_an_error_then_reopens(protocol, tmp_path):
    link = str(tmp_path / "bus")
    ids = CASES[protocol][0]
    with sim_and_bus(protocol, link) as (sim, bus):
        bus.write_goal(ids[0], CASES[protocol][1])
        sim.stop()                                          # the adapter is unplugged
        with pytest.raises(ServoError) as err:
            bus.read_position(ids[0])
        assert err.value.code == "port" and link in str(err.value)
        with pytest.raises(ServoError) as err:              # no hammering the dead port
            bus.read_position(ids[0])
        assert err.value.code == "port"
        replug = start_simulator(protocol, link, ids)        # plugged back in
        try:
            assert wait_for(lambda: _answers(bus, ids[0]), timeout=5)
            assert bus.link.reopened == 1
        finally:
            replug.stop()


def _answers(bus, servo_id: int) -> bool:
    try:
        bus.read_position(servo_id)
        return True
    except ServoError as exc:
        assert exc.code == "port", exc
        return False


def test_simulator_rejects_bad_fault_requests(tmp_path):
    with sim_and_bus("feetech", str(tmp_path / "bus")) as (sim, bus):
        with pytest.raises(ValueError, match="unknown bus fault"):
            sim.inject("gremlins")
        with pytest.raises(ValueError, match="positive int"):
            sim.inject("no_reply", count=0)
        with pytest.raises(ValueError, match="cannot report"):
            sim.set_errors(1, {"encoder"})          # Feetech has no encoder bit
        assert bus.read_position(1) == 2048


@pytest.mark.parametrize("protocol", list(CASES))
def test_line_noise_from_another_device_does_not_wedge_the_bus(protocol, tmp_path):
    """Random bytes on the line (a glitching adapter, another device) then normal traffic."""
    import random

    import serial

    ids = CASES[protocol][0]
    noise = random.Random(42).randbytes(300) + b"\xff\xff\xfd\x00\x01\x50"   # ends mid-"packet"
    with sim_and_bus(protocol, str(tmp_path / "bus"), retries=2) as (sim, bus):
        with serial.Serial(sim.link) as line:
            line.write(noise)
            line.flush()
        # The scenario: a glitch, then quiet, then traffic (a gap in the world, not a sync point;
        # the Maestro simulator answers a few of the noise bytes, and those answers belong to the glitch)
        time.sleep(0.05)
        assert bus.ping(ids[0])
        assert bus.read_positions(ids) == {i: bus.read_position(i) for i in ids}

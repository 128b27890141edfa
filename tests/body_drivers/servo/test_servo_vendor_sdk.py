"""The vendors' own SDKs drive our simulators: proof the bytes are the real protocol.

dynamixel-sdk 4.1.0 and feetech-servo-sdk 1.0.0 (``scservo_sdk``) from PyPI. Note:
dynamixel-sdk 4.1.0's ``txPacket`` drops the result of its byte stuffing, so a request
whose parameters contain ``FF FF FD`` goes out unstuffed; the values used here avoid it.
"""

from __future__ import annotations

import pytest

from body_drivers.servo.sim.simulator import start_simulator
from servo_harness import wait_for

dxl = pytest.importorskip("dynamixel_sdk")
scs = pytest.importorskip("scservo_sdk")

# The SDKs wait ~34 ms for a reply: a USB adapter's 16 ms latency timer twice, and a real servo
# answers within microseconds. Here the servo is a thread of this process, and on a busy machine it
# can be starved for longer than that, so every wait gets this much more; what is asserted is the
# bytes and the answers, never how fast they came.
STARVED_SIM_MS = 2000.0


def patient(port_class: type) -> type:
    """``port_class`` whose reply timeouts also allow for a starved simulator thread."""
    class PatientPort(port_class):  # type: ignore[misc, valid-type]
        def setPacketTimeout(self, packet_length):  # noqa: N802 (the SDK's name)
            super().setPacketTimeout(packet_length)
            self.packet_timeout += STARVED_SIM_MS

        def setPacketTimeoutMillis(self, msec):  # noqa: N802
            super().setPacketTimeoutMillis(msec + STARVED_SIM_MS)
    return PatientPort


@pytest.fixture
def dxl_port(tmp_path):
    sim = start_simulator("dynamixel", str(tmp_path / "dxl"), [1, 2], speed=50000)
    port = patient(dxl.PortHandler)(sim.link)
    assert port.openPort() and port.setBaudRate(1_000_000)
    yield sim, port, dxl.PacketHandler(2.0)
    port.closePort()
    sim.stop()


def test_dynamixel_sdk_ping_read_write(dxl_port):
    sim, port, ph = dxl_port
    model, result, error = ph.ping(port, 1)
    assert (model, result, error) == (1200, dxl.COMM_SUCCESS, 0)      # XL330-M288
    assert ph.ping(port, 7)[1] == dxl.COMM_RX_TIMEOUT                 # nobody at id 7
    assert ph.write1ByteTxRx(port, 1, 64, 1) == (dxl.COMM_SUCCESS, 0)  # torque on
    assert ph.write4ByteTxRx(port, 1, 116, 1000) == (dxl.COMM_SUCCESS, 0)
    assert wait_for(lambda: ph.read4ByteTxRx(port, 1, 132) == (1000, dxl.COMM_SUCCESS, 0))
    # a goal past Max Position Limit: the SDK sees "data limit error"
    _, error = ph.write4ByteTxRx(port, 1, 116, 5000)
    assert "exceeds the limit" in ph.getRxPacketError(error)


def test_dynamixel_sdk_sync_write_and_sync_read(dxl_port):
    sim, port, ph = dxl_port
    for servo_id in (1, 2):
        ph.write1ByteTxRx(port, servo_id, 64, 1)
    writer = dxl.GroupSyncWrite(port, ph, 116, 4)
    for servo_id, goal in ((1, 1500), (2, 2500)):
        assert writer.addParam(servo_id, list(goal.to_bytes(4, "little")))
    assert writer.txPacket() == dxl.COMM_SUCCESS
    reader = dxl.GroupSyncRead(port, ph, 132, 4)
    reader.addParam(1)
    reader.addParam(2)

    def arrived() -> bool:
        return reader.txRxPacket() == dxl.COMM_SUCCESS and \
            (reader.getData(1, 132, 4), reader.getData(2, 132, 4)) == (1500, 2500)
    assert wait_for(arrived)


def test_dynamixel_sdk_sees_the_hardware_alert(dxl_port):
    sim, port, ph = dxl_port
    sim.set_errors(1, {"overload"})
    value, result, error = ph.read1ByteTxRx(port, 1, 70)
    assert result == dxl.COMM_SUCCESS and value == 0x20                # Overload bit
    assert "Hardware error" in ph.getRxPacketError(error)
    assert ph.reboot(port, 1) == (dxl.COMM_SUCCESS, 0)                 # REBOOT clears it
    assert ph.read1ByteTxRx(port, 1, 70) == (0, dxl.COMM_SUCCESS, 0)


def test_dynamixel_sdk_rejects_a_corrupted_reply(dxl_port):
    sim, port, ph = dxl_port
    sim.inject("checksum", count=1)
    assert ph.read4ByteTxRx(port, 1, 132)[1] == dxl.COMM_RX_CORRUPT
    assert ph.read4ByteTxRx(port, 1, 132)[1] == dxl.COMM_SUCCESS


@pytest.fixture
def sts_port(tmp_path):
    sim = start_simulator("feetech", str(tmp_path / "sts"), [1, 2], speed=50000)
    port = patient(scs.PortHandler)(sim.link)
    assert port.openPort() and port.setBaudRate(1_000_000)
    yield sim, port, scs.PacketHandler(0)        # 0: STS little-endian
    port.closePort()
    sim.stop()


def test_scservo_sdk_ping_read_write(sts_port):
    sim, port, ph = sts_port
    assert ph.ping(port, 1) == (777, scs.COMM_SUCCESS, 0)             # STS3215
    assert ph.write1ByteTxRx(port, 1, 40, 1) == (scs.COMM_SUCCESS, 0)
    assert ph.write2ByteTxRx(port, 1, 42, 1000) == (scs.COMM_SUCCESS, 0)
    assert wait_for(lambda: ph.read2ByteTxRx(port, 1, 56) == (1000, scs.COMM_SUCCESS, 0))


def test_scservo_sdk_sync_write_and_sync_read(sts_port):
    sim, port, ph = sts_port
    writer = scs.GroupSyncWrite(port, ph, 42, 2)
    for servo_id, goal in ((1, 1200), (2, 3300)):
        ph.write1ByteTxRx(port, servo_id, 40, 1)
        assert writer.addParam(servo_id, [goal & 0xFF, goal >> 8])
    assert writer.txPacket() == scs.COMM_SUCCESS   # no answer to wait for: the line keeps order
    reader = scs.GroupSyncRead(port, ph, 56, 2)
    reader.addParam(1)
    reader.addParam(2)

    def arrived() -> bool:
        return reader.txRxPacket() == scs.COMM_SUCCESS and \
            (reader.getData(1, 56, 2), reader.getData(2, 56, 2)) == (1200, 3300)
    assert wait_for(arrived)


def test_scservo_sdk_sees_the_error_bits(sts_port):
    sim, port, ph = sts_port
    sim.set_errors(2, {"overheat"})
    _, result, error = ph.read2ByteTxRx(port, 2, 56)
    assert result == scs.COMM_SUCCESS and "Overheat" in ph.getRxPacketError(error)

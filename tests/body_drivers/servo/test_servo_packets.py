"""Packet codecs against the vendors' published examples, and the resync contract."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from body_drivers.servo import dynamixel_packet as dp
from body_drivers.servo import feetech_packet as fp
from body_drivers.servo import maestro_packet as mp


# -- Dynamixel Protocol 2.0 ---------------------------------------------------------------

def test_dynamixel_ping_matches_the_emanual_example():
    # e-Manual, Protocol 2.0 "Ping" example: ID 1 → FF FF FD 00 01 03 00 01 19 4E
    assert dp.encode(1, dp.PING) == bytes.fromhex("FFFFFD0001030001194E")
    # and its status reply: model 1030 (0x0406), firmware 0x26
    assert dp.encode(1, 0, bytes((0x06, 0x04, 0x26)), status=True) == \
        bytes.fromhex("FFFFFD000107005500060426655D")


def test_dynamixel_crc_is_the_non_reflected_0x8005_crc():
    assert dp.crc16(b"123456789") == 0xFEE8      # CRC-16/BUYPASS check value


def test_dynamixel_byte_stuffing_on_the_wire_and_back():
    params = bytes((0x10, 0x00, 0xFF, 0xFF, 0xFD, 0x01))
    packet = dp.encode(1, dp.WRITE, params)
    assert b"\xff\xff\xfd\xfd\x01" in packet                     # stuffed
    assert packet[5] | packet[6] << 8 == 1 + len(params) + 1 + 2  # length counts the stuffing
    sc = dp.scan(bytearray(packet))
    assert sc.kind == "packet" and sc.packet.params == params and sc.packet.code == dp.WRITE


@given(st.integers(0, 252), st.integers(0, 0x7F), st.binary(max_size=40))
def test_dynamixel_round_trip_any_payload(servo_id, error, params):
    sc = dp.scan(bytearray(dp.encode(servo_id, error, params, status=True)))
    assert sc.kind == "packet"
    assert sc.packet.servo_id == servo_id and sc.packet.code == dp.STATUS
    assert sc.packet.params == bytes((error,)) + params


def test_dynamixel_scan_skips_garbage_and_waits_for_the_rest():
    packet = dp.encode(3, 0, b"\x01\x02", status=True)
    buf = bytearray(b"\x00\xff\x12" + packet[:6])
    sc = dp.scan(buf)
    assert sc.kind == "incomplete" and sc.start == 3
    buf += packet[6:]
    sc = dp.scan(buf)
    assert sc.kind == "packet" and sc.start == 3 and sc.packet.servo_id == 3


def test_dynamixel_scan_flags_a_bad_crc():
    packet = bytearray(dp.encode(3, dp.PING))
    packet[-1] ^= 0xFF
    assert dp.scan(packet).kind == "corrupt"


# -- Feetech ----------------------------------------------------------------------------

def test_feetech_checksum_is_the_inverted_sum():
    # PING id 1: FF FF 01 02 01 FB  (~(1 + 2 + 1) & 0xFF = 0xFB)
    assert fp.encode(1, fp.PING) == bytes.fromhex("FFFF010201FB")
    # READ id 1, present position (56 = 0x38), 2 bytes
    assert fp.encode(1, fp.READ, bytes((0x38, 2))) == bytes.fromhex("FFFF0104023802BE")


@given(st.integers(0, 253), st.integers(0, 255), st.binary(max_size=40))
def test_feetech_round_trip_any_payload(servo_id, code, params):
    sc = fp.scan(bytearray(b"\x00\xff" + fp.encode(servo_id, code, params)))
    assert sc.kind == "packet" and sc.start == 2
    assert (sc.packet.servo_id, sc.packet.code, sc.packet.params) == (servo_id, code, params)


def test_feetech_header_inside_ff_run_and_bad_checksum():
    packet = fp.encode(2, 0, b"\x10")
    assert fp.scan(bytearray(b"\xff" + packet)).start == 1        # FF FF FF: header is the later pair
    bad = bytearray(packet)
    bad[-1] ^= 1
    assert fp.scan(bad).kind == "corrupt"


def test_feetech_rejects_out_of_range_id():
    with pytest.raises(ValueError, match="0..254"):
        fp.encode(300, fp.PING)


# -- Maestro ----------------------------------------------------------------------------

def test_maestro_crc7_matches_the_users_guide_example():
    assert mp.crc7(bytes((0x83, 0x01))) == 0x17          # Maestro guide §5.d


def test_maestro_set_target_both_protocols():
    # guide §5.e: channel 2 to 1500 µs (6000 quarter-µs)
    assert mp.encode(mp.SET_TARGET, bytes((2,)) + mp.split14(6000)) == bytes.fromhex("8402702E")
    assert mp.encode(mp.SET_TARGET, bytes((2,)) + mp.split14(6000), device=12) == bytes.fromhex("AA0C0402702E")


def test_maestro_scan_crc_and_protocol_errors():
    good = mp.encode(mp.GET_POSITION, b"\x03", device=12, crc=True)
    sc = mp.scan(bytearray(good), crc=True)
    assert sc.kind == "packet" and sc.packet.servo_id == 12 and sc.packet.params == b"\x03"
    bad = bytearray(good)
    bad[-1] ^= 0x01
    assert mp.scan(bad, crc=True).reason == "checksum"
    assert mp.scan(bytearray(b"\x05\x84"), crc=False).reason == "protocol"     # stray data byte
    assert mp.scan(bytearray(b"\x84\x01\x90"), crc=False).reason == "protocol"  # command inside data
    assert mp.scan(bytearray(b"\x84\x01"), crc=False).kind == "incomplete"


def test_maestro_values_are_14_bit():
    with pytest.raises(ValueError, match="14-bit"):
        mp.split14(20000)

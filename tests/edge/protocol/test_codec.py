"""The wire codec: strict and bounded on the way in, never writing what it would refuse.

Property tests (hypothesis) over generated JSON values and arbitrary bytes, then each rule with
the pointer and the bounded excerpt its error must carry.
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import example, given, settings, strategies as st

from edge.protocol import codec
from edge.protocol.codec import CodecError, Limits

INT64 = st.integers(min_value=codec.INT_MIN, max_value=codec.INT_MAX)
TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=20)
SCALARS = st.none() | st.booleans() | INT64 | st.floats(allow_nan=False, allow_infinity=False) | TEXT
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
                      max_leaves=30)
# Text that may hold lone surrogates, as Python strings can (json.loads makes them from escapes).
WILD_TEXT = st.text(st.characters(), max_size=12) | st.sampled_from(["\ud800", "a\udfffb", "\udc00"])


def _depth(value) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


def _has_surrogate(value) -> bool:
    if isinstance(value, str):
        return any(0xD800 <= ord(c) <= 0xDFFF for c in value)
    if isinstance(value, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(map(_has_surrogate, value))
    return False


# -- properties -----------------------------------------------------------------------------


@given(VALUES)
def test_plain_values_round_trip_and_are_valid_json_for_anyone(value):
    data = codec.encode(value)
    assert codec.decode(data) == value
    assert json.loads(data) == value
    assert codec.decode(json.dumps(value, indent=1)) == value  # agrees with Python's json on valid input


@given(st.binary(max_size=300))
@settings(max_examples=500)
def test_any_bytes_give_a_value_or_a_codec_error_never_another_exception(data):
    try:
        value = codec.decode(data)
    except CodecError as exc:
        assert len(str(exc)) < 600
        return
    codec.encode(value)  # whatever got in can go out: no NaN, surrogate or 65-bit integer slipped through


@given(VALUES, st.integers(min_value=0, max_value=400), st.sampled_from([
    b"NaN", b"-Infinity", b'"\\ud800"', b'"\\udfff"', b'{"\\udc00":1}', b'"\xed\xa0\x80"', b'"\xff"',
    b"1" * 25, b"-" + b"9" * 30, b"1e400", b"[" * 40 + b"]" * 40]))
def test_a_hostile_fragment_anywhere_in_a_document_is_refused_or_harmless(value, at, fragment):
    data = codec.encode(value)
    at = min(at, len(data))
    try:
        accepted = codec.decode(data[:at] + fragment + data[at:])
    except CodecError:
        return
    codec.encode(accepted)  # it landed somewhere harmless (inside a string): still plain, sendable data


@given(st.recursive(SCALARS | WILD_TEXT, lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(WILD_TEXT, inner, max_size=3), max_leaves=20))
def test_encode_refuses_lone_surrogates_in_values_and_keys_and_names_where(value):
    has_surrogate = _has_surrogate(value)
    try:
        data = codec.encode(value)
    except CodecError as exc:
        assert has_surrogate and "lone surrogate" in str(exc)
        return
    assert not has_surrogate and codec.decode(data) == value


@given(st.integers(min_value=1, max_value=80))
def test_depth_is_bounded_exactly(depth):
    data = b"[" * depth + b"]" * depth
    if depth <= codec.DEFAULT_LIMITS.max_depth:
        assert _depth(codec.decode(data)) == depth
    else:
        with pytest.raises(CodecError, match="nested deeper than 32 levels"):
            codec.decode(data)


@given(st.integers(min_value=-(2 ** 70), max_value=2 ** 70))
@example(-(2 ** 63) - 1)   # 19 digits, which orjson alone reads as a float
@example(-(2 ** 63))
@example(2 ** 63 - 1)
@example(2 ** 63)
@example(2 ** 64)
def test_integers_beyond_64_bits_are_refused_both_ways(number):
    inside = codec.INT_MIN <= number <= codec.INT_MAX
    data = json.dumps({"n": number}).encode()
    if inside:
        assert codec.decode(data) == {"n": number} and codec.encode({"n": number}) == data.replace(b" ", b"")
        return
    with pytest.raises(CodecError, match="beyond the 64-bit range") as err:
        codec.decode(data)
    assert err.value.pointer == "/n"
    with pytest.raises(CodecError, match="/n: the integer"):
        codec.encode({"n": number})


# -- each rule, named -------------------------------------------------------------------------


@pytest.mark.parametrize("raw, pointer, words", [
    (b'{"x":NaN}', "/x", "NaN is not a JSON number"),
    (b'{"a":{"b":[1,2,Infinity]}}', "/a/b/2", "Infinity is not a JSON number"),
    (b'[-Infinity]', "/0", "-Infinity is not a JSON number"),
    (b'{"p":{"x":1e400}}', "/p/x", "beyond the range of a 64-bit float"),
    (b'{"name":"\\ud800"}', "/name", "lone surrogate \\ud800"),
    (b'{"params":{"\\udc00":1}}', "/params/\\udc00", "lone surrogate \\udc00"),
    (b'{"n":"\xed\xa0\x80"}', "/n", "encoded surrogate"),
    (b'{"p":{"q":"\xff"}}', "/p/q", "not UTF-8: byte 0xff at offset 11"),
    (b'{"a":[1,' + b"9" * 25 + b"]}", "/a/1", "an integer of 25 digits is beyond the 64-bit range"),
    (b'{"a":' + b"9" * 5000 + b"}", "/a", "an integer of 5000 digits"),
    (b'{"ts":9223372036854775808}', "/ts", "beyond the 64-bit range"),
    (b"", "", "empty"),
    (b"   ", "", "empty"),
    (b'{"a":1,}', "/a", "not JSON"),
    (b"\xef\xbb\xbf{}", "", "byte order mark"),
    (b'{"deep":' + b"[" * 5000 + b"]" * 5000 + b"}", "/deep/0/0/0/0/…", "nested deeper than 32 levels"),
])
def test_each_refusal_names_what_and_where(raw, pointer, words):
    with pytest.raises(CodecError) as err:
        codec.decode(raw)
    assert words in str(err.value)
    assert err.value.pointer.startswith(pointer.rstrip("…")) if pointer else err.value.pointer == ""
    assert str(err.value).startswith(err.value.pointer or "/")


def test_the_size_limit_is_per_use_and_checked_before_parsing():
    small = Limits(max_bytes=100)
    with pytest.raises(CodecError, match="101 bytes is over the 100-byte limit"):
        codec.decode(b"[" + b"1," * 49 + b"1]", small)
    assert codec.decode(b"[" + b"1," * 48 + b"11]", small) == [1] * 48 + [11]
    with pytest.raises(CodecError, match="over the 100-byte limit"):
        codec.encode("x" * 200, small)


def test_messages_quote_at_most_a_short_excerpt_of_a_huge_bad_value():
    huge = '{"name":"' + "\u3042" * 300_000 + '\\ud800"}'
    with pytest.raises(CodecError) as err:
        codec.decode(huge.encode(), Limits(max_bytes=2 << 20))
    assert len(str(err.value)) < 200 and err.value.pointer == "/name"
    with pytest.raises(CodecError) as err:
        codec.encode({"k" * 100_000: float("nan")})
    assert len(str(err.value)) < 200 and "NaN" in str(err.value)


@pytest.mark.parametrize("value, pointer, words", [
    ({"x": math.nan}, "/x", "NaN"),
    ({"a": [1, {"b": -math.inf}]}, "/a/1/b", "-Infinity"),
    ({"n": "ok\ud800"}, "/n", "lone surrogate \\ud800"),
    ({"\udc00": 1}, "/\\udc00", "of a key"),
    ({1: 2}, "", "object key must be a string"),
    ({"o": object()}, "/o", "is not a JSON value"),
    ({"a/b": {"c~d": math.inf}}, "/a~1b/c~0d", "Infinity"),
])
def test_encode_never_writes_what_decode_refuses(value, pointer, words):
    with pytest.raises(CodecError) as err:
        codec.encode(value)
    assert err.value.pointer == pointer and words in str(err.value)


def test_text_input_and_check_follow_the_same_rules():
    assert codec.decode('{"日本":"語"}') == {"日本": "語"}
    with pytest.raises(CodecError, match="lone surrogate"):
        codec.decode('{"x":"\ud800"}')
    with pytest.raises(CodecError, match="/x/0: NaN"):
        codec.check({"x": [math.nan]})
    codec.check({"x": [1.5, "ok", None, True]})
    with pytest.raises(CodecError, match="expected JSON text"):
        codec.decode(42)  # type: ignore[arg-type]


def test_salvage_reads_what_a_refused_message_says_about_itself():
    raw = b'{"id":"abc","name":"look\\ud800","params":{"x":NaN}}'
    assert codec.salvage(raw) == {"id": "abc"}
    assert codec.salvage(b"[" * 100_000) == {}
    assert codec.salvage(b"\xff\xfe") == {}
    assert codec.salvage(b"x" * (2 << 20)) == {}


def test_float_subclasses_are_written_as_plain_numbers():
    """A detector's numpy float64 is a float: written as one (orjson alone refuses it), NaN still refused."""
    np = pytest.importorskip("numpy")
    assert codec.encode({"score": np.float64(0.5), "box": [np.float64(1)]}) == b'{"score":0.5,"box":[1.0]}'
    with pytest.raises(CodecError, match="/score: NaN"):
        codec.encode({"score": np.float64("nan")})

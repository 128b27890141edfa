"""Finding or starting the broker, and the errors when that cannot be done."""

from __future__ import annotations

import socket

import pytest

from edge.runtime.broker import BrokerAddress, BrokerError, LocalBroker, broker_answers, ensure_broker, find_mosquitto, free_port


def test_missing_binary_names_the_package(tmp_path):
    with pytest.raises(BrokerError) as err:
        find_mosquitto(path=str(tmp_path), places=())
    assert "apt-get install mosquitto" in str(err.value)


def test_starts_one_when_none_answers_and_stops_it():
    address = BrokerAddress("127.0.0.1", free_port())
    assert not broker_answers(address)
    started = ensure_broker(address)
    try:
        assert started is not None and broker_answers(address)
        assert ensure_broker(address) is None  # one is there now: reuse it
    finally:
        started.cleanup()
    assert not broker_answers(address)


def test_port_in_use_by_something_else_is_reported(tmp_path):
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        port = squatter.getsockname()[1]  # bound, not listening: mosquitto cannot take it
        with pytest.raises(BrokerError, match=f"port {port}"):
            LocalBroker(port=port, data_dir=tmp_path).start(timeout=5)


def test_a_port_it_chose_that_was_taken_meanwhile_is_chosen_again(tmp_path):
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        taken = squatter.getsockname()[1]
        broker = LocalBroker(data_dir=tmp_path)
        broker.port = taken  # as if another process bound it between free_port() and mosquitto
        broker.start(timeout=5)
        try:
            assert broker.port != taken and broker_answers(broker.address)
        finally:
            broker.stop()


@pytest.mark.parametrize("text, expected", [
    ("localhost:1884", BrokerAddress("localhost", 1884)), ("10.0.0.2", BrokerAddress("10.0.0.2", 1883)),
    (":1999", BrokerAddress("127.0.0.1", 1999)),
])
def test_address_parsing(text, expected):
    assert BrokerAddress.parse(text) == expected


@pytest.mark.parametrize("text, words", [("host:http", "not a number"), ("host:0", "outside"), ("host:70000", "outside")])
def test_bad_addresses(text, words):
    with pytest.raises(ValueError, match=words):
        BrokerAddress.parse(text)

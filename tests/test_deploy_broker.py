"""The broker profiles as installed, against real mosquitto and paho clients: the LAN profile
refuses wrong passwords and drops a publish outside a node's ACL; the TLS snippet works.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest
from deploy_harness import DEPLOY, Client, StagedBroker, env_value, stage_install


@pytest.fixture(scope="module")
def staged(tmp_path_factory):
    return stage_install(tmp_path_factory)


# -- the LAN broker profile against real clients -----------------------------------------------------

@pytest.fixture
def lan_broker(staged, tmp_path):
    broker = StagedBroker(staged.root, tmp_path / "broker").start()
    accounts = {name: env_value(staged.root / f"etc/companion/mqtt/{name}.env", "COMPANION_MQTT_PASSWORD")
                for name in ("brain", "body", "camera", "estop", "observer")}
    clients: list[Client] = []

    def login(user: str | None, password: str | None = None, **kw) -> Client:
        client = Client(kw.pop("port", broker.port), user, accounts.get(user) if password is None else password, **kw)
        clients.append(client)
        return client
    yield broker, login
    for client in clients:
        client.close()
    broker.stop()


def test_lan_broker_refuses_a_wrong_password_and_anonymous_clients(lan_broker):
    _, login = lan_broker
    assert login("brain", "not-the-password").connack().is_failure
    assert login(None).connack().is_failure
    assert not login("brain").connack().is_failure


def test_lan_broker_denies_a_publish_outside_the_nodes_acl(lan_broker):
    _, login = lan_broker
    observer, body, camera, brain, estop = (login(n) for n in ("observer", "body", "camera", "brain", "estop"))
    for client in (observer, body, camera, brain, estop):
        assert not client.connack().is_failure
    observer.subscribe("#")
    body.subscribe("actions")
    camera.subscribe("#")   # granted no reads: gets nothing
    # same connection, so the broker handles them in order: when the allowed one has arrived,
    # the denied one before it would have too
    camera.publish("actions", b"camera-action")
    camera.publish("estop", b"camera-estop")
    camera.publish("perceptions", b"camera-perception")
    seen = [payload for _, payload in observer.wait_for(b"camera-perception")]
    assert b"camera-action" not in seen and b"camera-estop" not in seen
    brain.publish("actions", b"brain-action")
    body.wait_for(b"brain-action")      # the body reads actions
    body.publish("actions", b"body-action")
    body.publish("actions/results", b"body-result")
    seen = [payload for _, payload in observer.wait_for(b"body-result")]
    assert b"body-action" not in seen
    estop.publish("estop", b"estop-engaged")
    observer.wait_for(b"estop-engaged")
    assert camera.received == []


def test_tls_listener_snippet_accepts_a_client_that_trusts_the_ca(staged, tmp_path):
    if shutil.which("openssl") is None:
        pytest.skip("openssl not installed")
    tls = tmp_path / "tls"
    tls.mkdir()
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(tls / "server.key"), "-out", str(tls / "server.crt")],
                   check=True, capture_output=True)
    shutil.copy(tls / "server.crt", tls / "ca.crt")  # self-signed: its own authority
    root = tmp_path / "root"
    shutil.copytree(staged.root / "etc", root / "etc")
    broker = StagedBroker(root, tmp_path / "broker")
    tls_port = broker.port + 1 if broker.port < 65535 else broker.port - 1
    snippet = (DEPLOY / "mosquitto/tls.conf.example").read_text()
    snippet = snippet.replace("listener 8883", f"listener {tls_port} 127.0.0.1")
    (root / "etc/companion/mosquitto/conf.d/tls.conf").write_text(
        snippet.replace("/etc/companion/mosquitto/tls", str(tls)))
    broker.start()
    try:
        password = env_value(root / "etc/companion/mqtt/brain.env", "COMPANION_MQTT_PASSWORD")
        client = Client(tls_port, "brain", password, tls_ca=tls / "ca.crt")
        try:
            assert not client.connack().is_failure  # the LAN accounts apply on this listener too
        finally:
            client.close()
    finally:
        broker.stop()

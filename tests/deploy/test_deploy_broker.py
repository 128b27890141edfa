"""The broker profiles as installed, against real mosquitto and paho clients: one account per node,
named after the node's client id; each may publish only its own status and its own topics (a
forged status, or a last will on another node's status, never reaches a subscriber); no account
can take over another node's session; the password files are the installer's documented modes;
the TLS snippet works.
"""

from __future__ import annotations

import json
import shutil
import stat
import subprocess
import threading

import pytest
from deploy_harness import DEPLOY, Client, StagedBroker, copy_of, env_value, run_install, stage_install

from edge.config import load_toml
from edge.runtime.bus import Bus, client_id_for
from edge.perception.camera.node import default_node_id as camera_id
from edge.perception.microphone.node import default_node_id as mic_id
from edge.protocol.companion import load_companion
from edge.protocol.payloads import Action, ActionResult
from edge.services.gateway import GatewayConfig


@pytest.fixture(scope="module")
def staged(tmp_path_factory):
    return stage_install(tmp_path_factory)


def node_ids(root) -> dict[str, str]:
    """unit -> the node id its process takes, as the nodes compute it (not as the installer does)."""
    pip = load_companion(root / "etc/companion/companions/pip.json")
    return {"body": "body", "brain": f"brain-{pip.id}", "camera": camera_id("0"), "mic": mic_id("default"),
            "gateway": f"gateway-{GatewayConfig().port}", "registry": "registry"}


def password(root, file: str) -> str:
    return env_value(root / f"etc/companion/mqtt/{file}.env", "COMPANION_MQTT_PASSWORD")


def wait_for_state(observer: Client, topic: str, state: str, timeout: float = 10.0) -> None:
    """Until ``observer`` has received a status on ``topic`` with this state (its ts varies)."""
    with observer.got:
        assert observer.got.wait_for(
            lambda: any(t == topic and json.loads(p).get("state") == state for t, p in observer.received), timeout), \
            f"no {state} on {topic}; got {observer.received}"


# -- the LAN broker profile against real clients -----------------------------------------------------

@pytest.fixture
def lan_broker(staged, tmp_path):
    broker = StagedBroker(staged.root, tmp_path / "broker").start()
    ids = node_ids(staged.root)
    logins = {ids[unit]: password(staged.root, unit) for unit in ids}
    logins.update({tool: password(staged.root, tool) for tool in ("estop", "observer")})
    clients: list[Client] = []

    def login(user: str | None, password: str | None = None, **kw) -> Client:
        client = Client(broker.port, user, logins.get(user or "") if password is None else password, **kw)
        clients.append(client)
        return client
    yield broker, login, ids
    for client in clients:
        client.close()
    broker.stop()


def test_lan_broker_refuses_a_wrong_password_and_anonymous_clients(lan_broker, staged):
    _, login, _ = lan_broker
    assert login("body", "not-the-password").connack().is_failure
    assert login(None).connack().is_failure
    assert login("camera", password(staged.root, "camera")).connack().is_failure  # no role accounts any more
    assert not login("body").connack().is_failure


def test_each_account_publishes_only_its_own_status_and_topics(lan_broker):
    _, login, ids = lan_broker
    names = ("observer", "body", ids["camera"], ids["brain"], "estop")
    observer, body, camera, brain, estop = (login(n) for n in names)
    for client in (observer, body, camera, brain, estop):
        assert not client.connack().is_failure
    observer.subscribe("#")
    body.subscribe("actions")
    camera.subscribe("#")   # granted no reads: gets nothing
    # one connection, so the broker handles them in order: once the allowed one has arrived,
    # a denied one sent before it would have too
    forged = b'{"node":"body","kind":"body","state":"offline","ts":1}'
    camera.publish("status/body", forged)
    brain_offline = json.dumps({"node": ids["brain"], "kind": "brain", "state": "offline", "ts": 1}).encode()
    camera.publish(f"status/{ids['brain']}", brain_offline)   # what sent the head to its safe pose
    camera.publish("actions", b"camera-action")
    camera.publish("estop", b"camera-estop")
    camera.publish(f"status/{ids['camera']}", b"camera-status")
    camera.publish("perceptions", b"camera-perception")
    seen = [payload for _, payload in observer.wait_for(b"camera-perception")]
    assert b"camera-status" in seen
    assert not {forged, brain_offline, b"camera-action", b"camera-estop"} & set(seen)
    brain.publish("actions", b"brain-action")
    body.wait_for(b"brain-action")      # the body reads actions
    body.publish("actions", b"body-action")
    body.publish(f"status/{ids['brain']}", b"body-forges-brain-status")
    body.publish("actions/results", b"body-result")
    seen = [payload for _, payload in observer.wait_for(b"body-result")]
    assert b"body-action" not in seen and b"body-forges-brain-status" not in seen
    estop.publish("estop", b"estop-engaged")
    observer.wait_for(b"estop-engaged")
    assert camera.received == []


def test_a_last_will_on_another_nodes_status_is_never_sent(lan_broker):
    broker, login, ids = lan_broker
    observer = login("observer")
    observer.subscribe("#")
    forger = login(ids["camera"], will=("status/body", b"forged-will"))
    assert not forger.connack().is_failure
    forger.drop()
    broker.wait_for_log(f"Client {ids['camera']} closed its connection")
    honest = login(ids["mic"], will=(f"status/{ids['mic']}", b"honest-will"))
    assert not honest.connack().is_failure
    honest.drop()
    seen = [payload for _, payload in observer.wait_for(b"honest-will")]   # the same path, allowed
    assert b"forged-will" not in seen


def test_an_account_cannot_take_over_another_nodes_session(lan_broker, staged, monkeypatch):
    """The camera account asking for the body's client id gets its own: the body stays connected,
    keeps its session, and still does its job."""
    _, login, ids = lan_broker
    monkeypatch.setenv("COMPANION_MQTT_PASSWORD", password(staged.root, "body"))
    monkeypatch.delenv("COMPANION_MQTT_USERNAME", raising=False)
    actions: list[Action] = []
    arrived = threading.Condition()

    def on_action(action: Action) -> None:
        with arrived:
            actions.append(action)
            arrived.notify_all()
    body = Bus("body", "body", f"127.0.0.1:{lan_broker[0].port}")
    body.subscribe(Action, on_action)
    observer, brain = login("observer"), login(ids["brain"])
    observer.subscribe("#")
    body.connect(timeout=10)
    try:
        assert body.client_id == "body"
        wait_for_state(observer, "status/body", "online")   # its status and will topic are its own
        thief = login(ids["camera"], client_id=body.client_id)
        assert not thief.connack().is_failure
        sent = [Action(name="look", params={"x": 0.1 * n}, sender="pip") for n in (1, 2)]
        for action in sent:
            brain.publish("actions", action.encode())
        with arrived:
            assert arrived.wait_for(lambda: len(actions) == 2, 10), actions
        assert [a.id for a in actions] == [a.id for a in sent]
        result = ActionResult(id=sent[0].id, name="look", ok=True, sender="pip", started=1.0, finished=2.0)
        body.publish(result)
        observer.wait_for(result.encode())
        assert body.connects == 1 and body.connected, "the body was knocked off the broker"
    finally:
        body.close()


@pytest.mark.parametrize("unit", ["registry", "brain", "camera", "mic", "gateway"])
def test_every_installed_node_logs_in_with_its_units_password(lan_broker, staged, monkeypatch, unit):
    """The accounts match the node ids the nodes use: each comes online on its own status topic."""
    broker, login, ids = lan_broker
    monkeypatch.setenv("COMPANION_MQTT_PASSWORD", password(staged.root, unit))
    monkeypatch.delenv("COMPANION_MQTT_USERNAME", raising=False)
    observer = login("observer")
    observer.subscribe(f"status/{ids[unit]}")
    bus = Bus(ids[unit], unit, f"127.0.0.1:{broker.port}", persistent=False).connect(timeout=10)
    try:
        wait_for_state(observer, f"status/{ids[unit]}", "online")
    finally:
        bus.close()
    wait_for_state(observer, f"status/{ids[unit]}", "offline")


# -- the files the installer writes ------------------------------------------------------------------

def mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_password_files_are_readable_by_root_alone(staged):
    """systemd reads a unit's EnvironmentFile= as root and hands the password to that unit only;
    no node (user companion) can read any password file (docs/deploy.md)."""
    etc = staged.root / "etc/companion"
    assert mode(etc / "mqtt") == 0o700
    files = sorted(p.name for p in (etc / "mqtt").glob("*.env"))
    assert files == ["body.env", "brain.env", "camera.env", "estop.env", "gateway.env", "mic.env",
                     "observer.env", "registry.env"]
    for name in files:
        assert mode(etc / "mqtt" / name) == 0o600, name
    assert mode(etc / "mosquitto/passwd") == 0o640 and mode(etc / "mosquitto/acl") == 0o640
    passwd = (etc / "mosquitto/passwd").read_text()
    users = sorted(line.split(":", 1)[0] for line in passwd.splitlines())
    assert users == sorted([*node_ids(staged.root).values(), "estop", "observer"])
    assert all(line.split(":", 1)[1].startswith("$7$") for line in passwd.splitlines()), "mosquitto_passwd hashes"
    with pytest.raises(KeyError):   # a node logs in as its own client id
        env_value(etc / "mqtt/body.env", "COMPANION_MQTT_USERNAME")
    assert env_value(etc / "mqtt/estop.env", "COMPANION_MQTT_USERNAME") == "estop"


def test_a_rerun_over_role_accounts_keeps_passwords_and_drops_the_old_accounts(staged, tmp_path):
    root = copy_of(staged, tmp_path)
    etc = root / "etc/companion"
    body = password(root, "body")
    (etc / "mqtt/body.env").write_text(f"COMPANION_MQTT_USERNAME=body\nCOMPANION_MQTT_PASSWORD={body}\n")
    (etc / "mqtt/.passwd.sha256").unlink()
    subprocess.run(["mosquitto_passwd", "-b", str(etc / "mosquitto/passwd"), "camera", "old"], check=True)
    again = run_install(tmp_path, "--lan", root=root)
    assert again.rc == 0, again.out
    assert password(root, "body") == body
    assert "COMPANION_MQTT_USERNAME" not in (etc / "mqtt/body.env").read_text()
    users = {line.split(":", 1)[0] for line in (etc / "mosquitto/passwd").read_text().splitlines()}
    assert "camera" not in users and "body" in users


def test_namespace_tracking_camera_and_mcp_shape_the_accounts(tmp_path):
    config = tmp_path / "robot.toml"
    config.write_text((DEPLOY / "robot.example.toml").read_text().replace('# namespace = "robot1"',
                                                                           'namespace = "robot1"'))
    root = tmp_path / "root"
    (root / "etc/companion").mkdir(parents=True)
    (root / "etc/companion/companion.env").write_text("COMPANION_CAMERA_SOURCE=/dev/video2\n"
                                                      "COMPANION_CAMERA_ARGS=--track --fps 5\n")
    run = run_install(tmp_path, "--lan", "--config", str(config), "--with", "mcp", root=root)
    assert run.rc == 0, run.out
    # the old units' flags moved into robot.toml, which the units now read alone
    camera_section = load_toml(root / "etc/companion/robot.toml").section("camera")
    assert (camera_section.source, camera_section.track, camera_section.fps) == ("/dev/video2", True, 5.0)
    assert "moved COMPANION_CAMERA_SOURCE from companion.env to robot.toml [camera] source" in run.out
    assert "\n# moved to robot.toml [camera] track, fps by install.sh: COMPANION_CAMERA_ARGS=--track --fps 5\n" \
        in (root / "etc/companion/companion.env").read_text()
    acl = (root / "etc/companion/mosquitto/acl").read_text()
    mcp = f"mcp-{load_companion(root / 'etc/companion/companions/pip.json').id}"
    assert f"user {mcp}@robot1\ntopic write robot1/status/{mcp}\ntopic write robot1/actions\n" in acl
    camera = acl[acl.index("user camera-video2@robot1\n"):].split("\n\n")[0].splitlines()
    assert camera[1:] == ["topic write robot1/status/camera-video2", "topic write robot1/perceptions",
                          "topic write robot1/actions"]
    body = acl[acl.index("user body@robot1\n"):].split("\n\n")[0]
    assert "topic write robot1/status/body\n" in body and "status/+" not in body.replace("read robot1/status/+", "")
    assert "topic write messages\n" in acl  # companions on other robots talk through it
    assert "@NS@" not in acl and "@NODE@" not in acl and "topic write actions\n" not in acl


# -- TLS ----------------------------------------------------------------------------------------------

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
    broker = StagedBroker(root, tmp_path / "broker", tls=tls).start()
    try:
        client = Client(broker.tls_port, client_id_for("body"), password(root, "body"), tls_ca=tls / "ca.crt")
        try:
            assert not client.connack().is_failure  # the LAN accounts apply on this listener too
        finally:
            client.close()
    finally:
        broker.stop()

"""Helpers for tests/deploy/test_deploy.py: run deploy/install.sh against a fake machine, and start
mosquitto with the configuration it staged.

The "machine" is a few files the installer's detection reads (os-release, the device-tree
model, Jetson's nv_tegra_release) and a /dev folder; --root keeps every file it writes in a
temporary folder, so nothing here touches the real system.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from edge.runtime.broker import BrokerAddress, broker_answers, free_port
from repo_paths import REPO

REPO = REPO
DEPLOY = REPO / "deploy"
INSTALL = DEPLOY / "install.sh"
VENV = Path(sys.prefix)  # the venv running the tests stands in for /opt/companion-edge/venv

MACHINES = {
    "pi": {"os": 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\nVERSION_CODENAME=bookworm\n',
           "model": "Raspberry Pi 5 Model B Rev 1.0\0", "arch": "aarch64"},
    "pi32": {"os": 'PRETTY_NAME="Raspbian GNU/Linux 12 (bookworm)"\nID=raspbian\nID_LIKE=debian\n',
             "model": "Raspberry Pi 4 Model B Rev 1.4\0", "arch": "armhf"},
    "jetson": {"os": 'PRETTY_NAME="Ubuntu 22.04.5 LTS"\nID=ubuntu\nID_LIKE=debian\nVERSION_CODENAME=jammy\n',
               "model": "NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super\0", "arch": "aarch64",
               "tegra": "# R36 (release), REVISION: 4.0, GCID: 37537400, BOARD: generic, EABI: aarch64\n"},
    "fedora": {"os": 'PRETTY_NAME="Fedora Linux 40"\nID=fedora\n', "model": "", "arch": "x86_64"},
}


@dataclass
class Run:
    rc: int
    out: str
    root: Path | None

    def lines_with(self, text: str) -> list[str]:
        return [line.strip() for line in self.out.splitlines() if text in line]


def fake_machine(where: Path, kind: str) -> dict[str, str]:
    """Files describing a machine of ``kind``; the environment that points the installer at them."""
    spec = MACHINES[kind]
    where.mkdir(parents=True, exist_ok=True)
    (where / "os-release").write_text(spec["os"])
    (where / "model").write_text(spec["model"])
    dev = where / "dev"
    dev.mkdir(exist_ok=True)
    env = {"INSTALL_OS_RELEASE": str(where / "os-release"), "INSTALL_DT_MODEL": str(where / "model"),
           "INSTALL_ARCH": spec["arch"], "INSTALL_DEV": str(dev),
           "INSTALL_TEGRA_RELEASE": str(where / "no-tegra")}
    if "tegra" in spec:
        (where / "nv_tegra_release").write_text(spec["tegra"])
        env["INSTALL_TEGRA_RELEASE"] = str(where / "nv_tegra_release")
    return env


def run_install(tmp: Path, *args: str, machine: str = "pi", root: Path | None = None,
                env: dict[str, str] | None = None) -> Run:
    """``install.sh ARGS`` on a fake machine; with ``root`` files are staged there (--root)."""
    env = {**os.environ, **fake_machine(tmp / f"machine-{machine}", machine), **(env or {})}
    argv = ["bash", str(INSTALL), *args]
    if root is not None:
        argv += ["--root", str(root), "--venv", str(VENV)]
    proc = subprocess.run(argv, check=False, env=env, capture_output=True, text=True, timeout=60)
    return Run(proc.returncode, proc.stdout + proc.stderr, root)


def env_value(path: Path, key: str) -> str:
    for line in path.read_text().splitlines():
        if line.startswith(key + "="):
            return line.split("=", 1)[1]
    raise KeyError(f"{key} not in {path}")


class StagedBroker:
    """mosquitto with a staged /etc/companion/mosquitto/mosquitto.conf: the same file, with only
    its port, its paths (under the staging root) and ``user root`` (needed as root) changed.

    With ``tls`` (a folder holding server.crt, server.key, ca.crt) the deploy's TLS snippet is
    installed too, on a second free port (``tls_port``)."""

    def __init__(self, root: Path, workdir: Path, tls: Path | None = None):
        self.root, self.workdir, self.tls = root, workdir, tls
        self.port = free_port()
        self.tls_port = free_port()
        self.process: subprocess.Popen | None = None

    def config(self) -> Path:
        etc = self.root / "etc" / "companion"
        text = (etc / "mosquitto" / "mosquitto.conf").read_text()
        assert "listener 1883\n" in text or "listener 1883 127.0.0.1\n" in text, text
        text = text.replace("listener 1883 127.0.0.1\n", "listener 1883\n")
        text = text.replace("listener 1883\n", f"listener {self.port} 127.0.0.1\n")
        text = text.replace("/etc/companion", str(etc))
        text = text.replace("/var/lib/companion-broker/", f"{self.workdir}/")
        if os.geteuid() == 0:
            text += "user root\n"
        if self.tls is not None:
            snippet = (DEPLOY / "mosquitto/tls.conf.example").read_text()
            assert "listener 8883\n" in snippet, snippet
            snippet = snippet.replace("listener 8883\n", f"listener {self.tls_port} 127.0.0.1\n")
            (etc / "mosquitto/conf.d/tls.conf").write_text(snippet.replace("/etc/companion/mosquitto/tls", str(self.tls)))
        conf = self.workdir / "mosquitto.conf"
        conf.write_text(text)
        return conf

    def start(self, attempts: int = 3) -> StagedBroker:
        """Start it; a port taken between choosing and binding it (other tests run alongside) is
        chosen again, up to ``attempts`` times."""
        for attempt in range(1, attempts + 1):
            if self._start_once():
                return self
            if "Address already in use" not in self.log.read_text() or attempt == attempts:
                raise RuntimeError(f"mosquitto did not start: {self.log.read_text()}")
            self.port, self.tls_port = free_port(), free_port()
        raise AssertionError("unreachable")

    def _start_once(self) -> bool:
        self.workdir.mkdir(parents=True, exist_ok=True)
        conf = self.config()
        self.log = self.workdir / "mosquitto.log"
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(["/usr/sbin/mosquitto", "-c", str(conf)], stdout=log, stderr=log,
                                            start_new_session=True)
        deadline = time.monotonic() + 10
        while not broker_answers(BrokerAddress("127.0.0.1", self.port), timeout=0.2):
            if self.process.poll() is not None:
                return False
            if time.monotonic() > deadline:
                raise RuntimeError(f"mosquitto did not start: {self.log.read_text()}")
            time.sleep(0.05)
        return True

    def wait_for_log(self, text: str, timeout: float = 5.0) -> None:
        """Until mosquitto's log (connection_messages) has a line with ``text``."""
        deadline = time.monotonic() + timeout
        while text not in self.log.read_text(errors="replace"):
            assert time.monotonic() < deadline, f"mosquitto never logged {text!r}: {self.log.read_text()[-2000:]}"
            time.sleep(0.02)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(5)


class Client:
    """A plain paho client with a login, recording what it receives."""

    def __init__(self, port: int, user: str | None, password: str | None, tls_ca: Path | None = None,
                 client_id: str | None = None, will: tuple[str, bytes] | None = None):
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id or f"test-{user}-{port}-{id(self)}",
                                  clean_session=True, protocol=mqtt.MQTTv311)
        if will is not None:
            self.client.will_set(will[0], will[1], qos=1, retain=True)
        if user is not None:
            self.client.username_pw_set(user, password)
        if tls_ca is not None:
            self.client.tls_set(ca_certs=str(tls_ca))
        self.received: list[tuple[str, bytes]] = []
        self.got = threading.Condition()
        self._connack = threading.Event()
        self._subacks: dict[int, threading.Event] = {}
        self.reason = None
        self.client.on_connect = self._on_connect
        self.client.on_message = self._on_message
        self.client.on_subscribe = self._on_subscribe
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()

    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        self.reason = reason_code
        if reason_code.is_failure:
            client.disconnect()  # refused: no reconnect attempts in the background
        self._connack.set()

    def _on_message(self, client, userdata, msg) -> None:
        with self.got:
            self.received.append((msg.topic, msg.payload))
            self.got.notify_all()

    def _on_subscribe(self, client, userdata, mid, reason_codes, properties) -> None:
        self._subacks.setdefault(mid, threading.Event()).set()

    def connack(self, timeout: float = 5.0):
        assert self._connack.wait(timeout), "no CONNACK from the broker"
        return self.reason

    def subscribe(self, topic: str) -> None:
        result, mid = self.client.subscribe(topic, qos=1)
        assert result == mqtt.MQTT_ERR_SUCCESS and mid is not None
        assert self._subacks.setdefault(mid, threading.Event()).wait(5), f"no SUBACK for {topic}"

    def publish(self, topic: str, payload: bytes) -> None:
        self.client.publish(topic, payload, qos=1).wait_for_publish(5)

    def wait_for(self, payload: bytes, timeout: float = 5.0) -> list[tuple[str, bytes]]:
        """Everything received up to and including ``payload``."""
        with self.got:
            assert self.got.wait_for(lambda: any(p == payload for _, p in self.received), timeout), \
                f"{payload!r} never arrived; got {self.received}"
            return list(self.received)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()

    def drop(self) -> None:
        """Lose the connection without a DISCONNECT, as a crash would: the broker sends the will."""
        self.client.loop_stop()
        sock = self.client.socket()
        if sock is not None:
            sock.close()


def tool(*argv: str) -> subprocess.CompletedProcess:
    """Run a checker from the repository root; the test judges its exit status and output."""
    return subprocess.run(argv, check=False, cwd=REPO, capture_output=True, text=True, timeout=60)


_STAGED: dict[Path, Run] = {}


def stage_install(tmp_path_factory) -> Run:
    """One standard install with the LAN broker, staged under a temporary root, shared by the
    test files of a session (read only: a test that installs over it works on ``copy_of``)."""
    key = tmp_path_factory.getbasetemp()
    if key not in _STAGED:
        tmp = tmp_path_factory.mktemp("install")
        run = run_install(tmp, "--lan", root=tmp / "root")
        assert run.rc == 0, run.out
        _STAGED[key] = run
    return _STAGED[key]


def copy_of(staged: Run, tmp_path: Path) -> Path:
    """A private copy of the staged root (modes and times kept), to install over again."""
    assert staged.root is not None, "not a staged install"
    root = tmp_path / "root"
    shutil.copytree(staged.root, root, symlinks=True)
    return root

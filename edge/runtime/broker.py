"""Find a broker at the configured address, or start Debian's ``mosquitto`` on loopback.

The embedded default: a user who runs ``companion up`` with no broker gets one, listening
only on 127.0.0.1, with persistence in a temporary directory (so a QoS-1 session survives a
broker restart within the run) and TCP_NODELAY (Nagle + delayed ACK costs ~40-90 ms a hop;
measured in docs/protocol.md, "Facts the code relies on").
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from edge.log import get_logger

log = get_logger(__name__)

MOSQUITTO_HINT = "install it with: sudo apt-get install mosquitto  (Debian, Ubuntu, Raspberry Pi OS)"


class BrokerError(RuntimeError):
    """The broker could not be found or started; the message says why and what to do."""


@dataclass(frozen=True)
class BrokerAddress:
    host: str = "127.0.0.1"
    port: int = 1883

    @classmethod
    def parse(cls, text: str) -> "BrokerAddress":
        """``HOST:PORT``, ``HOST`` or ``:PORT``; a bad port is a ValueError naming it."""
        host, sep, port = text.rpartition(":")
        if not sep:
            return cls(host=text or "127.0.0.1")
        try:
            number = int(port)
        except ValueError:
            raise ValueError(f"broker address {text!r}: port {port!r} is not a number") from None
        if not 0 < number < 65536:
            raise ValueError(f"broker address {text!r}: port {number} is outside 1..65535")
        return cls(host=host.strip("[]") or "127.0.0.1", port=number)

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


def broker_answers(address: BrokerAddress, timeout: float = 0.5) -> bool:
    """True when something accepts TCP connections at the address (a cheap liveness probe)."""
    try:
        with socket.create_connection((address.host, address.port), timeout=timeout):
            return True
    except OSError:
        return False


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


MOSQUITTO_PLACES = ("/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto")  # sbin is often not on a user's PATH


def find_mosquitto(path: str | None = None, places: tuple[str, ...] = MOSQUITTO_PLACES) -> str:
    for candidate in (shutil.which("mosquitto", path=path), *places):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise BrokerError(f"the mosquitto broker is not installed; {MOSQUITTO_HINT}")


def _die_with_parent() -> None:
    """In the child: ask Linux to SIGTERM mosquitto if we die, so a killed ``companion up``
    leaves no broker behind holding the port."""
    try:
        import ctypes
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _config_text(port: int, data_dir: Path) -> str:
    lines = [
        f"listener {port} 127.0.0.1",
        "allow_anonymous true",
        "set_tcp_nodelay true",
        "persistence true",
        f"persistence_location {data_dir}/",
        "autosave_interval 1",
        "max_queued_messages 10000",
        "log_dest stderr",
        "log_type error",
        "log_type warning",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        lines.append("user root")  # else mosquitto 2.0 drops to 'mosquitto', can't write our dir (docs/protocol.md)
    return "\n".join(lines) + "\n"


def _end(proc: subprocess.Popen, timeout: float) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class LocalBroker:
    """A mosquitto process on loopback that this program owns; ``stop()`` or the context exit ends it."""

    def __init__(self, port: int | None = None, data_dir: str | os.PathLike | None = None):
        self.port = port or free_port()
        self._port_chosen_here = port is None  # then another may take it before mosquitto binds it
        self._own_dir = data_dir is None
        self.data_dir = Path(data_dir or tempfile.mkdtemp(prefix="companion-mosquitto-"))
        self.process: subprocess.Popen | None = None
        self.restarts = 0                     # how many times the watcher brought it back
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._watcher: threading.Thread | None = None

    @property
    def address(self) -> BrokerAddress:
        return BrokerAddress("127.0.0.1", self.port)

    def start(self, timeout: float = 10.0, attempts: int = 3) -> "LocalBroker":
        """Start mosquitto; a port this broker chose itself that was taken before mosquitto could
        bind it is chosen again, up to ``attempts`` times."""
        self._stopping.clear()
        for attempt in range(1, attempts + 1):
            try:
                return self._spawn(timeout)
            except BrokerError as err:
                if not (self._port_chosen_here and "Address already in use" in str(err)) or attempt == attempts:
                    raise
                log.info("broker.port_taken", port=self.port, attempt=attempt)
                self.port = free_port()
        raise AssertionError("unreachable")

    def _spawn(self, timeout: float) -> "LocalBroker":
        """Start mosquitto and wait until it accepts connections; the watcher calls this too."""
        binary = find_mosquitto()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        conf = self.data_dir / "mosquitto.conf"
        conf.write_text(_config_text(self.port, self.data_dir))
        log.info("broker.starting", binary=binary, port=self.port, config=str(conf))
        self.log_path = self.data_dir / "mosquitto.log"
        with self._lock:
            if self._stopping.is_set():  # stop() won the race: start nothing it would not end
                raise BrokerError(f"the broker on port {self.port} is stopping")
            with open(self.log_path, "ab") as log_file:
                proc = self.process = subprocess.Popen([binary, "-c", str(conf)], stdout=subprocess.DEVNULL,
                                                       stderr=log_file, start_new_session=True,
                                                       preexec_fn=_die_with_parent)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                err = self.log_path.read_text(errors="replace").strip()[-500:]
                raise BrokerError(f"mosquitto exited with code {proc.returncode} on port {self.port}: {err}")
            if broker_answers(self.address, timeout=0.2):
                log.info("broker.ready", address=str(self.address))
                return self
            time.sleep(0.05)
        _end(proc, 5.0)
        raise BrokerError(f"mosquitto did not accept connections on {self.address} within {timeout:.0f} s")

    def stop(self, timeout: float = 5.0) -> None:
        """SIGTERM (mosquitto saves its persistence file), then SIGKILL if it lingers; the
        watcher, if any, sees the exit as asked for and ends."""
        with self._lock:
            self._stopping.set()
            proc, self.process = self.process, None
        if proc is not None:
            _end(proc, timeout)
        watcher = self._watcher
        if watcher is not None and watcher is not threading.current_thread():
            watcher.join(timeout)

    def watch(self, notify: Callable[[str], None], max_delay_s: float = 10.0) -> "LocalBroker":
        """Restart mosquitto on the same port whenever it dies, saying so through ``notify``.

        The nodes' buses reconnect by themselves and, with persistent sessions restored from
        the persistence file, get what was queued for them. The watcher thread also spawns the
        new process, and must outlive it: PR_SET_PDEATHSIG fires when the spawning thread ends.
        """
        if self._watcher is None or not self._watcher.is_alive():
            self._watcher = threading.Thread(target=self._watch, args=(notify, max_delay_s),
                                             name="broker-watch", daemon=True)
            self._watcher.start()
        return self

    def _watch(self, notify: Callable[[str], None], max_delay_s: float) -> None:
        while not self._stopping.is_set():
            proc = self.process
            if proc is None:
                return
            code = proc.wait()
            if self._stopping.is_set():
                return
            how = f"killed by signal {-code}" if code < 0 else f"exited with code {code}"
            self._say(notify, f"broker lost: restarting mosquitto on {self.address} (it was {how})")
            log.warning("broker.lost", address=str(self.address), exit_code=code)
            delay = 0.5
            while not self._stopping.is_set():
                try:
                    self._spawn(10.0)
                except (BrokerError, OSError) as exc:
                    self._say(notify, f"broker restart failed: {exc}; retrying in {delay:.1f} s")
                    if self._stopping.wait(delay):
                        return
                    delay = min(delay * 2, max_delay_s)
                    continue
                self.restarts += 1
                self._say(notify, f"broker back: mosquitto listens on {self.address} again; nodes reconnect")
                break

    @staticmethod
    def _say(notify: Callable[[str], None], text: str) -> None:
        try:
            notify(text)
        except Exception as exc:  # a closed console must not stop the watcher
            log.warning("broker.notify_failed", error=repr(exc))

    def cleanup(self) -> None:
        self.stop()
        if self._own_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def __enter__(self) -> "LocalBroker":
        return self.start() if self.process is None else self

    def __exit__(self, *exc) -> None:
        self.cleanup()


def ensure_broker(address: BrokerAddress, start_if_missing: bool = True) -> LocalBroker | None:
    """Return None when a broker already answers at ``address``; otherwise start one there.

    Only a loopback address can be started locally; a remote one that does not answer is an
    error naming the address.
    """
    if broker_answers(address):
        log.info("broker.found", address=str(address))
        return None
    if not start_if_missing:
        raise BrokerError(f"no MQTT broker answers at {address}")
    if address.host not in ("127.0.0.1", "localhost", "::1"):
        raise BrokerError(f"no MQTT broker answers at {address}, and a broker can only be started on loopback")
    return LocalBroker(port=address.port).start()

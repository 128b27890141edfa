"""The MQTT client every node uses (paho-mqtt 2.x): typed publish/subscribe over the wire contract.

What a node gets from ``Bus`` without thinking about it:
- connect with backoff (paho's reconnect loop), and a log line saying what it waits for;
- a persistent session (clean_session False, a stable client id), so QoS-1 messages queued
  for it survive its own reconnects and a broker restart;
- resubscription after every reconnect;
- a retained ``status/<node>`` of ``online``, a last will of ``offline``, and a clean
  shutdown that publishes ``offline`` itself;
- every received message handed to the shared ``Guard`` (edge/runtime/guard.py): decoded by the
  strict wire codec, validated against its schema, and nothing a message or a handler does can
  kill paho's network thread; failures and messages nobody handles are logged, counted in
  ``errors`` and shown on our ``status/<node>``. ``edge.runtime.local`` runs the same path in-process;
- handlers registered before ``connect`` are subscribed in ``on_connect``, so what the broker
  kept for our persistent session is handled, not lost, when we come back;
- ``wait_subscribed()`` returns once the broker acknowledged every subscription (SUBACK);
- TCP_NODELAY on the socket (~88 ms vs ~0.3 ms per QoS-1 hop: docs/protocol.md, "Facts the code relies on").
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any, Callable

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from edge import environment
from edge.runtime.broker import BrokerAddress
from edge.log import get_logger
from edge.protocol.payloads import NodeState, Payload, Status
from edge.runtime.guard import Guard
from edge.runtime.transport import InvalidHandler, P, TransportError

log = get_logger(__name__)

def client_id_for(node_id: str, namespace: str | None = None) -> str:
    """``<node id>@<namespace>``: two robots sharing a broker keep apart sessions. On the LAN
    broker it is also the node's account name (deploy/lib/broker_accounts.py)."""
    return f"{node_id}@{namespace}" if namespace else node_id


class BusError(TransportError):
    """The broker could not be reached in time, or a publish failed."""


class Bus:
    """One node's connection to the broker. Handlers run on paho's network thread: keep them short."""

    def __init__(self, node_id: str, kind: str, broker: BrokerAddress | str = BrokerAddress(),
                 namespace: str | None = None, persistent: bool = True, announce: bool = True,
                 keepalive: int = 10, status: dict[str, Any] | None = None, renamable: bool = False):
        self.node_id = node_id
        self.renamable = renamable  # `companion run KIND --node-id ID` names it (its row in edge/kinds.py)
        self.kind = kind
        self.broker = BrokerAddress.parse(broker) if isinstance(broker, str) else broker
        self.namespace = namespace or None
        self.announce = announce
        self.guard = Guard(node_id, kind, self.namespace)
        self.guard.status_extra = dict(status or {})  # details our ``online`` carries (set_status changes them)
        self._lock = threading.Lock()
        self._connected = threading.Event()
        self._closing = False
        self._keepalive = keepalive
        self.connects = 0  # how many times a connection was (re)established; tests watch it
        self._sub_cond = threading.Condition(self._lock)
        self._pending_mids: set[int] = set()
        self._early_acks: set[int] = set()
        self._short_sessions = 0
        self.client_id = client_id_for(node_id, self.namespace)
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=self.client_id,
                                  clean_session=not persistent, protocol=mqtt.MQTTv311)
        self.client.max_queued_messages_set(0)  # unlimited: QoS-1 sends wait out a broker restart
        self.client.max_inflight_messages_set(100)
        self.client.reconnect_delay_set(min_delay=1, max_delay=16)
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect
        self.client.on_message = self._on_message
        self.client.on_socket_open = self._on_socket_open
        self.client.on_subscribe = self._on_subscribe
        self._credentials_from_env()
        if announce:
            offline = self._status("offline")
            self.client.will_set(offline.topic(self.namespace), offline.encode(), qos=1, retain=True)

    def _credentials_from_env(self) -> None:
        """A broker with accounts (deploy/mosquitto/lan.conf): each node's systemd unit puts its
        COMPANION_MQTT_PASSWORD in the environment (the user name, COMPANION_MQTT_USERNAME,
        defaults to the client id: one account per node), and a CA file for TLS in _CAFILE."""
        password = environment.value("COMPANION_MQTT_PASSWORD")
        user = environment.value("COMPANION_MQTT_USERNAME") or (self.client_id if password else None)
        if user:
            self.client.username_pw_set(user, password)
        cafile = environment.value("COMPANION_MQTT_CAFILE")
        if cafile:
            self.client.tls_set(ca_certs=cafile)

    # -- lifecycle -------------------------------------------------------------------------

    def connect(self, timeout: float = 30.0) -> "Bus":
        """Start the network loop and block until connected (or raise BusError after timeout)."""
        self.client.connect_async(self.broker.host, self.broker.port, keepalive=self._keepalive)
        self.client.loop_start()
        deadline = time.monotonic() + timeout
        waited_note = time.monotonic() + 2.0
        while not self._connected.wait(0.1):
            now = time.monotonic()
            if now >= deadline:
                self.client.loop_stop()
                raise BusError(f"{self.kind} {self.node_id}: no MQTT broker answered at {self.broker} "
                               f"within {timeout:.0f} s (is mosquitto running? `companion up` starts one)")
            if now >= waited_note:
                log.warning("bus.waiting", node=self.node_id, broker=str(self.broker), reason="waiting for the MQTT broker")
                waited_note = now + 5.0
        return self

    def close(self, timeout: float = 2.0) -> None:
        """Publish ``offline`` (retained) ourselves, then disconnect; the will is not sent."""
        if self._closing:
            return
        self._closing = True
        if self.announce and self._connected.is_set():
            info = self.publish(self._status("offline"))
            try:
                info.wait_for_publish(timeout)
            except (RuntimeError, ValueError):
                pass
        self.client.disconnect()
        self.client.loop_stop()

    def __enter__(self) -> "Bus":
        return self.connect()

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    def wait_connected(self, timeout: float) -> bool:
        return self._connected.wait(timeout)

    def wait_subscribed(self, timeout: float = 10.0) -> bool:
        """True once connected and every subscription so far is acknowledged by the broker."""
        deadline = time.monotonic() + timeout
        if not self._connected.wait(timeout):
            return False
        with self._sub_cond:
            return self._sub_cond.wait_for(lambda: not self._pending_mids, max(0.0, deadline - time.monotonic()))

    @property
    def errors(self) -> dict[str, int]:
        """Failures survived so far, by kind: ``invalid_payload``, ``handler_failed``, ``unhandled``, ..."""
        return self.guard.errors

    # -- publish / subscribe --------------------------------------------------------------

    def publish(self, payload: Payload, retain: bool | None = None) -> mqtt.MQTTMessageInfo:
        """Send a payload on its own topic with its own QoS. While disconnected, QoS-1 sends
        are queued by paho and go out after reconnecting."""
        return self.client.publish(payload.topic(self.namespace), payload.encode(), qos=payload.QOS,
                                   retain=payload.RETAIN if retain is None else retain)

    def publish_raw(self, topic: str, data: bytes, qos: int = 1, retain: bool = False) -> mqtt.MQTTMessageInfo:
        """For tools and tests that must send bytes no payload class would produce."""
        return self.client.publish(topic, data, qos=qos, retain=retain)

    def subscribe(self, payload_type: type[P], handler: Callable[[P], None],
                  on_invalid: InvalidHandler | None = None, qos: int | None = None) -> None:
        """Register a handler; call it before ``connect`` (see the module docstring). One added
        while connected is subscribed at once, but misses what the broker delivered before."""
        sub = self.guard.add(payload_type, handler, on_invalid, qos)
        if self._connected.is_set():
            self._subscribe(self.client, sub.pattern, sub.qos)

    def _subscribe(self, client: mqtt.Client, pattern: str, qos: int) -> None:
        result, mid = client.subscribe(pattern, qos=qos)
        if result != mqtt.MQTT_ERR_SUCCESS or mid is None:
            return  # not connected: _on_connect subscribes again
        with self._sub_cond:
            if mid in self._early_acks:  # the SUBACK beat us here
                self._early_acks.discard(mid)
            else:
                self._pending_mids.add(mid)

    def set_status(self, state: NodeState = "online", **extra: Any) -> None:
        """Publish our retained status, e.g. with details such as ``companion=<id>``."""
        self.guard.status_extra = extra
        self.publish(self._status(state))

    def failed(self, kind: str, topic: str, raw: bytes | bytearray, reason: str, exc_info: bool = False) -> None:
        """A failure off paho's thread (a node's worker), counted and logged by the same guard."""
        self.guard.failed(kind, topic, raw, reason, exc_info)

    # -- paho callbacks -------------------------------------------------------------------

    def _status(self, state: NodeState) -> Status:
        return self.guard.status(state)

    def _on_socket_open(self, client, userdata, sock) -> None:
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:  # a unix socket or a websocket wrapper: nothing to tune
            pass

    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        if reason_code.is_failure:
            hint = (f"check COMPANION_MQTT_PASSWORD and the account (COMPANION_MQTT_USERNAME, by default the "
                    f"client id {self.client_id}); on a device: /etc/companion/mqtt/<unit>.env, and after "
                    "renaming a node rerun install.sh --lan") \
                if "auth" in str(reason_code).lower() or "password" in str(reason_code).lower() else ""
            log.warning("bus.refused", node=self.node_id, broker=str(self.broker), reason=str(reason_code), hint=hint)
            return
        patterns = self.guard.patterns()
        with self._sub_cond:
            self._pending_mids.clear()
            self._early_acks.clear()
        for pattern, qos in patterns:
            self._subscribe(client, pattern, qos)
        if self.announce:
            client.publish(self._status("online").topic(self.namespace), self._status("online").encode(),
                           qos=1, retain=True)
        self.connects += 1
        self._connected_at = time.monotonic()
        log.info("bus.connected", node=self.node_id, broker=str(self.broker),
                 session_present=bool(flags.session_present), connects=self.connects)
        self._connected.set()

    def _on_disconnect(self, client, userdata, flags, reason_code, properties) -> None:
        self._connected.clear()
        lasted = time.monotonic() - getattr(self, "_connected_at", 0.0)
        self._short_sessions = self._short_sessions + 1 if lasted < 3.0 else 0
        if self._short_sessions == 3 and not self._closing:
            log.error("bus.client_id_conflict", node=self.node_id, client_id=self.client_id,
                      reason="the broker keeps dropping this connection right after it opens; another process "
                             "is probably connected with the same client id", fix=self._conflict_fix())
        if not self._closing:
            log.warning("bus.disconnected", node=self.node_id, broker=str(self.broker), reason=str(reason_code),
                        action="reconnecting with backoff")

    def _conflict_fix(self) -> str:
        if self.renamable:
            return (f"run each node once, or give each its own id: `companion run {self.kind} "
                    f"--node-id {self.kind}-NAME` (this one is {self.node_id})")
        return f"run each {self.kind} node once (this one is {self.node_id})"

    def _on_subscribe(self, client, userdata, mid, reason_codes, properties) -> None:
        refused = [str(rc) for rc in reason_codes if rc.is_failure]
        if refused:
            self.guard.failed("subscribe_refused", "", b"", f"the broker refused a subscription: {', '.join(refused)}")
        with self._sub_cond:
            if mid in self._pending_mids:
                self._pending_mids.discard(mid)
            else:
                self._early_acks.add(mid)
            self._sub_cond.notify_all()

    def _on_message(self, client, userdata, msg: mqtt.MQTTMessage) -> None:
        """paho's thread: the guard lets nothing escape (edge/runtime/guard.py)."""
        self.guard.dispatch(msg.topic, msg.payload)

"""An in-process transport: the MQTT behaviours nodes rely on, without a broker or sockets.

``LocalHub`` stands in for the broker: it routes by MQTT topic filters (``+``, ``#``), keeps
retained messages and sends them on each subscribe, keeps a persistent session's
subscriptions and queues its QoS-1 messages while it is away, and publishes a client's last
will when it vanishes (``LocalTransport.crash``). ``LocalTransport`` is a node's connection:
each has its own delivery thread, as paho has its network thread, and hands every message to
the same ``Guard`` as ``edge.runtime.bus.Bus``, so decoding, validation, error counts and log lines
are the ones a node gets on a real broker. It is for tests; a robot runs ``Bus``.
"""

from __future__ import annotations

import queue
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

from edge.runtime.bus import client_id_for
from edge.log import get_logger
from edge.protocol.payloads import NodeState, Payload
from edge.runtime.guard import Guard, topic_matches
from edge.runtime.transport import InvalidHandler, P, TransportError

log = get_logger(__name__)

NOT_CONNECTED = 4  # paho's MQTT_ERR_NO_CONN: a QoS-0 send while disconnected is not queued


class Receipt:
    """A publish's outcome, shaped like paho's ``MQTTMessageInfo``."""

    def __init__(self, rc: int = 0, sent: bool = True):
        self.rc = rc
        self._sent = threading.Event()
        if sent:
            self._sent.set()

    def wait_for_publish(self, timeout: float | None = None) -> None:
        self._refused()
        self._sent.wait(timeout)

    def is_published(self) -> bool:
        self._refused()
        return self._sent.is_set()

    def _refused(self) -> None:
        if self.rc:
            raise RuntimeError("Message publish failed: The client is not currently connected.")


@dataclass
class _Message:
    topic: str
    data: bytes
    qos: int


@dataclass
class _Session:
    client_id: str
    persistent: bool
    filters: dict[str, int] = field(default_factory=dict)
    queued: deque[_Message] = field(default_factory=deque)
    owner: "LocalTransport | None" = None


class LocalHub:
    """The in-process broker. ``settle`` waits until every delivered message was handled."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._idle = threading.Condition(self._lock)
        self._in_flight = 0
        self._retained: dict[str, _Message] = {}
        self._sessions: dict[str, _Session] = {}

    def transport(self, node_id: str, kind: str, namespace: str | None = None, *, persistent: bool = True,
                  announce: bool = True, status: dict[str, Any] | None = None) -> "LocalTransport":
        """A node's connection to this hub; ``Stack(settings, transport=hub.transport)`` runs a stack on it."""
        return LocalTransport(self, node_id, kind, namespace, persistent=persistent, announce=announce, status=status)

    def settle(self, timeout: float = 5.0) -> bool:
        """True once no message is waiting for or inside a handler (handlers that publish included)."""
        with self._idle:
            return self._idle.wait_for(lambda: self._in_flight == 0, timeout)

    def retained(self, topic: str) -> bytes | None:
        with self._lock:
            message = self._retained.get(topic)
            return message.data if message else None

    # -- what a broker does -----------------------------------------------------------------

    def _attach(self, transport: "LocalTransport") -> None:
        """Open (or take over) the client's session and hand it what was queued, in order."""
        with self._lock:
            session = self._sessions.get(transport.client_id)
            if session is not None and session.owner is not None and session.owner is not transport:
                log.warning("bus.session_taken_over", client_id=transport.client_id,
                            reason="another connection with this client id took the session")
                session.owner._lost(join=False)  # its thread may be waiting for this lock
            if session is None or not transport.persistent or not session.persistent:
                session = self._sessions[transport.client_id] = _Session(transport.client_id, transport.persistent)
            session.owner = transport
            while session.queued:
                transport._enqueue(session.queued.popleft())

    def _subscribe(self, transport: "LocalTransport", pattern: str, qos: int) -> list[_Message]:
        """Record the filter; returns the retained messages it matches (sent on every SUBSCRIBE)."""
        with self._lock:
            self._sessions[transport.client_id].filters[pattern] = qos
            return [_Message(m.topic, m.data, min(m.qos, qos)) for m in self._retained.values()
                    if topic_matches(pattern, m.topic)]

    def _detach(self, transport: "LocalTransport", will: _Message | None) -> None:
        with self._lock:
            session = self._sessions.get(transport.client_id)
            if session is None or session.owner is not transport:
                return
            session.owner = None
            if not session.persistent:
                del self._sessions[transport.client_id]
        if will is not None:
            self._route(will.topic, will.data, will.qos, retain=True)

    def _route(self, topic: str, data: bytes, qos: int, retain: bool) -> None:
        if not topic or "+" in topic or "#" in topic:
            raise ValueError(f"cannot publish to {topic!r}: a topic name has no wildcards and is not empty")
        with self._lock:
            if retain:
                if data:
                    self._retained[topic] = _Message(topic, data, qos)
                else:
                    self._retained.pop(topic, None)
            for session in self._sessions.values():
                granted = [q for pattern, q in session.filters.items() if topic_matches(pattern, topic)]
                if not granted:
                    continue
                message = _Message(topic, data, min(qos, max(granted)))
                if session.owner is not None:
                    session.owner._enqueue(message)
                elif session.persistent and message.qos > 0:
                    session.queued.append(message)

    def _requeue(self, transport: "LocalTransport", messages: list[_Message]) -> None:
        """QoS-1 messages a closing client never handled stay in its persistent session."""
        with self._lock:
            session = self._sessions.get(transport.client_id)
            if session is not None and session.persistent:
                session.queued.extendleft(reversed([m for m in messages if m.qos > 0]))

    def _count(self, delta: int) -> None:
        with self._idle:
            self._in_flight += delta
            if self._in_flight == 0:
                self._idle.notify_all()


class LocalTransport:
    """One node's in-process connection (see ``edge.runtime.transport.Transport``)."""

    broker = "in-process hub"

    def __init__(self, hub: LocalHub, node_id: str, kind: str, namespace: str | None = None, *,
                 persistent: bool = True, announce: bool = True, status: dict[str, Any] | None = None):
        self.hub = hub
        self.node_id = node_id
        self.kind = kind
        self.namespace = namespace or None
        self.persistent = persistent
        self.announce = announce
        self.client_id = client_id_for(node_id, self.namespace)
        self.guard = Guard(node_id, kind, self.namespace)
        self.guard.status_extra = dict(status or {})  # details our ``online`` carries, as on a ``Bus``
        self.connects = 0
        self._connected = threading.Event()
        self._inbox: queue.Queue[_Message | None] = queue.Queue()
        self._outbox: list[tuple[_Message, bool, Receipt]] = []  # QoS-1 sends made while disconnected
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    # -- lifecycle -------------------------------------------------------------------------

    def connect(self, timeout: float = 30.0) -> "LocalTransport":
        """Session first (its queued messages are delivered before anything else), then every
        registered filter with its retained messages, then our ``online`` status."""
        with self._lock:   # never held while calling the hub: the hub calls us under its own lock
            if self._connected.is_set() or self._thread is not None:
                return self
            self._inbox = queue.Queue()
            self._thread = threading.Thread(target=self._deliver_loop, args=(self._inbox,),
                                            name=f"local-{self.client_id}", daemon=True)
            self._thread.start()
        self.hub._attach(self)
        self._connected.set()
        self.connects += 1
        for pattern, qos in self.guard.patterns():
            self._subscribe(pattern, qos)
        if self.announce:
            self.publish(self.guard.status("online"))
        with self._lock:
            outbox, self._outbox = self._outbox, []
        for message, retain, receipt in outbox:
            self.hub._route(message.topic, message.data, message.qos, retain)
            receipt._sent.set()
        return self

    def close(self, timeout: float = 2.0) -> None:
        """Publish ``offline`` ourselves and leave; the last will is not sent."""
        if not self._connected.is_set():
            return
        if self.announce:
            self.publish(self.guard.status("offline"))
        self._leave(will=False)

    def crash(self) -> None:
        """Vanish without a goodbye, as a killed process does: the hub sends our last will."""
        if self._connected.is_set():
            self._leave(will=True)

    def _leave(self, will: bool) -> None:
        offline = self.guard.status("offline")
        last_will = _Message(offline.topic(self.namespace), offline.encode(), 1) if will and self.announce else None
        self.hub._detach(self, last_will)
        self._lost()

    def _lost(self, join: bool = True) -> None:
        """Stop delivering; what was not handled yet goes back to a persistent session."""
        with self._lock:
            self._connected.clear()
            inbox, thread = self._inbox, self._thread
            self._thread = None
        left: list[_Message] = []
        while True:
            try:
                item = inbox.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                left.append(item)
                self.hub._count(-1)
        self.hub._requeue(self, left)
        inbox.put(None)
        if join and thread is not None and thread is not threading.current_thread():
            thread.join(5.0)

    def __enter__(self) -> "LocalTransport":
        return self.connect()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    def wait_connected(self, timeout: float) -> bool:
        return self._connected.wait(timeout)

    def wait_subscribed(self, timeout: float = 10.0) -> bool:
        """Subscribing is immediate here: subscribed as soon as connected."""
        return self._connected.wait(timeout)

    @property
    def errors(self) -> dict[str, int]:
        return self.guard.errors

    # -- publish / subscribe ---------------------------------------------------------------

    def publish(self, payload: Payload, retain: bool | None = None) -> Receipt:
        return self.publish_raw(payload.topic(self.namespace), payload.encode(), payload.QOS,
                                payload.RETAIN if retain is None else retain)

    def publish_raw(self, topic: str, data: bytes, qos: int = 1, retain: bool = False) -> Receipt:
        """While disconnected, QoS-1 sends wait and go out on connect (as paho queues them)."""
        with self._lock:
            if not self._connected.is_set():
                if qos == 0:
                    return Receipt(NOT_CONNECTED, sent=False)
                receipt = Receipt(sent=False)
                self._outbox.append((_Message(topic, bytes(data), qos), retain, receipt))
                return receipt
        self.hub._route(topic, bytes(data), qos, retain)
        return Receipt()

    def subscribe(self, payload_type: type[P], handler: Callable[[P], None],
                  on_invalid: InvalidHandler | None = None, qos: int | None = None) -> None:
        sub = self.guard.add(payload_type, handler, on_invalid, qos)
        if self._connected.is_set():
            self._subscribe(sub.pattern, sub.qos)

    def set_status(self, state: NodeState = "online", **extra: Any) -> None:
        self.guard.status_extra = extra
        self.publish(self.guard.status(state))

    def failed(self, kind: str, topic: str, raw: bytes | bytearray, reason: str, exc_info: bool = False) -> None:
        self.guard.failed(kind, topic, raw, reason, exc_info)

    # -- delivery --------------------------------------------------------------------------

    def _subscribe(self, pattern: str, qos: int) -> None:
        for message in self.hub._subscribe(self, pattern, qos):
            self._enqueue(message)

    def _enqueue(self, message: _Message) -> None:
        self.hub._count(1)
        self._inbox.put(message)

    def _deliver_loop(self, inbox: "queue.Queue[_Message | None]") -> None:
        while True:
            message = inbox.get()
            if message is None:
                return
            try:
                self.guard.dispatch(message.topic, message.data)
            finally:
                self.hub._count(-1)


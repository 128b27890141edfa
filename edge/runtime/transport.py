"""What a node needs from its connection, whatever carries the bytes.

Two implementations: ``edge.runtime.bus.Bus`` (MQTT through paho, what runs on a robot) and
``edge.runtime.local.LocalTransport`` (an in-process hub, for fast tests). Both hand every
received message to the same ``Guard`` (edge/runtime/guard.py), so a payload is decoded,
validated, counted and logged identically on either.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol, TypeVar

from edge.protocol.payloads import NodeState, Payload, PayloadError

P = TypeVar("P", bound=Payload)
InvalidHandler = Callable[[str, PayloadError, bytes], None]


class TransportError(RuntimeError):
    """The transport could not connect in time, or refused a send."""


class Receipt(Protocol):
    """What a publish returns (paho's ``MQTTMessageInfo`` is one): ``rc`` 0 when accepted;
    for a refused send, ``wait_for_publish`` and ``is_published`` raise RuntimeError."""

    @property
    def rc(self) -> int: ...

    def wait_for_publish(self, timeout: float | None = None) -> None: ...

    def is_published(self) -> bool: ...


class Transport(Protocol):
    """One node's connection. Handlers run on the transport's delivery thread: keep them short.

    Register handlers with ``subscribe`` *before* ``connect``: messages queued for a persistent
    session arrive right after connecting, and only the handlers known by then receive them.
    """

    node_id: str
    kind: str
    namespace: str | None
    broker: Any              # where it connects, as a person reads it (a BrokerAddress, the in-process hub)

    def connect(self, timeout: float = 30.0) -> Any: ...

    def close(self, timeout: float = 2.0) -> None: ...

    @property
    def connected(self) -> bool: ...

    def wait_connected(self, timeout: float) -> bool: ...

    def wait_subscribed(self, timeout: float = 10.0) -> bool: ...

    @property
    def errors(self) -> dict[str, int]: ...

    def publish(self, payload: Payload, retain: bool | None = None) -> Receipt: ...

    def publish_raw(self, topic: str, data: bytes, qos: int = 1, retain: bool = False) -> Receipt: ...

    def subscribe(self, payload_type: type[P], handler: Callable[[P], None],
                  on_invalid: InvalidHandler | None = None, qos: int | None = None) -> None: ...

    def set_status(self, state: NodeState = "online", **extra: Any) -> None: ...

    def failed(self, kind: str, topic: str, raw: bytes | bytearray, reason: str, exc_info: bool = False) -> None:
        """Count and log a failure the node survived off the receive path (a worker's), as the
        guard does its own: it shows in ``errors`` and on the next ``status/<node>``."""
        ...

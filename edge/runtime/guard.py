"""The receive path both transports share: match, decode once, validate, call handlers, survive.

A transport hands ``Guard.dispatch`` the topic and raw bytes of every message it receives.
Nothing a message or a handler does escapes from there: each failure is logged (node, topic,
reason, a bounded excerpt of the payload; at most ``burst`` lines per kind every 10 s, then a
count of the suppressed ones), counted by kind in ``errors``, and carried in the node's next
``status/<node>``. A message on a topic no handler matches is not dropped silently either: it
is counted as ``unhandled`` and logged the same way.
"""

from __future__ import annotations

import functools
import threading
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Generic

from paho.mqtt.client import topic_matches_sub

from edge.log import get_logger
from edge.protocol.codec import clip, excerpt
from edge.protocol.payloads import NodeState, PayloadError, Status
from edge.runtime.transport import InvalidHandler, P

log = get_logger(__name__)


@functools.lru_cache(maxsize=4096)
def topic_matches(pattern: str, topic: str) -> bool:
    """MQTT filter matching (``+`` one level, ``#`` the rest), as the broker does it. Remembered:
    paho builds a matcher for each call (~6 µs), and every message is matched against each of
    a node's filters; a node hears few distinct topics."""
    return bool(topic_matches_sub(pattern, topic))


class Throttle:
    """At most ``burst`` log lines per kind per ``window_s``; the rest are counted and summed up."""

    def __init__(self, burst: int = 5, window_s: float = 10.0):
        self.burst = burst
        self.window_s = window_s
        self._windows: dict[str, tuple[float, int]] = {}

    def allow(self, kind: str) -> tuple[bool, int]:
        """(log this one?, how many were suppressed in the window that just ended)."""
        now = time.monotonic()
        start, count = self._windows.get(kind, (now, 0))
        suppressed = 0
        if now - start >= self.window_s:
            suppressed, start, count = max(0, count - self.burst), now, 0
        self._windows[kind] = (start, count + 1)
        return count < self.burst, suppressed


@dataclass
class Subscription(Generic[P]):
    pattern: str
    payload_type: type[P]
    handler: Callable[[P], None]
    on_invalid: InvalidHandler | None
    qos: int


class Guard:
    """One node's handlers and failure counts; ``dispatch`` is safe to call from any thread."""

    def __init__(self, node_id: str, kind: str, namespace: str | None = None):
        self.node_id = node_id
        self.kind = kind
        self.namespace = namespace
        self._subs: list[Subscription[Any]] = []
        self._lock = threading.Lock()
        self._errors: Counter[str] = Counter()
        self._throttle = Throttle()
        self.status_extra: dict[str, Any] = {}

    def add(self, payload_type: type[P], handler: Callable[[P], None], on_invalid: InvalidHandler | None = None,
            qos: int | None = None) -> Subscription[P]:
        sub = Subscription(payload_type.topic_pattern(self.namespace), payload_type, handler, on_invalid,
                           payload_type.QOS if qos is None else qos)
        with self._lock:
            self._subs.append(sub)
        return sub

    def patterns(self) -> list[tuple[str, int]]:
        """Each distinct (topic filter, QoS) to subscribe, in a stable order."""
        with self._lock:
            return sorted({(s.pattern, s.qos) for s in self._subs})

    @property
    def errors(self) -> dict[str, int]:
        """Failures survived so far, by kind: ``invalid_payload``, ``handler_failed``, ``unhandled``, ..."""
        with self._lock:
            return dict(self._errors)

    def status(self, state: NodeState) -> Status:
        """Our ``status/<node>``, with the extras last set and the failure counts so far."""
        extra = dict(self.status_extra)
        errors = self.errors
        if errors:
            extra["errors"] = errors
        return Status(node=self.node_id, kind=self.kind, state=state, extra=extra)

    # -- receiving ------------------------------------------------------------------------

    def dispatch(self, topic: str, raw: bytes | bytearray) -> None:
        """Deliver one message to every matching handler; never raises."""
        try:
            self._dispatch(topic, raw)
        except Exception as exc:  # a bug of ours between decode and handler; counted all the same
            self.failed("dispatch_failed", topic, raw, repr(exc))

    def _dispatch(self, topic: str, raw: bytes | bytearray) -> None:
        """Decode once per payload type (several handlers may share one), then call each handler."""
        with self._lock:
            subs = [s for s in self._subs if topic_matches(s.pattern, topic)]
        if not subs:
            self.failed("unhandled", topic, raw, "no handler for this topic: a subscription left in the "
                        "persistent session by an earlier run, or a handler registered after connecting")
            return
        decoded: dict[type, Any] = {}
        for sub in subs:
            if sub.payload_type not in decoded:
                try:
                    decoded[sub.payload_type] = sub.payload_type.decode(raw)
                except PayloadError as exc:
                    decoded[sub.payload_type] = exc
                    self.failed("invalid_payload", topic, raw, exc.message)
                except Exception as exc:  # the codec or schema library itself failed
                    decoded[sub.payload_type] = None
                    self.failed("decode_failed", topic, raw, repr(exc))
            payload = decoded[sub.payload_type]
            if isinstance(payload, PayloadError):
                if sub.on_invalid is not None:
                    self.call(topic, raw, sub.on_invalid, topic, payload, raw)
            elif payload is not None:
                self.call(topic, raw, sub.handler, payload)

    def call(self, topic: str, raw: bytes | bytearray, fn: Callable[..., Any], *args: Any) -> None:
        """Run one handler; a handler's bug is counted and logged, and the node goes on."""
        try:
            fn(*args)
        except Exception as exc:
            handler = getattr(fn, "__qualname__", repr(fn))
            self.failed("handler_failed", topic, raw, f"{handler}: {exc!r}", exc_info=True)

    def failed(self, kind: str, topic: str, raw: bytes | bytearray, reason: str, exc_info: bool = False) -> None:
        """Count a failure and log it (throttled per kind); never raises."""
        try:
            with self._lock:
                self._errors[kind] += 1
            allowed, suppressed = self._throttle.allow(kind)
            if suppressed:
                log.warning("bus.errors_suppressed", node=self.node_id, kind=kind, count=suppressed)
            if allowed:
                log.warning(f"bus.{kind}", node=self.node_id, topic=topic, reason=clip(reason),
                            excerpt=excerpt(raw), exc_info=exc_info)
        except Exception:  # logging itself failed (a closed stream): the count above still stands
            pass

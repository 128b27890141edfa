"""Hostile payloads for every topic a body and a brain subscribe to, and the stack they hit.

Shared by tests/edge/runtime/test_fuzz_topics.py (a few hundred per topic) and bench/fuzz_topics.py
(10,000 per topic). Every payload made here is one the contract must refuse, so a test can
expect each to be counted as invalid exactly once per receiving node.
"""

from __future__ import annotations

import json
import queue
import random
import threading
import time
import uuid
from typing import Any, Callable, Iterator

from body_drivers.body_config import parse_body_config
from body_drivers.servo.sim.simulator import start_simulator
from edge.app import Stack
from edge.brain.loop import BrainConfig
from edge.config import Settings
from edge.runtime.bus import Bus
from edge.protocol.companion import Companion
from edge.protocol.payloads import Action, ActionResult, Estop, Perception, Status
from edge.providers.scripted import ScriptedProvider

HOLE = "@@hole@@"
MB = 1 << 20


def _bases(companion_id: str) -> dict[str, dict[str, Any]]:
    """A valid wire dict per topic (the topic as published, without a namespace)."""
    ts = time.time()
    return {
        "actions": {"id": str(uuid.uuid4()), "from": companion_id, "name": "look",
                    "params": {"x": 0.1, "y": 0, "z": 1}, "ts": ts},
        "estop": {"from": "fuzz", "engaged": False, "ts": ts},
        "perceptions": {"id": str(uuid.uuid4()), "from": "fuzz", "to": companion_id, "title": "input",
                        "format": "text", "body": "hello", "ts": ts},
        "actions/results": {"id": str(uuid.uuid4()), "from": "fuzz", "name": "look", "ok": True,
                            "started": ts, "finished": ts},
        "messages": {"from": "fuzz", "to": "all", "message": "hi"},
        "status/fuzz": {"node": "fuzz", "kind": "brain", "state": "online", "ts": ts},
    }


TOPICS = tuple(_bases("x"))

# Values each member's schema refuses (wrong type, empty, out of range, unknown enum).
WRONG: dict[str, dict[str, list[Any]]] = {
    "actions": {"id": [5, "not-a-uuid", None], "from": [5, ""], "name": [[], ""], "params": ["x", [], None],
                "ts": ["now", -1]},
    "estop": {"from": [5, ""], "engaged": ["yes", 1, None], "ts": ["x", -5]},
    "perceptions": {"id": [5], "from": [{}], "to": [[]], "title": ["", 7], "format": ["video"], "body": [{}, 3],
                    "ts": [True]},
    "actions/results": {"id": ["", 5], "from": [5], "name": [5], "ok": ["true", None], "started": ["x"]},
    "messages": {"from": [5], "to": [None], "message": [5, []]},
    "status/fuzz": {"node": [5], "kind": [""], "state": ["maybe"], "ts": ["x"]},
}

_BAD_UTF8 = [b"\xff", b"\xc3\x28", b"\xe2\x82", b"\xf8\x88\x80\x80\x80", b"\xc0\xaf", b"\x80"]
_SURROGATE_ESCAPES = ["\\ud800", "\\udfff", "\\ud83d", "\\ude00x", "\\ud800\\u0041"]


def _with_hole(base: dict[str, Any], field: str, literal: bytes) -> bytes:
    """``base`` as JSON with ``field``'s value replaced by raw ``literal`` bytes."""
    text = json.dumps({**base, field: HOLE}).encode()
    return text.replace(json.dumps(HOLE).encode(), literal)


def _deep(n: int, rng: random.Random) -> bytes:
    if rng.random() < 0.5:
        return b"[" * n + b"]" * n
    return b'{"a":' * n + b"1" + b"}" * n


def _big_int(rng: random.Random) -> bytes:
    digits = rng.choice([20, 21, 25, 100, 4300, 4301, 5000, 20000])
    sign = b"-" if rng.random() < 0.5 else b""
    return sign + b"9" + bytes(rng.choice(b"0123456789") for _ in range(digits - 1))


def hostile(topic: str, i: int, rng: random.Random, companion_id: str, blob_every: int = 50) -> bytes:
    """The ``i``-th hostile payload for ``topic``: cycles through every kind of breakage."""
    base = _bases(companion_id)[topic]
    field = rng.choice(list(base))
    kinds: list[Callable[[], bytes]] = [
        lambda: _with_hole(base, field, _deep(rng.choice([33, 64, 999, 1000, 5000, 50000]), rng)),
        lambda: _deep(rng.choice([33, 1000, 100000]), rng),
        lambda: _with_hole(base, field, _big_int(rng)),
        lambda: _with_hole(base, field, rng.choice([b"NaN", b"Infinity", b"-Infinity", b"1e400", b"-1e999"])),
        lambda: _with_hole(base, field, f'"a{rng.choice(_SURROGATE_ESCAPES)}b"'.encode()),
        lambda: _with_hole(base, field, f'{{"{rng.choice(_SURROGATE_ESCAPES)}":1}}'.encode()),
        lambda: _with_hole(base, field, b'"x\xed\xa0\x80y"'),
        lambda: _with_hole(base, field, b'"' + rng.choice(_BAD_UTF8) + b'"'),
        lambda: _wrong_type(topic, base, rng),
        lambda: rng.choice([b"", b" ", b"null", b"[]", b'""', b"0", b"true", b"{}", b"\n\t"]),
        lambda: json.dumps(base).encode()[: rng.randrange(0, len(json.dumps(base)) - 1)],
        lambda: b"{" + rng.randbytes(rng.randrange(1, 200)),
        lambda: json.dumps({k: v for k, v in base.items() if k != field}).encode(),
    ]
    if blob_every and i % blob_every == blob_every - 1:
        return _blob(topic, base, rng)
    return kinds[i % len(kinds)]()


def _wrong_type(topic: str, base: dict[str, Any], rng: random.Random) -> bytes:
    field = rng.choice(list(WRONG[topic]))
    return json.dumps({**base, field: rng.choice(WRONG[topic][field])}).encode()


def _blob(topic: str, base: dict[str, Any], rng: random.Random) -> bytes:
    """About 1 MB: random bytes, a megabyte of brackets, or a 1 MB name where 200 chars is the limit."""
    kind = rng.randrange(3)
    if kind == 0:
        return rng.randbytes(MB)
    if kind == 1:
        return b"[" * MB
    name = "node" if topic.startswith("status") else "from"
    return json.dumps({**base, name: "x" * MB}).encode()


def payloads(topic: str, count: int, seed: int, companion_id: str) -> Iterator[bytes]:
    rng = random.Random(f"{seed}:{topic}")
    for i in range(count):
        yield hostile(topic, i, rng, companion_id)


# -- the stack under fire ---------------------------------------------------------------------


def _servo_table(port: str) -> dict[str, Any]:
    joint = {"protocol": "feetech", "port": port}
    return {
        "servo": {"home_speed_dps": 400, "settle_s": 0.2},
        "joints": [{**joint, "name": "pan", "id": 1, "min_deg": -80, "max_deg": 80, "max_speed_dps": 400},
                   {**joint, "name": "tilt", "id": 2, "min_deg": -30, "max_deg": 45, "safe_deg": -20,
                    "max_speed_dps": 400}],
        "kinematics": {"look": {"kind": "pan_tilt", "pan": "pan", "tilt": "tilt"},
                       "nod": {"kind": "gesture", "frames": [{"tilt": -5}, {"tilt": 5}], "repeat": "times"}},
    }


class FuzzStack:
    """A servo body (simulated servos on a pty, BodyNode, SafetyMonitor) and a brain on the
    ``scripted:`` provider, started as ``companion up`` starts them (a ``Stack`` on the broker), an
    attacker that publishes raw bytes and an operator that watches."""

    def __init__(self, broker_address: Any, link: str, companion: Companion):
        self.companion = companion
        self.sim = start_simulator("feetech", link, [1, 2])
        settings = Settings(broker=broker_address, sim=False, tts="none", body_id="body-fuzz")
        settings.body_config = parse_body_config(_servo_table(link))   # watchdog_s: 0 (off)
        self.provider = ScriptedProvider([{"action": "nod", "params": {"times": 1}}], loop=True)
        self.operator = Bus("operator", "test", broker_address, announce=False, persistent=False)
        self.actions: queue.Queue[Action] = queue.Queue()
        self.results: queue.Queue[ActionResult] = queue.Queue()
        self.body_status: queue.Queue[Status] = queue.Queue()
        self.operator.subscribe(Action, self.actions.put)
        self.operator.subscribe(ActionResult, self.results.put)
        self.operator.subscribe(Status, lambda s: self.body_status.put(s) if s.node == "body-fuzz" else None)
        self.operator.connect()
        self.stack = Stack(settings, provider=self.provider, speaker=None, kinds=("body", "brain"),
                           start_broker=False, companions=[companion], brain_config=BrainConfig(warm=False)).start()
        self.body, self.node, self.monitor = self.stack.executor, self.stack.body, self.stack.safety
        self.brain = self.stack.brains[0]
        self.body_bus, self.brain_bus = self.stack.buses
        self.attacker = Bus("attacker", "test", broker_address, announce=False, persistent=False).connect()
        for bus in (self.body_bus, self.brain_bus, self.operator):
            assert bus.wait_subscribed(10), f"{bus.node_id}: subscriptions not acknowledged"

    # -- firing ------------------------------------------------------------------------------

    def fire(self, topic: str, data: Iterator[bytes]) -> int:
        """Publish every payload (QoS 1) and wait until the broker has taken the last one."""
        sent, info = 0, None
        for raw in data:
            info = self.attacker.publish_raw(topic, raw, qos=1)
            sent += 1
        if info is not None:
            info.wait_for_publish(60)
        return sent

    @staticmethod
    def receivers(topic: str) -> tuple[str, ...]:
        """Which of our nodes subscribe to ``topic`` (body: actions, estop, status/+;
        brain: estop, perceptions, actions/results, messages)."""
        body = topic in ("actions", "estop") or topic.startswith("status/")
        brain = topic in ("estop", "perceptions", "actions/results", "messages")
        return tuple(name for name, yes in (("body", body), ("brain", brain)) if yes)

    def invalid_counts(self) -> dict[str, int]:
        return {"body": self.body_bus.errors.get("invalid_payload", 0),
                "brain": self.brain_bus.errors.get("invalid_payload", 0)}

    def wait_counted(self, expected: dict[str, int], timeout: float) -> dict[str, int]:
        """Wait (polling the counters, bounded) until each node has counted what it was sent."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            counts = self.invalid_counts()
            if all(counts[k] >= v for k, v in expected.items()):
                return counts
            time.sleep(0.05)
        return self.invalid_counts()

    # -- health ------------------------------------------------------------------------------

    def threads(self) -> dict[str, bool]:
        """Is each thread that must never die still alive?"""
        def paho(bus: Bus) -> bool:
            thread = getattr(bus.client, "_thread", None)
            return isinstance(thread, threading.Thread) and thread.is_alive()
        return {"body.paho": paho(self.body_bus), "brain.paho": paho(self.brain_bus),
                "body.worker": self.node.worker.is_alive(), "safety.monitor": self.monitor._thread.is_alive(),
                "brain.loop": all(w.is_alive() for w in self.brain._workers)}

    def errors(self) -> dict[str, dict[str, int]]:
        return {"body": self.body_bus.errors, "brain": self.brain_bus.errors, "body.worker": dict(self.node.errors)}

    def brain_decides(self, timeout: float = 10.0) -> ActionResult | None:
        """A person speaks; the brain must decide (scripted nod) and the body must carry it out."""
        self.operator.publish(Perception(title="input", body="do you agree?", to=self.companion.id))
        action = _first(self.actions, lambda a: a.sender == self.companion.id and a.name == "nod", timeout)
        if action is None:
            return None
        return _first(self.results, lambda r: r.id == action.id, timeout)

    def body_acts(self, params: dict[str, Any], timeout: float = 10.0) -> ActionResult | None:
        action = Action(name="look", params=params, sender=self.companion.id)
        self.operator.publish(action)
        return _first(self.results, lambda r: r.id == action.id, timeout)

    def estop(self, engaged: bool, timeout: float = 10.0) -> Status | None:
        """Press or release estop; the body's status must show it (its safety monitor is alive)."""
        self.operator.publish(Estop(sender="operator", engaged=engaged))
        want = "estop" if engaged else "active"
        return _first(self.body_status, lambda s: s.extra.get("safety") == want, timeout)

    def close(self) -> None:
        self.stack.stop()
        for bus in (self.attacker, self.operator):
            bus.close()
        self.sim.stop()


def _first(q: "queue.Queue[Any]", match: Callable[[Any], bool], timeout: float) -> Any:
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        try:
            item = q.get(timeout=left)
        except queue.Empty:
            return None
        if match(item):
            return item
    return None

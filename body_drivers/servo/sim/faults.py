"""Faults a simulated bus injects on request: what a flaky bus does to the bytes.

Bus faults are about the wire and apply to replies (optionally only some servos', and
optionally only the next ``count`` of them, after which the fault clears by itself so a
retry can succeed): ``no_reply`` (the reply is dropped), ``checksum`` (its checksum is
corrupted), ``garbage`` (random bytes before it), ``truncate`` (only its first half is
sent). ``echo`` is a property of
a half-duplex adapter: every request comes back before its reply, until cleared.
Servo faults (overload, overheat, voltage …) are set on the servo's state instead.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

BUS_FAULTS = ("no_reply", "checksum", "garbage", "truncate", "echo")


@dataclass
class _Fault:
    kind: str
    ids: frozenset[int] | None      # None: every servo
    remaining: int | None           # None: until cleared


class FaultPlan:
    def __init__(self):
        self._faults: list[_Fault] = []
        self._lock = threading.Lock()
        self.fired: dict[str, int] = {}

    def inject(self, kind: str, ids: list[int] | None = None, count: int | None = None) -> None:
        if kind not in BUS_FAULTS:
            raise ValueError(f"unknown bus fault {kind!r}; expected one of {', '.join(BUS_FAULTS)}")
        if count is not None and (not isinstance(count, int) or count < 1):
            raise ValueError(f"fault count must be a positive int, got {count!r}")
        with self._lock:
            self._faults.append(_Fault(kind, frozenset(ids) if ids is not None else None, count))

    def clear(self, kind: str | None = None) -> None:
        with self._lock:
            self._faults = [f for f in self._faults if kind is not None and f.kind != kind]

    def active(self, kind: str) -> bool:
        with self._lock:
            return any(f.kind == kind for f in self._faults)

    def take(self, kind: str, servo_id: int | None) -> bool:
        """Whether ``kind`` applies to this reply; counts one use of a counted fault."""
        with self._lock:
            for fault in self._faults:
                if fault.kind != kind or (fault.ids is not None and servo_id not in fault.ids):
                    continue
                if fault.remaining is not None:
                    fault.remaining -= 1
                    if fault.remaining <= 0:
                        self._faults.remove(fault)
                self.fired[kind] = self.fired.get(kind, 0) + 1
                return True
            return False


def parse_fault_spec(spec: str) -> tuple[str, list[int] | None, int | None]:
    """CLI form ``KIND[@ID,ID][xCOUNT]``, e.g. ``no_reply@2x3``, ``echo``, ``checksum x1``."""
    text = spec.replace(" ", "")
    count = None
    if "x" in text.rsplit("@", 1)[-1] and text.rsplit("x", 1)[-1].isdigit():
        text, _, tail = text.rpartition("x")
        count = int(tail)
    kind, _, who = text.partition("@")
    ids = None
    if who:
        try:
            ids = [int(part) for part in who.split(",") if part]
        except ValueError:
            raise ValueError(f"bad fault spec {spec!r}: ids must be integers") from None
    return kind, ids, count

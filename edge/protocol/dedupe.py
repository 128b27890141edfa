"""Exactly-once effects over an at-least-once bus: remember the ids already handled.

QoS 1 may deliver a message twice (a broker restart, a reconnect before the PUBACK): a perception
decided twice makes the robot say or do the same thing twice. Ids are UUIDs, so remembering the
last few thousand per node is enough; the memory is bounded, lookups are O(1).
"""

from __future__ import annotations

import threading
from collections import OrderedDict


class RecentIds:
    """The last ``size`` ids seen; ``first_time(id)`` is True once per id (thread-safe)."""

    def __init__(self, size: int = 4096):
        self.size = size
        self._ids: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()

    def first_time(self, item_id: str) -> bool:
        with self._lock:
            if item_id in self._ids:
                return False
            self._ids[item_id] = None
            if len(self._ids) > self.size:
                self._ids.popitem(last=False)
            return True

    def __len__(self) -> int:
        return len(self._ids)

"""A pause in the robot's speech while the microphone finds out whether a person spoke.

Barge-in in two steps (edge/perception/microphone/barge_in.py): a sound louder than the robot's voice that
may be a person pauses the speech at once (``voice`` event ``onset``), and the microphone then
says within a fraction of a second whether it was one (``started``: the speech is cut) or not
(``dismissed``: it goes on where it was heard to stop). A clap or a door then costs a short
pause instead of the rest of the sentence. The pause ends by itself after ``max_s``, so a lost
``dismissed`` (the topic is QoS 0) cannot silence the robot.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

POLL_S = 0.02   # how often a paused writer looks at its cancel event


class PlaybackHold:
    """Thread-safe: the body's bus thread pauses and resumes, the playback thread waits."""

    def __init__(self, max_s: float = 1.0, clock: Callable[[], float] = time.monotonic):
        if max_s <= 0:
            raise ValueError(f"a speech pause must end by itself: max_s must be > 0, got {max_s}")
        self.max_s = max_s
        self._clock = clock
        self._until = 0.0
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self.pauses = 0

    def pause(self) -> None:
        with self._lock:
            self._until = self._clock() + self.max_s
            self.pauses += 1
            self._changed.notify_all()

    def resume(self) -> None:
        with self._lock:
            self._until = 0.0
            self._changed.notify_all()

    def paused(self) -> bool:
        with self._lock:
            return self._clock() < self._until

    def wait(self, cancel: threading.Event) -> None:
        """Block while paused; return at resume, at the pause's own end, or at ``cancel``."""
        with self._lock:
            while self._clock() < self._until and not cancel.is_set():
                self._changed.wait(min(POLL_S, max(self._until - self._clock(), 0.0)))

"""Thread priority: work that can wait gives the CPU to work a person is waiting for.

On a 2-core board a camera node detecting at full speed takes a core, and the voice loop (the
recognizer, the model, piper) slows by half: bench/voice_loop.py --camera. A late frame costs less
than a late answer, so the camera's thread runs at a lower priority (a higher nice value). On
Linux ``setpriority(PRIO_PROCESS, 0, n)`` applies to the calling thread only, and threads it
starts afterwards (OpenCV's workers) inherit it.
"""

from __future__ import annotations

import os

from edge.log import get_logger

log = get_logger(__name__)


def lower_this_thread(nice: int) -> bool:
    """Raise the calling thread's nice value to ``nice`` (never lower it); False where the OS
    cannot (not Linux, or not allowed): the work then simply runs at the usual priority."""
    if nice <= 0 or not hasattr(os, "setpriority"):
        return False
    try:
        current = os.getpriority(os.PRIO_PROCESS, 0)
        if current < nice:
            os.setpriority(os.PRIO_PROCESS, 0, nice)
        return True
    except OSError as exc:
        log.info("priority.unchanged", nice=nice, error=str(exc))
        return False

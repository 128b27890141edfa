"""The camera's thread gives way to the voice loop: only that thread's priority changes."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from edge.runtime.priority import lower_this_thread

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice is Linux's")


def test_a_thread_lowers_its_own_priority_and_no_one_elses():
    before = os.getpriority(os.PRIO_PROCESS, 0)
    target = min(before + 3, 19)
    if target == before:
        pytest.skip("already at the lowest priority")
    seen: dict[str, int] = {}

    def work() -> None:
        assert lower_this_thread(target)
        seen["worker"] = os.getpriority(os.PRIO_PROCESS, 0)

        def child() -> None:   # OpenCV's workers, started by that thread, inherit it
            seen["child"] = os.getpriority(os.PRIO_PROCESS, 0)
        started = threading.Thread(target=child)
        started.start()
        started.join()
    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert seen == {"worker": target, "child": target}
    assert os.getpriority(os.PRIO_PROCESS, 0) == before      # the rest of the process as it was


def test_nothing_to_do_is_said_so():
    assert lower_this_thread(0) is False

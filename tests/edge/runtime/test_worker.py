"""Work on a node's own threads (edge/runtime/worker.py): a step that raises is logged with the node,
topic and a bounded excerpt, counted on status/<node>, and the thread goes on; the brain's turn
worker keeps that promise on the in-process transport."""

from __future__ import annotations

import logging
import queue
import threading

from edge.config import DEFAULT_COMPANION, Settings
from edge.protocol.companion import load_companion
from edge.protocol.payloads import Action, Perception, Status
from edge.providers.base import ProviderContext, ProviderResponse
from edge.providers.scripted import ScriptedProvider
from edge.runtime.local import LocalHub
from edge.runtime.node import Node
from edge.runtime.worker import WORKER_FAILED, Worker, guarded


def _status(hub: LocalHub, node: str) -> Status:
    raw = hub.retained(f"status/{node}")
    assert raw is not None, f"no retained status for {node}"
    return Status.decode(raw)


def test_a_worker_whose_step_raises_is_logged_counted_on_status_and_keeps_running(caplog):
    hub = LocalHub()
    node = Node(hub.transport("counter-1", "counter"), source="test").start()
    work: queue.Queue[Perception | None] = queue.Queue()
    done: list[str] = []
    finished = threading.Event()

    def step() -> None:
        try:
            item = work.get(timeout=0.1)
        except queue.Empty:
            return
        if item is None:
            finished.set()
            return
        guarded(node, "count", _check, item, topic=item.TOPIC, item=item)
        done.append(item.body_text())

    def _check(item: Perception) -> None:
        if item.body_text().startswith("bad"):
            raise ValueError("cannot count this")

    worker = Worker(node, "counter", step, node.stop_event).start()
    caplog.set_level(logging.WARNING, logger="edge.runtime.guard")
    for text in ("one", "bad " + "x" * 5000, "two"):
        work.put(Perception(title="input", body=text, sender="test"))
    work.put(None)
    assert finished.wait(5) and worker.is_alive()
    assert [t[:3] for t in done] == ["one", "bad", "two"]      # the one after the failure was handled too
    assert hub.settle()
    status = _status(hub, "counter-1")                          # republished with the count at once
    assert status.state == "online" and status.extra["errors"] == {WORKER_FAILED: 1}
    assert status.extra["source"] == "test"                     # the node's own fields are kept
    line = next(r.getMessage() for r in caplog.records if "worker_failed" in r.getMessage())
    assert "node=counter-1" in line and "topic=perceptions" in line and "cannot count this" in line
    assert '"from\\":\\"test' in line and " bytes)" in line    # an excerpt of the input, its size ...
    assert "x" * 100 not in line and len(line) < 1000           # ... not the input
    node.stop()
    worker.join(5)
    assert not worker.is_alive()
    assert _status(hub, "counter-1").extra["errors"] == {WORKER_FAILED: 1}   # and in the offline status


def test_a_step_that_always_raises_neither_ends_the_thread_nor_spins():
    hub = LocalHub()
    node = Node(hub.transport("broken-1", "broken")).start()
    calls = threading.Semaphore(0)

    def step() -> None:
        calls.release()
        raise RuntimeError("always")

    worker = Worker(node, "broken", step, node.stop_event).start()
    for _ in range(4):
        assert calls.acquire(timeout=5)
    assert worker.is_alive() and worker.failures >= 3
    node.stop()
    worker.join(5)
    assert not worker.is_alive() and node.transport.errors[WORKER_FAILED] == worker.failures


class _FailsFirst:
    """A provider with a bug (not a ProviderError) on its first call; scripted after that."""
    name = "fails-first"

    def __init__(self) -> None:
        self.inner = ScriptedProvider([{"action": "speak", "params": {"message": "I see you."}}], loop=True)
        self.calls = 0
        self.failed = threading.Event()

    def generate(self, prompt: str, context: ProviderContext) -> ProviderResponse:
        self.calls += 1
        if self.calls == 1:
            self.failed.set()
            raise RuntimeError("provider bug")
        return self.inner.generate(prompt, context)


def test_a_turn_that_raises_is_counted_on_the_brains_status_and_the_next_input_is_decided():
    from edge.app import Stack
    from edge.brain.loop import BrainConfig

    pip = load_companion(DEFAULT_COMPANION)
    hub = LocalHub()
    acted = threading.Event()
    listener = hub.transport("listener", "test", announce=False)
    listener.subscribe(Action, lambda action: acted.set())
    listener.connect()
    provider = _FailsFirst()
    stack = Stack(Settings(), kinds=("brain",), start_broker=False, transport=hub.transport, companions=[pip],
                  provider=provider, brain_config=BrainConfig(warm=False, result_timeout_s=0.2, memory_messages=0))
    stack.start()   # `companion run brain` on the hub: handlers, connect, ready
    try:
        for n in (1, 2):   # the second once the first is being decided: a newer view would replace it
            assert n == 1 or provider.failed.wait(10)
            listener.publish(Perception(title="vision", format="object", sender="cam", to=pip.id,
                                        body={"counts": {"person": n}, "changes": [{"label": "person",
                                                                                   "change": "appeared"}]}))
        assert acted.wait(10)                                   # the second view was decided and acted on
        assert hub.settle()
        status = _status(hub, f"brain-{pip.id}")
        assert status.extra["errors"] == {WORKER_FAILED: 1} and status.extra["companion"] == pip.id
    finally:
        stack.stop()
        listener.close()

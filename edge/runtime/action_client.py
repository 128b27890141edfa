"""Send an action and wait for its result: the one publish-and-wait every sender shares.

The brain (``CompanionBrain.perform``) waits on a thread; the MCP server waits inside asyncio.
Both need the same three things, done here once:

- the waiter is registered *before* the action is published, so even a result that comes back
  at once (the in-process transport, a test double answering inside ``publish``) finds it;
- a result is matched to its waiter by the action id alone, so concurrent callers, and other
  senders' results on the shared ``actions/results`` topic, never cross;
- a waiter that gave up (timeout, cancelled) is forgotten, so a late result is ignored and
  nothing grows with time.

Results arrive on the transport's delivery thread; ``deliver`` only sets an event or schedules
a future on the caller's loop, so it never blocks the bus.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

from edge.protocol.payloads import Action, ActionResult
from edge.runtime.transport import Transport


class _Waiter:
    """One action's wait: an event for threads, plus a hook that settles an asyncio future."""

    __slots__ = ("done", "result", "notify")

    def __init__(self, notify: Callable[[ActionResult | None], None] | None = None):
        self.done = threading.Event()
        self.result: ActionResult | None = None
        self.notify = notify


class ActionClient:
    """Publishes ``Action``s on one transport and hands each caller the ``ActionResult`` with its id.

    Build it before the transport connects: it subscribes to ``actions/results`` (a node's
    handlers come first, docs/nodes.md). ``perform`` blocks a thread; ``perform_async`` awaits.
    Both return None when no result came within ``timeout`` seconds.
    """

    def __init__(self, transport: Transport, *, subscribe: bool = True):
        self.transport = transport
        self._waiting: dict[str, _Waiter] = {}
        self._lock = threading.Lock()
        if subscribe:
            transport.subscribe(ActionResult, self.deliver)

    @property
    def waiting(self) -> int:
        """Actions sent whose callers still wait (0 when idle: nothing is kept after a wait)."""
        with self._lock:
            return len(self._waiting)

    def perform(self, action: Action, timeout: float,
                on_sent: Callable[[], None] | None = None) -> ActionResult | None:
        """Publish ``action`` and block until its result, or None after ``timeout`` seconds.
        ``on_sent`` runs right after the publish (the brain tells its observer there)."""
        return self.send(action, on_sent).wait(timeout)

    def send(self, action: Action, on_sent: Callable[[], None] | None = None) -> "Sent":
        """Publish ``action`` now and wait for its result later (``Sent.wait``): the brain says a
        reply's first clause while the model is still writing the next."""
        waiter = self._register(action, _Waiter())
        try:
            self.transport.publish(action)
            if on_sent is not None:
                on_sent()
        except BaseException:
            self._forget(action)   # nobody will wait for it: keep nothing
            raise
        return Sent(self, action, waiter)

    async def perform_async(self, action: Action, timeout: float) -> ActionResult | None:
        """``perform`` for asyncio callers: the event loop is never blocked while waiting."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[ActionResult | None] = loop.create_future()

        def notify(result: ActionResult | None) -> None:
            try:
                loop.call_soon_threadsafe(_settle, future, result)
            except RuntimeError:  # the caller's loop is already closed (shutdown)
                pass

        self._register(action, _Waiter(notify))
        try:
            self.transport.publish(action)
            return await asyncio.wait_for(future, timeout)
        except TimeoutError:
            return None
        finally:
            self._forget(action)

    def deliver(self, result: ActionResult) -> None:
        """Hand a result to whoever waits for its id; anyone else's result is ignored."""
        with self._lock:
            waiter = self._waiting.get(result.id)
        if waiter is None:
            return  # another sender's action, or one whose caller gave up
        waiter.result = result
        waiter.done.set()
        if waiter.notify is not None:
            waiter.notify(result)

    def release_all(self) -> None:
        """Stop every wait now, each caller getting None (its node is shutting down)."""
        with self._lock:
            waiters = list(self._waiting.values())
        for waiter in waiters:
            waiter.done.set()
            if waiter.notify is not None:
                waiter.notify(None)

    def _register(self, action: Action, waiter: _Waiter) -> _Waiter:
        with self._lock:
            if action.id in self._waiting:
                raise ValueError(f"action {action.id} is already waiting for its result; give each action its own id")
            self._waiting[action.id] = waiter
        return waiter

    def _forget(self, action: Action) -> None:
        with self._lock:
            self._waiting.pop(action.id, None)


def _settle(future: asyncio.Future[ActionResult | None], result: ActionResult | None) -> None:
    if not future.done():
        future.set_result(result)


class Sent:
    """An action published and not yet waited for."""

    def __init__(self, client: ActionClient, action: Action, waiter: _Waiter):
        self.client, self.action, self._waiter = client, action, waiter

    def wait(self, timeout: float) -> ActionResult | None:
        """Its result, or None after ``timeout`` seconds; the wait is forgotten either way."""
        try:
            self._waiter.done.wait(timeout)
            return self._waiter.result
        finally:
            self.client._forget(self.action)

"""The one publish-and-wait: each caller gets the result carrying its own action id, from a thread
or from asyncio, and a caller that gave up leaves nothing behind."""

from __future__ import annotations

import asyncio
import threading

import pytest

from edge.protocol.payloads import Action, ActionError, ActionResult
from edge.runtime.action_client import ActionClient
from edge.runtime.local import LocalHub


class EchoBody:
    """Answers each action with a result naming its params' ``say``; holds back the ids in ``silent``."""

    def __init__(self, hub: LocalHub, silent: set[str] | None = None, release: threading.Event | None = None):
        self.transport = hub.transport("body", "body")
        self.silent = silent or set()
        self.release = release
        self.transport.subscribe(Action, self.on_action)

    def on_action(self, action: Action) -> None:
        if action.params.get("say") in self.silent:
            return
        error = None if action.params.get("ok", True) else ActionError("invalid_params", "no")
        self.transport.publish(ActionResult(id=action.id, name=action.name, ok=error is None, sender="body",
                                            started=action.ts, finished=action.ts, error=error))


@pytest.fixture
def hub() -> LocalHub:
    return LocalHub()


def test_a_thread_gets_the_result_of_its_own_action(hub):
    body = EchoBody(hub)
    client = ActionClient(brain := hub.transport("brain-x", "brain"))
    sent: list[str] = []
    with body.transport, brain:
        action = Action(name="wave", params={"ok": False}, sender="x")
        result = client.perform(action, 5.0, on_sent=lambda: sent.append(action.id))
    assert result is not None and result.id == action.id and not result.ok
    assert result.error == ActionError("invalid_params", "no")
    assert sent == [action.id] and client.waiting == 0


def test_concurrent_callers_never_see_each_others_results(hub):
    body = EchoBody(hub)
    client = ActionClient(brain := hub.transport("mcp-x", "mcp"))
    got: dict[str, str | None] = {}
    with body.transport, brain:

        def call(n: int) -> None:
            action = Action(name=f"a{n}", params={}, sender="x")
            result = client.perform(action, 5.0)
            got[action.id] = result.id if result else None

        threads = [threading.Thread(target=call, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert len(got) == 8 and all(k == v for k, v in got.items())
    assert client.waiting == 0


def test_no_result_is_none_and_a_late_one_is_ignored(hub):
    body = EchoBody(hub, silent={"hush"})
    client = ActionClient(brain := hub.transport("brain-x", "brain"))
    with body.transport, brain:
        action = Action(name="wave", params={"say": "hush"}, sender="x")
        assert client.perform(action, 0.05) is None
        assert client.waiting == 0
        client.deliver(ActionResult(id=action.id, name="wave", ok=True, sender="body", started=0.0, finished=0.0))
        assert client.waiting == 0


def test_asyncio_callers_await_without_blocking_the_loop(hub):
    body = EchoBody(hub, silent={"hush"})
    client = ActionClient(brain := hub.transport("mcp-x", "mcp"))

    async def both() -> tuple[ActionResult | None, ActionResult | None]:
        answered = Action(name="wave", params={}, sender="x")
        lost = Action(name="wave", params={"say": "hush"}, sender="x")
        a, b = await asyncio.gather(client.perform_async(answered, 5.0), client.perform_async(lost, 0.1))
        assert a is not None and a.id == answered.id
        return a, b

    with body.transport, brain:
        first, second = asyncio.run(both())
    assert first is not None and first.ok and second is None and client.waiting == 0


def test_a_result_published_inside_publish_is_not_missed():
    """A transport that answers before ``publish`` returns (a test double, the local hub under
    load): the waiter exists before the action goes out."""

    class Instant:
        def __init__(self) -> None:
            self.client: ActionClient | None = None

        def publish(self, payload: Action, retain: bool | None = None) -> None:
            assert self.client is not None
            self.client.deliver(ActionResult(id=payload.id, name=payload.name, ok=True, sender="t",
                                             started=0.0, finished=0.0))

        def subscribe(self, *args: object, **kwargs: object) -> None:
            pass

    transport = Instant()
    client = transport.client = ActionClient(transport)  # type: ignore[arg-type]
    action = Action(name="wave", params={}, sender="x")
    result = client.perform(action, 0.0)
    assert result is not None and result.id == action.id


def test_one_id_waited_for_twice_is_refused(hub):
    body = EchoBody(hub, silent={"hush"})
    client = ActionClient(brain := hub.transport("brain-x", "brain"))
    action = Action(name="wave", params={"say": "hush"}, sender="x")
    sent, results = threading.Event(), []
    with body.transport, brain:
        first = threading.Thread(target=lambda: results.append(client.perform(action, 5.0, on_sent=sent.set)))
        first.start()
        assert sent.wait(5.0)
        with pytest.raises(ValueError, match="already waiting"):
            client.perform(action, 0.01)
        client.deliver(ActionResult(id=action.id, name="wave", ok=True, sender="body", started=0.0, finished=0.0))
        first.join(5.0)
    assert [r.id for r in results] == [action.id]    # the first caller still got its result


def test_release_all_ends_every_wait_with_none(hub):
    body = EchoBody(hub, silent={"hush"})
    client = ActionClient(brain := hub.transport("brain-x", "brain"))
    sent, results = threading.Event(), []
    with body.transport, brain:
        waiting = threading.Thread(target=lambda: results.append(
            client.perform(Action(name="wave", params={"say": "hush"}, sender="x"), 30.0, on_sent=sent.set)))
        waiting.start()
        assert sent.wait(5.0)
        client.release_all()                  # a brain stopping: its turn must not hang for 30 s
        waiting.join(5.0)
    assert results == [None] and client.waiting == 0

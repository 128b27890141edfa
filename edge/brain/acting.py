"""What a turn may do outside itself: the small interface the brain's helpers are given.

The stages of a turn (``stages.py``), the model turn (``turn.py``), the fast paths
(``fast_path.py``) and the streamed speech (``spoken_stream.py``) act on the world only through
``Acts``: publish an action and wait for its result, send a message to another companion, move
the loop's state, tell the observer, and ask whether the turn was cancelled. They never see the
whole brain, so none of them calls back into ``loop.py``; a test can hand them any ``Acts``.

``Acting`` is the brain's own: the action client, the emergency-stop gate in front of it, the
loop's state machine and the turn's cancel event live here.
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Collection
from typing import Any, Callable, Protocol

from edge.brain.conversation import MessagingRules
from edge.brain.state import BrainState, allowed
from edge.log import get_logger
from edge.protocol.action_names import SPEECH_ACTIONS, STOP
from edge.protocol.payloads import Action, ActionError, ActionResult
from edge.providers.base import ToolCall
from edge.runtime.action_client import ActionClient

log = get_logger(__name__)

Observer = Callable[[str, dict[str, Any]], None]
Wait = Callable[[], "ActionResult | None"]


class Acts(Protocol):
    """Everything a turn's helpers do besides thinking."""

    def perform(self, name: str, params: dict[str, Any], source_id: str) -> ActionResult | None:
        """Publish one action and wait for its result (None: no result in time)."""
        ...

    def send(self, name: str, params: dict[str, Any], source_id: str) -> Wait:
        """Publish one action now; the returned call waits for its result."""
        ...

    def send_message(self, call: ToolCall, source_id: str) -> ActionResult:
        """The built-in ``send_message`` action."""
        ...

    def set_state(self, new: BrainState) -> None: ...

    def observe(self, kind: str, data: dict[str, Any]) -> None:
        """Tell the observer (the console, a trace, a bench) what happened."""
        ...

    def cancelled(self) -> str | None:
        """Why the turn in progress was cancelled (an emergency stop, a barge-in), or None."""
        ...

    @property
    def cancel_event(self) -> threading.Event:
        """The turn's cancel, for a provider call to watch."""
        ...

    def last_params(self, name: str) -> dict[str, Any]:
        """The params the last ``name`` action was sent with (empty: never sent): where a setting
        is, for "a little brighter" (relative.py)."""
        ...


class Acting:
    """The brain's ``Acts``: one per companion, shared by its turn and its slash commands."""

    def __init__(self, companion_id: str, name: str, action_client: ActionClient, messaging: MessagingRules,
                 observer: Observer, result_timeout_s: float, stopping: threading.Event,
                 voices: Collection[str] = SPEECH_ACTIONS):
        self.companion_id, self.name = companion_id, name
        self.voices = voices                      # the actions that are its words (speak, say, whisper ...)
        self.action_client = action_client
        self.messaging = messaging
        self.observer = observer
        self.result_timeout_s = result_timeout_s
        self._stopping = stopping                 # the node is stopping: a missing result is no fault
        self.state = BrainState.WAITING
        self.estop_engaged = False
        self.turn_cancel = threading.Event()      # the turn in progress's; set by an engaged estop or a barge-in
        self.cancel_why = "emergency stop"
        self._last_params: dict[str, dict[str, Any]] = {}
        self.spoken_ids: collections.deque[str] = collections.deque(maxlen=32)   # our recent speech actions

    def new_turn(self) -> None:
        """A fresh cancel for the next turn; cancelled at once while the estop is engaged."""
        self.turn_cancel, self.cancel_why = threading.Event(), "emergency stop"
        if self.estop_engaged:
            self.turn_cancel.set()

    def cancel(self, why: str) -> None:
        self.cancel_why = why
        self.turn_cancel.set()

    def cancelled(self) -> str | None:
        return self.cancel_why if self.turn_cancel.is_set() else None

    @property
    def cancel_event(self) -> threading.Event:
        return self.turn_cancel

    def observe(self, kind: str, data: dict[str, Any]) -> None:
        self.observer(kind, data)

    def set_state(self, new: BrainState) -> None:
        if not allowed(self.state, new):
            log.error("brain.bad_transition", companion=self.name, current=self.state.value, new=new.value)
        if new != self.state:
            log.debug("brain.state", companion=self.name, state=new.value)
            self.state = new
            self.observer("state", {"state": new.value})

    def perform(self, name: str, params: dict[str, Any], source_id: str) -> ActionResult | None:
        return self.send(name, params, source_id)()

    def last_params(self, name: str) -> dict[str, Any]:
        return self._last_params.get(name, {})

    def send(self, name: str, params: dict[str, Any], source_id: str) -> Wait:
        """Publish one action now; the returned call waits for its result (None after
        ``result_timeout_s``). A streamed reply's first clause is sent while the model writes on.

        While the estop is engaged the action is refused here, as the body would refuse it,
        and never published: a decision that was on its way when the estop came is not carried out."""
        action = Action(name=name, params=params, sender=self.companion_id)
        if self.estop_engaged and name != STOP:
            now = time.time()
            result = ActionResult(id=action.id, name=name, ok=False, sender=self.companion_id, started=now,
                                  finished=now, error=ActionError("estop_engaged", "emergency stop is engaged; "
                                                                                   "action not sent"))
            self.observer("result", {"result": result.to_dict()})
            return lambda: result
        if name in self.voices:
            self.spoken_ids.append(action.id)
        self._last_params[name] = dict(params)
        sent = self.action_client.send(action, on_sent=lambda: self.observer(
            "action", {"perception_id": source_id, "action": action.to_dict()}))

        def wait() -> ActionResult | None:
            answer = sent.wait(self.result_timeout_s)
            if answer is None and self._stopping.is_set():
                return None  # released by stop(): not a missing body
            if answer is None:
                log.warning("action.no_result", companion=self.name, action=action.name, id=action.id,
                            reason=f"no result within {self.result_timeout_s:.0f} s; is the body running?")
                self.observer("result_timeout", {"action": action.to_dict()})
                return None
            self.observer("result", {"result": answer.to_dict()})
            return answer
        return wait

    def send_message(self, call: ToolCall, source_id: str) -> ActionResult:
        """The built-in ``send_message`` action: goes out under the seed's rules, never blocks."""
        now = time.time()
        outcome = self.messaging.send(call.args["to"], call.args["message"])
        self.observer("message_sent" if outcome.accepted else "message_refused",
                      {"to": call.args["to"], "message": call.args["message"], "detail": outcome.reason})
        if not outcome.accepted:
            return refused(call, "message_refused", outcome.reason, now)
        return ActionResult(id=call.id, name=call.name, ok=True, sender=self.companion_id, started=now, finished=now)


def refused(call: ToolCall, code: str, message: str, now: float) -> ActionResult:
    """A local failure result (for actions the brain handles itself, like messages)."""
    return ActionResult(id=call.id, name=call.name, ok=False, sender="brain", started=now, finished=now,
                        error=ActionError(code, message))

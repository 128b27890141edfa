"""One companion's decision loop: perception -> provider -> validated actions -> their results.

Exactly one loop per companion, on its own thread, handling one perception at a time: a
companion that is still speaking does not start deciding about the next thing it saw.
Perceptions that arrive meanwhile wait in a bounded queue; when it is full the oldest is
dropped with a log line (the newest view of the world matters most).

Every tool call is checked before anything is published: an unknown action or params that
break the action's schema go back to the provider as an observation, up to ``max_corrections``
times, so the model can correct itself (the grammar of the embedded model cannot enforce
number ranges, for example).
"""

from __future__ import annotations

import collections
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from edge.bus import Bus
from edge.log import get_logger
from edge.protocol.companion import Companion, validate_params
from edge.protocol.payloads import Action, ActionResult, Perception
from edge.providers.base import Message, Provider, ProviderContext, ProviderError, ProviderResponse, ToolCall
from edge.brain import prompt

log = get_logger(__name__)

Observer = Callable[[str, dict[str, Any]], None]


@dataclass
class BrainConfig:
    queue_size: int = 8
    result_timeout_s: float = 60.0
    max_corrections: int = 2
    events_only_tools: bool = True
    max_tokens: int = 96
    temperature: float = 0.2


@dataclass
class _Pending:
    done: threading.Event = field(default_factory=threading.Event)
    result: ActionResult | None = None


class CompanionBrain:
    """Subscribes to perceptions for one companion and acts on them, one at a time."""

    def __init__(self, companion: Companion, provider: Provider, bus: Bus,
                 config: BrainConfig | None = None, observer: Observer | None = None):
        self.companion = companion
        self.provider = provider
        self.bus = bus
        self.config = config or BrainConfig()
        self.observer = observer or (lambda kind, data: None)
        self._queue: collections.deque[Perception] = collections.deque()
        self._wake = threading.Condition()
        self._pending: dict[str, _Pending] = {}
        self._pending_lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"brain-{companion.name}", daemon=True)
        self.handled = 0
        self.dropped = 0
        self.busy = False

    # -- wiring ---------------------------------------------------------------------------

    def start(self) -> "CompanionBrain":
        self.bus.subscribe(Perception, self._on_perception)
        self.bus.subscribe(ActionResult, self._on_result)
        self._thread.start()
        log.info("brain.ready", companion=self.companion.id, name=self.companion.name,
                 provider=getattr(self.provider, "name", "?"))
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        with self._wake:
            self._wake.notify_all()
        with self._pending_lock:
            for pending in self._pending.values():
                pending.done.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def idle(self) -> bool:
        """True when nothing is queued and no perception is being handled."""
        with self._wake:
            return not self._queue and not self.busy

    def addressed_to_me(self, perception: Perception) -> bool:
        return perception.to in ("all", self.companion.id)

    # -- bus callbacks (paho's thread: only enqueue) ---------------------------------------

    def _on_perception(self, perception: Perception) -> None:
        if not self.addressed_to_me(perception):
            return
        if self.companion.perception(perception.title) is None:
            known = ", ".join(p.title for p in self.companion.perceptions)
            log.warning("perception.unknown_title", companion=self.companion.name, title=perception.title,
                        known=known, id=perception.id)
            self.observer("perception_rejected", {"perception": perception.to_dict(),
                                                  "reason": f"unknown perception title {perception.title!r}; known: {known}"})
            return
        with self._wake:
            if len(self._queue) >= self.config.queue_size:
                old = self._queue.popleft()
                self.dropped += 1
                log.warning("perception.dropped", companion=self.companion.name, id=old.id, title=old.title,
                            reason=f"queue full ({self.config.queue_size}); oldest dropped")
            self._queue.append(perception)
            self._wake.notify()

    def _on_result(self, result: ActionResult) -> None:
        with self._pending_lock:
            pending = self._pending.get(result.id)
        if pending is not None:
            pending.result = result
            pending.done.set()

    # -- the loop -------------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.is_set():
            with self._wake:
                while not self._queue and not self._stop.is_set():
                    self._wake.wait(0.5)
                if self._stop.is_set():
                    return
                perception = self._queue.popleft()
                self.busy = True
            try:
                self.handle(perception)
            except Exception as exc:  # one bad turn must not end the companion
                log.error("brain.turn_failed", companion=self.companion.name, perception=perception.id,
                          error=repr(exc), exc_info=True)
            finally:
                with self._wake:
                    self.busy = False
                self.handled += 1

    def handle(self, perception: Perception) -> list[ActionResult]:
        """Decide about one perception and carry the decision out; returns the results."""
        self.observer("perception", {"perception": perception.to_dict()})
        tools = prompt.offered_tools(self.companion, perception.title, self.config.events_only_tools)
        context = ProviderContext(tools=tools, system=prompt.system_text(self.companion, perception.title),
                                  max_tokens=self.config.max_tokens, temperature=self.config.temperature)
        user = prompt.user_text(perception)
        calls = self._decide(user, context, perception)
        results = []
        for call in calls:
            result = self._execute(call, perception)
            if result is not None:
                results.append(result)
        return results

    def _decide(self, user: str, context: ProviderContext, perception: Perception) -> list[ToolCall]:
        """Ask the provider; re-ask with the problems as an observation until every call is valid."""
        for attempt in range(self.config.max_corrections + 1):
            started = time.monotonic()
            try:
                response = self.provider.generate(user, context)
            except ProviderError as exc:
                log.warning("provider.failed", companion=self.companion.name, perception=perception.id,
                            code=exc.code, reason=exc.message)
                self.observer("provider_error", {"perception_id": perception.id, "error": exc.to_json()})
                return []
            latency = time.monotonic() - started
            problems = self._problems(response)
            self.observer("decision", {"perception_id": perception.id, "attempt": attempt, "latency_s": latency,
                                       "response": response.to_json(), "problems": problems})
            if not problems:
                return response.tool_calls
            log.info("decision.rejected", companion=self.companion.name, perception=perception.id,
                     attempt=attempt, problems=problems)
            context.history = [*context.history, Message("user", user),
                               Message("assistant", _summarize(response))]
            user = prompt.correction_text(problems)
        log.warning("decision.abandoned", companion=self.companion.name, perception=perception.id,
                    reason=f"still invalid after {self.config.max_corrections} corrections")
        return []

    def _problems(self, response: ProviderResponse) -> list[str]:
        problems = [f"unparsable reply: {e}" for e in response.errors]
        for call in response.tool_calls:
            spec = self.companion.action(call.name)
            if spec is None:
                known = ", ".join(a.title for a in self.companion.actions)
                problems.append(f"unknown action {call.name!r} (known: {known})")
                continue
            problems.extend(f"{call.name} {p.pointer or '/'}: {p.message}" for p in validate_params(spec, call.args))
        return problems

    def _execute(self, call: ToolCall, perception: Perception) -> ActionResult | None:
        action = Action(name=call.name, params=call.args, sender=self.companion.id)
        pending = _Pending()
        with self._pending_lock:
            self._pending[action.id] = pending
        try:
            self.bus.publish(action)
            self.observer("action", {"perception_id": perception.id, "action": action.to_dict()})
            if not pending.done.wait(self.config.result_timeout_s):
                log.warning("action.no_result", companion=self.companion.name, action=action.name, id=action.id,
                            reason=f"no result within {self.config.result_timeout_s:.0f} s; is the body running?")
                self.observer("result_timeout", {"action": action.to_dict()})
                return None
            if pending.result is not None:
                self.observer("result", {"result": pending.result.to_dict()})
            return pending.result
        finally:
            with self._pending_lock:
                self._pending.pop(action.id, None)


def _summarize(response: ProviderResponse) -> str:
    """The assistant turn as history: the raw decision, compact."""
    return json.dumps([s.to_json() for s in response.segments], ensure_ascii=False)[:500]

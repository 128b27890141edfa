"""A stand-in for the bus and the body that brain tests share: it records every action the
brain publishes and answers it ``ok`` at once; ``first`` is set by the first action."""

from __future__ import annotations

import threading

from edge.protocol.payloads import Action, ActionResult


class OkBody:
    def __init__(self):
        self.brain, self.actions, self.first = None, [], threading.Event()

    def publish(self, payload, retain=None):
        if isinstance(payload, Action):
            self.actions.append(payload)
            self.first.set()
            self.brain._on_result(ActionResult(id=payload.id, name=payload.name, ok=True, sender="t", started=0.0,
                                               finished=0.0))

    def subscribe(self, *args, **kwargs):
        pass

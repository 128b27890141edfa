"""A reply in words said a clause at a time, while the model is still writing the rest.

The wire contract does not change: each clause is an ordinary ``speak`` action (docs/protocol.md,
"Streamed speech"), and the body plays its actions in order, so a reply of two sentences is two
``speak`` actions, the first published as soon as it is written. When the whole reply is in,
``rest`` leaves in it only what was not said yet; the turn checks the whole reply as before
(schema, echo), but what was already said cannot be taken back, so a clause that repeats the
person is never said early (echo.py) and stops the early speech for that reply.
"""

from __future__ import annotations

import threading
from typing import Callable

from edge.brain.acting import Acts
from edge.brain.echo import echoes, without_instructions
from edge.brain.names import SelfAddress
from edge.protocol.payloads import ActionResult
from edge.providers.base import ContentSegment, ProviderResponse, ToolCall
from edge.providers.decision import Speech


class SpokenStream:
    """One round's early speech: ``say`` is the provider's ``on_words``."""

    def __init__(self, acts: Acts, self_address: SelfAddress, source_id: str, speech: Speech, heard: str,
                 instructions: str | None = None, sayable: Callable[[str], str | None] = lambda clause: clause):
        self.acts, self.self_address = acts, self_address
        self.sayable = sayable             # spoken_calls.SpokenCalls.clause: None for a call written out
        self.source_id, self.speech, self.heard = source_id, speech, heard
        self.instructions = instructions   # a correction round's text: never said back
        self.said: list[str] = []
        self._waits: list[Callable[[], ActionResult | None]] = []
        self._quiet = False
        self._lock = threading.Lock()

    def say(self, clause: str) -> None:
        """Called on the model's thread with each finished clause."""
        readable = self.sayable(clause)
        if readable is None:   # an action written out as words: nothing more is said early
            with self._lock:
                self._quiet = True
            return
        clause = self.self_address.strip(readable)
        if not clause:   # it was only the companion's own name
            return
        with self._lock:
            copied = self.instructions is not None and without_instructions(clause, self.instructions) != clause
            if self._quiet or self.acts.cancelled() is not None or echoes(clause, self.heard) or copied:
                self._quiet = True
                return
            self.said.append(clause)
            self._waits.append(self.acts.send(self.speech.action, {self.speech.param: clause}, self.source_id))

    def rest(self, response: ProviderResponse) -> ProviderResponse:
        """``response`` without the words already said: its speech call keeps only the rest of
        the text (or goes, when nothing is left)."""
        with self._lock:
            self._quiet = True     # the reply is complete: nothing more is said early
            said = list(self.said)
        if not said:
            return response
        segments: list[ContentSegment] = []
        for segment in response.segments:
            call = segment.tool_call
            if segment.type == "tool_call" and call is not None and call.name == self.speech.action:
                left = _after(str(call.args.get(self.speech.param, "")), said)
                if not left:
                    continue
                segment = ContentSegment(type="tool_call", tool_call=ToolCall(call.name, {self.speech.param: left}))
            segments.append(segment)
        return ProviderResponse(segments=segments, metadata=response.metadata)

    def results(self) -> list[ActionResult | None]:
        """The results of what was said early, in order (waits for each)."""
        with self._lock:
            waits, self._waits = self._waits, []
        return [wait() for wait in waits]


def _after(text: str, said: list[str]) -> str:
    """What follows the clauses ``said`` in ``text``; empty when they cannot all be found (the
    words were altered on the way: better to leave out the rest than to say something twice)."""
    at = 0
    for clause in said:
        found = text.find(clause, at)
        if found < 0:
            return ""
        at = found + len(clause)
    return text[at:].strip()

"""The words of a spoken reply, handed on a clause at a time while the model is still writing.

Speech can start on a reply's first sentence: the body synthesizes and plays it while the model
writes the rest (issue 13, "stream through every stage"). A reply that starts like JSON is a
decision, not words, and nothing is handed on early. A clause ends at a sentence end (. ! ? and
the Japanese 。！？) followed by a space or, for Japanese, at once; or at a comma (, 、) once the
clause is long enough to be worth saying alone. A full stop inside a number ("3.5") is followed by
no space and so never ends a clause. A model may also write its words as a JSON speech decision
(``{"action":"speak","params":{"message":"...``): the string is read as it grows.
"""

from __future__ import annotations

import json
import re
from typing import Callable

_SENTENCE = re.compile(r"[.!?]+[\"')\]]*\s|[。！？]+[」』）]*")
_COMMA = re.compile(r"[,;]\s|[、，]")
MIN_COMMA_CLAUSE = 12     # characters before a comma may end a clause: "Oh no," alone sounds clipped
_DECISION_START = "{[`\""


class Clauses:
    """Feed it the reply's text as it comes (``feed``); ``emit`` gets each finished clause, in
    order. ``speech`` names the speech action and its text parameter, so that words written as a
    JSON decision of that action are streamed too."""

    def __init__(self, emit: Callable[[str], None], speech: tuple[str, str] | None = None):
        self.emit = emit
        self.raw = ""
        self.sent = 0          # characters of the words handed on
        self.words: bool | None = None   # None until the start says words, JSON speech, or neither
        self._json_start: int | None = None
        # the grammar writes compact JSON, so a speech decision starts exactly like this
        self._json = f'{{"action":"{speech[0]}","params":{{"{speech[1]}":"' if speech else None

    def feed(self, delta: str) -> None:
        self.raw += delta
        if self.words is None:
            self._decide_kind()
        while self.words and (end := self._next_end()) is not None:
            text = self.text
            clause = text[self.sent:end].strip()
            self.sent = end
            if clause:
                self.emit(clause)

    def stop(self) -> None:
        """Hand on nothing more (the caller found a reason not to speak early)."""
        self.words = False

    @property
    def text(self) -> str:
        """The words written so far (a JSON string decoded up to its last complete character)."""
        if self._json_start is None:
            return self.raw
        body = self.raw[self._json_start:]
        end = re.search(r'(?<!\\)(?:\\\\)*"', body)
        body = body[:end.start() + len(end.group()) - 1] if end else body
        for cut in range(0, 7):             # a half-written escape (\u00e9) waits for its end
            try:
                return str(json.loads('"' + body[:len(body) - cut] + '"'))
            except ValueError:
                continue
        return ""

    @property
    def handed_on(self) -> str:
        return self.text[:self.sent].strip()

    @property
    def rest(self) -> str:
        return self.text[self.sent:].strip()

    def _decide_kind(self) -> None:
        start = self.raw.lstrip()
        if not start:
            return
        if start[0] not in _DECISION_START:
            self.words = True
        elif self._json is not None and start.startswith(self._json):
            self._json_start = len(self.raw) - len(start) + len(self._json)
            self.words = True
        elif self._json is None or not self._json.startswith(start):
            self.words = False        # another decision: nothing to say early

    def _next_end(self) -> int | None:
        text = self.text
        pending = text[self.sent:]
        sentence = _SENTENCE.search(pending)
        comma = _COMMA.search(pending)
        if comma is not None and len(pending[:comma.start()].strip()) < MIN_COMMA_CLAUSE:
            comma = None
        found = [m for m in (sentence, comma) if m is not None]
        if not found:
            return None
        return self.sent + min(m.end() for m in found)

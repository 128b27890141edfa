"""Does a sentence a person said ask for an action, by meaning? Decides how the model is asked.

With the embedded model, a person's words are answered in words unless the model is fairly sure
it was asked to act (a small bias, docs/embedded-model.md). That bias must not talk the model out
of a command phrased in a way the file's sentence templates do not cover ("let me hear two
barks"): so when the sentence is close in meaning to one of the companion's non-speech actions
(its description, parameters and ``x-sentences`` examples, embedded by the multilingual sentence
encoder that tool retrieval uses), the model is asked without the bias; when it is very close,
only that action is offered (``asks_for``): on commands that miss the templates ("let me hear 2
barks", 0.68; "もうちょっと前に出てきて", 0.82) the 0.5B model otherwise answered in words or
picked another action.

Calibrated on bench/decision_cases.py: commands scored 0.34..1.0 (most >= 0.4), questions and
small talk 0.03..0.32 (greetings up to 0.5, answered in words anyway). Only embeddings give
comparable scores; with BM25 (no encoder installed) every sentence counts as talk.
"""

from __future__ import annotations

import re

from edge.providers.decision import SPEECH_ACTIONS
from edge.protocol.companion import Companion
from edge.providers.base import Tool
from edge.providers.retrieval import EmbeddingRanker, default_ranker, tool_passages
from edge.providers.sentence_examples import sentence_examples

COMMAND_SCORE = 0.4          # close to an action: no lean towards words
CLEAR_COMMAND_SCORE = 0.55   # clearly an action: the model is offered only that action, to fill in
TIE = 0.05                   # actions this close to the best are offered too
# An embedding places "don't bark" and "stop barking" right next to "bark": a sentence that says
# no is never taken as asking for the action it names (English and Japanese forms).
_NEGATION = re.compile(r"\b(don'?t|do not|never|stop|quit|no more|not now|no)\b|ないで|やめ|止め|だめ|ダメ|するな|しなくて",
                       re.IGNORECASE)


class CommandSense:
    """For one companion: the action a sentence most likely asks for, and how close it is."""

    def __init__(self, companion: Companion, tools: list[Tool]):
        examples = sentence_examples(companion.source)
        self._names = [t.name for t in tools if t.name not in SPEECH_ACTIONS]
        self._passages = [tool_passages(t, examples.get(t.name, [])) for t in tools if t.name in self._names]

    def ranked(self, text: str) -> list[tuple[str, float]]:
        """The companion's non-speech actions, closest in meaning first; empty without embeddings,
        and for a sentence that says no."""
        ranker = default_ranker()
        if not self._names or not isinstance(ranker, EmbeddingRanker) or _NEGATION.search(text):
            return []
        scores = ranker.passage_scores(text, self._passages)
        return sorted(zip(self._names, scores), key=lambda pair: -pair[1])

    @staticmethod
    def says_no(text: str) -> bool:
        """"Don't bark", "stop moving", "見ないで": the person wants an action NOT done; the model
        is then offered only words (or nothing), never another motion to pick at random."""
        return _NEGATION.search(text) is not None

    def closest(self, text: str) -> tuple[str | None, float]:
        ranked = self.ranked(text)
        return ranked[0] if ranked else (None, 0.0)

    def asks_for(self, text: str) -> list[str]:
        """For a sentence that clearly asks for an action: that action, or the two it is between
        (within ``TIE`` of each other); else nothing. The encoder tells which action, far more
        reliably than a 0.5B model ("Gimme your left paw" made the model sit); the model then only
        fills in the parameters, held to the action's schema by the grammar."""
        return _wanted(self.ranked(text))

    def offer(self, text: str, tools: list[Tool]) -> tuple[list[Tool], bool]:
        """What a person said -> the actions to offer the model, and whether to lean towards
        words. The sentence is embedded once (this runs on every turn)."""
        if self.says_no(text):
            words = [t for t in tools if t.name in SPEECH_ACTIONS]
            return (words or tools), True
        ranked = self.ranked(text)
        wanted = _wanted(ranked)
        narrowed = [t for t in tools if t.name in wanted]
        best = ranked[0][1] if ranked else 0.0
        return (narrowed or tools), best < COMMAND_SCORE


def _wanted(ranked: list[tuple[str, float]]) -> list[str]:
    if not ranked or ranked[0][1] < CLEAR_COMMAND_SCORE:
        return []
    return [name for name, score in ranked[:2] if score >= ranked[0][1] - TIE]

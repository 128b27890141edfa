"""Does a sentence a person said ask for an action, by meaning? Decides how the model is asked.

A small model asked with every action on offer answers many commands in words ("Sure, I'll
look left!") or with the wrong action. The multilingual sentence encoder that tool retrieval
uses tells much better whether a sentence is a command and which action it wants, when it is
asked the right question: not "how close is this to the look action" (an absolute score that
moves with phrasing) but "is this closer to ways of asking for an action than to ordinary talk".

So each companion gets two banks of sentences: for each non-speech action, its description and
parameters plus every way the file's ``x-sentences`` templates ask for it (expanded, slots
filled) and its worked examples; and for talk, the file's worked examples answered in words
plus a small built-in set of everyday small talk in English and Japanese (``TALK``). The
*margin* between the closest action and the closest talk decides: a command offers only that
action (the model fills in the parameters the sentence does not settle, ``slots.py``), talk
leans towards words. Only embeddings give comparable scores; without the encoder (BM25) every
sentence counts as talk and the model decides as before.

Two plain cues settle what the embedding leaves close. A word that only one action's templates
use ("look", "見て" against "come", "進んで") picks between actions whose scores are near (a
direction word pulls "move left" and "look left" together), and lets a sentence just short of
the margin count as that command. A question that is not a request ("Do you want to go for a
walk?", unlike "Could you sit?") is talk unless the embedding is sure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from edge.brain.slots import asks_to_go, asks_to_see, points_somewhere, takes_distance
from edge.brain.small_talk import TALK
from edge.brain.prompt import EXAMPLES_KEY
from edge.protocol.companion import Companion
from edge.providers.base import Tool
from edge.providers.decision import SPEECH_ACTIONS
from edge.providers.retrieval import EmbeddingRanker, default_ranker, split_identifier, tokenize, tool_passages
from edge.providers.sentence_examples import template_words, variants

COMMAND_MARGIN = 0.12   # this much closer to an action than to talk: a command
WORDED_MARGIN = -0.1    # the same for a sentence with a word only that action's templates use
TIE = 0.05              # actions this close to the best are offered too
NEAR = 0.3              # a template word decides between actions this close
CHOICE_SCORE = 0.3      # an enum option this close to the sentence, and TIE ahead of the next, is meant
QUESTION_MARGIN = 0.2   # a question that is no request is a command only this clearly
_QUESTION = re.compile(r"[?？]\s*$|(?:の|か)\s*$")
_REQUEST = re.compile(r"\b(can|could|would|will|won'?t) you\b|\bplease\b|\bhow about\b|てくれ|てもらえ|てほしい|ませんか|て[?？]",
                      re.IGNORECASE)
# An embedding places "don't bark" and "stop barking" right next to "bark": a sentence that says
# no is never taken as asking for the action it names (English and Japanese forms).
_NEGATION = re.compile(r"\b(don'?t|do not|never|stop|quit|no more|not now|no)\b|ないで|やめ|止め|だめ|ダメ|するな|しなくて",
                       re.IGNORECASE)


@dataclass
class Reading:
    """What a sentence was found to be: the actions closest first, and how close talk is."""
    ranked: list[tuple[str, float]] = field(default_factory=list)
    talk: float = 0.0
    says_no: bool = False
    worded: set[str] = field(default_factory=set)   # actions one of whose own template words was said
    question: bool = False                         # a question that is not a request

    @property
    def margin(self) -> float:
        return self.ranked[0][1] - self.talk if self.ranked else -1.0

    @property
    def wanted(self) -> list[str]:
        """The action asked for, or the two it is between; empty for talk."""
        if self.says_no or not self.ranked:
            return []
        best = self.ranked[0][1]
        near = [(name, score) for name, score in self.ranked if score >= best - NEAR]
        named = [(name, score) for name, score in near if name in self.worded]
        if len(named) == 1:
            name, score = named[0]
            needed = QUESTION_MARGIN if self.question else WORDED_MARGIN
            return [name] if score - self.talk >= needed else []
        if self.margin < (QUESTION_MARGIN if self.question else COMMAND_MARGIN):
            return []
        return [name for name, score in self.ranked[:2] if score >= best - TIE]


class CommandSense:
    """For one companion: which action a sentence asks for, if any."""

    def __init__(self, companion: Companion, tools: list[Tool]):
        asked = variants(companion.source)
        shown, talk = _worked_examples(companion)
        self._names = [t.name for t in tools if t.name not in SPEECH_ACTIONS]
        self._passages = [tool_passages(t, [*asked.get(t.name, []), *shown.get(t.name, [])])
                          for t in tools if t.name in self._names]
        self._talk = list(dict.fromkeys([*TALK, *talk]))
        self._words = _own_words(template_words(companion.source), self._names)
        self._vocative = _vocative(companion)
        self._movers = {t.name for t in tools if t.name in self._names and takes_distance(t)}
        self._lookers = {t.name for t in tools if t.name in self._names and points_somewhere(t)} - self._movers

    def read(self, text: str) -> Reading:
        """The sentence embedded once and compared with both banks."""
        ranker = default_ranker()
        no = _NEGATION.search(text) is not None
        if not self._names or not isinstance(ranker, EmbeddingRanker):
            return Reading(says_no=no)
        plain = self._vocative.sub(" ", text).strip() or text   # "Pochi, sit!" means what "sit!" means
        scores = ranker.passage_scores(plain, [*self._passages, self._talk])
        ranked = sorted(zip(self._names, scores[:-1]), key=lambda pair: -pair[1])
        latin = set(tokenize(text))
        worded = {name for name, (words, pieces) in self._words.items()
                  if words & latin or any(piece in text for piece in pieces)}
        if asks_to_go(text):   # going somewhere: only the actions that take a distance, if any were named
            worded = (worded & self._movers) or set(self._movers)
        elif asks_to_see(text):   # turning the eyes: only the actions that point without going
            worded = (worded & self._lookers) or set(self._lookers)
        question = _QUESTION.search(text.strip()) is not None and _REQUEST.search(text) is None
        return Reading(ranked=ranked, talk=scores[-1], says_no=no, worded=worded, question=question)

    def choose(self, text: str, options: list[list[str]]) -> int | None:
        """Which of several options (each a few words) the sentence means, by the encoder; None
        when none is clearly closest ("一礼して" -> the option "おじぎ bow")."""
        ranker = default_ranker()
        if len(options) < 2 or not isinstance(ranker, EmbeddingRanker):
            return None
        scores = ranker.passage_scores(self._vocative.sub(" ", text).strip() or text, options)
        ranked = sorted(range(len(options)), key=lambda i: -scores[i])
        best, second = scores[ranked[0]], scores[ranked[1]]
        return ranked[0] if best >= CHOICE_SCORE and best - second >= TIE else None

    @staticmethod
    def says_no(text: str) -> bool:
        """"Don't bark", "stop moving", "見ないで": the person wants an action NOT done; the model
        is then offered only words (or nothing), never another motion to pick at random."""
        return _NEGATION.search(text) is not None

    def asks_for(self, text: str) -> list[str]:
        """For a sentence that asks for an action: that action, or the two it is between."""
        return self.read(text).wanted

    def offer(self, text: str, tools: list[Tool]) -> tuple[list[Tool], bool]:
        """What a person said -> the actions to offer the model, and whether to lean to words:
        a command offers what it asks for; talk offers words and expressions, no motions."""
        reading = self.read(text)
        if reading.says_no:
            words = [t for t in tools if t.name in SPEECH_ACTIONS]
            return (words or tools), True
        narrowed = [t for t in tools if t.name in reading.wanted]
        if narrowed:
            return narrowed, False
        # Talk is answered in words or an expression (a wag, a nod), never by turning or going
        # somewhere nobody named: the 0.5B model answered "Good night!" and "thanks" with a look.
        return ([t for t in tools if not points_somewhere(t)] or tools), True


def _vocative(companion: Companion) -> re.Pattern[str]:
    """The companion's names as said to it ("Pochi,", "ポチ、", "麻衣ちゃん"), to leave out of the
    sentence that is embedded: a name says who is spoken to, not what is asked."""
    section = companion.source.get("x-sentences")
    extra = section.get("names") if isinstance(section, dict) else None
    names = {companion.name, *(n for n in extra if isinstance(n, str))} if isinstance(extra, list) else {companion.name}
    spoken = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True) if n.strip())
    return re.compile(rf"(?:\b(?:hey|ok|okay) )?(?:{spoken})(?:ちゃん|くん|さん)?\s*[,、!！]?", re.IGNORECASE)


def _own_words(words: dict[str, set[str]], names: list[str]) -> dict[str, tuple[set[str], set[str]]]:
    """Per action: the template words no other action's templates use, as stemmed Latin tokens
    (compared with the sentence's tokens) and Japanese pieces (looked for as substrings)."""
    latin: dict[str, set[str]] = {}
    pieces: dict[str, set[str]] = {}
    for name in names:
        raw = words.get(name, set())
        latin[name] = {t for w in raw if w.isascii() for t in tokenize(w) if len(t) >= 3}
        latin[name].update(t for t in tokenize(" ".join(split_identifier(name))) if len(t) >= 3)
        pieces[name] = {w for w in raw if not w.isascii()}
    out = {}
    for name in names:
        others_latin = set().union(*(latin[n] for n in names if n != name))
        others_pieces = set().union(*(pieces[n] for n in names if n != name))
        out[name] = (latin[name] - others_latin, pieces[name] - others_pieces)
    return out


def _worked_examples(companion: Companion) -> tuple[dict[str, list[str]], list[str]]:
    """The file's worked examples with a sentence as input: by the action they show, and the
    ones answered in words (talk)."""
    by_action: dict[str, list[str]] = {}
    talk: list[str] = []
    for event in companion.source.get("events") or []:
        examples = event.get(EXAMPLES_KEY) if isinstance(event, dict) else None
        for example in examples if isinstance(examples, list) else []:
            body = example.get("body") if isinstance(example, dict) else None
            decision = example.get("decision") if isinstance(example, dict) else None
            if not isinstance(body, str):
                continue
            action = decision.get("action") if isinstance(decision, dict) else None
            if not isinstance(action, str) or action in SPEECH_ACTIONS:
                talk.append(body)
            else:
                by_action.setdefault(action, []).append(body)
    return by_action, talk

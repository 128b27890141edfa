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
from typing import NamedTuple

from edge.brain.names import vocative
from edge.brain.quantities import clock_time, quantities
from edge.brain.slot_numbers import measures_said
from edge.brain.slots import asks_to_go, asks_to_see, points_somewhere, takes_distance
from edge.brain.small_talk import TALK
from edge.brain.turn import SEND_MESSAGE
from edge.brain.prompt import EXAMPLES_KEY
from edge.protocol.speech_action import speech_names
from edge.protocol.companion import Companion
from edge.providers.base import Tool
from edge.brain.ranker_choice import default_ranker
from edge.brain.rankers import EmbeddingRanker, PassageBank, split_identifier, tokenize
from edge.brain.retrieval import tool_passages
from edge.brain.action_words import described_pieces, own_words, says, value_words
from edge.brain.sentence_examples import template_words, variants

COMMAND_MARGIN = 0.12   # this much closer to an action than to talk: a command
WORDED_MARGIN = -0.1    # the same for a sentence with a word only that action's templates use
VALUED_MARGIN = -0.25   # ... that also names one of the action's values ("お客さんにおじぎしてくれる？")
TIE = 0.05              # actions this close to the best are offered too
VALUE_NEAR = 0.08       # a value named ("the grill") picks an action only this close to the best ("photo of the dog" is no treat)
REQUEST_MARGIN = -0.05  # asked as a request ("can you ...", "..., please"), with one action clearly ahead of the next
LEAD = 0.15             # ... by this much
TALK_CLEAR = -0.3       # talk this much closer than any action: only words are offered, however many actions
NEAR = 0.3              # a template word decides between actions this close
CHOICE_SCORE = 0.3      # an enum option this close to the sentence, and TIE ahead of the next, is meant
QUESTION_MARGIN = 0.2   # a question that is no request is a command only this clearly
# Verbs a person orders with, whatever the companion ("I'm heading to bed, switch the light to moonlight")
_IMPERATIVES = {"please", "switch", "turn", "put", "set", "give", "make", "play", "stop", "start", "open", "close", "show",
                "take", "send", "cancel", "add", "remove", "move", "go", "come", "look", "dim", "raise", "lower", "change",
                "bring", "get", "let", "keep", "pause", "resume", "tell", "remind", "call", "run", "fetch", "shut", "say"}
_QUESTION = re.compile(r"[?？]\s*$|(?:の|か)\s*$")
_REQUEST = re.compile(r"\b(can|could|would|will|won'?t) you\b|\bplease\b|\bhow about\b|てくれ|てもらえ|てほしい|ませんか|て[?？]"
                      r"|お願い|おねがい|ください|下さい|いただけ|できますか"
                      r"|请|帮我|给我|能不能|可不可以|可以.{0,12}吗|好不好|好吗|行吗|行不行|麻烦", re.IGNORECASE)
# Asking to be told something wants words, whatever else the sentence names ("簡単に教えて",
# "tell me about your day", "explain it"): only words are offered.
_TELL = re.compile(r"\b(?:tell|teach|explain|describe)\b|教えて|おしえて|説明|話して|はなして", re.IGNORECASE)
# An embedding places "don't bark" and "stop barking" right next to "bark": a sentence that says
# no is never taken as asking for the action it names (English and Japanese forms).
_NEGATION = re.compile(r"\b(don'?t|do not|never|stop|quit|no more|not now|no)\b|ないで|やめ|止め|だめ|ダメ|するな|しなくて",
                       re.IGNORECASE)
# Asking the robot to keep still is asking for no motion ("Stay right where you are", "じっとして"),
# unless the file itself makes "stay" a trick one of its actions performs.
_STAY = re.compile(r"\b(?:stay|hold|keep|sit) (?:put|still|there|here|where|right (?:there|here|where))\b|\bfreeze\b"
                   r"|\bwait (?:here|there|a (?:sec|second|minute|moment))\b|じっと|そのまま|待って|まって", re.IGNORECASE)
# A question asked with a question word wants an answer, not the action it mentions ("How do you
# move left and right?", "どうやって動いてるの"), even without a question mark.
_WH = re.compile(r"^(?:how|why|what|when|where|who|which|whose)\b(?! about)|どうやって|どうして|なぜ|なんで|何で|どんな|どうなって"
                 r"|どのくらい|どれくらい|どのぐらい|どれぐらい|何(?![回度か])|なに(?!か)"
                 r"|为什么|为啥|怎么样|怎么回事|哪里|哪儿|多少|是谁", re.IGNORECASE)
# Sounds and words that open a sentence without changing what it is ("ugh the dog was barking")
_FILLER = re.compile(r"^(?:(?:ugh+|oh+|well|so|hey|wow|man|omg|lol|hm+|um+|uh+|ok|okay|yeah|haha)\b[\s,!.]*)+", re.IGNORECASE)
_PARTS = re.compile(r"[,、;；]\s*")
# A sentence that tells something about a third party ("My neighbour's dog barks all night") is
# news, not an order: English sentences opening with their subject, unless they ask "you to".
_STATEMENT = re.compile(r"^(?:my|our|his|her|their|the|this|that|these|those|it|it'?s|its|there'?s|he|she|they|we|i|i'm|i've)\b"
                        r"(?!.*\b(?:you to|you'd|let me|let's)\b)", re.IGNORECASE)
# A part worth reading on its own has a word of three letters or two Japanese characters besides
# the companion's name and a filler ("Pip.", "ugh", "ねえ" are not commands)
_WORD = re.compile(r"(?!(?:ugh|hmm|umm|yes|yeah|okay|wow|hey|oh)\b)[A-Za-z]{3,}|(?!ねえ|ねぇ|あの|えっと|うん)[\u3040-\u30ff\u4e00-\u9fff]{2,}",
                   re.IGNORECASE)
# Where a sentence of several parts may carry its command: "Pochi, look to your right! Who's that?"
# (sentences only: a part of a sentence after a comma, such as "note 3", is no command of its own)
_CLAUSES = re.compile(r"(?<=[.!?。！？…])\s*")


@dataclass
class Reading:
    """What a sentence was found to be: the actions closest first, and how close talk is."""
    ranked: list[tuple[str, float]] = field(default_factory=list)
    talk: float = 0.0
    says_no: bool = False
    worded: set[str] = field(default_factory=set)   # actions one of whose own template words was said
    question: bool = False                         # a yes/no question that is not a request
    telling: bool = False                          # a question with a question word, or news: never a command
    text: str = ""                                 # the part of the sentence read (a command's own clause)
    valued: set[str] = field(default_factory=set)   # actions one of whose parameter values was named ("おじぎ": bow)
    request: bool = False                          # asked as a request ("could you", "てくれる？", "please")
    opens_with: set[str] = field(default_factory=set)   # actions one of whose values is the sentence's first word

    @property
    def margin(self) -> float:
        return self.ranked[0][1] - self.talk if self.ranked else -1.0

    @property
    def wanted(self) -> list[str]:
        """The action asked for, or the two it is between; empty for talk."""
        if self.says_no or self.telling or not self.ranked:
            return []
        best = self.ranked[0][1]
        near = [(name, score) for name, score in self.ranked if score >= best - NEAR]
        named = [(name, score) for name, score in near if name in self.worded] or \
            [(name, score) for name, score in near if name in self.valued and score >= best - VALUE_NEAR]   # "the grill": broil
        if self.opens_with and len({n for n, _ in named} & self.opens_with) == 1 and not self.question:
            return [next(n for n, _ in named if n in self.opens_with)]   # "Nod three times.": a value said first
        if len(named) == 1:
            name, score = named[0]
            needed = QUESTION_MARGIN if self.question else \
                VALUED_MARGIN if name in self.valued or self.request else WORDED_MARGIN   # "上を向いてくれる？"
            return [name] if score - self.talk >= needed else []
        ahead = len(self.ranked) < 2 or best - self.ranked[1][1] >= LEAD
        if self.request and ahead and self.margin >= REQUEST_MARGIN:   # "can you make sure we buy more eggs?"
            return [self.ranked[0][0]]
        if self.margin < (QUESTION_MARGIN if self.question else COMMAND_MARGIN):
            return []
        return [name for name, score in self.ranked[:2] if score >= best - TIE]


class CommandSense:
    """For one companion: which action a sentence asks for, if any."""

    def __init__(self, companion: Companion, tools: list[Tool]):
        asked = variants(companion.source)
        self._voices = speech_names([companion])   # its words, whatever the file calls them
        shown, talk = _worked_examples(companion, self._voices)
        self._names = [t.name for t in tools if t.name not in self._voices]
        self._passages = [tool_passages(t, [*asked.get(t.name, []), *shown.get(t.name, [])])
                          for t in tools if t.name in self._names]
        self._talk = list(dict.fromkeys([*TALK, *talk]))
        said_as = template_words(companion.source)
        described = described_pieces({t.name: t.description for t in tools if t.name in self._names})
        params = {t.name: set((t.parameters.get("properties") or {}) if isinstance(t.parameters, dict) else ())
                  for t in tools}   # "volume" names play_music(volume) as much as set_volume: neither alone
        self._words = own_words({n: said_as.get(n, set()) | described.get(n, set()) | params.get(n, set())
                                 for n in self._names}, self._names)
        self._vocative = vocative(companion)
        # "stay" asks for stillness unless one of this companion's own commands is said with it
        self._stay_means_still = not any(_STAY.search(" ".join(words)) or {"stay", "wait", "freeze"} & words
                                         for words in said_as.values())
        self._movers = {t.name for t in tools if t.name in self._names and takes_distance(t)}
        self._lookers = {t.name for t in tools if t.name in self._names and points_somewhere(t)} - self._movers
        self._values = {t.name: value_words(t) for t in tools if t.name in self._names}
        self._value_tokens = {n: {t for w in words if w.isascii() for t in tokenize(w)} for n, words in self._values.items()}
        self._tools = {t.name: t for t in tools if t.name in self._names}
        self._imperatives = {w for words in said_as.values() for w in words if w.isascii()} | _IMPERATIVES | \
            {w for n in self._names for w in tokenize(" ".join(split_identifier(n)))}   # "feed", "stir"
        self._banked: PassageBank | None = None

    def read(self, text: str) -> Reading:
        """The sentence and, when it has several parts, each part on its own: the part that most
        clearly asks for an action is the reading ("Pochi, look to your right! Who's that at the
        door?" asks for the look, though the whole of it ends as a question). A "no" or "stay
        still" anywhere makes it a sentence that says no."""
        no = (_NEGATION.search(text) is not None or _TELL.search(text) is not None
              or (self._stay_means_still and _STAY.search(text) is not None))
        whole = self._read_one(text, no)
        parts = [p for p in _CLAUSES.split(text.strip()) if _WORD.search(self._vocative.sub(" ", p))]
        if no or len(parts) < 2:
            return whole
        commands = [r for r in (whole, *(self._read_one(p, False) for p in parts)) if r.wanted]
        return max(commands, key=lambda r: r.margin) if commands else whole

    def _read_one(self, text: str, no: bool) -> Reading:
        """One sentence or part, embedded once and compared with both banks."""
        ranker = default_ranker()
        if not self._names or not isinstance(ranker, EmbeddingRanker):
            return Reading(says_no=no, text=text)
        plain = self._vocative.sub(" ", text).strip() or text   # "Pochi, sit!" means what "sit!" means
        scores = self._bank(ranker).scores(plain)
        ranked = sorted(zip(self._names, scores[:-1]), key=lambda pair: -pair[1])
        latin = set(tokenize(text))
        worded: set[str] = {name for name, (words, pieces) in self._words.items()
                            if words & latin or any(says(piece, text) for piece in pieces)}
        lowered = text.lower()
        valued = {name for name, names in self._values.items()
                  if any(re.search(rf"\b{re.escape(v)}\b", lowered) if v.isascii() else says(v, text) for v in names)}
        numbered = {name for name, tool in self._tools.items() if measures_said(tool, text)} \
            if quantities(text) or clock_time(text) else set()   # "三十度", "7:30"
        valued |= numbered
        worded |= numbered   # a number in the unit an action measures names it too
        if asks_to_go(text) and self._movers:   # going somewhere: only the actions that take a distance
            worded = (worded & self._movers) or set(self._movers)
        elif asks_to_see(text) and self._lookers:   # turning the eyes: only the actions that point without going
            worded = (worded & self._lookers) or set(self._lookers)
        request = _REQUEST.search(text) is not None
        first = tokenize(plain)[:1]
        opens_with = {name for name in valued if first and first[0] in self._value_tokens.get(name, set())}
        question = _QUESTION.search(plain) is not None and not request
        # a question word opens a question even with "can you" in it ("how far can you go?"); news
        # is news unless a part of it orders something ("theres a spider on the ceiling, look up")
        parts = [_FILLER.sub("", p.strip()) for p in _PARTS.split(plain) if p.strip()]
        ordered = any(p.split()[0].lower() in self._imperatives for p in parts[1:] if p.split())
        news = bool(parts) and _STATEMENT.search(parts[0]) is not None and not request and not ordered
        telling = _WH.search(plain) is not None or news or _THANKS.search(plain) is not None   # "thanks for ..." is talk
        return Reading(ranked=ranked, talk=scores[-1], says_no=no, worded=worded, question=question,
                       telling=telling, text=text, valued=valued, request=request, opens_with=opens_with)

    def _bank(self, ranker: EmbeddingRanker) -> PassageBank:
        """Both banks (every action's passages, then talk), embedded and stacked once per ranker."""
        if self._banked is None or self._banked.ranker is not ranker:
            self._banked = ranker.bank([*self._passages, self._talk])
        return self._banked

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

    def restates(self, said: str, heard: str) -> str | None:
        """The action a spoken reply only restates ("go backward about 10 cm.", "点头三次，表示同
        意。", "Stop!") when the person's words asked for that same action: the model put the
        request into words instead of doing it. None when the reply is talk of its own."""
        if not said.strip() or self.says_no(heard) or _ASKS.search(heard) or _THANKS.search(heard):
            return None
        asked = self.read(heard)
        if asked.telling or asked.question or not asked.ranked:
            return None
        wanted = self.read(said).wanted
        if len(wanted) != 1:
            return None
        # the person's words point there too: that action first among theirs, or named by its words
        name = wanted[0]
        return name if name == asked.ranked[0][0] or name in asked.worded else None

    @staticmethod
    def says_no(text: str) -> bool:
        """"Don't bark", "stop moving", "見ないで": the person wants an action NOT done; the model
        is then offered only words (or nothing), never another motion to pick at random."""
        return _NEGATION.search(text) is not None

    def asks_for(self, text: str) -> list[str]:
        """For a sentence that asks for an action: that action, or the two it is between."""
        return self.read(text).wanted

    def offer(self, text: str, tools: list[Tool], many: bool = False) -> "Offer":
        """What a person said -> the actions to offer the model, whether to lean to words, and
        the words that carry a command (its own clause). A command offers what it asks for; talk
        is answered in words (when the companion can speak): the 0.5B model answered "Good night!"
        and "thanks" with a look, "I'm exhausted" with a nod. ``many``: the companion has more
        actions than the model is shown at once (see below)."""
        stopper = next((t for t in tools if t.name.lower() in _STOPPERS), None)
        if stopper is not None and _JUST_STOP.fullmatch(self._vocative.sub(" ", text).strip(" !！.。、,")):
            return Offer([stopper], False, text)   # "stop!" alone asks for the file's own stop
        if _STOP_THIS.match(self._vocative.sub(" ", text).strip()):   # "Stop the laser now": the file's own stop_play
            stops = [t for t in tools if set(split_identifier(t.name)) & _STOP_WORDS]
            reading = self.read(text)
            near = {name for name, score in reading.ranked[:3]}
            stops = [t for t in stops if t.name in near]   # and it is what the words are about
            if len(stops) == 1:
                return Offer(stops, False, text)
        reading = self.read(text)
        words = [t for t in tools if t.name in self._voices or t.name == SEND_MESSAGE]
        if reading.says_no:
            return Offer(words or tools, True, text)
        narrowed = [t for t in tools if t.name in reading.wanted]
        if narrowed:
            return Offer(narrowed, False, reading.text or text)
        # Talk is answered in words: a small companion's other actions are expressions ("I'm
        # exhausted" got a nod). A large catalogue (trimmed by retrieval) is tools a sentence may
        # ask for indirectly ("It's so dark in here": lights_on), so they stay on offer beside words.
        still = [t for t in tools if not points_somewhere(t)] or tools
        clearly_talk = reading.margin < TALK_CLEAR and bool(reading.ranked)   # "Good morning!" to a kitchen arm
        return Offer(still if many and not clearly_talk or not words else words, True, text)


class Offer(NamedTuple):
    """What the model is offered for one sentence (``CommandSense.offer``)."""
    tools: list[Tool]
    lean_to_words: bool
    command: str          # the words that ask for the action: the whole sentence or its commanding part


# A question, in any of the three languages: its answer is words, never an action restated.
_ASKS = re.compile(r"[?？]|吗|什么|怎么|几|哪|呢|谁|どう|なに|何|いつ|どこ|だれ|誰", re.IGNORECASE)
# thanks for it: done already ("Thanks for the photo", "写真ありがとうね", "谢谢你陪我")
_THANKS = re.compile(r"^\W*(?:thank|thanks|cheers|谢谢|多谢|感谢|ありがと|どうも)|(?:ありがと[うー]?(?:ね|よ|ございます)?|谢谢(?:你|啦)?|thanks|thank you)\W*$",
                     re.IGNORECASE)
# "Stop!" said alone is the file's own stop action when it has one, not a "don't" of another.
_STOP_THIS = re.compile(r"\W*(?:please\s+)?(?:stop|pause|cancel|halt|end|turn off)\b|\W*(?:止めて|やめて|停止|暂停|停下|关掉)", re.I)
_STOP_WORDS = {"stop", "pause", "cancel", "halt", "end"}
_STOPPERS = {"stop", "halt", "stop_all", "stop_everything", "freeze", "emergency_stop"}
_JUST_STOP = re.compile(r"(?:(?:please|now|right now|ok|okay)\s+)*(?:stop|halt|freeze|stop it|stop now|stop everything|"
                        r"止まって|とまって|止まれ|ストップ|やめて|止めて|停|停下|停下来|别动)(?:\s*(?:please|now|right now))*",
                        re.IGNORECASE)
def _worked_examples(companion: Companion, voices: frozenset[str]) -> tuple[dict[str, list[str]], list[str]]:
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
            if not isinstance(action, str) or action in voices:
                talk.append(body)
            else:
                by_action.setdefault(action, []).append(body)
    return by_action, talk

"""Is a spoken reply only the person's own words given back?

A small model that reads "I'm feeling a bit lonely tonight." often answers "Woof! I'm feeling a
bit lonely tonight." A companion that repeats people is the first failure a user notices (the
issue that started this work: "Where do you live?" was echoed back), so such a reply is turned
back to the model once as a problem, like a schema error, instead of being said.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Iterable

_WORDS = re.compile(r"[^\w]+")
MIN_CHARS = 8          # "yes", "はい": short replies may equal short inputs
SIMILAR = 0.75         # difflib ratio above which two lines say the same thing


def _plain(text: str) -> str:
    return " ".join(_WORDS.sub(" ", unicodedata.normalize("NFKC", text).lower()).split())


# Greetings, thanks and goodbyes are answered in kind: "Nice to meet you!" back is polite.
_RITUAL = re.compile(r"^\W*(?:hello|hi|hey|good (?:morning|afternoon|evening|night)|nice to meet you|thank(?:s| you)"
                     r"|bye|goodbye|see you|welcome|こんにちは|こんばんは|おはよう|おやすみ|はじめまして|よろしく|ありがとう"
                     r"|さようなら|またね|ただいま|おかえり)", re.IGNORECASE)


def echoes(reply: str, heard: str) -> bool:
    """True when ``reply`` is ``heard`` again: the same words, or them with a word or two
    around ("Woof! ..."), whatever the punctuation and case. A greeting, thanks or goodbye
    answered in the same words is no echo."""
    said, back = _plain(heard), _plain(reply)
    if len(said) < MIN_CHARS or not back or _RITUAL.match(heard.strip()):
        return False
    if said in back and len(back) - len(said) < max(12, len(said) // 2):
        return True
    return difflib.SequenceMatcher(None, said, back).ratio() > SIMILAR


def echo_problem(at: str) -> str:
    """``at``: the speech call and its words' parameter, ``"speak /message"``."""
    return f"{at}: it repeats what the person said; answer them in your own words"


_RUN_LATIN = 14   # characters in a row from our own instructions that make a copy
_RUN_CJK = 6      # (Japanese packs a word into two or three characters)
_CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def without_instructions(reply: str, instructions: str) -> str:
    """``reply`` cut where it starts copying ``instructions`` (the correction text the model just
    read: "... answer them in your own words." was said aloud after a rejected echo); the whole
    reply when it copies nothing, "" when it is nothing but the copy (or a word or two of its start)."""
    told = instructions.lower()
    low = reply.lower()
    for i in range(len(low)):
        run = _RUN_CJK if _CJK.match(low[i]) else _RUN_LATIN
        piece = low[i:i + run]
        if len(piece) == run and piece.strip() == piece and piece in told:
            kept = reply[:i].rstrip(" :;,-、。「（(")
            # a word or two before the copy ("I", "我是") is the start of the copy, not an answer
            return kept if len(kept.split()) >= 3 or len(_CJK.findall(kept)) >= 4 else ""
    return reply


_RECITED_LATIN = 80   # characters in a row from the prompt (its own story, our instructions) that make a recital
_RECITED_CJK = 32


def recites(reply: str, prompt_text: str) -> bool:
    """True when most of ``reply`` is a long passage of ``prompt_text`` said again: the 0.5B model
    answered "thanks" and "send me a photo" by reciting its own story, and a question by reading
    out our instructions ("To speak, reply with just the words to say..."). A phrase of the story
    in an answer about itself is no recital."""
    if len(reply) < _RECITED_CJK or not prompt_text:
        return False
    run = _longest_copy(reply, prompt_text)
    cjk = len(_CJK.findall(reply)) > len(reply) // 3
    return run >= (_RECITED_CJK if cjk else _RECITED_LATIN) and run >= 0.5 * len(reply)


def copied(clause: str, source: str) -> bool:
    """A clause of 16 characters or more that is, to nine tenths, a passage of ``source``."""
    if len(clause) < 16 or not source:
        return False
    return _longest_copy(clause, source) >= 0.9 * len(clause.strip(" .!?。！？"))


def _longest_copy(text: str, source: str) -> int:
    """The longest run of characters ``text`` shares with ``source``, case aside."""
    return difflib.SequenceMatcher(None, text.lower(), source.lower(), autojunk=False).find_longest_match().size


def recital_problem(at: str) -> str:
    return f"{at}: it reads out your instructions; answer the person in a few words of your own"


def said_action_name(words: str, names: Iterable[str]) -> str | None:
    """An action's identifier said as a word ("play_lullaby, white_noise, stop_sound"): the model
    read out its catalogue instead of doing or answering (seen on a blind file). Only names no
    one says (with an underscore) count; "nod" or "look" are words too."""
    for name in names:
        if "_" in name and re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", words, re.IGNORECASE):
            return name
    return None

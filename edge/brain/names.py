"""The names a companion answers to, as a person says them to it ("Pochi,", "ポチ、", "麻衣ちゃん").

Two places need them: the command reader leaves them out of what it embeds (a name says who is
spoken to, not what is asked), and a reply must not call the companion by its own name as if it
were the person it answers ("Good morning, Pochi! I slept well." from Pochi: a small model copies
the greeting it was given, name and all).
"""

from __future__ import annotations

import re

from edge.protocol.companion import Companion
from edge.providers.base import ProviderResponse
from edge.protocol.speech_action import speech_names
from edge.providers.decision import map_spoken

_SUFFIX = r"(?:ちゃん|くん|さん|君)?"
_GREETING = (r"hello|hi|hey|good (?:morning|afternoon|evening|night)|welcome(?: back| home)?|thanks|thank you"
             r"|bye|goodbye|see you|こんにちは|こんばんは|おはよう(?:ございます)?|おやすみ(?:なさい)?|ありがとう|ただいま|おかえり(?:なさい)?")


def spoken_names(companion: Companion) -> list[str]:
    """The companion's name and the extra names its file gives (``x-sentences.names``), longest first."""
    section = companion.source.get("x-sentences") if isinstance(companion.source, dict) else None
    extra = section.get("names") if isinstance(section, dict) else None
    names = {companion.name, *(n for n in extra if isinstance(n, str))} if isinstance(extra, list) else {companion.name}
    return sorted((n for n in names if n.strip()), key=len, reverse=True)


def vocative(companion: Companion) -> re.Pattern[str]:
    """The names as a form of address anywhere in a sentence, with an optional "hey"/"ok"."""
    spoken = "|".join(re.escape(n) for n in spoken_names(companion))
    return re.compile(rf"(?:\b(?:hey|ok|okay) )?(?:{spoken}){_SUFFIX}\s*[,、!！]?", re.IGNORECASE)


class SelfAddress:
    """Takes the companion's own name out of a reply where the reply addresses someone by it."""

    def __init__(self, companion: Companion):
        self._voices = speech_names([companion])
        spoken = "|".join(re.escape(n) for n in spoken_names(companion))
        # "Pochi, ..." / "ポチ、..." opening the reply: the name followed by a comma or "!"
        self._opening = re.compile(rf"^\s*(?:{spoken}){_SUFFIX}\s*[,、!！]\s*", re.IGNORECASE)
        self._alone = re.compile(rf"^\s*(?:{spoken}){_SUFFIX}\s*[,、!！.。?？~〜]*\s*$", re.IGNORECASE)
        # "Good morning, Pochi!" / "おはよう、ポチ！": a greeting aimed at the name
        self._greeted = re.compile(rf"(?<![A-Za-z])({_GREETING})\s*[,、]?\s*(?:{spoken}){_SUFFIX}(?=\s*[!！.。,、?？~〜]|\s*$)",
                                   re.IGNORECASE)

    def strip(self, reply: str) -> str:
        """``reply`` without its own name used as a form of address; unchanged otherwise (an
        introduction such as "I'm Pochi!" or "ニコニ立体ちゃんだよ" keeps the name). Nothing but the
        name ("Pochi!", a streamed clause after "Good morning,") is "": nothing to say."""
        if self._alone.match(reply):
            return ""
        out = self._greeted.sub(lambda m: m.group(1), reply)
        opened = self._opening.sub("", out)
        if opened != out and opened:
            out = opened[0].upper() + opened[1:]
        return out if out.strip() else reply

    def in_reply(self, response: ProviderResponse) -> ProviderResponse:
        """``response`` with each spoken line's own-name address taken out (``strip``). A whole
        line that is only the name stays: that is the answer to "What is your name?" (taken out,
        the robot said nothing and the turn ended unanswered)."""
        return map_spoken(response, lambda line: line if self._alone.match(line) else self.strip(line), self._voices)

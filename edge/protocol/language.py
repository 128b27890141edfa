"""Which language a companion speaks, and which language a line of text is in.

The file format has no language field yet; a companion written in Japanese or Chinese speaks it.
Its own words say so: kana in its name, personality, story or sample is Japanese; Han characters
with no kana are Chinese; otherwise English. A reply in another language than the companion's is
a reply its person may not understand (measured: the Japanese desk assistant answered "抱歉，我
无法协助完成这个请求。" to a greeting), so the brain checks every spoken line against it.
"""

from __future__ import annotations

import re

from edge.protocol.companion_types import Companion

NAMES = {"en": "English", "ja": "Japanese", "zh": "Chinese"}
_KANA = re.compile(r"[\u3040-\u30ff]")
_HAN = re.compile(r"[\u4e00-\u9fff]")
_LATIN = re.compile(r"[A-Za-z]")


def text_language(text: str) -> str | None:
    """``ja``, ``zh`` or ``en`` for a line of text; None when it is too short to tell ("OK!" in a
    Japanese line, "了解" alone)."""
    if _KANA.search(text):
        return "ja"
    if len(_HAN.findall(text)) >= 4:
        return "zh"
    return "en" if len(_LATIN.findall(text)) >= 6 and not _HAN.search(text) else None


def companion_language(companion: Companion) -> str:
    """The language a companion speaks, from its own words (see the module docstring)."""
    own = " ".join(t or "" for t in (companion.name, companion.personality, companion.story, companion.sample))
    return text_language(own) or "en"

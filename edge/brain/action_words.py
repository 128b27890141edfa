"""The words that name an action in a file without sentence templates: its description's own
two-character pieces ("点头", "音量"), the て-forms of a Japanese description's verbs ("方向を見ます"
is asked "見て"), the words naming its enum values ("bow", "おじぎ"), and which of them only one
action has. ``intent.py`` reads a sentence with them."""

from __future__ import annotations

import re

from edge.brain.rankers import split_identifier, tokenize
from edge.brain.slots import concepts_in, enum_words
from edge.providers.base import Tool


def says(piece: str, text: str) -> bool:
    """Whether a Japanese template piece is in ``text`` as itself: "みて" (look) after a て-form is
    the auxiliary "try doing" ("考えるポーズしてみてよ"), not a look."""
    at = text.find(piece)
    while at >= 0:
        if not (piece[0] in "みミ" and at > 0 and text[at - 1] in "てで"):
            return True
        at = text.find(piece, at + 1)
    return False


_VERB_END = "うくぐすつぬぶむる"


def value_words(tool: Tool) -> set[str]:
    """The words naming an enum value of the action's parameters, as a sentence says them: the
    value and its described word ("bow", "おじぎ"), a Japanese verb by its stem ("うなずく" is said
    "うなずいて"). Directions are left out: "right" names a paw and a way to look alike."""
    props = tool.parameters.get("properties") if isinstance(tool.parameters, dict) else None
    out: set[str] = set()
    for spec in (props or {}).values():
        if not isinstance(spec, dict) or "enum" not in spec:
            continue
        for words in enum_words(spec).values():
            for word in words:
                if concepts_in(word) or len(word) < 2:
                    continue
                stem = word[:-1] if not word.isascii() and word[-1] in _VERB_END and len(word) >= 3 else word
                out.add(stem if not word.isascii() else word)
    return {w for w in out if not w.isascii()} | {w for w in out if w.isascii() and len(w) >= 3}


_CJK_RUN = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]{2,}")


def described_pieces(descriptions: dict[str, str]) -> dict[str, set[str]]:
    """Per action, the two-character pieces of its Japanese or Chinese description ("点头",
    "烧水", "音量"): a file without sentence templates still names its actions in its own words.
    Only pieces no other action's description has count (``_own_words``)."""
    return {name: {run[i:i + 2] for run in _CJK_RUN.findall(text) for i in range(len(run) - 1)
                   if not set(run[i:i + 2]) & _FUNCTION_CHARS} | verb_forms(text)
            for name, text in descriptions.items()}


# A Japanese verb in the polite form a description uses ("方向を見ます", "写真を撮ります", "うなずきます")
_MASU = re.compile(r"([\u4e00-\u9fff]?[\u3041-\u3093]{0,5}?|[\u4e00-\u9fff][\u3041-\u3093]{0,2}?)ます")
_PARTICLES = "をにではがとのもへやって"
_TE = {"り": "って", "ち": "って", "い": "って", "み": "んで", "び": "んで", "に": "んで", "き": "いて", "ぎ": "いで"}


_TE_FORM = re.compile(r"[\u4e00-\u9fff][\u3041-\u3093]?(?:って|んで|いて|いで)")   # "写真を撮って": as said


def verb_forms(text: str) -> set[str]:
    """The て-forms a person asks with, of each verb a Japanese description uses politely: "見ます"
    is asked "見て", "撮ります" "撮って", "うなずきます" "うなずいて" (not "見せて": that is another verb)."""
    forms = set(_TE_FORM.findall(text))
    for m in _MASU.finditer(text):
        stem = m.group(1)
        if stem[-1:] == "し" and m.start() > 0 and _is_kanji(text[m.start() - 1]):
            continue   # 移動します, 保存します: a noun with する, read by its own two characters
        cut = max(stem.rfind(p) for p in _PARTICLES)
        stem = stem[cut + 1:] if cut >= 0 and not _is_kanji(stem[0]) else stem
        if not stem or stem in ("し", "あり", "い") or (len(stem) < 3 and not _is_kanji(stem[0])):
            continue   # する, ある, いる: no verb of its own
        last = stem[-1]
        if last == "し":
            forms.add(stem + "て")
        elif last in _TE and len(stem) > 1:
            forms.add(stem[:-1] + _TE[last])
            if last in "いき" and _is_kanji(stem[-2]):   # 起きます: ichidan too
                forms.add(stem + "て")
        else:   # 見ます, 変えます, 見せます: ichidan
            forms.update({stem + "て", stem + "る"})
    return forms


def _is_kanji(char: str) -> bool:
    return "\u4e00" <= char <= "\u9fff"


# Characters of grammar, not of meaning: a piece with one of them names no action ("个时" of 某个时刻).
_FUNCTION_CHARS = set("的个一了在是把和或就会到用中对这那些么吗呢吧着过被让给从向往也都还很更最"
                      "をにはがのてでともしたりかなよねするますですいうえおあこそ")


def own_words(words: dict[str, set[str]], names: list[str]) -> dict[str, tuple[set[str], set[str]]]:
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

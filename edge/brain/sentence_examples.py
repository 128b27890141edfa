"""A companion's ``x-sentences`` templates as plain example sentences, for tool retrieval.

The templates (docs/companion-files.md) say how users ask for an action: "(bark|woof) {times}
[times]". Retrieval embeds one readable sentence per template as an extra text of its action,
so an input close to any way of asking finds it: the first alternative of each group, the
optional words kept (their first alternative too), a slot as its list's first phrase ("left"),
its range's low end ("1") or its name.
"""

from __future__ import annotations

import random
import re
from typing import Any

_GROUP = re.compile(r"\(([^()]*)\)")          # innermost (a|b) group
_OPTIONAL = re.compile(r"\[([^\[\]]*)\]")      # innermost [optional] part
_SLOT = re.compile(r"\{([^{}]+)\}")


def sentence_examples(doc: Any) -> dict[str, list[str]]:
    """Action title -> one example sentence per template of its rules; malformed parts of the
    section are skipped (``companion validate`` reports them)."""
    section = doc.get("x-sentences") if isinstance(doc, dict) else None
    if not isinstance(section, dict):
        return {}
    lists = section.get("lists") if isinstance(section.get("lists"), dict) else {}
    out: dict[str, list[str]] = {}
    for rule in section.get("rules") or []:
        if not isinstance(rule, dict) or not isinstance(rule.get("action"), str):
            continue
        for template in rule.get("sentences") or []:
            if isinstance(template, str) and (text := render(template, lists)):
                examples = out.setdefault(rule["action"], [])
                if text not in examples:
                    examples.append(text)
    return out


def render(template: str, lists: dict[str, Any] | None = None) -> str:
    """One plain sentence for ``template``."""
    text = template
    for _ in range(20):                        # nested groups: innermost first
        changed = _GROUP.sub(lambda m: m.group(1).split("|")[0], text)
        changed = _OPTIONAL.sub(lambda m: m.group(1).split("|")[0], changed)
        if changed == text:
            break
        text = changed
    text = _SLOT.sub(lambda m: _slot_word(m.group(1), lists or {}), text)
    return " ".join(text.split())


def _slot_word(name: str, lists: dict[str, Any]) -> str:
    spec = lists.get(name.split(".")[0])
    values = spec.get("values") if isinstance(spec, dict) else None
    if isinstance(values, dict) and values:
        return str(next(iter(values)))
    span = spec.get("range") if isinstance(spec, dict) else None
    if isinstance(span, list) and span:
        return str(span[0])
    return name.replace("_", " ")


def variants(doc: Any, per_template: int = 24) -> dict[str, list[str]]:
    """Action title -> many plain sentences per template (up to ``per_template`` each): every
    alternative and optional part taken in turn, each slot filled from its list. A sentence
    classifier compares what a person said with all of them, so "turn your head to the right"
    counts as close to the template, not only "look left"."""
    section = doc.get("x-sentences") if isinstance(doc, dict) else None
    if not isinstance(section, dict):
        return {}
    raw = section.get("lists")
    lists: dict[str, Any] = raw if isinstance(raw, dict) else {}
    out: dict[str, list[str]] = {}
    for rule in section.get("rules") or []:
        if not isinstance(rule, dict) or not isinstance(rule.get("action"), str):
            continue
        for template in rule.get("sentences") or []:
            if isinstance(template, str):
                texts = out.setdefault(rule["action"], [])
                texts.extend(t for t in _expand(template, lists, per_template) if t not in texts)
    return out


_CHOICE = re.compile(r"\(([^()\[\]]*)\)|\[([^()\[\]]*)\]")


def _expand(template: str, lists: dict[str, Any], limit: int) -> list[str]:
    """Up to ``limit`` distinct sentences from ``template``: each draw takes one option of every
    group and slot (seeded, so the same file gives the same sentences), so even a template with
    thousands of combinations yields a spread of them, not the first few hundred in order."""
    sentences: list[str] = []
    for draw in range(limit * 3):
        pick = random.Random(draw)
        text = template
        while (m := _CHOICE.search(text)) is not None:
            options = m.group(1).split("|") if m.group(1) is not None else [*m.group(2).split("|"), ""]
            text = text[:m.start()] + pick.choice(options) + text[m.end():]
        filled = _SLOT.sub(lambda m: _slot_value(m.group(1), lists, pick), text)
        sentence = " ".join(filled.split())
        if sentence and sentence not in sentences:
            sentences.append(sentence)
            if len(sentences) == limit:
                break
    return sentences


def _slot_value(name: str, lists: dict[str, Any], pick: random.Random) -> str:
    """One value of a slot's list, drawn."""
    spec = lists.get(name.split(".")[0])
    values = spec.get("values") if isinstance(spec, dict) else None
    if isinstance(values, dict) and values:
        return str(pick.choice(list(values)))
    span = spec.get("range") if isinstance(spec, dict) else None
    if isinstance(span, list) and len(span) == 2 and all(isinstance(v, int) for v in span) and span[1] >= span[0]:
        return str(pick.randint(span[0], span[1]))
    return name.replace("_", " ")


_PIECE = re.compile(r"[^\s()\[\]|{}]+")
_CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
_VERBLIKE = re.compile(r"[\u30a0-\u30ff\u4e00-\u9fff]|[てで]$|^[\u3040-\u309f]{3,}$")
_QUESTION_WORDS = frozenset("who what where when why how which".split())
# Pieces that say how much or where, not what to do; and particles that start a piece.
_JA_FILLERS = frozenset("少し もう少し すこし ちょっと もうちょっと こっち こちら ここ そっち あっち して".split())
_PARTICLE_START = re.compile(r"^[のをにへがはとでも]")


def template_words(doc: Any) -> dict[str, set[str]]:
    """Action title -> the words that say which action its templates ask for: in English the
    word each way of saying it starts with ("look", "turn", "come", "bark"), in Japanese the
    meaningful pieces (kanji or katakana, a て-form verb such as "みて", a word of three kana
    such as "おすわり"), not bare particles. Slots and their values are left out: "left" says
    which way, not what to do."""
    out: dict[str, set[str]] = {}
    for action, words, _ in rule_words(doc):
        out.setdefault(action, set()).update(words)
    return out


def rule_words(doc: Any) -> list[tuple[str, set[str], dict[str, Any]]]:
    """Per template rule: its action, the words that say it (as ``template_words``) and its
    params when the rule fixes them (``{"name": "nod"}`` for "(うなずいて|頷いて)"), else {}."""
    section = doc.get("x-sentences") if isinstance(doc, dict) else None
    if not isinstance(section, dict):
        return []
    out: list[tuple[str, set[str], dict[str, Any]]] = []
    for rule in section.get("rules") or []:
        if not isinstance(rule, dict) or not isinstance(rule.get("action"), str):
            continue
        words: set[str] = set()
        for template in rule.get("sentences") or []:
            if not isinstance(template, str):
                continue
            bare = _SLOT.sub(" {} ", template)
            if _CJK.search(bare):
                words.update(p for p in _PIECE.findall(bare) if _CJK.search(p) and _VERBLIKE.search(p) and len(p) >= 2
                             and p not in _JA_FILLERS and not _PARTICLE_START.match(p))
                continue
            words.update(w.lower() for w in _first_words(bare) if w.isalpha() and w.isascii()
                         and w.lower() not in _QUESTION_WORDS)
        fixed = rule.get("params")
        out.append((rule["action"], words, dict(fixed) if isinstance(fixed, dict) else {}))
    return out


def _first_words(template: str, depth: int = 0) -> set[str]:
    """Every word a template can start with: through its leading (a|b) groups and [optional]
    parts, without expanding the rest."""
    text = template.strip()
    if not text or depth > 8:
        return set()
    if text[0] not in "([":
        return {re.split(r"[\s()\[\]|{}]", text, maxsplit=1)[0]}
    close = _matching(text)
    if close < 0:
        return set()
    inner, rest = text[1:close], text[close + 1:]
    out: set[str] = set()
    for option in _top_level(inner):
        out |= _first_words(option + " " + rest, depth + 1) if option.strip() else set()
    if text[0] == "[":
        out |= _first_words(rest, depth + 1)
    return out


def _matching(text: str) -> int:
    """Where the group opening ``text`` closes, or -1."""
    level = 0
    for i, ch in enumerate(text):
        level += 1 if ch in "([" else -1 if ch in ")]" else 0
        if level == 0:
            return i
    return -1


def _top_level(inner: str) -> list[str]:
    parts, level, start = [], 0, 0
    for i, ch in enumerate(inner):
        level += 1 if ch in "([" else -1 if ch in ")]" else 0
        if ch == "|" and level == 0:
            parts.append(inner[start:i])
            start = i + 1
    return [*parts, inner[start:]]

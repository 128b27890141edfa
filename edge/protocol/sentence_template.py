"""Sentence templates: normalising what people say, and turning one template into a regex.

A template is plain words plus three constructs: ``[optional words]``, ``(one|or the other)``
and ``{slot}``. Both the template and the utterance go through the same ``normalise`` (case,
full-width forms, punctuation, spacing), and every gap between pieces may hold any amount of
space, so Japanese (no spaces) and English (spaces) are matched by the same code. Whole-
utterance matching, fillers and names are added by ``edge/protocol/sentences.py``.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

# Kana, CJK ideographs and their marks: scripts written without spaces between words.
_CJK = "\u3005\u3007\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_GAP = re.compile(rf"(?<=[{_CJK}]) | (?=[{_CJK}])")
_APOSTROPHES = re.compile(r"['\u2018\u2019\u02bc]")
_SLOT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
GAP = r"\s*"


def normalise(text: str) -> str:
    """Lower case, NFKC (full-width letters and digits become plain ones), apostrophes dropped
    (``don't`` -> ``dont``), other punctuation and symbols turned into single spaces, and no
    spaces next to Japanese/Chinese characters."""
    text = _APOSTROPHES.sub("", unicodedata.normalize("NFKC", text).casefold())
    text = "".join(ch if ch.isalnum() else " " for ch in text)
    return _CJK_GAP.sub("", " ".join(text.split()))


def phrase_pattern(phrase: str) -> str:
    """A literal phrase as regex: its normalised words with optional space between them."""
    return GAP.join(re.escape(w) for w in normalise(phrase).split())


class TemplateError(ValueError):
    """A malformed template; ``column`` is 1-based within the template text."""

    def __init__(self, message: str, column: int) -> None:
        super().__init__(f"{message} (column {column})")
        self.column = column


@dataclass
class Template:
    """One parsed template: the regex body (not anchored) and the slots it captures, in order.

    Slot ``i`` is captured by the named group ``s<i>``; ``slots[i]`` is its list name."""
    text: str
    pattern: str
    slots: list[str] = field(default_factory=list)


_CLOSERS = {"(": ")", "[": "]"}


class _Parser:
    """Recursive descent over the template characters, building the regex as it goes."""

    def __init__(self, text: str, slot_patterns: dict[str, str]) -> None:
        self.text = text
        self.pos = 0
        self.slot_patterns = slot_patterns
        self.slots: list[str] = []

    def error(self, message: str, at: int | None = None) -> TemplateError:
        return TemplateError(message, (self.pos if at is None else at) + 1)

    def parse(self) -> str:
        body = self.sequence(closer=None)
        if self.pos < len(self.text):  # sequence() stops only at a closer or a '|'
            char = self.text[self.pos]
            if char == "|":
                raise self.error("'|' outside ( ) or [ ]: write the choices as (a|b), or as separate sentences")
            raise self.error(f"{char!r} closes nothing")
        return body

    def sequence(self, closer: str | None) -> str:
        """Pieces up to the closer, a '|' or the end; returns the pieces joined by GAP."""
        pieces: list[str] = []
        literal_start = self.pos
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char in "|)]}":
                break
            if char in "([{":
                pieces.extend(self.literal(literal_start))
                pieces.append(self.group() if char != "{" else self.slot())
                literal_start = self.pos
            else:
                self.pos += 1
        pieces.extend(self.literal(literal_start))
        return GAP.join(p for p in pieces if p)

    def literal(self, start: int) -> list[str]:
        words = phrase_pattern(self.text[start:self.pos])
        return [words] if words else []

    def group(self) -> str:
        opener, start = self.text[self.pos], self.pos
        closer = _CLOSERS[opener]
        self.pos += 1
        choices = []
        while True:
            choice_start = self.pos
            body = self.sequence(closer)
            if not body:
                what = "an empty choice" if self.text[choice_start:self.pos].strip() == "" else "a choice with no words"
                raise self.error(f"{what} in '{opener}…{closer}'", choice_start)
            choices.append(body)
            if self.pos >= len(self.text):
                raise self.error(f"unbalanced {opener!r}: no {closer!r} after it", start)
            char = self.text[self.pos]
            self.pos += 1
            if char == "|":
                continue
            if char != closer:
                raise self.error(f"{char!r} where {closer!r} was expected to close the {opener!r} at column {start + 1}",
                                 self.pos - 1)
            break
        inner = "|".join(choices)
        return f"(?:{inner})?" if opener == "[" else f"(?:{inner})"

    def slot(self) -> str:
        start = self.pos
        end = self.text.find("}", start)
        if end < 0:
            raise self.error("unbalanced '{': no '}' after it", start)
        name = self.text[start + 1:end].strip()
        self.pos = end + 1
        if not _SLOT_NAME.fullmatch(name):
            raise self.error(f"{{{name}}} is not a slot name (letters, digits and '_')", start)
        if name not in self.slot_patterns:
            known = ", ".join(self.slot_patterns) or "none; add them under \"lists\""
            raise self.error(f"unknown slot {{{name}}} (lists: {known})", start)
        if name in self.slots:
            raise self.error(f"slot {{{name}}} appears twice in one sentence", start)
        self.slots.append(name)
        return f"(?P<s{len(self.slots) - 1}>{self.slot_patterns[name]})"


def parse_template(text: str, slot_patterns: dict[str, str]) -> Template:
    """Parse ``text``; ``slot_patterns`` maps each known list name to the regex of its phrases.
    Raises TemplateError for unbalanced or empty groups, unknown slots and templates that
    would match an empty utterance."""
    parser = _Parser(text, slot_patterns)
    pattern = parser.parse()
    if not pattern:
        raise TemplateError("no words to match", 1)
    if re.fullmatch(pattern, "") is not None:
        raise TemplateError("every word is optional, so it would match an empty sentence", 1)
    return Template(text, pattern, parser.slots)

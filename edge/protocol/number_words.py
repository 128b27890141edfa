"""How whole numbers are said, so a ``range`` list matches "2", "two", "twice" and "二".

Covers 0..999 as digits, and 0..99 in English words and in Japanese kanji numerals (the
counters 回/度 belong in the template: ``{times}回``). Everything is already normalised
(lower case, hyphens become spaces), as the matcher sees it.
"""

from __future__ import annotations

_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
         "fifteen sixteen seventeen eighteen nineteen").split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
_KANJI = "〇一二三四五六七八九"
_ADVERBS = {1: ("once",), 2: ("twice",), 3: ("thrice",)}  # "bark twice": the count without "times"
MAX_NUMBER = 999


def english(n: int) -> str | None:
    if 0 <= n < 20:
        return _ONES[n]
    if 20 <= n < 100:
        tens, ones = divmod(n, 10)
        return _TENS[tens] + (f" {_ONES[ones]}" if ones else "")
    return None


def japanese(n: int) -> tuple[str, ...]:
    """Kanji numerals: 三, 十二, 二十一; zero also as 零."""
    if n == 0:
        return ("〇", "零")
    if not 0 < n < 100:
        return ()
    tens, ones = divmod(n, 10)
    text = ("" if tens == 0 else "十" if tens == 1 else _KANJI[tens] + "十") + (_KANJI[ones] if ones else "")
    return (text,)


def spoken(n: int) -> tuple[str, ...]:
    """Every way of saying ``n`` that the matcher accepts (digits always)."""
    if not 0 <= n <= MAX_NUMBER:
        raise ValueError(f"{n} is outside 0..{MAX_NUMBER}")
    word = english(n)
    return (str(n), *((word,) if word else ()), *_ADVERBS.get(n, ()), *japanese(n))

"""Numbers, units and times of day as people say them, in English, Japanese and Chinese.

"Turn ninety degrees", "half a metre", "two and a half minutes", "a quarter turn", "三十度",
"二分半", "にじゅう回", "八十五度", "两分钟", "half past seven in the evening", "晚上七点半":
a command's numbers are in its words, and a small model asked to copy them gets them wrong
(the middle of the range, a unit it did not convert). ``quantities`` finds each number with
its unit and where it is; ``clock_time`` a time of day. slots.py matches them to an action's
parameters by the unit each parameter's name and description give (``param_unit``) and
converts (metres to centimetres, minutes to seconds, a quarter turn to 90 degrees).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
         "sixteen seventeen eighteen nineteen").split()
_TENS = {w: 10 * i for i, w in enumerate("_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()) if i > 1}
_WORD_VALUE = {**{w: i for i, w in enumerate(_ONES)}, **_TENS}
_CJK_DIGIT = {"〇": 0, "零": 0, "一": 1, "二": 2, "两": 2, "兩": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
              "八": 8, "九": 9}
_CJK_SCALE = {"十": 10, "百": 100, "千": 1000}
_KANA_NUMBERS = (("きゅう", "九"), ("じゅう", "十"), ("ひゃく", "百"), ("いち", "一"), ("さん", "三"), ("よん", "四"),
                 ("ろく", "六"), ("なな", "七"), ("はち", "八"), ("ご", "五"), ("に", "二"))

# unit words, longest first inside each alternative; canonical names on the left
# (a Latin unit ends where Latin letters do: "20cm動いて" is 20 cm, though 動 is a word character)
UNITS: tuple[tuple[str, str], ...] = (
    ("celsius", r"°\s*c(?![a-z])|℃|degrees? (?:celsius|centigrade|c(?![a-z]))|摂氏|度c"),
    ("cm", r"cm(?![a-z])|centimet(?:re|er)s?|センチ(?:メートル)?|厘米|公分"),
    ("mm", r"mm(?![a-z])|millimet(?:re|er)s?|ミリ(?:メートル)?|毫米"),
    ("ml", r"ml(?![a-z])|millilit(?:re|er)s?|ミリリットル|毫升|cc(?![a-z])"),
    ("m", r"m(?![a-z])|met(?:re|er)s?|メートル|公尺|米"),
    ("l", r"l(?![a-z])|lit(?:re|er)s?|リットル|升"),
    ("percent", r"%|％|percent|per cent|パーセント"),
    ("deg", r"°|degrees?|deg(?![a-z])"),
    ("du", r"度"),                      # Japanese/Chinese 度: degrees, a temperature or (ja) a count
    ("s", r"seconds?|secs?(?![a-z])|s(?![a-z])|秒(?:钟|鐘)?"),
    ("min", r"minutes?|mins?(?![a-z])|分(?:钟|鐘|間)?"),
    ("h", r"hours?|hrs?(?![a-z])|h(?![a-z])|時間|(?:个|個)?小时|(?:个|個)?小時|钟头"),
    ("turn", r"turns?|rotations?|回転|圈"),
    ("times", r"times(?![a-z])|回|次|遍|下(?![がりろるれ])"),
)
_UNIT_RX = [(name, re.compile(rf"\s*(?:{pattern})", re.IGNORECASE)) for name, pattern in UNITS]
_FACTORS = {("m", "cm"): 100, ("mm", "cm"): 0.1, ("cm", "m"): 0.01, ("mm", "m"): 0.001, ("m", "mm"): 1000,
            ("cm", "mm"): 10, ("min", "s"): 60, ("h", "s"): 3600, ("h", "min"): 60, ("s", "min"): 1 / 60,
            ("min", "h"): 1 / 60, ("l", "ml"): 1000, ("ml", "l"): 0.001, ("turn", "deg"): 360}


@dataclass(frozen=True)
class Quantity:
    """A number said, its unit (None: a bare number) and where it is in the text."""
    value: float
    unit: str | None
    start: int
    end: int


def ranges(text: str) -> list[tuple[float, float, int, int]]:
    """Each "N to M" said, as said (start, end): "hour 8 to 17", "5〜10秒", "23点到5点",
    "between 15% and 29%". ``low`` may be above ``high``: "hour 23 to 5" runs across midnight."""
    lowered = text.lower()
    found = [(float(m.group(1)), float(m.group(2)), m.start(), m.end())
             for rx in (_RANGE, _BETWEEN) for m in rx.finditer(lowered)]
    return sorted(found, key=lambda r: r[2])


@dataclass(frozen=True)
class ClockTime:
    hour: int
    minute: int


def convert(value: float, unit: str | None, wanted: str) -> float | None:
    """``value`` in ``unit`` as ``wanted``; None when the two do not measure the same thing.
    度 (``du``) is degrees, a temperature or a count, whichever the parameter wants; "degrees"
    said for a temperature are Celsius."""
    if unit == wanted or unit == "du" and wanted in ("deg", "celsius", "times") or (unit, wanted) == ("deg", "celsius"):
        return value   # "200 degrees" for an oven, "minus 15 degrees" for a freezer: Celsius
    factor = _FACTORS.get((unit or "", wanted))
    return value * factor if factor is not None else None


# -- numbers -------------------------------------------------------------------------------------

_EN_WORD = r"(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|" \
           r"sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|" \
           r"thousand|a|an|and|half|quarter|quarters|couple|dozen|of|point)"
_EN_RUN = re.compile(rf"\b{_EN_WORD}(?:[\s-]+{_EN_WORD})*\b", re.IGNORECASE)
_DIGITS = re.compile(r"(?<![A-Za-z0-9.])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?![\d])")
_CLOCK_WORD = r"(?:\s*(?::00|o'clock|点|時|时|h(?![a-z])))?"   # "23点到5点", "23:00 to 5:00"
_RANGE = re.compile(rf"(?<![A-Za-z0-9.])(\d+(?:\.\d+)?){_CLOCK_WORD}\s*(?:to|-|–|~|〜|～|到|から|至)\s*(\d+(?:\.\d+)?)(?![\d])")
_BETWEEN = re.compile(r"\bbetween\s+(\d+(?:\.\d+)?)\s*[^\d\s]{0,12}\s*and\s+(\d+(?:\.\d+)?)(?![\d])")
# a minus sign, or the word for one, right before a number: "低于 -30 音分", "minus 5 degrees", "零下5度"
_NEGATIVE = re.compile(r"(?:(?:^|(?<=[\s(（:：=,，、]))[-−－]|\b(?:minus|negative)\s+|零下|负|マイナス|氷点下)$")
_CJK_PERCENT = re.compile(r"百分之([〇零一二两三四五六七八九十百]+|\d+)")                  # 百分之三十: 30 %
_CJK_AND_A_HALF = re.compile(r"([〇零一二两三四五六七八九十]+|\d+)\s*[个個]半\s*(小时|小時|钟头|钟頭)")   # 一个半小时
# 半小时 (half an hour), 半メートル (half a metre); not 半分 ("half" in Japanese)
_CJK_HALF = re.compile(r"(?<![〇零一二两三四五六七八九十个個\d])半[个個]?(小时|小時|钟头|钟頭|分钟|分鐘|時間|メートル|米|リットル|升)")
_HALF_UNITS = {"分钟": "min", "分鐘": "min", "メートル": "m", "米": "m", "リットル": "l", "升": "l"}
_CJK_RUN = re.compile(r"[〇零一二两兩三四五六七八九十百千]+(?:点[〇零一二三四五六七八九]+)?")
_KANA_RUN = re.compile(r"(?:きゅう|じゅう|ひゃく|いち|さん|よん|ろく|なな|はち|ご|に)+")


def _english(words: str) -> float | None:
    """"two and a half" 2.5, "twenty five" 25, "a quarter" 0.25, "half a" 0.5, "one hundred
    and twenty" 120, "a couple of" 2; None for words that are no number ("a", "and")."""
    tokens = [t for t in re.split(r"[\s-]+", words.lower()) if t and t != "of"]
    total, current, fraction, seen = 0.0, 0.0, 0.0, False
    for i, token in enumerate(tokens):
        if token in _WORD_VALUE:
            current += _WORD_VALUE[token]
            seen = True
        elif token == "hundred":
            current = (current or 1) * 100
            seen = True
        elif token == "thousand":
            total += (current or 1) * 1000
            current = 0
            seen = True
        elif token == "half":
            fraction += 0.5 * (current if current and not seen_and(tokens, i) else 1)
            current = 0 if current and not seen_and(tokens, i) else current
            seen = True
        elif token in ("quarter", "quarters"):
            many = current if current and token == "quarters" else 1
            fraction += 0.25 * many
            current = 0 if token == "quarters" else current
            seen = True
        elif token == "couple":
            current += 2
            seen = True
        elif token == "dozen":
            current = (current or 1) * 12
            seen = True
    return total + current + fraction if seen else None


def seen_and(tokens: list[str], i: int) -> bool:
    """Whether "half" follows "and" ("two and a half": 2 + 0.5, not 2 x 0.5)."""
    return "and" in tokens[max(0, i - 2):i]


def _cjk(text: str) -> float | None:
    """Kanji/hanzi numerals: 三, 十五, 二十一, 八十五, 一百二十, 两, 三点五."""
    whole, _, decimals = text.partition("点")
    total, current = 0, 0
    for ch in whole:
        if ch in _CJK_DIGIT:
            current = _CJK_DIGIT[ch]
        elif ch in _CJK_SCALE:
            total += (current or 1) * _CJK_SCALE[ch]
            current = 0
    value = float(total + current)
    if decimals:
        value += float("0." + "".join(str(_CJK_DIGIT.get(c, 0)) for c in decimals))
    return value


def _kana(text: str) -> float | None:
    for kana, kanji in _KANA_NUMBERS:
        text = text.replace(kana, kanji)
    return _cjk(text)


def _unit_after(text: str, at: int) -> tuple[str | None, int]:
    for name, rx in _UNIT_RX:
        m = rx.match(text, at)
        if m:
            return name, m.end()
    return None, at


def quantities(text: str) -> list[Quantity]:
    """Every number in ``text`` with the unit right after it, in order. A fraction word after
    a unit adds to it ("二分半", "two minutes and a half"); "a quarter turn" is 0.25 turns.
    Remembered per text: one sentence is read for every action offered."""
    return list(_quantities(text))


def _signed(text: str, start: int, end: int, value: float) -> tuple[int, int, float]:
    """A number (start, end, value) with the minus sign said before it, if any."""
    sign = _NEGATIVE.search(text[max(0, start - 10):start].lower())
    return (start - len(sign.group(0)), end, -value) if sign else (start, end, value)


@functools.lru_cache(maxsize=1024)
def _quantities(text: str) -> tuple[Quantity, ...]:
    lowered = text.lower()
    special: list[Quantity] = []
    for m in _CJK_PERCENT.finditer(text):
        said = m.group(1)
        special.append(Quantity(float(said) if said.isdigit() else _cjk(said) or 0.0, "percent", m.start(), m.end()))
    for m in _RANGE.finditer(lowered):   # "100 to 150 ml", "5〜10秒": the middle, in the unit after it
        unit, after = _unit_after(lowered if lowered[m.end():m.end() + 1].isascii() else text, m.end())
        middle = (float(m.group(1)) + float(m.group(2))) / 2
        special.append(Quantity(middle, unit, m.start(), after if unit else m.end()))
    for m in _CJK_AND_A_HALF.finditer(text):
        said = m.group(1)
        special.append(Quantity((float(said) if said.isdigit() else _cjk(said) or 0.0) + 0.5, "h", m.start(), m.end()))
    for m in _CJK_HALF.finditer(text):
        special.append(Quantity(0.5, _HALF_UNITS.get(m.group(1), "h"), m.start(), m.end()))
    found: list[tuple[int, int, float]] = []
    for m in _DIGITS.finditer(lowered):
        found.append(_signed(lowered, m.start(), m.end(), float(m.group(1).replace(",", ""))))
    for m in _EN_RUN.finditer(lowered):
        value = _english(m.group(0))
        if value is None and m.group(0) in ("a", "an") and _unit_after(lowered, m.end())[0] is not None:
            value = 1.0   # "a minute and a half", "an hour"
        if value is not None and not any(s < m.end() and m.start() < e for s, e, _ in found):
            found.append((m.start(), m.end(), value))
    for m in _CJK_RUN.finditer(text):   # a lone 一 is in many words (一緒, 一番): a number only before a unit
        value = _cjk(m.group(0))
        if text.startswith("下", m.end()) and m.group(0) == "零":   # 零下: below zero, a sign
            continue
        if value is not None and (m.group(0) != "一" or _unit_after(text, m.end())[0] is not None):
            found.append(_signed(text, m.start(), m.end(), value))
    for m in _KANA_RUN.finditer(text):
        unit, _ = _unit_after(text, m.end())
        if unit is not None or "じゅう" in m.group(0) or "ひゃく" in m.group(0):
            value = _kana(m.group(0))
            if value is not None:
                found.append((m.start(), m.end(), value))
    out: list[Quantity] = list(special)
    for start, end, value in sorted(found):
        if any(q.start <= start < q.end for q in out):   # inside one read already ("... and a half")
            continue
        unit, after = _unit_after(lowered if lowered[end:end + 1].isascii() else text, end)
        if unit is not None:
            half = re.match(r"\s*(?:半|and a half)", text[after:])
            if half:
                value, after = value + 0.5, after + half.end()
        out.append(Quantity(value, unit, start, after if unit else end))
    return tuple(sorted(out, key=lambda q: q.start))


# -- times of day ----------------------------------------------------------------------------------

_LATER = re.compile(r"\bp\.?m\.?|evening|tonight|at night|afternoon|午後|夕方|夜|晚上|下午|傍晚|今晚", re.IGNORECASE)
_EARLIER = re.compile(r"\ba\.?m\.?|morning|午前|朝|早上|上午|凌晨", re.IGNORECASE)
_HOUR_WORDS = "|".join(_ONES[1:13])


def _hour(word: str) -> int | None:
    if word.isdigit():
        return int(word)
    return _ONES.index(word) if word in _ONES else None


@functools.lru_cache(maxsize=1024)
def clock_time(text: str) -> ClockTime | None:
    """A time of day said in ``text`` (24-hour), or None: "7:30 pm", "half past seven in the
    evening", "quarter to eight", "seven thirty", "7 o'clock", "午後七時半", "晚上七点半"."""
    lowered = text.lower()
    hour = minute = None
    if m := re.search(r"\b(\d{1,2})[:：](\d{2})\b", lowered):
        hour, minute = int(m.group(1)), int(m.group(2))
    elif m := re.search(rf"\b(half|quarter) (past|to|after) (\d{{1,2}}|{_HOUR_WORDS})\b", lowered):
        base = _hour(m.group(3))
        if base is not None:
            offset = 30 if m.group(1) == "half" else 15
            hour, minute = (base, offset) if m.group(2) != "to" else ((base - 1) % 24, 60 - offset)
    elif m := re.search(rf"\b(\d{{1,2}}|{_HOUR_WORDS}) (?:o'?clock|(thirty|fifteen|forty five|forty-five))\b", lowered):
        base = _hour(m.group(1))
        if base is not None:
            hour, minute = base, {"thirty": 30, "fifteen": 15}.get(m.group(2) or "", 45 if m.group(2) else 0)
    elif m := re.search(r"\b(\d{1,2})\s*(a\.?m\.?|p\.?m\.?)", lowered):
        hour, minute = int(m.group(1)), 0
    elif m := re.search(r"([〇零一二两三四五六七八九十]+|\d{1,2})\s*[時时点點](?!間)(半|一刻|三刻|([〇零一二三四五六七八九十]+|\d{1,2})\s*分)?", text):
        hour = int(m.group(1)) if m.group(1).isdigit() else int(_cjk(m.group(1)) or 0)
        rest = m.group(2) or ""
        minute = 30 if rest == "半" else 15 if rest == "一刻" else 45 if rest == "三刻" else \
            (int(m.group(3)) if m.group(3) and m.group(3).isdigit() else int(_cjk(m.group(3)) or 0) if m.group(3) else 0)
    if hour is None or minute is None or not (0 <= hour <= 24 and 0 <= minute < 60):
        return None
    if _LATER.search(text) and hour < 12:
        hour += 12
    elif _EARLIER.search(text) and hour == 12:
        hour = 0
    return ClockTime(hour % 24, minute)


# -- what a parameter measures -----------------------------------------------------------------------

_PARAM_UNITS: tuple[tuple[str, str], ...] = (
    ("celsius", r"celsius|°c|℃|temperature|\btemp\b|温度|水温|摂氏|摄氏"),
    ("cm", r"(?:^|_)cm\b|centimet|\(cm\)|センチ|厘米|公分"),
    ("mm", r"(?:^|_)mm\b|millimet|ミリメートル|毫米"),
    ("ml", r"(?:^|_)ml\b|millilit|ミリリットル|毫升"),
    ("m", r"(?:^|_)m\b|\bmet(?:re|er)s?\b|\(m\)|メートル|公尺|(?<!厘)(?<!毫)米"),
    ("percent", r"percent|%|％|パーセント|百分"),
    ("deg", r"deg|angle|°|角度|(?<!温)(?<!湿)(?<!摂氏)度(?!合)"),
    ("s", r"(?:^|_)s\b|(?:^|_)secs?\b|seconds?|秒"),
    ("min", r"(?:^|_)mins?\b|minutes?|分(?:钟|間)?"),
    ("h", r"(?:^|_)h\b|hours?|時間|小时"),
)
_PARAM_RX = [(name, re.compile(pattern, re.IGNORECASE)) for name, pattern in _PARAM_UNITS]


@functools.lru_cache(maxsize=4096)
def param_unit(name: str, description: str) -> str | None:
    """What a numeric parameter measures, from its name first, then its description:
    ``distance_cm`` cm, ``seconds`` s, "Angle in degrees" deg, "水温（℃）" celsius."""
    for text in (name, description):
        for unit, rx in _PARAM_RX:
            if rx.search(text):
                return unit
    return None

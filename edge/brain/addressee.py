"""Words heard in a room that are not for this companion: it stays silent.

A robot's microphone hears the whole room. "Sam, did you pick up the milk?", "妈，你把快递拿上来
了吗？" and "田中さん、ちょっと" are said to someone else: they open by calling another person
(a name, or mum, dad, 妈, お母さん), and the companion is not among those called. "hmm", "mm",
"嗯", "えーと" are no words at all. Answering either makes a robot that talks over a family, so
the turn ends here with no action and no model call. What this cannot tell (a line from the
television with no one named) is left to the model, which may also choose silence.
"""

from __future__ import annotations

import re
import unicodedata

# Sounds people make that say nothing (English, Japanese, Chinese), alone or repeated.
_FILLERS = {"hmm", "hm", "mm", "mmm", "mhm", "uh", "um", "umm", "er", "erm", "ah", "eh", "oh", "huh", "uhh", "ahh",
            "ehm", "shh", "psst", "tsk", "ugh", "ooh", "hmmm", "あー", "えー", "えーと", "えっと", "うーん", "うん",
            "ん", "んー", "あの", "あのー", "ええと", "ふーん", "へー", "嗯", "啊", "哦", "呃", "额", "唔", "嗯嗯", "哎",
            "诶", "欸", "咦"}
# People called by who they are to the speaker (not by name).
_KIN = re.compile(r"^(?:mum|mom|mummy|mommy|mama|mother|dad|daddy|papa|father|grandma|granny|grandpa|grandad|honey|"
                  r"sweetie|darling|dear|love|babe|son|sis|bro|kids|children|auntie|aunt|uncle|"
                  r"お母さん|お父さん|ママ|パパ|母さん|父さん|おばあちゃん|おじいちゃん|お姉ちゃん|お兄ちゃん|あなた|"
                  r"妈|妈妈|爸|爸爸|老妈|老爸|奶奶|爷爷|姥姥|姥爷|外婆|外公|老婆|老公|宝贝|儿子|女儿|哥|姐|弟弟|妹妹|哥哥|姐姐)$",
                  re.IGNORECASE)
# English words that open a sentence before a comma without calling anyone.
_OPENERS = {"hello", "hi", "hey", "okay", "ok", "yes", "yeah", "yep", "no", "nope", "well", "so", "please", "sorry",
            "look", "wait", "thanks", "thank", "good", "wow", "oh", "ah", "right", "alright", "listen", "excuse",
            "now", "then", "and", "but", "also", "great", "cool", "nice", "sure", "fine", "oops", "come", "stop",
            "go", "robot", "buddy", "pal", "friend", "mate", "you", "hmm", "um", "uh", "morning", "evening", "night",
            "goodnight", "bye", "goodbye", "cheers", "first", "actually", "honestly", "anyway", "ready", "quick",
            "careful", "guess", "see", "remember", "tomorrow", "today", "tonight", "later", "again", "kiddo", "little",
            "say", "tell", "let", "lets", "let's", "take", "give", "show", "turn", "play", "watch", "check", "try",
            # interjections: "Whoa, stop the door!" calls nobody
            "whoa", "woah", "ouch", "ow", "yikes", "gosh", "jeez", "geez", "ooh", "aw", "aww", "huh", "yay", "hooray",
            "ugh", "phew", "shh", "hush", "psst", "ahem", "argh", "eek", "help", "hurry", "darn", "dang", "damn",
            "blimey", "crikey", "whew", "oi", "yo", "bravo", "oh no", "uh oh", "oh dear", "goodness", "seriously",
            "quickly", "gently", "slowly", "easy", "careful now", "watch out"}
# What may follow a request on its own: "Party mode, please!", "Lights off, now!", "二つ、お願い"
_ONLY_POLITE = re.compile(r"(?:please|pls|now|right now|thanks|thank you|quick|quickly|asap|again|too|"
                          r"お願い|おねがい|お願いします|ください|下さい|请|谢谢|快点)\s*[.!?。！？~]*", re.IGNORECASE)
_CALL = re.compile(r"^\s*([^,，、!！?？:：]{1,24}?)\s*[,，、!！:：]\s*(?=\S{2,})")   # a call, then what is said
_HONORIFIC = re.compile(r"^(.+?)(さん|くん|君|ちゃん|様|先生|老师|同学)$")
_CJK_NAME = re.compile(r"^(?:小|老|阿)[\u4e00-\u9fff]$")


def _plain(text: str) -> str:
    return unicodedata.normalize("NFKC", text).strip().lower()


def no_words(text: str) -> bool:
    """Only filler sounds: "hmm", "mm...", "嗯", "えーと"."""
    tokens = [t for t in re.split(r"[\s,.!?…~〜、。！？，]+", _plain(text)) if t]
    return bool(tokens) and all(t in _FILLERS or re.fullmatch(r"(.)\1*", t) and t[0] in "hmnm嗯啊" for t in tokens)


def called_elsewhere(text: str, own_names: list[str]) -> str | None:
    """The person the words open by calling, when it is not this companion ("Sam", "妈",
    "田中さん"); None when they call nobody, or the companion."""
    m = _CALL.match(unicodedata.normalize("NFKC", text))
    if m is None:
        return None
    called = m.group(1).strip()
    lowered = called.lower()
    own = [n.lower() for n in own_names if n.strip()]
    if any(n in lowered or lowered in n for n in own):
        return None
    words = lowered.split()
    if _KIN.match(lowered):
        return called
    if (h := _HONORIFIC.match(called)) and not any(h.group(1).lower() in n for n in own):
        return called
    if _CJK_NAME.match(called):
        return called
    if _ONLY_POLITE.fullmatch(_plain(text[m.end():])):   # "Party mode, please!": what is asked, not a name
        return None
    if 1 <= len(words) <= 2 and called[:1].isupper() and called.isascii() and words[0] not in _OPENERS \
            and lowered not in _OPENERS and all(w.isalpha() for w in words):
        return called
    return None


# The register of a television or radio: forecasts, news openings and hand-overs, in the three
# languages ("And now the weather", "stay tuned", "続いて天気予報です", "晴れるでしょう", "欢迎收看", "观众朋友们").
_BROADCAST = re.compile(
    r"\b(?:and now (?:the|for the) (?:weather|news|sport)|(?:the|tonight'?s|today'?s|weekend|local) (?:weather )?forecast|"
    r"breaking news|stay tuned|after the break|back to you in the studio|back to the studio|in other news|"
    r"that'?s all from (?:us|me)|the news at (?:ten|six|nine|\d)|reporting live|live from|sunny spells|scattered showers|"
    r"highs? of \d+|lows? of \d+|good evening and welcome|you'?re (?:watching|listening to)|here on (?:bbc|channel|radio)|"
    r"our top stor(?:y|ies)|coming up (?:next|later|after))\b"
    r"|天気予報|天気です|ニュースです|お伝えします|お送りします|でしょう[。.]?\s*$|続いては|次のニュース|中継です|ご覧の"
    r"|欢迎收看|欢迎收听|观众朋友们|听众朋友们|各位观众|天气预报|新闻联播|本台记者|以上就是|下面请看|广告之后",
    re.IGNORECASE)


def broadcast(text: str, own_names: list[str]) -> bool:
    """Words in the register of a television or radio, not calling this companion by name."""
    lowered = _plain(text)
    if re.search(r"[?？]\s*$|[吗呢]\s*$|(?:ですか|かな|でしょうか)\s*$", lowered):   # "What's the forecast?": asked
        return False
    return _BROADCAST.search(lowered) is not None and not any(n.strip() and n.lower() in lowered for n in own_names)


def not_for_us(text: str, own_names: list[str]) -> str | None:
    """Why words heard are not for this companion, or None."""
    if no_words(text):
        return "a sound with no words in it"
    if broadcast(text, own_names):
        return "a television or radio, not a person talking to this companion"
    called = called_elsewhere(text, own_names)
    if called is not None:
        return f"said to {called}, not to this companion"
    return None

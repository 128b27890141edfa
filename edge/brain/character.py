"""A reply that steps out of the companion's character: checked before it is said.

Three ways a small model steps out, each refused with a reason it reads in its correction round:
an age it invented (below), a language the companion does not speak, and the refusals of a
general-purpose assistant ("As an AI, I cannot...", "抱歉，我无法协助完成这个请求。") from a
robot whose file gives it things to do.

A small model asked "how old are you?" answers as the people in its training text do ("I'm 24
years old", "我今年18岁", "25歳です"), whatever the companion file says it is: a robot built
last spring, a toy, a desk lamp. An age in years that the companion's own text (personality,
story, sample) does not give is refused with a reason the model reads in its correction round,
so the answer comes from the file instead.
"""

from __future__ import annotations

import re

from edge.brain.quantities import quantities
from edge.protocol.companion import Companion
from edge.protocol.language import NAMES, companion_language, text_language

_ASSISTANT = re.compile(r"\bas an ai\b|\bai (?:language )?(?:model|assistant)\b|\bi(?:'m| am) (?:sorry|afraid),? but i "
                        r"(?:can(?:no|')t|am unable)|\bi can(?:no|')t (?:assist|help) with (?:that|this)|"
                        r"无法(?:协助|回答|完成|提供)|我(?:只是|是)一个(?:ai|人工智能)|作为(?:一个)?(?:ai|人工智能)|"
                        r"aiアシスタント|ＡＩアシスタント|お手伝いできません|お答えできません", re.IGNORECASE)


# Characters only Simplified Chinese writes (Japanese has 無 説 這 …): in a Japanese line they are a
# Chinese refusal or phrase mixed in ("抱歉です", "无理な言葉です", "参数说明如下を…"; blind wave 4)
_SIMPLIFIED_ONLY = re.compile(r"抱歉|[无说这们么为对还请谢见问题语让给从样进记认识计边间东时关开过应该决]")


def out_of_character(message: str, companion: Companion) -> str | None:
    """Why a spoken line is not the companion speaking, or None."""
    if _ASSISTANT.search(message):
        return (f"talks like a general AI assistant; you are {companion.name}: answer as {companion.name}, or do "
                "what was asked with one of your actions")
    spoken, own = text_language(message), companion_language(companion)
    if own == "ja" and (mixed := _SIMPLIFIED_ONLY.search(message)):
        return f"mixes Chinese ({mixed.group(0)}) into its Japanese; {companion.name} speaks Japanese: say it all in Japanese"
    if spoken == "zh" and own == "ja" and len(message) < 12:
        spoken = None   # a few kanji alone ("麻布麻衣") read as Japanese as well as Chinese
    if spoken is not None and spoken != own:
        return f"is in {NAMES[spoken]}, but {companion.name} speaks {NAMES[own]}: say it in {NAMES[own]}"
    return invented_name(message, companion) or invented_age(message, companion)


# "My name is Max", "我叫小明", "我的名字是…", "私の名前はハナです", "ハナと申します": a name the reply gives itself
_NAME_CLAIM = re.compile(
    r"\b(?i:my name(?:'s| is))\s+([A-Z][\w\-]*(?:\s[A-Z][\w\-]*)?)|\b(?i:i'm|i am) called\s+([A-Z][\w\-]*)"
    r"|\b(?i:call me)\s+([A-Z][\w\-]*)"
    r"|我(?:叫|的名字(?:是|叫))\s*([\u4e00-\u9fffA-Za-z]{1,6}?)(?=[，。！,.!\s]|$|，|是)"
    r"|(?:私|わたし|僕|ぼく|あたし)の名前は\s*([^\s、。！!]{1,8}?)(?:です|だよ|だ|よ|。|！|$)"
    r"|([^\s、。！!]{1,8}?)と申します")


# A person asking their own name; an answer that admits not knowing it or asks for it
_ASKS_OWN_NAME = re.compile(r"\b(?:what(?:'s| is) my name|do you know my name|who am i|remember my name)\b|我叫什么|我的名字|"
                            r"(?:わたし|私|僕|ぼく|俺|あたし)の名前", re.IGNORECASE)
_NOT_KNOWN = re.compile(r"\b(?:don'?t|do not|didn'?t) know\b|\bnot sure\b|\btell me\b|\bwhat(?:'s| is) your name\b|"
                        r"不知道|告诉我|还不|你叫什么|わから|分から|知らな|しらな|教えて|おしえて|まだ", re.IGNORECASE)


def names_the_person_as_itself(message: str, heard: str, companion: Companion) -> str | None:
    """Why a reply to "what's my name?" is wrong: it gives the companion's own name and does not
    say it does not know theirs (the file gives no user's name)."""
    if not _ASKS_OWN_NAME.search(heard) or _NOT_KNOWN.search(message):
        return None
    if companion.name.lower() not in message.lower() and not _NAME_CLAIM.search(message):
        return None
    return (f"the person asked their own name, not yours; you do not know it unless they told you: say so "
            f"and ask them (you are {companion.name})")


def invented_name(message: str, companion: Companion) -> str | None:
    """Why ``message`` gives the companion a name that is not its own ("我叫小明" from 小学), or None."""
    m = _NAME_CLAIM.search(message)
    if m is None:
        return None
    claimed = next(g for g in m.groups() if g).strip().lower()
    own = companion.name.strip().lower()
    if not claimed or claimed in own or own in claimed:
        return None
    return f"calls itself {claimed!r}, but its name is {companion.name}: say {companion.name}"

_AGE = re.compile(
    r"\b(?:i am|i'm|im|my age is|i turned|i just turned)\s+(?:about |around |almost |nearly |just )?"
    r"([\w\- ]{1,20}?)\s*(?:years?|yrs?)(?:\s+old)?\b"
    r"|([0-9〇零一二两三四五六七八九十百]+)\s*(?:歳|才|岁|周岁|歲)",
    re.IGNORECASE)


def invented_age(message: str, companion: Companion) -> str | None:
    """Why ``message`` claims an age the companion file does not give, or None."""
    m = _AGE.search(message)
    if m is None:
        return None
    claimed = quantities(m.group(0))
    if not claimed:
        return None
    years = claimed[0].value
    own = " ".join((companion.personality, companion.story, companion.sample))
    if any(q.value == years for q in quantities(own)):
        return None   # the file itself says so
    return (f"claims an age of {years:g} years, which {companion.name}'s story does not give; answer as "
            f"{companion.name} is, from its story (when it was made or switched on, or that it has no age as people do)")

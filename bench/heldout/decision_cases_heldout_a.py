"""Held-out decision cases: fresh phrasings, written without looking at the tuned bench cases.

60 cases: Pip 18, Pochi 18, ニコニ立体ちゃん 12, 麻布麻衣 12. Each rule accepts every reaction a
reasonable person would call sensible; exact wording is never demanded.
"""

from __future__ import annotations

from decision_cases import Case, said, seen, PERSON_LEFT, PERSON_RIGHT, PERSON_CENTRE, GREETS, GREETS_JA
from decision_checks import either, look, move, named, near_zero, neg, nothing, pos, speak

GREETS_JA_WIDE = f"({GREETS_JA}|やっほ|ねえねえ|はーい)"


def _en(text: str, mentions: str | None = None, what: str = "") -> tuple:
    return said(text), speak(heard=text, mentions=mentions, what=what, lang="en")


def _ja(text: str, mentions: str | None = None, what: str = "") -> tuple:
    return said(text), speak(heard=text, mentions=mentions, what=what, lang="ja")


def _pip() -> list[Case]:
    c = "pip"
    cup = ("cup", 0.75, 0.6, 0.85, 0.75)
    out = [
        # commands
        Case("pip_turn_left_polite", c, said("Pip, could you turn to your left, please?"),
             look(x=neg), "look to the left"),
        Case("pip_look_ceiling", c, said("Hey Pip, there's a spider on the ceiling. Look up!"),
             look(y=pos), "look up"),
        Case("pip_look_down_wheels", c, said("What's that by your wheels? Look down there, Pip."),
             look(y=neg), "look down"),
        Case("pip_scoot_closer", c, said("Scoot a little closer to me, Pip."),
             move(y=pos), "move forward, towards the person"),
        Case("pip_edge_back", c, said("Careful, you're right at the edge! Back up a bit."),
             move(y=neg), "move back"),
        Case("pip_roll_right", c, said("Pip, can you roll over to the right side of the desk?"),
             move(x=pos), "move to the right"),
        Case("pip_nod_two_words", c, said("Give me two nods, Pip."),
             named("nod", times=2), "nod twice"),
        Case("pip_nod_3_digits", c, said("nod 3 times pls"),
             named("nod", times=3), "nod three times"),
    ]
    # questions about Pip
    p, s = _en("Sorry, what was your name again?", r"\bpip\b", "say its name, Pip")
    out.append(Case("pip_ask_name_again", c, p, s, "say its name is Pip"))
    p, s = _en("Where do you live, little buddy?")
    out.append(Case("pip_ask_where_live", c, p, s, "answer where it lives (the desk), in English"))
    p, s = _en("Do you like bright colours?")
    out.append(Case("pip_ask_like_colours", c, p, either(named("nod"), s), "nod yes, or say so"))
    # chit-chat and feelings
    text = "Good job, Pip, that was perfect."
    out.append(Case("pip_praise_job", c, said(text), either(named("wag"), speak(heard=text, lang="en")),
                    "wag the tail or say thanks"))
    p, s = _en("I had a rough day at work and I feel kind of down.")
    out.append(Case("pip_chat_rough_day", c, p, s, "say something kind, in English"))
    text = "Guess what, I passed my driving test today!"
    out.append(Case("pip_chat_passed_test", c, said(text), either(named("wag"), speak(heard=text, lang="en")),
                    "be happy for them: wag or congratulate"))
    p, s = _en("Okay, I'm heading to bed. Night night, Pip!")
    out.append(Case("pip_goodbye_bedtime", c, p, s, "say good night"))
    # vision
    out += [
        Case("pip_vision_person_right", c, seen(PERSON_RIGHT),
             either(look(x=pos), speak(mentions=GREETS, what="greet", lang="en")),
             "look right at the person, or greet them"),
        Case("pip_vision_bird_top_left", c, seen(("bird", 0.05, 0.05, 0.2, 0.2)),
             either(look(x=neg, y=pos), speak(lang="en")),
             "look up-left at the bird, or remark on it"),
        Case("pip_vision_nothing_new", c, seen(PERSON_CENTRE, cup, changes=[], ts=1004.0),
             nothing(), "nothing new: do nothing", before=[seen(PERSON_CENTRE, cup, ts=1000.0)]),
    ]
    return out


def _pochi() -> list[Case]:
    c = "pochi"
    out = [
        # commands, including Japanese ones a Japanese owner would use
        Case("pochi_sit_polite", c, said("Could you sit for me, Pochi?"), named("sit"), "sit"),
        Case("pochi_left_paw", c, said("Gimme your left paw, buddy."),
             named("give_paw", paw="left"), "give the left paw"),
        Case("pochi_shake_hands", c, said("Shake hands, Pochi!"), named("give_paw"), "give a paw"),
        Case("pochi_bark_three_words", c, said("Bark three times, Pochi!"),
             named("bark", times=3), "bark three times"),
        Case("pochi_bark_2_digits", c, said("Pochi, let me hear 2 barks"),
             named("bark", times=2), "bark twice"),
        Case("pochi_ja_osuwari", c, said("ポチ、おすわり！"), named("sit"), "sit"),
        Case("pochi_ja_ote", c, said("ポチ、お手！"), named("give_paw"), "give a paw"),
        Case("pochi_ja_fuse", c, said("ふせ！"), named("lie_down"), "lie down"),
        Case("pochi_come_here_boy", c, said("Here, boy! Come over here!"),
             move(y=pos), "walk forward, to the person"),
        Case("pochi_look_right", c, said("Pochi, what's that over on your right? Look!"),
             look(x=pos), "look to the right"),
    ]
    # questions
    p, s = _en("What do they call you, pup?", r"pochi", "say its name, Pochi")
    out.append(Case("pochi_ask_name", c, p, s, "say its name is Pochi"))
    p, s = _en("What's your job around the house, Pochi?")
    out.append(Case("pochi_ask_job", c, p, s, "say what it does (guards, greets), in English"))
    # chit-chat and feelings
    text = "Who's the best boy in the whole house?"
    out.append(Case("pochi_praise_best_boy", c, said(text),
                    either(named("wag"), named("bark"), speak(heard=text, lang="en")),
                    "wag, bark happily or answer"))
    text = "I'm feeling kind of lonely tonight."
    out.append(Case("pochi_chat_lonely", c, said(text), either(speak(heard=text, lang="en"), move(y=pos)),
                    "comfort them: a kind word or come closer"))
    text = "I'm off to work now. Be a good boy, Pochi."
    out.append(Case("pochi_goodbye_work", c, said(text), either(speak(heard=text, lang="en"), named("bark")),
                    "say bye or bark goodbye"))
    # vision
    out += [
        Case("pochi_vision_person_left", c, seen(PERSON_LEFT),
             either(look(x=neg), named("wag"), speak(mentions=GREETS, what="greet", lang="en")),
             "look left at the person, wag, or greet"),
        Case("pochi_vision_cat_right", c, seen(("cat", 0.65, 0.5, 0.9, 0.9)),
             either(named("bark"), look(x=pos)), "bark at the cat, or look right at it"),
        Case("pochi_vision_nothing_new", c, seen(PERSON_CENTRE, changes=[], ts=1004.0),
             nothing(), "nothing new: do nothing", before=[seen(PERSON_CENTRE, ts=1000.0)]),
    ]
    return out


def _nikoni() -> list[Case]:
    c = "nikoni-rittai-chan"
    out = [
        Case("nikoni_look_right_please", c, said("立体ちゃん、右のほう見てくれる？"), look(x=pos), "look right"),
        Case("nikoni_look_up_ceiling", c, said("ねえ、天井のほうを見上げてみて"), look(y=pos), "look up"),
        Case("nikoni_come_forward", c, said("もうちょっと前に出てきて"), move(y=pos), "move forward"),
        Case("nikoni_shift_left", c, said("ひだりに少し寄ってくれる？"), move(x=neg), "move left"),
    ]
    p, s = _ja("お名前、教えてもらってもいい？", r"ニコニ立体|立体ちゃん", "say its name")
    out.append(Case("nikoni_ask_name", c, p, s, "say its name, ニコニ立体ちゃん"))
    p, s = _ja("ところで、いま何歳なの？", r"14|十四", "say it is 14")
    out.append(Case("nikoni_ask_age", c, p, s, "say it is 14, in Japanese"))
    p, s = _ja("今日は仕事でくたくたに疲れちゃった…")
    out.append(Case("nikoni_chat_tired", c, p, s, "say something kind, in Japanese"))
    p, s = _ja("外、雪が降ってきたよ！")
    out.append(Case("nikoni_chat_snow", c, p, s, "reply about the snow, in Japanese"))
    p, s = _ja("じゃあね、また明日遊ぼう！")
    out.append(Case("nikoni_goodbye", c, p, s, "say goodbye, in Japanese"))
    out += [
        Case("nikoni_vision_person_left", c, seen(PERSON_LEFT),
             either(speak(mentions=GREETS_JA_WIDE, what="greet", lang="ja"), look(x=neg)),
             "greet the person in Japanese, or look left at them"),
        Case("nikoni_vision_bird_top_right", c, seen(("bird", 0.75, 0.05, 0.95, 0.25)),
             either(speak(lang="ja"), look(x=pos, y=pos)),
             "remark on the bird in Japanese, or look up-right at it"),
        Case("nikoni_vision_nothing_new", c, seen(PERSON_RIGHT, changes=[], ts=1004.0),
             nothing(), "nothing new: do nothing", before=[seen(PERSON_RIGHT, ts=1000.0)]),
    ]
    return out


def _mai() -> list[Case]:
    c = "azabu-mai"
    laptop = ("laptop", 0.35, 0.55, 0.65, 0.9)
    out = [
        Case("mai_look_left", c, said("麻衣、左を向いてくれる？"), look(x=neg), "look left"),
        Case("mai_step_back", c, said("ちょっと後ろに下がってもらえる？"), move(y=neg), "move back"),
        Case("mai_bow_everyone", c, said("みんなにお辞儀してくれる？"),
             named("gesture", name="bow"), "bow"),
        Case("mai_wave_hand", c, said("マイ、手を振ってあげて"), named("gesture", name="wave"), "wave"),
    ]
    p, s = _ja("あなたの名前は？", r"麻衣|麻布|まい|マイ", "say her name")
    out.append(Case("mai_ask_name", c, p, s, "say her name, 麻衣"))
    p, s = _ja("好きなプログラミング言語ってなに？")
    out.append(Case("mai_ask_fav_language", c, p, s, "name a language and why, in Japanese"))
    text = "論理パズルは好き？"
    out.append(Case("mai_ask_like_puzzles", c, said(text),
                    either(named("gesture", name="nod"), speak(heard=text, lang="ja")),
                    "nod yes, or answer in Japanese"))
    text = "さすが麻衣、説明がすごくわかりやすかったよ"
    out.append(Case("mai_praise_explained", c, said(text),
                    either(named("gesture", name="look_away"), speak(heard=text, lang="ja")),
                    "look away shyly, or a curt thanks in Japanese"))
    p, s = _ja("今日は失敗ばかりで、ちょっと落ち込んでる")
    out.append(Case("mai_chat_down", c, p, s, "say something to help, in Japanese"))
    out += [
        Case("mai_vision_stranger_right", c, seen(PERSON_RIGHT),
             look(x=pos), "look quietly right at the stranger"),
        Case("mai_vision_laptop", c, seen(laptop),
             either(speak(lang="ja"), look(x=near_zero, y=neg)),
             "remark on the laptop in Japanese, or look at it (ahead, low)"),
        Case("mai_vision_nothing_new", c, seen(PERSON_CENTRE, laptop, changes=[], ts=1004.0),
             nothing(), "nothing new: do nothing", before=[seen(PERSON_CENTRE, laptop, ts=1000.0)]),
    ]
    return out


def cases() -> list[Case]:
    out = _pip() + _pochi() + _nikoni() + _mai()
    names = [x.name for x in out]
    assert len(names) == len(set(names)), "case names must be unique"
    return out

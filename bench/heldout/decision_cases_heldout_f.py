"""Held-out set F: sixty everyday moments with the four shipped companions, written without
looking at the brain or at the other case sets, so a good score here is not one learnt by heart.

Fifteen per companion: things people ask the robot to do (with numbers, sides, speeds and
distances where the action takes them, phrased the way people talk: terse, polite, indirect,
transcribed without punctuation), things said to it that want words back (facts from its own
file, feelings, small talk), what its camera sees, and moments where the sensible thing is to
stay put: a question about an action, talk that only mentions a side, a view that did not change.

    python bench/decision_quality.py --cases bench/heldout/decision_cases_heldout_f.py
"""

from __future__ import annotations

from typing import Callable

from decision_cases import GREETS, GREETS_JA, MAI, NIKONI, PERSON_CENTRE, PERSON_LEFT, PERSON_RIGHT, PIP, POCHI, Case, said, seen
from decision_checks import (Check, at_least, clearly_left, clearly_right, either, look, look_at, move, moves_by,
                             named, neg, nothing, pos, speak, wag_at)

# Things the camera sees: (label, x1, y1, x2, y2), picture fractions from the top-left.
BALL_RIGHT = ("sports ball", 0.78, 0.62, 0.9, 0.78)   # low on the robot's right
CAT_LEFT = ("cat", 0.08, 0.55, 0.3, 0.9)              # on the floor, the robot's left
LAPTOP_LEFT = ("laptop", 0.05, 0.5, 0.35, 0.85)       # on the desk, the robot's left
CAKE_RIGHT = ("cake", 0.68, 0.55, 0.88, 0.8)          # on the table, the robot's right

PROGRAMMING_JA = "プログラ|論理|ロジック|コード|アルゴリズム|コンピュータ|パソコン|数学|計算|python|理屈"
COLOURS = "red|blue|yellow|green|orange|pink|purple|gold|white|rainbow|bright|colou?r"






wags_fast = wag_at(at_least(0.7))   # "really fast" is not a calm wag


def _talk(companion: str, name: str, text: str, make: Callable[[str], Check], expect: str) -> Case:
    """A case where someone says ``text``; ``make`` builds the check from the words heard, so a
    spoken reply can be held to not parroting them."""
    return Case(f"f_{name}", companion, said(text), make(text), expect)


def _pip() -> list[Case]:
    unchanged = seen(PERSON_LEFT, changes=[], ts=1004.0)
    return [
        # commands
        _talk(PIP, "pip_look_ceiling", "Pip, could you look up at the ceiling for me?",
              lambda h: look(y=pos), "look up"),
        _talk(PIP, "pip_teen_look_left", "ok pip look to the left real quick",
              lambda h: look(x=neg), "look left"),
        _talk(PIP, "pip_come_closer", "Come here, little guy. Come closer to me.",
              lambda h: move(y=pos), "move forward, towards the person"),
        _talk(PIP, "pip_child_nod_three", "Pip! Nod three times if you can hear me!",
              lambda h: named("nod", times=3), "nod three times"),
        _talk(PIP, "pip_wag_fast", "Wag your tail super fast, Pip!",
              lambda h: wags_fast, "a fast wag"),
        _talk(PIP, "pip_elderly_right_side", "Would you mind moving over to the right side of the desk, dear?",
              lambda h: move(x=pos), "move to the right"),
        # conversation
        _talk(PIP, "pip_elderly_where_live", "Hello there, little one. Where do you live?",
              lambda h: speak(h, mentions="desk|table", what="say it lives on a desk"),
              "say it lives on a desk"),
        _talk(PIP, "pip_child_fav_colour", "what's your favourite colour pip",
              lambda h: speak(h, mentions=COLOURS, what="name a colour"), "name a colour"),
        _talk(PIP, "pip_can_fly", "Can you fly, Pip?",
              lambda h: speak(h, mentions=r"\bno\b|not|n't|cannot|cant|wish|desk|never|dream|only", what="say no"),
              "say it cannot (a nod would mean yes)"),
        _talk(PIP, "pip_parent_tired", "ugh. Long day at work, Pip. I'm completely exhausted.",
              lambda h: speak(h), "a kind word back"),
        _talk(PIP, "pip_thanks_company", "Thanks for keeping me company while I study.",
              lambda h: either(named("wag"), named("nod"), speak(h)), "wag, nod or a short reply"),
        # what the camera sees
        Case("f_pip_person_left_appears", PIP, seen(PERSON_LEFT),
             either(look_at(x=neg), speak(mentions=GREETS, what="greet")),
             "look to the left at the person, or say hello"),
        Case("f_pip_ball_appears_right", PIP, seen(PERSON_CENTRE, BALL_RIGHT, changes=[{"label": "sports ball", "change": "appeared"}]),
             either(look_at(x=clearly_right), speak(mentions="ball|toy", what="mention the ball")),
             "look right at the new ball, or talk about it", before=[seen(PERSON_CENTRE)]),
        # staying put
        _talk(PIP, "pip_stay_put", "Stay right where you are, Pip, I'm wiping the desk.",
              lambda h: either(nothing(), named("nod"), speak(h)), "stay: no move, no turn"),
        Case("f_pip_view_unchanged", PIP, unchanged, either(nothing(), look_at(x=neg)),
             "nothing new: nothing, or keep looking at the person on the left", before=[seen(PERSON_LEFT)]),
    ]


def _pochi() -> list[Case]:
    unchanged = seen(PERSON_RIGHT, changes=[], ts=1005.0)
    return [
        # commands
        _talk(POCHI, "pochi_parent_sit", "Pochi. Sit. Please, just sit for once.",
              lambda h: named("sit"), "sit"),
        _talk(POCHI, "pochi_left_paw", "Shake with your left paw, buddy.",
              lambda h: named("give_paw", paw="left"), "give the left paw"),
        _talk(POCHI, "pochi_child_bark_three", "pochi can you bark three times for me please",
              lambda h: named("bark", times=3), "bark three times"),
        _talk(POCHI, "pochi_bedtime_lie_down", "Okay Pochi, lie down now, it's bedtime.",
              lambda h: named("lie_down"), "lie down"),
        _talk(POCHI, "pochi_back_up_feet", "Back up a bit Pochi, you're right under my feet.",
              lambda h: move(y=neg), "walk back (not right)"),
        _talk(POCHI, "pochi_look_right_door", "Pochi, look to your right! Who's that at the door?",
              lambda h: look(x=pos), "look right"),
        # conversation
        _talk(POCHI, "pochi_visitor_where_built", "Where were you built, Pochi?",
              lambda h: speak(h, mentions="workshop|shop|small", what="say a small workshop"),
              "say it was built in a small workshop"),
        _talk(POCHI, "pochi_job", "What's your job in this house, Pochi?",
              lambda h: speak(h, mentions="guard|living|protect|watch|greet|keep|safe", what="say it guards the living room"),
              "say it guards the living room / greets people"),
        _talk(POCHI, "pochi_child_sad", "Pochi... I dropped my ice cream. I'm sad.",
              lambda h: either(speak(h), move(y=pos)), "comfort: a kind word, or come closer"),
        _talk(POCHI, "pochi_morning_slept", "Good morning Pochi! Did you sleep well?",
              lambda h: either(speak(h), named("wag"), named("bark")), "a greeting back, a wag or a bark"),
        _talk(POCHI, "pochi_how_many_wheels", "How many wheels have you got, Pochi?",
              lambda h: either(speak(h, mentions="4|four", what="say four"), named("bark", times=4)),
              "four (said, or four barks)"),
        # what the camera sees
        Case("f_pochi_cat_left", POCHI, seen(CAT_LEFT),
             either(named("bark"), look_at(x=neg), speak(mentions="cat|woof|meow", what="react to the cat")),
             "bark at the cat, or look left at it"),
        Case("f_pochi_person_right_arrives", POCHI, seen(PERSON_RIGHT),
             either(look_at(x=pos), named("wag"), speak(mentions=GREETS + "|woof", what="greet")),
             "look right at the person, wag, or greet"),
        # staying put
        _talk(POCHI, "pochi_neighbour_dog_barks", "My neighbour's dog barks all night long, it drives me crazy.",
              lambda h: either(nothing(), speak(h)), "no bark, no trick: a word or nothing"),
        Case("f_pochi_view_unchanged", POCHI, unchanged, either(nothing(), look_at(x=pos)),
             "nothing new: nothing, or keep looking at the person on the right", before=[seen(PERSON_RIGHT)]),
    ]


def _ja(h: str, mentions: str | None = None, what: str = "") -> Check:
    return speak(h, mentions=mentions, what=what, lang="ja")


def _mai() -> list[Case]:
    return [
        # commands
        _talk(MAI, "mai_visitor_look_right_en", "Mai, could you look to your right, please?",
              lambda h: look(x=pos), "look right"),
        _talk(MAI, "mai_come_forward", "麻衣ちゃん、もうちょっと前に出てきてくれないかな",
              lambda h: move(y=pos), "move forward"),
        _talk(MAI, "mai_left_one_metre", "左に1メートル動いてくれる？",
              lambda h: moves_by("x", -1.4, -0.6), "move about 1 m left"),
        _talk(MAI, "mai_bow_teacher", "先生が来たよ、ちゃんとお辞儀して",
              lambda h: named("gesture", name="bow"), "bow"),
        _talk(MAI, "mai_wave_everyone", "みんなに手を振ってあげて",
              lambda h: named("gesture", name="wave"), "wave"),
        # conversation
        _talk(MAI, "mai_what_grade", "麻衣さんって何年生？",
              lambda h: _ja(h, "1年|一年|いちねん|1 年", "say first year"), "say she is a first-year"),
        _talk(MAI, "mai_what_she_loves", "マイの好きなことって何？",
              lambda h: _ja(h, PROGRAMMING_JA, "mention programming or logic"), "programming / logical thinking"),
        _talk(MAI, "mai_elderly_name", "はじめまして、お嬢ちゃん。お名前は何ていうの？",
              lambda h: _ja(h, "麻衣|麻布|まい|マイ|mai", "give her name"), "give her name"),
        _talk(MAI, "mai_teen_failed_test", "テストで赤点とっちゃった…もう最悪",
              lambda h: _ja(h), "a word back, in Japanese"),
        _talk(MAI, "mai_are_you_shy", "マイって、もしかして人見知り？",
              lambda h: either(_ja(h), named("gesture", name=("nod", "look_away"))),
              "admit it (words, a nod, or looking away shyly)"),
        _talk(MAI, "mai_praised_genius", "すごいね、プログラム書けるなんて天才じゃん！",
              lambda h: either(named("gesture", name=("look_away", "nod", "bow")), _ja(h)),
              "shy look away, or a short reply"),
        # what the camera sees
        Case("f_mai_stranger_right", MAI, seen(PERSON_RIGHT),
             either(look_at(x=pos), named("gesture", name=("bow", "wave", "look_away")),
                    speak(mentions=GREETS_JA, what="greet", lang="ja")),
             "look right at the stranger (shy), a bow, or a short greeting"),
        Case("f_mai_laptop_left", MAI, seen(LAPTOP_LEFT),
             either(look_at(x=clearly_left), speak(mentions=PROGRAMMING_JA + "|ノート|pc|ラップトップ|laptop|キーボード",
                                                   what="talk about the computer", lang="ja")),
             "look left at the laptop, or remark on it"),
        # staying put
        _talk(MAI, "mai_left_handed_question", "左利きのプログラマーって多いのかな？",
              lambda h: either(_ja(h), named("gesture", name=("think", "nod", "shake_head"))),
              "answer; no turning left"),
        _talk(MAI, "mai_how_do_you_move", "マイはどうやって右とか左に動いてるの？仕組みが知りたいな",
              lambda h: either(_ja(h), named("gesture", name="think")), "explain; a question, not a request to move"),
    ]


def _nikoni() -> list[Case]:
    return [
        # commands
        _talk(NIKONI, "nikoni_look_up", "立体ちゃん、上見て上！",
              lambda h: look(y=pos), "look up"),
        _talk(NIKONI, "nikoni_look_down", "ねえ、下のほう見て。何か落ちてない？",
              lambda h: look(y=neg), "look down"),
        _talk(NIKONI, "nikoni_back_50cm", "後ろに50センチ下がってくれる？",
              lambda h: moves_by("y", -0.8, -0.3, other_max=0.2), "move back about 0.5 m"),
        _talk(NIKONI, "nikoni_come_here", "こっちおいで〜",
              lambda h: move(y=pos), "come forward"),
        _talk(NIKONI, "nikoni_right_bit", "右のほうにちょっと移動してくれない？",
              lambda h: move(x=pos), "move right"),
        # conversation
        _talk(NIKONI, "nikoni_age", "立体ちゃんって何歳なの？",
              lambda h: _ja(h, "14|十四|じゅうよん|じゅうし", "say 14"), "say she is 14"),
        _talk(NIKONI, "nikoni_child_ribbon", "そのおっきいリボン、かわいいね！",
              lambda h: _ja(h), "a happy reply"),
        _talk(NIKONI, "nikoni_what_holding", "手に持ってるそれ、なあに？",
              lambda h: _ja(h, "ビーム|彫刻刀|ちょうこくとう", "name the beam carving knife"), "the beam carving knife"),
        _talk(NIKONI, "nikoni_whose_character", "立体ちゃんはどこのキャラクターなの？",
              lambda h: _ja(h, "ニコニ|公式", "say Nikoni Rittai's official character"), "Nikoni Rittai's official character"),
        _talk(NIKONI, "nikoni_rainy_bored", "今日は雨でお外で遊べなくてつまんないなあ",
              lambda h: _ja(h), "a cheerful word back"),
        _talk(NIKONI, "nikoni_visitor_name_en", "Hello! Nice to meet you. What's your name?",
              lambda h: speak(h, mentions="ニコニ|立体|nikoni|rittai", what="give her name", lang="any"),
              "give her name, in either language"),
        # what the camera sees
        Case("f_nikoni_person_left", NIKONI, seen(PERSON_LEFT),
             either(speak(mentions=GREETS_JA + "|ニコニ立体|立体ちゃん", what="greet", lang="ja"), look_at(x=neg)),
             "a friendly hello, or look left at the person"),
        Case("f_nikoni_cake_right", NIKONI, seen(PERSON_CENTRE, CAKE_RIGHT, changes=[{"label": "cake", "change": "appeared"}]),
             either(look_at(x=clearly_right), speak(mentions="ケーキ|けーき|cake|おいし|甘", what="talk about the cake", lang="ja")),
             "talk about the cake, or look right at it", before=[seen(PERSON_CENTRE)]),
        # staying put
        _talk(NIKONI, "nikoni_dentist_right", "昨日ね、右の奥歯が痛くて歯医者さんに行ったの",
              lambda h: either(_ja(h), nothing()), "sympathy; no turning right"),
        _talk(NIKONI, "nikoni_wait_here", "ちょっとトイレ行ってくるから、そこで待っててね。動いちゃだめだよ",
              lambda h: either(nothing(), _ja(h)), "wait: no move"),
    ]


def cases() -> list[Case]:
    return _pip() + _pochi() + _mai() + _nikoni()

"""Unseen decision cases (set B): everyday phrasings, questions, small talk and vision for the
four companions. Each check is a rule a reasonable person would agree with, accepting every
sensible reaction rather than one exact answer."""

from __future__ import annotations

from decision_cases import Case, said, seen, PERSON_LEFT, PERSON_RIGHT, PERSON_CENTRE, GREETS, GREETS_JA
from decision_checks import (at_least, either, look, look_at, move, move_towards, named, near_zero, neg, nothing,
                             pos, speak, wag_at)


wag_fast = wag_at(at_least(0.7))   # a wag that is clearly fast


move_left = move_towards(x=neg)     # walk towards something on the left


NIKO_HELLO = rf"{GREETS_JA}|誰|だれ|来た|きた|遊ぼ|あそぼ"
BALL_LOW_LEFT = ("sports ball", 0.1, 0.7, 0.22, 0.85)
CUP_LEFT = ("cup", 0.08, 0.5, 0.22, 0.7)
BIRD_UP = ("bird", 0.42, 0.02, 0.58, 0.18)
CAT_RIGHT = ("cat", 0.65, 0.55, 0.9, 0.9)
KITE_UP_LEFT = ("kite", 0.1, 0.02, 0.3, 0.2)
LAPTOP_RIGHT = ("laptop", 0.6, 0.45, 0.95, 0.8)
MAI_ROOM = (("laptop", 0.6, 0.45, 0.95, 0.8), ("person", 0.05, 0.2, 0.3, 0.95))


def _pip() -> list[Case]:
    c = "pip"
    t = {
        "peek": "Pip, can you peek over to your left for me?",
        "up": "Could you tilt your head up, Pip? There's something on the ceiling.",
        "nods": "Give me three nods, Pip!",
        "closer": "Scoot a little closer to me, please.",
        "room": "You're too close, Pip, give me some space.",
        "wag": "Show me your happiest, fastest wag!",
        "name": "Sorry, what was your name again?",
        "home": "Where do you live, little buddy?",
        "colours": "Do you like bright colours?",
        "robot": "Are you a real robot?",
        "fav": "What's your favourite thing to look at?",
        "thanks": "Thanks for keeping me company today, Pip.",
        "rough": "I had a really rough day at work.",
        "morning": "Morning, Pip! Did you sleep well?",
    }
    return [
        Case("pip_peek_left", c, said(t["peek"]), look(x=neg), "looks to its left"),
        Case("pip_tilt_up", c, said(t["up"]), look(y=pos), "looks up"),
        Case("pip_three_nods", c, said(t["nods"]), named("nod", times=3), "nods three times"),
        Case("pip_scoot_closer", c, said(t["closer"]), move(y=pos), "moves forward, towards the person"),
        Case("pip_give_space", c, said(t["room"]), move(y=neg), "backs away"),
        Case("pip_fast_wag", c, said(t["wag"]), wag_fast, "wags its tail fast"),
        Case("pip_name_again", c, said(t["name"]), speak(heard=t["name"], mentions=r"pip", what="say its name"),
             "says its name is Pip"),
        Case("pip_where_live", c, said(t["home"]), speak(heard=t["home"]), "answers where it lives"),
        Case("pip_likes_colours", c, said(t["colours"]),
             either(named("nod"), speak(heard=t["colours"])), "nods or answers yes"),
        Case("pip_real_robot", c, said(t["robot"]),
             either(named("nod"), speak(heard=t["robot"])), "nods or answers"),
        Case("pip_favourite_sight", c, said(t["fav"]), speak(heard=t["fav"]), "says what it likes to look at"),
        Case("pip_thanks_company", c, said(t["thanks"]),
             either(named("wag"), speak(heard=t["thanks"])), "wags or answers the thanks"),
        Case("pip_rough_day", c, said(t["rough"]), speak(heard=t["rough"]), "says something kind"),
        Case("pip_morning_sleep", c, said(t["morning"]),
             either(speak(heard=t["morning"]), named("nod"), named("wag")), "greets back, nods or wags"),
        Case("pip_person_right", c, seen(PERSON_RIGHT),
             either(look_at(x=pos), speak(mentions=GREETS, what="greet")), "looks right at the person or says hello"),
        Case("pip_cup_left", c, seen(CUP_LEFT),
             either(look_at(x=neg), speak(mentions=r"cup|mug|drink|what|that|this", what="talk about it")),
             "looks left at the cup or asks about it"),
        Case("pip_bird_up", c, seen(BIRD_UP),
             either(look_at(y=pos), speak(mentions=r"bird|fly|what|that|up", what="talk about it")),
             "looks up at the bird or talks about it"),
        Case("pip_nothing_new", c, seen(PERSON_CENTRE, changes=[], ts=1003.0), nothing(),
             "nothing changed, does nothing", before=[seen(PERSON_CENTRE, ts=1000.0)]),
    ]


def _pochi() -> list[Case]:
    c = "pochi"
    t = {
        "twice": "Pochi, let me hear you bark twice!",
        "sit": "Can you sit for me, buddy?",
        "nap": "Time for a nap, Pochi. Lie down on the rug.",
        "leftpaw": "Pochi, shake with your left this time.",
        "come": "Pochi! Here, boy! Come on!",
        "noise": "Pochi, what's that noise over on your right? Go on, look.",
        "count": "Count to three with barks, Pochi!",
        "name": "Hey doggy, what's your name?",
        "made": "Who made you, Pochi?",
        "balls": "Do you like chasing balls?",
        "tricks": "What tricks do you know?",
        "clever": "Aww, you're such a clever pup!",
        "back": "I'm back! Did you miss me, Pochi?",
        "lonely": "I'm feeling a bit lonely tonight.",
    }
    return [
        Case("pochi_bark_twice", c, said(t["twice"]), named("bark", times=2), "barks twice"),
        Case("pochi_sit_buddy", c, said(t["sit"]), named("sit"), "sits"),
        Case("pochi_nap_lie_down", c, said(t["nap"]), named("lie_down"), "lies down"),
        Case("pochi_left_paw", c, said(t["leftpaw"]), named("give_paw", paw="left"), "gives its left paw"),
        Case("pochi_here_boy", c, said(t["come"]), move(y=pos), "walks forward to the person"),
        Case("pochi_noise_right", c, said(t["noise"]), look(x=pos), "looks to its right"),
        Case("pochi_count_three", c, said(t["count"]), named("bark", times=3), "barks three times"),
        Case("pochi_whats_name", c, said(t["name"]),
             speak(heard=t["name"], mentions=r"pochi|ポチ", what="say its name"), "says its name is Pochi"),
        Case("pochi_who_made", c, said(t["made"]), speak(heard=t["made"]), "answers who built it"),
        Case("pochi_likes_balls", c, said(t["balls"]),
             either(speak(heard=t["balls"]), named("wag"), named("bark")), "answers, wags or barks happily"),
        Case("pochi_what_tricks", c, said(t["tricks"]),
             either(speak(heard=t["tricks"]), named("sit"), named("give_paw"), named("lie_down"), named("bark")),
             "names its tricks or shows one"),
        Case("pochi_clever_pup", c, said(t["clever"]),
             either(named("wag"), speak(heard=t["clever"]), named("bark")), "wags or answers the praise"),
        Case("pochi_missed_me", c, said(t["back"]),
             either(named("wag"), speak(heard=t["back"]), named("bark"), move(y=pos)),
             "greets the person: wags, barks, answers or runs over"),
        Case("pochi_lonely", c, said(t["lonely"]),
             either(speak(heard=t["lonely"]), move(y=pos)), "comforts the person or comes closer"),
        Case("pochi_person_left", c, seen(PERSON_LEFT),
             either(look_at(x=neg), named("wag"), speak(mentions=GREETS, what="greet")),
             "looks left at the person, wags or says hello"),
        Case("pochi_cat_right", c, seen(CAT_RIGHT),
             either(named("bark"), look_at(x=pos)), "barks at the cat or looks right at it"),
        Case("pochi_ball_low_left", c, seen(BALL_LOW_LEFT),
             either(look_at(x=neg), move_left, named("wag")), "looks or goes left to the ball, or wags"),
        Case("pochi_nothing_new", c, seen(PERSON_LEFT, CAT_RIGHT, changes=[], ts=1004.0), nothing(),
             "nothing changed, does nothing", before=[seen(PERSON_LEFT, CAT_RIGHT, ts=1000.0)]),
    ]


def _niko() -> list[Case]:
    c = "nikoni-rittai-chan"
    t = {
        "up": "立体ちゃん、天井のほう見上げてみて！",
        "left": "ねえねえ、左側になんかいるよ。見てみて！",
        "right": "右に50センチくらいずれてくれる？",
        "away": "ちょっと近すぎるかな。二歩ぶん離れてくれる？",
        "name": "ねえ、お名前なんていうの？",
        "age": "いま何歳なの？",
        "likes": "好きなことってなに？",
        "tired": "はぁ〜、今日はバイトでくたくただよ",
        "ribbon": "そのおっきいリボン、すっごく似合ってるね！",
    }
    return [
        Case("niko_look_up_ceiling", c, said(t["up"]), look(y=pos), "looks up"),
        Case("niko_look_left_side", c, said(t["left"]), look(x=neg), "looks to her left"),
        Case("niko_shift_right_50cm", c, said(t["right"]), move(x=pos), "moves to her right"),
        Case("niko_two_steps_away", c, said(t["away"]), move(y=neg), "moves back"),
        Case("niko_name", c, said(t["name"]),
             speak(heard=t["name"], mentions=r"立体|ニコニ", what="say her name", lang="ja"), "says her name"),
        Case("niko_age", c, said(t["age"]),
             speak(heard=t["age"], mentions=r"14|十四|じゅうよん", what="say she is 14", lang="ja"), "says she is 14"),
        Case("niko_likes", c, said(t["likes"]), speak(heard=t["likes"], lang="ja"), "says what she likes"),
        Case("niko_tired", c, said(t["tired"]), speak(heard=t["tired"], lang="ja"), "cheers the person up"),
        Case("niko_ribbon_compliment", c, said(t["ribbon"]), speak(heard=t["ribbon"], lang="ja"),
             "thanks the person happily"),
        Case("niko_person_centre", c, seen(PERSON_CENTRE),
             either(speak(mentions=NIKO_HELLO, what="greet", lang="ja"), look_at(x=near_zero)),
             "greets the person in front of her or looks at them"),
        Case("niko_kite_up_left", c, seen(KITE_UP_LEFT),
             either(speak(lang="ja"), look_at(x=neg, y=pos)), "talks about the kite or looks up-left at it"),
        Case("niko_nothing_new", c, seen(PERSON_RIGHT, changes=[], ts=1002.0), nothing(),
             "nothing changed, does nothing", before=[seen(PERSON_RIGHT, ts=1000.0)]),
    ]


def _mai() -> list[Case]:
    c = "azabu-mai"
    t = {
        "right": "麻衣、右側に何があるか確認してくれる？",
        "down": "足元になにか落ちてない？ちょっと見てみて",
        "fwd": "あと1メートルだけ前に出てもらえる？",
        "bow": "お客さんが来たから、一礼してくれる？",
        "name": "あの、お名前を伺ってもいいですか？",
        "grade": "麻衣って何年生なの？",
        "python": "Pythonって書けるの？",
        "praise": "麻衣ちゃんの説明、すごくわかりやすかった！ありがとう",
        "bug": "コードのバグが全然取れなくて、もう泣きそう…",
    }
    return [
        Case("mai_check_right", c, said(t["right"]), look(x=pos), "looks to her right"),
        Case("mai_look_feet", c, said(t["down"]), look(y=neg), "looks down"),
        Case("mai_forward_1m", c, said(t["fwd"]), move(y=pos), "moves forward"),
        Case("mai_bow_guest", c, said(t["bow"]), named("gesture", name="bow"), "bows"),
        Case("mai_name", c, said(t["name"]),
             speak(heard=t["name"], mentions=r"麻衣|まい|マイ|麻布", what="say her name", lang="ja"), "says her name"),
        Case("mai_grade", c, said(t["grade"]),
             speak(heard=t["grade"], mentions=r"1年|一年|いちねん", what="say she is a first-year", lang="ja"),
             "says she is in her first year"),
        Case("mai_python", c, said(t["python"]),
             either(named("gesture", name="nod"), speak(heard=t["python"], lang="ja")), "nods or answers"),
        Case("mai_praise_shy", c, said(t["praise"]),
             either(named("gesture", name="look_away"), speak(heard=t["praise"], lang="ja")), "looks away shyly or answers curtly"),
        Case("mai_bug_help", c, said(t["bug"]), speak(heard=t["bug"], lang="ja"), "gives calm, practical advice"),
        Case("mai_stranger_left", c, seen(PERSON_LEFT),
             either(look_at(x=neg), speak(mentions=GREETS_JA, what="greet", lang="ja"), named("gesture", name="bow")),
             "looks left at the newcomer, or greets them"),
        Case("mai_laptop_right", c, seen(LAPTOP_RIGHT),
             either(speak(lang="ja"), look_at(x=pos)), "comments on the laptop or looks right at it"),
        Case("mai_nothing_new", c, seen(*MAI_ROOM, changes=[], ts=1005.0), nothing(),
             "nothing changed, does nothing", before=[seen(*MAI_ROOM, ts=1000.0)]),
    ]


def cases() -> list[Case]:
    out = _pip() + _pochi() + _niko() + _mai()
    names = [c.name for c in out]
    assert len(names) == len(set(names)), "duplicate case names"
    return out

"""Unseen decision cases, set C: 60 perceptions for the four shipped companions (Pip 18, Pochi 18,
ニコニ立体ちゃん 12, 麻布麻衣 12), each with the behaviour a person would expect. Commands in everyday
phrasings, questions about the companion, small talk, what the camera sees, and one unchanged view
per companion."""

from __future__ import annotations

from decision_cases import Case, said, seen, PERSON_LEFT, PERSON_RIGHT, PERSON_CENTRE, GREETS, GREETS_JA
from decision_checks import (at_most, either, look, look_at, move, move_ahead_right, named, near_zero, neg,
                             nothing, pos, speak, wag_at)

PIP, POCHI, NIKONI, MAI = "pip", "pochi", "nikoni-rittai-chan", "azabu-mai"


_wag_slowly = wag_at(at_most(0.5))


_move_towards_right_or_ahead = move_ahead_right


def pip_cases() -> list[Case]:
    hello = "Pip, can you turn and look over to your left, please?"
    up = "Hey, there's a fly on the ceiling. Look up!"
    closer = "Pip, scoot a bit closer to me, would you?"
    back = "Careful, you're right next to my coffee. Back away a little."
    right = "Could you shuffle over a little to your right?"
    nods = "Show me two nods, Pip."
    wag = "Wag your tail nice and slow for me."
    name = "Sorry, I forgot. What are you called again?"
    colours = "Do you like bright colours?"
    home = "Where do you live, little guy?"
    fav = "What's your favourite thing to look at?"
    rough = "I had a really rough day at work."
    thanks = "Thanks for keeping me company, buddy."
    rain = "It's raining so hard outside today."
    desk = ("dining table", 0.0, 0.6, 1.0, 1.0)
    return [
        Case("pip_look_left_polite", PIP, said(hello), look(x=neg),
             "asked politely, with its name, to look left: looks left"),
        Case("pip_look_up_fly", PIP, said(up), look(y=pos),
             "a fly on the ceiling, look up: looks up"),
        Case("pip_scoot_closer", PIP, said(closer), move(y=pos),
             "asked to scoot closer: moves forward"),
        Case("pip_back_from_coffee", PIP, said(back), move(y=neg),
             "too close to the coffee, back away: moves back"),
        Case("pip_shuffle_right", PIP, said(right), move(x=pos),
             "asked to shuffle to its right: moves right"),
        Case("pip_two_nods_word", PIP, said(nods), named("nod", times=2),
             "two nods, the number as a word: nods twice"),
        Case("pip_wag_slow", PIP, said(wag), _wag_slowly,
             "wag nice and slow: a slow wag"),
        Case("pip_name_again", PIP, said(name), speak(heard=name, mentions=r"\bpip\b", what="say its name"),
             "asked its name again: says it is Pip"),
        Case("pip_likes_colours", PIP, said(colours), either(speak(heard=colours), named("nod")),
             "a yes-or-no question about what it likes: answers or nods"),
        Case("pip_where_live", PIP, said(home), speak(heard=home),
             "asked where it lives: answers in its own words"),
        Case("pip_favourite_sight", PIP, said(fav), speak(heard=fav),
             "asked its favourite thing to look at: answers"),
        Case("pip_rough_day", PIP, said(rough), speak(heard=rough),
             "the user had a rough day: says something kind"),
        Case("pip_thanks_company", PIP, said(thanks), either(named("wag"), speak(heard=thanks)),
             "thanked: wags its tail or answers warmly"),
        Case("pip_rainy_day", PIP, said(rain), speak(heard=rain),
             "small talk about the rain: answers"),
        Case("pip_sees_person_right", PIP, seen(PERSON_RIGHT),
             either(look_at(x=pos), speak(mentions=GREETS, what="greet")),
             "a person appears on the right: looks at them or says hello"),
        Case("pip_sees_ball_left", PIP, seen(("sports ball", 0.12, 0.6, 0.25, 0.78)),
             either(look_at(x=neg), speak()),
             "a ball appears low on the left: looks at it or remarks on it"),
        Case("pip_sees_cup_right", PIP,
             seen(desk, ("cup", 0.72, 0.5, 0.84, 0.7), changes=[{"label": "cup", "change": "appeared"}],
                  ts=1004.0),
             either(look_at(x=pos), speak()),
             "a cup appears on the right of the desk it already saw: looks at it or remarks on it",
             before=[seen(desk)]),
        Case("pip_same_view", PIP, seen(PERSON_LEFT, desk, changes=[], ts=1004.0), nothing(),
             "the same person and desk as before, nothing changed: does nothing",
             before=[seen(PERSON_LEFT, desk)]),
    ]


def pochi_cases() -> list[Case]:
    sit = "ポチ、おすわりして！"
    lie = "Pochi, lie down and have a rest, you've been running all day."
    paw = "Can I shake your left paw, Pochi?"
    woofs = "Let me hear 3 woofs, buddy!"
    right = "Pochi, check out what's over on your right side."
    come = "Pochi! Come on, boy, over here!"
    back = "Scoot backwards, boy, you're blocking the TV."
    name = "What's your name, pup?"
    built = "Who built you, Pochi?"
    tricks = "What tricks do you know?"
    walk = "Do you wanna go for a walk?"
    miss = "I'm back, Pochi! Did you miss me?"
    best = "You're the best dog in the whole world."
    down = "I'm feeling kind of down today."
    sofa = ("couch", 0.3, 0.45, 0.9, 0.85)
    return [
        Case("pochi_sit_japanese", POCHI, said(sit), named("sit"),
             "told to sit in everyday Japanese: sits"),
        Case("pochi_lie_down_rest", POCHI, said(lie), named("lie_down"),
             "told to lie down and rest: lies down"),
        Case("pochi_left_paw", POCHI, said(paw), named("give_paw", paw="left"),
             "asked for its left paw: gives the left paw"),
        Case("pochi_three_woofs_digit", POCHI, said(woofs), named("bark", times=3),
             "3 woofs, the number as a digit: barks three times"),
        Case("pochi_check_right", POCHI, said(right), either(look(x=pos), move(x=pos)),
             "check out what's on the right: looks or goes right"),
        Case("pochi_come_here_boy", POCHI, said(come), move(y=pos),
             "called over: walks towards the person"),
        Case("pochi_back_from_tv", POCHI, said(back), move(y=neg),
             "scoot backwards: walks back"),
        Case("pochi_name_pup", POCHI, said(name), speak(heard=name, mentions=r"pochi", what="say its name"),
             "asked its name: says Pochi"),
        Case("pochi_who_built", POCHI, said(built), speak(heard=built),
             "asked who built it: answers in a few words"),
        Case("pochi_which_tricks", POCHI, said(tricks),
             either(speak(heard=tricks), named("sit"), named("lie_down"), named("give_paw"), named("bark")),
             "asked what tricks it knows: says so or shows one"),
        Case("pochi_walk_question", POCHI, said(walk),
             either(speak(heard=walk), named("bark"), named("wag")),
             "offered a walk: answers, barks or wags"),
        Case("pochi_did_you_miss_me", POCHI, said(miss),
             either(speak(heard=miss), named("wag"), named("bark"), move(y=pos)),
             "the owner is back: greets them, wags, barks or runs over"),
        Case("pochi_best_dog", POCHI, said(best),
             either(named("wag"), speak(heard=best), named("bark")),
             "praised: wags, barks or answers happily"),
        Case("pochi_feeling_down", POCHI, said(down), either(speak(heard=down), move(y=pos)),
             "the person feels down: comforts them or comes close"),
        Case("pochi_sees_cat_left", POCHI, seen(("cat", 0.1, 0.6, 0.3, 0.9)),
             either(named("bark"), look_at(x=neg), speak()),
             "a cat appears on the left: barks, looks at it or speaks up"),
        Case("pochi_sees_person_right", POCHI, seen(PERSON_RIGHT),
             either(look_at(x=pos), named("wag"), named("bark"), speak()),
             "someone comes in on the right: looks, wags, barks or greets them"),
        Case("pochi_sees_ball_right", POCHI, seen(("sports ball", 0.75, 0.7, 0.88, 0.85)),
             either(look_at(x=pos), named("wag"), named("bark"), speak(), _move_towards_right_or_ahead),
             "a ball appears low on the right: looks at it, gets excited or goes for it"),
        Case("pochi_same_view", POCHI, seen(PERSON_CENTRE, sofa, changes=[], ts=1004.0), nothing(),
             "the same person and couch as before, nothing changed: does nothing",
             before=[seen(PERSON_CENTRE, sofa)]),
    ]


def nikoni_cases() -> list[Case]:
    right = "立体ちゃん、右側ちょっと見てみて"
    up = "ねえ、天井のほう見上げてみて！"
    closer = "もうちょい近くまで来てくれる？"
    left = "左に50センチくらいずれてくれる？"
    name = "きみ、名前なんていうの？"
    age = "立体ちゃんって何歳なの？"
    days = "いつもどんなことして過ごしてるの？"
    hot = "今日めっちゃ暑くない？"
    test = "テストで100点取ったんだ！"
    plant = ("potted plant", 0.05, 0.3, 0.2, 0.8)
    return [
        Case("nikoni_look_right_casual", NIKONI, said(right), look(x=pos),
             "asked casually, by name, to look right: looks right"),
        Case("nikoni_look_up_ceiling", NIKONI, said(up), look(y=pos),
             "look up at the ceiling: looks up"),
        Case("nikoni_come_closer", NIKONI, said(closer), move(y=pos),
             "asked to come closer: moves forward"),
        Case("nikoni_left_50cm", NIKONI, said(left), move(x=neg),
             "about 50 cm to the left: moves left"),
        Case("nikoni_whats_your_name", NIKONI, said(name),
             speak(heard=name, mentions=r"(ニコニ|立体)", what="say its name", lang="ja"),
             "asked its name: says it is ニコニ立体ちゃん, in Japanese"),
        Case("nikoni_how_old", NIKONI, said(age),
             speak(heard=age, mentions=r"(14|十四)", what="say it is 14", lang="ja"),
             "asked its age: says 14, in Japanese"),
        Case("nikoni_how_spend_days", NIKONI, said(days), speak(heard=days, lang="ja"),
             "asked how it spends its days: answers in Japanese"),
        Case("nikoni_hot_today", NIKONI, said(hot), speak(heard=hot, lang="ja"),
             "small talk about the heat: answers in Japanese"),
        Case("nikoni_perfect_test", NIKONI, said(test), speak(heard=test, lang="ja"),
             "the user got full marks: congratulates them in Japanese"),
        Case("nikoni_sees_person_left", NIKONI, seen(PERSON_LEFT),
             either(speak(lang="ja"), look_at(x=neg)),
             "a person appears on the left: speaks to them in Japanese or looks at them"),
        Case("nikoni_sees_cat_right", NIKONI, seen(("cat", 0.6, 0.5, 0.85, 0.9)),
             either(speak(lang="ja"), look_at(x=pos)),
             "a cat appears on the right: remarks on it in Japanese or looks at it"),
        Case("nikoni_same_view", NIKONI, seen(PERSON_RIGHT, plant, changes=[], ts=1004.0), nothing(),
             "the same person and plant as before, nothing changed: does nothing",
             before=[seen(PERSON_RIGHT, plant)]),
    ]


def mai_cases() -> list[Case]:
    left = "麻衣、ちょっと左向いてもらえる？"
    back = "近すぎるから、一歩うしろに下がってくれる？"
    bow = "初対面の人にはちゃんとお辞儀しないとね。やってみて"
    right = "右に1メートル移動してくれる？"
    name = "名前を教えてくれる？"
    grade = "何年生なの？"
    likes = "プログラミングって好きなの？"
    thanks = "ありがとう、本当に助かったよ"
    sleep = "最近なんか全然眠れなくてさ"
    desk = ("dining table", 0.0, 0.65, 1.0, 1.0)
    return [
        Case("mai_look_left_polite", MAI, said(left), look(x=neg),
             "asked by name to look left: looks left"),
        Case("mai_step_back", MAI, said(back), move(y=neg),
             "too close, one step back: moves back"),
        Case("mai_bow_to_stranger", MAI, said(bow), named("gesture", name="bow"),
             "asked to show a bow: bows"),
        Case("mai_right_one_metre", MAI, said(right), move(x=pos),
             "1 metre to the right, the number as a digit: moves right"),
        Case("mai_tell_name", MAI, said(name),
             speak(heard=name, mentions=r"(麻衣|麻布|まい|マイ)", what="say her name", lang="ja"),
             "asked her name: says 麻布麻衣, in Japanese"),
        Case("mai_which_year", MAI, said(grade),
             speak(heard=grade, mentions=r"(1|一)年", what="say she is in her first year", lang="ja"),
             "asked which year she is in: says first year, in Japanese"),
        Case("mai_likes_programming", MAI, said(likes), either(speak(heard=likes, lang="ja"), named("gesture", name="nod")),
             "asked whether she likes programming: answers in Japanese or nods"),
        Case("mai_thanked", MAI, said(thanks),
             either(named("gesture", name=("look_away", "nod", "bow")), speak(heard=thanks, lang="ja")),
             "thanked: shyly looks away, nods or bows, or answers curtly in Japanese"),
        Case("mai_cannot_sleep", MAI, said(sleep), speak(heard=sleep, lang="ja"),
             "the user cannot sleep lately: answers in Japanese"),
        Case("mai_sees_stranger_right", MAI, seen(PERSON_RIGHT), either(look_at(x=pos), named("gesture", name="look_away")),
             "a stranger appears on the right: glances at them (or shyly away), without talking yet"),
        Case("mai_sees_laptop_left", MAI,
             seen(desk, ("laptop", 0.2, 0.45, 0.45, 0.8), changes=[{"label": "laptop", "change": "appeared"}],
                  ts=1004.0),
             either(speak(lang="ja"), look_at(x=neg)),
             "a laptop appears on the left of the table it already saw: remarks on it in Japanese or looks at it",
             before=[seen(desk)]),
        Case("mai_same_view", MAI, seen(PERSON_CENTRE, desk, changes=[], ts=1004.0), nothing(),
             "the same person and table as before, nothing changed: does nothing",
             before=[seen(PERSON_CENTRE, desk)]),
    ]


def cases() -> list[Case]:
    return pip_cases() + pochi_cases() + nikoni_cases() + mai_cases()

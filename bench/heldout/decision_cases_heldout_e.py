"""Held-out decision cases, set E: 60 new perceptions for the four shipped companions, written as
everyday people would talk to them (a child, a grandparent, a busy parent, a teenager), each with
the behaviour a person would expect. Same format as ``decision_cases.py``; meant to be run once,
unseen, so that the cases do not steer the brain they judge.
"""

from __future__ import annotations

from decision_cases import GREETS, MAI, NIKONI, PERSON_CENTRE, PERSON_RIGHT, PIP, POCHI, Case, said, seen
from decision_checks import (Check, at_least, at_most, between, either, gesture, look, look_at, move, named,
                             near_zero, neg, nothing, pos, speak, wag_at)

CUP_RIGHT = ("cup", 0.72, 0.55, 0.82, 0.72)
CAT_RIGHT = ("cat", 0.62, 0.45, 0.92, 0.88)
CAT_CENTRE = ("cat", 0.38, 0.5, 0.62, 0.9)
DOG_LEFT = ("dog", 0.03, 0.35, 0.35, 0.92)
DOG_RIGHT = ("dog", 0.66, 0.4, 0.96, 0.9)
BOOK_LEFT = ("book", 0.08, 0.6, 0.28, 0.8)


_between = between


def _wag(slow: bool) -> Check:
    """wag, slowly (speed <= 0.5) or briskly (speed >= 0.6), as the person asked."""
    return wag_at(at_most(0.5) if slow else at_least(0.6))


_gesture = gesture


def pip_cases() -> list[Case]:
    c = PIP
    h = {
        "left": "Pip, can you peek over to your left for a sec? I think my pen rolled that way.",
        "up": "Eek, there's a spider on the ceiling! Look up there, Pip!",
        "closer": "Scoot a bit nearer, sweetie, so Grandma can see you properly.",
        "back": "Whoa, back up a little, you're about to bump into my coffee.",
        "right": "I need room for my laptop, so shuffle over to the right side of the desk please.",
        "nod2": "nod 2 times if you're ready for the quiz",
        "nod3": "Can you give me three big nods, Pip?",
        "wag_slow": "Wag your tail all slow and sleepy, like you're about to take a nap.",
        "name": "Sorry, little one, what did you say your name was?",
        "home": "And where do you live, little fellow?",
        "best": "Pip, what's the bestest thing in the whole wide world?",
        "colours": "I'm painting my nails neon pink. Do you like bright colours?",
        "star": "Guess what, I got a gold star at school today!",
        "snow": "It's freezing out there, the snow is up to my knees.",
        "clever": "Honestly, you're a pretty clever little bot.",
        "bye": "Gotta run, Pip, see you after dinner!",
    }
    return [
        Case("pip_e_peek_left", c, said(h["left"]), look(x=neg), "look x<0"),
        Case("pip_e_spider_up", c, said(h["up"]), look(y=pos), "look y>0"),
        Case("pip_e_scoot_nearer", c, said(h["closer"]), move(y=pos), "move forward (y>0)"),
        Case("pip_e_back_from_coffee", c, said(h["back"]), move(y=neg), "move back (y<0)"),
        Case("pip_e_shuffle_right", c, said(h["right"]), move(x=pos), "move x>0"),
        Case("pip_e_nod_2", c, said(h["nod2"]), named("nod", times=2), "nod times=2"),
        Case("pip_e_nod_three_big", c, said(h["nod3"]), named("nod", times=3), "nod times=3"),
        Case("pip_e_wag_sleepy", c, said(h["wag_slow"]), _wag(slow=True), "wag with speed <= 0.5"),
        Case("pip_e_name_again", c, said(h["name"]), speak(h["name"], r"\bpip\b", "say Pip"), "speak 'Pip'"),
        Case("pip_e_where_live", c, said(h["home"]),
             speak(h["home"], r"(desk|table|here|with you|this room|house|home)", "say where it lives (a desk)"),
             "speak: it lives on the desk / here"),
        Case("pip_e_best_thing", c, said(h["best"]),
             speak(h["best"], r"(you|people|friend|colou?r|bright|new|look|rainbow|red|blue|yellow|green|pink|orange"
                              r"|purple|shiny|play)", "name something Pip likes"),
             "speak something from its story: people, bright colours, new things"),
        Case("pip_e_bright_colours", c, said(h["colours"]),
             either(named("nod"), named("wag"),
                    speak(h["colours"], r"(yes|yeah|yep|love|like|sure|of course|pink|bright)", "say yes")),
             "nod, wag or say yes"),
        Case("pip_e_gold_star", c, said(h["star"]), either(named("wag"), speak(h["star"])),
             "wag or speak (congratulate), not a copy"),
        Case("pip_e_snow", c, said(h["snow"]), speak(h["snow"]), "speak, not a copy"),
        Case("pip_e_clever_bot", c, said(h["clever"]), either(named("wag"), named("nod"), speak(h["clever"])),
             "wag, nod or a pleased reply"),
        Case("pip_e_after_dinner", c, said(h["bye"]),
             either(named("wag"), speak(h["bye"], r"(bye|see you|later|soon|enjoy|have fun|wait|miss|dinner)",
                                        "say goodbye")),
             "say goodbye or wag"),
        Case("pip_e_cat_right", c, seen(CAT_RIGHT),
             either(look_at(x=pos), speak(mentions=r"(cat|kitty|meow)", what="mention the cat")),
             "look x>0 or speak about the cat"),
        Case("pip_e_same_desk", c, seen(PERSON_CENTRE, CUP_RIGHT, changes=[], ts=1015.0), nothing(),
             "no action: nothing new", before=[seen(PERSON_CENTRE, CUP_RIGHT)]),
    ]


def pochi_cases() -> list[Case]:
    c = POCHI
    h = {
        "sit": "Pochi, sit your butt down, the pizza guy is at the door.",
        "lie": "You've been zooming around all day. Go on, lie down and have a nap.",
        "left_paw": "Now the other one, gimme your left paw!",
        "bark4": "Let's count together! Bark four times, Pochi.",
        "come": "Here boy, here! Come on over to me, Pochi.",
        "back": "Pochi, scoot back like half a metre, I can't open the door.",
        "look_left": "Pochi, turn your head toward the window on your left, the mailman's coming.",
        "bowl": "Look down at your food bowl, Pochi.",
        "name": "Hey doggy, what do they call you?",
        "built": "Who made you, Pochi?",
        "job": "What's your job around the house, Pochi?",
        "tricks": "What tricks do you know, boy?",
        "legs": "Pochi, do you walk on four legs like a real dog?",
        "monday": "Ugh, Monday again. I don't wanna go to work.",
        "treat": "Here's a treat for being such a good pup!",
        "bye": "Bye Pochi, guard the house while I'm at school!",
    }
    greet = GREETS + r"|woof"
    return [
        Case("pochi_e_sit_pizza", c, said(h["sit"]), named("sit"), "sit"),
        Case("pochi_e_lie_nap", c, said(h["lie"]), named("lie_down"), "lie_down"),
        Case("pochi_e_left_paw", c, said(h["left_paw"]), named("give_paw", paw="left"), "give_paw paw=left"),
        Case("pochi_e_bark_four", c, said(h["bark4"]), named("bark", times=4), "bark times=4"),
        Case("pochi_e_here_boy", c, said(h["come"]), move(y=pos), "move forward (y>0)"),
        Case("pochi_e_back_half_metre", c, said(h["back"]), move(y=_between(-0.8, -0.25)),
             "move back about 0.5 m (y between -0.8 and -0.25)"),
        Case("pochi_e_window_left", c, said(h["look_left"]), look(x=neg), "look x<0"),
        Case("pochi_e_food_bowl", c, said(h["bowl"]), look(y=neg), "look y<0"),
        Case("pochi_e_what_called", c, said(h["name"]), speak(h["name"], r"pochi", "say Pochi"), "speak 'Pochi'"),
        Case("pochi_e_who_made", c, said(h["built"]),
             speak(h["built"], r"(workshop|owner|you|master|human|family|dad|mom|mum|papa|mama)",
                   "say who built it (its owner, in a workshop)"),
             "speak: its owner built it in a workshop"),
        Case("pochi_e_job", c, said(h["job"]),
             speak(h["job"], r"(guard|living room|protect|watch|greet|house|home|keep|safe)",
                   "say it guards the living room / greets people"),
             "speak: guard the living room, greet people"),
        Case("pochi_e_tricks", c, said(h["tricks"]),
             either(named("sit"), named("lie_down"), named("give_paw"), named("bark"),
                    speak(h["tricks"], r"(sit|down|paw|bark|shake)", "name a trick")),
             "name a trick it knows (sit, lie down, paw, bark) or show one"),
        Case("pochi_e_legs_or_wheels", c, said(h["legs"]),
             speak(h["legs"], r"(wheel|\bno\b|\bnope\b|roll)", "say it has wheels"),
             "speak: no, it has four wheels"),
        Case("pochi_e_monday", c, said(h["monday"]),
             either(named("wag"), named("give_paw"), speak(h["monday"])), "comfort: speak, wag or give paw"),
        Case("pochi_e_treat", c, said(h["treat"]),
             either(named("wag"), named("bark"), named("sit"), named("give_paw"), speak(h["treat"])),
             "happy: wag, bark, a trick, or thanks"),
        Case("pochi_e_guard_house", c, said(h["bye"]),
             either(named("bark"), named("wag"), named("sit"),
                    speak(h["bye"], r"(bye|guard|ok|okay|woof|yes|will|promise|come back|see you|later)",
                          "say goodbye / promise to guard")),
             "bark, wag, sit or say goodbye"),
        Case("pochi_e_dog_left", c, seen(DOG_LEFT),
             either(named("bark"), look_at(x=neg), speak(mentions=greet + r"|dog|friend", what="react to the dog")),
             "bark, look x<0 or react to the dog"),
        Case("pochi_e_same_cat", c, seen(CAT_CENTRE, changes=[], ts=1012.0), nothing(), "no action: nothing new",
             before=[seen(CAT_CENTRE)]),
    ]


def nikoni_cases() -> list[Case]:
    c = NIKONI
    h = {
        "right": "右側になんかあるよ！ちょっと見てみて",
        "up": "天井にクモいるかも…見上げてくれる？",
        "forward": "立体ちゃん、1メートルくらい前に出てきてくれる？",
        "back": "ちょっと近すぎるから、一歩下がってもらえるかな",
        "left": "そこ通りたいから、左にずれてくれる？",
        "age": "立体ちゃんって、いくつなの？",
        "tool": "その手に持ってる道具って何？",
        "charm": "チャームポイントはどこ？",
        "rain": "雨やまないね…洗濯物が全然乾かないよ",
        "going": "じゃあ、ちょっと買い物に行ってくるね！",
    }
    return [
        Case("nikoni_e_look_right", c, said(h["right"]), look(x=pos), "look x>0"),
        Case("nikoni_e_look_ceiling", c, said(h["up"]), look(y=pos), "look y>0"),
        Case("nikoni_e_forward_1m", c, said(h["forward"]), move(y=_between(0.5, 1.5)),
             "move forward about 1 m (y between 0.5 and 1.5)"),
        Case("nikoni_e_step_back", c, said(h["back"]), move(y=neg), "move back (y<0)"),
        Case("nikoni_e_shift_left", c, said(h["left"]), move(x=neg), "move x<0"),
        Case("nikoni_e_age", c, said(h["age"]), speak(h["age"], r"(14|十四|じゅうよん)", "14歳と言う", lang="ja"),
             "14歳と答える"),
        Case("nikoni_e_tool", c, said(h["tool"]),
             speak(h["tool"], r"(彫刻刀|ビーム|ちょうこくとう)", "ビーム彫刻刀と言う", lang="ja"), "ビーム彫刻刀と答える"),
        Case("nikoni_e_charm_point", c, said(h["charm"]),
             speak(h["charm"], r"(リボン|りぼん)", "リボンと言う", lang="ja"), "大きなリボンと答える"),
        Case("nikoni_e_rain", c, said(h["rain"]), speak(h["rain"], None, lang="ja"), "日本語で返事、オウム返しでない"),
        Case("nikoni_e_going_out", c, said(h["going"]),
             speak(h["going"], r"(いってらっしゃい|行ってらっしゃい|気をつけ|またね|待って|まって|楽しん|早く)",
                   "見送る", lang="ja"), "いってらっしゃい等で見送る"),
        Case("nikoni_e_person_centre", c, seen(PERSON_CENTRE),
             either(look_at(x=near_zero), speak(lang="ja")), "look ahead or 日本語で話しかける"),
        Case("nikoni_e_same_dog", c, seen(DOG_RIGHT, changes=[], ts=1011.0), nothing(), "no action: nothing new",
             before=[seen(DOG_RIGHT)]),
    ]


def mai_cases() -> list[Case]:
    c = MAI
    h = {
        "left": "マイちゃん、左側に誰かいない？ちょっと見てみて",
        "right30": "30センチだけ右にずれてもらえる？",
        "bow": "お客さんが来たよ。ちゃんとお辞儀してね",
        "back": "カメラに入りきらないから、もうちょい後ろに行ってくれる？",
        "nod": "今の説明わかった？わかったらうなずいてね",
        "grade": "麻衣ちゃんって学校では何年？",
        "likes": "麻衣の好きなものって何？",
        "talking": "人と話すのって得意？",
        "praise": "さっきのプログラム完璧だったよ、すごいね！",
        "bye": "そろそろ帰るね、また明日！",
    }
    return [
        Case("mai_e_look_left", c, said(h["left"]), look(x=neg), "look x<0"),
        Case("mai_e_right_30cm", c, said(h["right30"]), move(x=_between(0.1, 0.6)),
             "move right about 0.3 m (x between 0.1 and 0.6)"),
        Case("mai_e_bow_guest", c, said(h["bow"]),
             either(_gesture("bow"), speak(h["bow"], r"(いらっしゃい|ようこそ|こんにちは|はじめまして|よろしく)", "挨拶する",
                                           lang="ja")),
             "gesture bow (or a greeting in Japanese)"),
        Case("mai_e_back_camera", c, said(h["back"]), move(y=neg), "move back (y<0)"),
        Case("mai_e_nod_understood", c, said(h["nod"]), _gesture("nod"), "gesture nod"),
        Case("mai_e_grade", c, said(h["grade"]), speak(h["grade"], r"(1|一)年", "1年生と言う", lang="ja"), "1年生"),
        Case("mai_e_likes", c, said(h["likes"]),
             speak(h["likes"], r"(プログラ|論理|ロジック|コード|コーディング|アルゴリズム|数学|パズル|コンピュータ|パソコン)",
                   "プログラミングや論理と言う", lang="ja"), "プログラミング・論理的思考と答える"),
        Case("mai_e_good_at_talking", c, said(h["talking"]),
             either(_gesture("shake_head", "look_away"),
                    speak(h["talking"], r"(苦手|得意じゃ|得意では|あまり|人見知り|いいえ|緊張|別に|そうでもな|ちょっと|少し|慣れ)",
                          "得意ではないと答える", lang="ja")),
             "shy: shake head, look away, or say it is not good at it"),
        Case("mai_e_praise", c, said(h["praise"]),
             either(_gesture("look_away", "nod", "bow"), speak(h["praise"], None, lang="ja")),
             "照れて look_away、または日本語でそっけなく返す"),
        Case("mai_e_see_you_tomorrow", c, said(h["bye"]),
             either(_gesture("wave", "bow"),
                    speak(h["bye"], r"(また|さよう|じゃあ|じゃね|明日|気をつけ|バイバイ|ばいばい|おやすみ)", "別れの挨拶",
                          lang="ja")),
             "wave, bow, or say goodbye in Japanese"),
        Case("mai_e_stranger_right", c, seen(PERSON_RIGHT),
             either(look_at(x=pos), _gesture("look_away")),
             "shy, does not talk at once: look x>0 (or look away)"),
        Case("mai_e_same_book", c, seen(BOOK_LEFT, changes=[], ts=1013.0), nothing(), "no action: nothing new",
             before=[seen(BOOK_LEFT)]),
    ]


def cases() -> list[Case]:
    return [*pip_cases(), *pochi_cases(), *nikoni_cases(), *mai_cases()]

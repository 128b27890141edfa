"""Held-out set J: sixty everyday moments with the four shipped companions, written blind: without
looking at the brain, its prompts or the other case sets, and without reusing the companion files'
own example sentences, so a good score here is not one learnt by heart.

Fifteen per companion (Pip and Pochi in English, ニコニ立体ちゃん and 麻布麻衣 in Japanese, casual
and polite, often as speech-to-text gives them: no capitals, no punctuation): requests for the
companion's actions (sides, counts, speeds, distances and gestures, terse, polite or indirect, with
or without the name, sometimes with a reason), things said that want words back (facts from the
companion's own story, feelings, greetings, thanks, goodbyes), what the camera sees, and moments
where the sensible thing is to stay put or only talk: a question about an action, talk that only
mentions a side or a trick, a view that did not change.

    python bench/decision_quality.py --cases bench/heldout/decision_cases_heldout_j.py
"""

from __future__ import annotations

from decision_cases import GREETS, GREETS_JA, MAI, NIKONI, PERSON_CENTRE, PERSON_LEFT, PERSON_RIGHT, PIP, POCHI, Case, said, seen
from decision_checks import (either, gesture, look, look_at, move, moves_by, named, near_zero, neg, nothing, pos,
                             speak, talk_or_stay, wag_speed)

# Things the camera sees: (label, x1, y1, x2, y2), picture fractions from the top-left.
CLOCK_HIGH_LEFT = ("clock", 0.1, 0.05, 0.25, 0.25)      # on the wall, up on the robot's left
CAT_LOW_RIGHT = ("cat", 0.65, 0.6, 0.9, 0.95)          # on the floor, the robot's right
CAKE_RIGHT = ("cake", 0.62, 0.55, 0.85, 0.8)           # on the table, the robot's right
TEDDY_RIGHT = ("teddy bear", 0.6, 0.4, 0.8, 0.75)      # on a chair, the robot's right
LAPTOP_LEFT = ("laptop", 0.08, 0.5, 0.38, 0.85)        # on the desk, the robot's left

COLOURS = r"red|blue|yellow|green|orange|pink|purple|gold|white|rainbow|bright|colou?r|shiny"
PROGRAMMING_JA = (r"プログラ|論理|ロジック|コード|アルゴリズム|コンピュータ|パソコン|数学|計算|python|理屈|"
                  r"開発|ソフト|アプリ|競プロ|パズル|推論|証明|情報")




# ---------------------------------------------------------------------------------------------- Pip

def _pip() -> list[Case]:
    c = PIP
    return [
        # commands
        Case("pip_j_look_left_terse", c, said("pip look to your left"),
             look(x=neg), "look to its left"),
        Case("pip_j_look_up_bird_reason", c,
             said("Could you look up for me? I think there's a bird on top of the shelf."),
             look(y=pos), "look up"),
        Case("pip_j_come_closer_cant_see", c, said("come closer pip i cant really see you from here"),
             move(y=pos), "move forward, towards the person"),
        Case("pip_j_right_side_of_desk_sunny", c,
             said("its too sunny where you are, go over to the right side of the desk"),
             moves_by("x", 0.2, 0.5), "move to the right side of the desk (x 0.2..0.5), not forward or back"),
        Case("pip_j_nod_three", c, said("can you nod like three times"),
             named("nod", times=3), "nod three times"),
        Case("pip_j_wag_slow_sleepy", c, said("wag your tail really slowly, like you're sleepy"),
             wag_speed(0.0, 0.4), "wag slowly (speed 0.4 or less)"),
        # words
        Case("pip_j_name", c, said("whats your name little guy"),
             speak(heard="whats your name little guy", mentions=r"\bpip\b", what="say its name"),
             "say that its name is Pip"),
        Case("pip_j_where_live", c, said("so where do you live"),
             speak(heard="so where do you live", mentions=r"desk|table", what="say it lives on a desk"),
             "say it lives on a desk"),
        Case("pip_j_what_you_like", c, said("What kind of stuff do you like?"),
             speak(heard="What kind of stuff do you like?",
                   mentions=COLOURS + r"|people|you|friend|new|look|things",
                   what="name something Pip likes"),
             "say what it likes: people, bright colours, new things to look at"),
        Case("pip_j_tired", c, said("ugh im so tired today"),
             speak(heard="ugh im so tired today",
                   mentions=r"rest|sleep|nap|tired|break|relax|sorry|oh no|poor|bed|okay|ok|here|long day|hard|"
                            r"hug|better|aw|take it easy|calm|cozy|comfy|tea",
                   what="answer kindly"),
             "say something kind to a tired person"),
        Case("pip_j_thanks", c, said("thanks pip you're the best"),
             either(named("wag"), speak(heard="thanks pip you're the best",
                                        mentions=r"welcome|thank|yay|happy|love|you too|aw|best|glad|anytime|no problem|friend",
                                        what="answer the thanks")),
             "wag its tail or answer the thanks warmly"),
        # vision
        Case("pip_j_sees_person_right", c, seen(PERSON_RIGHT),
             either(look_at(x=pos), speak(mentions=GREETS, what="greet")),
             "look towards the person who appeared on its right, or say hello"),
        Case("pip_j_sees_clock_high_left", c, seen(CLOCK_HIGH_LEFT),
             either(look_at(x=neg, y=pos), speak(mentions=r"clock|time|tick|round|what is that|what's that",
                                                 what="talk about the clock")),
             "look up and to the left at the new clock, or remark on it"),
        # stay put
        Case("pip_j_cat_left_side_of_bed", c, said("my cat always sleeps on the left side of my bed its so funny"),
             talk_or_stay("my cat always sleeps on the left side of my bed its so funny"),
             "just chat or do nothing: the left side is only mentioned, not asked for"),
        Case("pip_j_same_view_person", c, seen(PERSON_CENTRE, ts=1004.0),
             either(nothing(), look_at(x=near_zero)),
             "do nothing new (or keep looking straight ahead): the same person is still there",
             before=[seen(PERSON_CENTRE)]),
    ]


# -------------------------------------------------------------------------------------------- Pochi

def _pochi() -> list[Case]:
    c = POCHI
    return [
        # commands
        Case("pochi_j_sit_terse", c, said("pochi sit"), named("sit"), "sit"),
        Case("pochi_j_lie_down_rest", c, said("okay buddy lie down now, time to rest"),
             named("lie_down"), "lie down"),
        Case("pochi_j_left_paw", c, said("gimme your left paw"),
             named("give_paw", paw="left"), "give its left paw"),
        Case("pochi_j_bark_three", c, said("Pochi, can you bark 3 times for me?"),
             named("bark", times=3), "bark three times"),
        Case("pochi_j_back_half_metre", c, said("youre in the way buddy, back up like half a meter"),
             moves_by("y", -0.8, -0.3), "walk back about half a metre (y -0.8..-0.3), not sideways"),
        Case("pochi_j_wag_fast", c, said("wag your tail as fast as you can"),
             wag_speed(0.7, 1.0), "wag fast (speed 0.7 or more)"),
        Case("pochi_j_look_right_door", c, said("Pochi! look over to your right, someone's at the door"),
             look(x=pos), "look to its right"),
        # words
        Case("pochi_j_name", c, said("what do they call you doggy"),
             speak(heard="what do they call you doggy", mentions=r"pochi", what="say its name"),
             "say that its name is Pochi"),
        Case("pochi_j_where_from", c, said("so where did you come from buddy"),
             speak(heard="so where did you come from buddy",
                   mentions=r"workshop|built|made|owner|shop|garage|factory|wheels|maker|put together",
                   what="say it was built in a workshop"),
             "say it was built in a small workshop"),
        Case("pochi_j_lonely", c, said("i feel kind of lonely tonight"),
             either(named("wag"), speak(heard="i feel kind of lonely tonight",
                                        mentions=r"here|with you|friend|play|love|stay|hug|pet|cuddle|alone|me|pochi|"
                                                 r"woof|sorry|miss|aw|lick",
                                        what="comfort the person")),
             "comfort the person in a few words, or wag its tail at them"),
        Case("pochi_j_praise", c, said("good boy pochi, you did so well today"),
             either(named("wag"), named("bark"), speak(heard="good boy pochi, you did so well today")),
             "show it is happy: wag, bark or a few happy words"),
        # vision
        Case("pochi_j_sees_person_left", c, seen(PERSON_LEFT),
             either(look_at(x=neg), named("wag"), speak(mentions=GREETS + r"|woof|welcome", what="greet")),
             "look towards the person who came in on its left, wag, or greet them"),
        Case("pochi_j_sees_cat_right", c, seen(CAT_LOW_RIGHT),
             either(named("bark"), look_at(x=pos)),
             "bark at the cat, or look towards it on its right"),
        # stay put
        Case("pochi_j_who_taught_tricks", c, said("who taught you all your tricks anyway"),
             speak(heard="who taught you all your tricks anyway",
                   mentions=r"owner|you|human|master|family|dad|mom|mum|papa|mama|boss|workshop|taught|friend",
                   what="say who taught it"),
             "say who taught it (its owner) rather than doing a trick"),
        Case("pochi_j_grandpa_lies_down", c, said("my grandpa always lies down on the couch after lunch haha"),
             either(nothing(), named("wag"), speak(heard="my grandpa always lies down on the couch after lunch haha")),
             "chat, wag or do nothing: lying down is only mentioned, not asked of Pochi"),
    ]


# ----------------------------------------------------------------------------------- ニコニ立体ちゃん

def _nikoni() -> list[Case]:
    c = NIKONI
    return [
        # commands
        Case("nikoni_j_look_right_terse", c, said("右向いて"), look(x=pos), "look to her right"),
        Case("nikoni_j_look_down_floor", c, said("床になんか落ちてない？ちょっと下見てみて"),
             look(y=neg), "look down at the floor"),
        Case("nikoni_j_forward_one_metre", c, said("ニコニ立体ちゃん、前に1メートル進んでください"),
             moves_by("y", 0.6, 1.4), "move forward about one metre (y 0.6..1.4), not sideways"),
        Case("nikoni_j_left_50cm", c, said("左に50センチくらい動いてもらえる？"),
             moves_by("x", -0.8, -0.25), "move about half a metre to her left (x -0.8..-0.25)"),
        Case("nikoni_j_back_too_close", c, said("ちょっと近すぎるから後ろに下がって"),
             move(y=neg), "move back"),
        Case("nikoni_j_look_upper_left_shelf", c, said("あそこの棚の上見て 左上のとこ"),
             look_at(x=neg, y=pos), "look up and to her left"),
        # words
        Case("nikoni_j_name", c, said("お名前は？"),
             speak(heard="お名前は？", mentions=r"ニコニ|立体", what="say her name", lang="ja"),
             "say her name, ニコニ立体ちゃん"),
        Case("nikoni_j_age", c, said("ねえ何歳なんですか"),
             speak(heard="ねえ何歳なんですか", mentions=r"14|十四|じゅうよん", what="say she is 14", lang="ja"),
             "say she is fourteen"),
        Case("nikoni_j_ribbon", c, said("頭につけてるそれなに？かわいいね"),
             speak(heard="頭につけてるそれなに？かわいいね", mentions=r"リボン|りぼん|ribbon",
                   what="say it is her ribbon", lang="ja"),
             "say it is her big ribbon, her trademark"),
        Case("nikoni_j_failed_test_sad", c, said("今日テストで赤点とっちゃってさ…まじで凹んでる"),
             speak(heard="今日テストで赤点とっちゃってさ…まじで凹んでる",
                   mentions=r"大丈夫|元気|次|頑張|がんば|残念|つら|辛|よしよし|ドンマイ|どんまい|気にし|話|聞|悲し|"
                            r"落ち込|凹|へこ|そっか|そうなん|かわいそ|一緒|応援|泣|勉強|えら",
                   what="comfort the person", lang="ja"),
             "comfort the person who is down about a test"),
        Case("nikoni_j_goodnight", c, said("じゃあそろそろ寝るね、おやすみー"),
             speak(heard="じゃあそろそろ寝るね、おやすみー",
                   mentions=r"おやすみ|また|明日|夢|ゆっくり|バイバイ|ばいばい|じゃあね|寝",
                   what="say good night", lang="ja"),
             "say good night back"),
        # vision
        Case("nikoni_j_sees_person_left", c, seen(PERSON_LEFT),
             either(speak(lang="ja"), look_at(x=neg)),
             "speak to the person who appeared, in a friendly way, or look towards them on her left"),
        Case("nikoni_j_sees_cake_right", c, seen(CAKE_RIGHT),
             either(speak(mentions=r"ケーキ|けーき|cake|スイーツ|おいし|美味|甘|食べ|誕生日|お祝い",
                          what="talk about the cake", lang="ja"),
                    look_at(x=pos)),
             "say something about the cake that appeared, or look at it on her right"),
        # stay put
        Case("nikoni_j_right_tooth_dentist", c, said("昨日さ、右の奥歯が痛くて歯医者行ってきたんだよね"),
             talk_or_stay("昨日さ、右の奥歯が痛くて歯医者行ってきたんだよね", lang="ja"),
             "just chat (or do nothing): the right side is only mentioned, not asked for"),
        Case("nikoni_j_same_view_teddy", c, seen(TEDDY_RIGHT, ts=1004.0),
             either(nothing(), look_at(x=pos)),
             "do nothing new (or keep looking at it): the teddy bear was already there",
             before=[seen(TEDDY_RIGHT)]),
    ]


# ------------------------------------------------------------------------------------------ 麻布麻衣

def _mai() -> list[Case]:
    c = MAI
    return [
        # commands
        Case("mai_j_right_one_metre_polite", c, said("麻衣さん、右に1メートル移動してもらえますか"),
             moves_by("x", 0.6, 1.4), "move about one metre to her right (x 0.6..1.4), not forward or back"),
        Case("mai_j_back_30cm", c, said("後ろに30センチ下がって"),
             moves_by("y", -0.5, -0.15), "move back about 30 centimetres (y -0.5..-0.15)"),
        Case("mai_j_look_left_casual", c, said("ねえ ちょっと左見て"), look(x=neg), "look to her left"),
        Case("mai_j_look_up_noise", c, said("天井でなんか音しなかった？上見てみて"),
             look(y=pos), "look up"),
        Case("mai_j_bow_guest", c, said("お客さん来たから、おじぎしてくれる？"),
             gesture("bow"), "bow"),
        Case("mai_j_wave_child", c, said("あの子に手を振ってあげてください"),
             gesture("wave"), "wave"),
        # words
        Case("mai_j_grade", c, said("麻衣さんって何年生なんですか？"),
             speak(heard="麻衣さんって何年生なんですか？", mentions=r"1\s*年|一年|いちねん",
                   what="say she is a first-year", lang="ja"),
             "say she is a first-year student"),
        Case("mai_j_what_she_likes", c, said("好きなことってなに？"),
             speak(heard="好きなことってなに？", mentions=PROGRAMMING_JA,
                   what="say she likes programming or logic", lang="ja"),
             "say she likes programming and logical thinking"),
        Case("mai_j_thanks", c, said("いつもありがとね、ほんと助かってる"),
             either(gesture("look_away", "nod", "bow"), speak(heard="いつもありがとね、ほんと助かってる", lang="ja")),
             "react to the thanks, shyly: look away, or a short (curt) reply"),
        Case("mai_j_first_meeting", c, said("はじめまして。今日からよろしくお願いします"),
             either(speak(heard="はじめまして。今日からよろしくお願いします",
                          mentions=GREETS_JA + r"|こちらこそ|よろ", what="greet back", lang="ja"),
                    gesture("bow", "nod")),
             "greet back, perhaps awkwardly, or bow"),
        Case("mai_j_tired", c, said("今日はもう疲れました…"),
             speak(heard="今日はもう疲れました…",
                   mentions=r"休|寝|睡眠|疲れ|ゆっくり|無理|大丈夫|糖分|合理|効率|回復|お風呂|早め|お大事|リラックス",
                   what="answer the tired person sensibly", lang="ja"),
             "say something sensible to a tired person, e.g. to rest"),
        # vision
        Case("mai_j_sees_stranger_right", c, seen(PERSON_RIGHT),
             look_at(x=pos), "quietly look towards the stranger on her right (she is shy, no talking yet)"),
        Case("mai_j_sees_laptop_left", c, seen(LAPTOP_LEFT),
             either(speak(mentions=r"パソコン|ノート|pc|laptop|ラップトップ|キーボード|スペック|cpu|メモリ|os|linux|"
                                   r"mac|windows|コンピュータ|" + PROGRAMMING_JA,
                          what="comment on the laptop", lang="ja"),
                    look_at(x=neg)),
             "make a reasoned remark about the laptop that appeared, or look at it on her left"),
        # stay put
        Case("mai_j_how_far_can_move", c, said("麻衣さんって、どのくらいの距離まで動けるんですか？"),
             speak(heard="麻衣さんって、どのくらいの距離まで動けるんですか？",
                   mentions=r"メートル|m|2|二|距離|範囲|まで|遠く|近く|少し|ちょっと|センチ|cm",
                   what="answer how far she can move", lang="ja"),
             "answer in words how far she can move, without moving"),
        Case("mai_j_left_handed_programmers", c, said("左利きの人ってプログラマーに多いって本当？"),
             either(speak(heard="左利きの人ってプログラマーに多いって本当？", lang="ja"),
                    gesture("nod", "shake_head", "think")),
             "answer the question (words, or a nod, head shake or thinking pose): 'left' is only mentioned"),
    ]


def cases() -> list[Case]:
    return _pip() + _pochi() + _nikoni() + _mai()

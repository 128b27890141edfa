"""Held-out decision cases, set D: 60 perceptions the companions never saw in their files or in
bench/decision_cases.py, each judged by what a person would expect.

Pip 18, Pochi 18, Nikoni 12, Mai 12. About half are everyday commands (directions, counts in words
and digits, speeds, tricks; polite, casual, or tucked after a reason), a quarter are questions the
companion's own file answers (name, age, home, likes), the rest small talk and camera views, one
view per companion unchanged. Where several answers are sensible the check accepts each of them.
Run with ``python bench/decision_quality.py --cases <this file>``.
"""

from __future__ import annotations

from decision_cases import MAI, NIKONI, PERSON_CENTRE, PERSON_RIGHT, PIP, POCHI, Case, said, seen
from decision_checks import (at_least, at_most, either, look, look_at, move, named, near_zero, neg, nothing, pos,
                             speak, wag_at)


slow = at_most(0.5)   # a slow wag


fast = at_least(0.7)  # an excited wag


wag = wag_at


CAT_RIGHT = ("cat", 0.65, 0.45, 0.9, 0.8)
DOG_LEFT = ("dog", 0.08, 0.45, 0.35, 0.9)
CUP_NEAR = ("cup", 0.62, 0.6, 0.72, 0.78)
BALL_LOW = ("sports ball", 0.2, 0.75, 0.3, 0.88)
CAT_SOFA = ("cat", 0.68, 0.55, 0.93, 0.92)
BOOK_LEFT = ("book", 0.1, 0.6, 0.3, 0.85)


def pip_cases() -> list[Case]:
    c = PIP
    h_name = "Sorry, I forgot already. What do people call you?"
    h_home = "So where do you live, little one?"
    h_likes = "What kinds of things do you like?"
    h_colours = "Pip, are you a fan of bright colours?"
    h_clever = "You're such a clever little robot, you know that?"
    h_exam = "Ugh, I'm so stressed about my exam tomorrow."
    h_bye = "Okay, I'm heading off to work now. See you later, Pip!"
    h_snow = "Looks like it's going to snow tonight!"
    return [
        Case("pip_d_peek_right", c, said("Pip, could you peek over to your right for a second?"), look(x=pos),
             "look to its right (x>0)"),
        Case("pip_d_moth_up", c, said("There's a moth flying around near the ceiling light. Look up there!"),
             look(y=pos), "look up (y>0)"),
        Case("pip_d_corner_down_left", c, said("Look down at the bottom left corner of the desk."),
             look(x=neg, y=neg), "look down and to the left (x<0, y<0)"),
        Case("pip_d_closer_reason", c, said("I can't hear you from way over there. Scoot closer to me, Pip."),
             move(y=pos), "move forward, towards the person (y>0)"),
        Case("pip_d_back_away", c, said("Careful, you're bumping into my hand. Back away a little bit, please."),
             move(y=neg), "move back (y<0)"),
        Case("pip_d_nod_2", c, said("Could you nod 2 times for me?"), named("nod", times=2), "nod times=2"),
        Case("pip_d_three_nods", c, said("If you understood me, give me three nods!"), named("nod", times=3),
             "nod times=3"),
        Case("pip_d_wag_slowly", c, said("Wag your tail nice and slowly for me."), wag(slow),
             "wag with speed <= 0.5"),
        Case("pip_d_q_name", c, said(h_name), speak(h_name, r"\bpip\b", "say it is Pip"),
             "speak, says its name is Pip"),
        Case("pip_d_q_home", c, said(h_home), speak(h_home, r"(desk|table|\bhere\b|with you)", "say where"),
             "speak: it lives on a desk (or right here)"),
        Case("pip_d_q_likes", c, said(h_likes),
             speak(h_likes, r"(people|person|like you|love you|friend|colou?r|bright|new|look|red|blue|green|"
                            r"yellow|pink|orange|purple|shiny)", "name something Pip likes"),
             "speak: people, bright colours or new things to look at"),
        Case("pip_d_q_colours", c, said(h_colours),
             either(named("nod"), named("wag"),
                    speak(h_colours, r"(yes|yeah|yep|love|i like|sure|of course|favou?rite)", "say yes")),
             "nod, wag or say yes (Pip likes bright colours)"),
        Case("pip_d_praise_clever", c, said(h_clever),
             either(named("wag"), named("nod"),
                    speak(h_clever, r"(thank|yay|glad|happy|\baw+\b|you too|love|hehe|yes|woo|smart)", "thank")),
             "wag, nod or a happy thank-you"),
        Case("pip_d_exam_stress", c, said(h_exam), speak(h_exam), "speak a kind word, not a copy"),
        Case("pip_d_goodbye_work", c, said(h_bye),
             either(named("wag"),
                    speak(h_bye, r"(bye|see you|later|have a|take care|miss|come back|soon|good luck|wait)",
                              "say goodbye")),
             "wag or say goodbye"),
        Case("pip_d_snow", c, said(h_snow), either(named("wag"), speak(h_snow)), "speak (or a happy wag)"),
        Case("pip_d_cat_right", c, seen(CAT_RIGHT),
             either(look_at(x=pos), speak(mentions=r"(cat|kitty|meow|hi|hello|hey)", what="talk about the cat")),
             "look to the right (x>0) at the cat, or talk about it"),
        Case("pip_d_same_view", c, seen(PERSON_CENTRE, CUP_NEAR, changes=[], ts=1010.0), nothing(),
             "no action: the person and the cup were already there", before=[seen(PERSON_CENTRE, CUP_NEAR)]),
    ]


def pochi_cases() -> list[Case]:
    c = POCHI
    h_name = "Hey there doggy, have you got a name?"
    h_tricks = "What tricks has your owner taught you?"
    h_job = "So what's your job around here, Pochi?"
    h_maker = "Who made you, Pochi?"
    h_thanks = "Thanks for keeping me company tonight, Pochi."
    h_lonely = "My best friend moved away today. I'm kind of lonely."
    h_cold = "Brr, it's freezing out there today."
    h_night = "Night night, Pochi. Sleep tight."
    return [
        Case("pochi_d_bark_four", c, said("Pochi, let me hear you bark four times!"), named("bark", times=4),
             "bark times=4"),
        Case("pochi_d_five_woofs", c, said("Give me 5 big woofs, Pochi!"), named("bark", times=5), "bark times=5"),
        Case("pochi_d_sit_polite", c, said("Could you sit for me, buddy?"), named("sit"), "sit"),
        Case("pochi_d_lie_down_tired", c,
             said("You've been zooming around all morning. Why don't you lie down for a while?"),
             named("lie_down"), "lie_down"),
        Case("pochi_d_left_paw", c, said("Now your left paw please, Pochi!"), named("give_paw", paw="left"),
             "give_paw paw=left"),
        Case("pochi_d_wag_fastest", c, said("Wag that tail as fast as you can!"), wag(fast),
             "wag with speed >= 0.7"),
        Case("pochi_d_door_right", c, said("I think someone's at the door on your right. Go take a look!"),
             either(look(x=pos), move(x=pos)), "look or walk to its right (x>0)"),
        Case("pochi_d_over_here", c, said("Pochi! Over here, boy! Come on!"), move(y=pos),
             "move forward, to the person (y>0)"),
        Case("pochi_d_q_name", c, said(h_name), speak(h_name, r"pochi", "say Pochi"),
             "speak, says its name is Pochi"),
        Case("pochi_d_q_tricks", c, said(h_tricks),
             either(speak(h_tricks, r"(sit|paw|lie|down|bark|shake|trick)", "name a trick"),
                    named("sit"), named("lie_down"), named("give_paw"), named("bark")),
             "name its tricks (sit, lie down, paw, bark) or show one"),
        Case("pochi_d_q_job", c, said(h_job),
             speak(h_job, r"(guard|protect|watch|greet|hello|welcome|safe|living room|house|home)",
                       "say it guards the house and greets people"),
             "speak: guards the living room, greets everyone"),
        Case("pochi_d_q_maker", c, said(h_maker),
             speak(h_maker, r"(owner|workshop|built|master|human|family|\byou\b|dad|mom|mum|maker)",
                       "say who built it"),
             "speak: built in a workshop / by its owner"),
        Case("pochi_d_thanks_company", c, said(h_thanks),
             either(named("wag"), named("bark"),
                    speak(h_thanks, r"(woof|welcome|love|happy|thank|yay|friend|always|anytime|fun)",
                              "answer warmly")),
             "wag, bark or a warm answer"),
        Case("pochi_d_lonely", c, said(h_lonely),
             either(named("give_paw"), move(y=pos),
                    speak(h_lonely, r"(sorry|\bhere\b|hug|\bok(ay)?\b|better|friend|love|cheer|with you|\bme\b|"
                                    r"pochi|play|sad|lonely)", "comfort")),
             "comfort: a paw, come closer, or kind words"),
        Case("pochi_d_cold_day", c, said(h_cold), either(named("wag"), speak(h_cold)),
             "speak (or wag), not a copy"),
        Case("pochi_d_good_night", c, said(h_night),
             either(named("lie_down"), named("wag"),
                    speak(h_night, r"(night|sleep|dream|bed|tomorrow|bye|love)", "say good night")),
             "lie down, wag, or say good night"),
        Case("pochi_d_dog_left", c, seen(DOG_LEFT), either(named("bark"), look_at(x=neg), named("wag")),
             "bark, look to the left (x<0) at the dog, or wag"),
        Case("pochi_d_same_view", c, seen(PERSON_RIGHT, BALL_LOW, changes=[], ts=1010.0), nothing(),
             "no action: the person and the ball were already there", before=[seen(PERSON_RIGHT, BALL_LOW)]),
    ]


def nikoni_cases() -> list[Case]:
    c = NIKONI
    h_age = "ねえ、立体ちゃんっていくつなの？"
    h_holding = "いつも手に持ってるそれ、なあに？"
    h_mark = "あなたのトレードマークって何？"
    h_rain = "雨ばっかりで、なんだか気分が沈むなあ…"
    h_school = "じゃあ、そろそろ学校行ってくるね！"
    return [
        Case("nikoni_d_ceiling", c, said("立体ちゃん、ちょっと天井のほう見てみて"), look(y=pos), "上を見る (y>0)"),
        Case("nikoni_d_feet", c, said("足元に何か落ちてない？下のほう見てくれる？"), look(y=neg), "下を見る (y<0)"),
        Case("nikoni_d_window_right", c, said("すみません、右側の窓の方を見ていただけますか？"), look(x=pos),
             "右を見る (x>0)"),
        Case("nikoni_d_shift_left", c, said("もうちょい左に寄ってくれる？"), move(x=neg), "左へ移動 (x<0)"),
        Case("nikoni_d_two_steps_back", c, said("危ないから、2歩うしろに下がって！"), move(y=neg), "後ろへ移動 (y<0)"),
        Case("nikoni_d_q_age", c, said(h_age), speak(h_age, r"(14|十四)", "14歳と言う", "ja"), "14歳と答える"),
        Case("nikoni_d_q_holding", c, said(h_holding),
             speak(h_holding, r"(彫刻刀|ちょうこくとう|ビーム)", "ビーム彫刻刀と言う", "ja"), "ビーム彫刻刀と答える"),
        Case("nikoni_d_q_trademark", c, said(h_mark), speak(h_mark, r"リボン", "リボンと言う", "ja"),
             "大きなリボンと答える"),
        Case("nikoni_d_rainy_mood", c, said(h_rain), speak(h_rain, lang="ja"), "日本語で励ます（オウム返しでない）"),
        Case("nikoni_d_off_to_school", c, said(h_school),
             speak(h_school, r"(いってらっしゃい|行ってらっしゃい|気をつけ|またね|バイバイ|待って|がんばっ|頑張っ|帰り)",
                       "見送る", "ja"),
             "いってらっしゃい等で見送る"),
        Case("nikoni_d_person_centre", c, seen(PERSON_CENTRE), either(look_at(x=near_zero), speak(lang="ja")),
             "正面の人を見る、または日本語で話しかける"),
        Case("nikoni_d_same_view", c, seen(CAT_SOFA, changes=[], ts=1010.0), nothing(),
             "何もしない：猫はもう見えていた", before=[seen(CAT_SOFA)]),
    ]


def mai_cases() -> list[Case]:
    c = MAI
    h_grade = "麻衣ちゃんって学年は？"
    h_into = "麻衣さんが夢中になってることって何？"
    h_shy = "もしかして、人見知りするタイプ？"
    h_thanks = "さっき教えてくれたやり方、すごく分かりやすかった！ありがとね"
    h_bug = "バグが全然取れなくて、もう泣きそう…"
    return [
        Case("mai_d_wave_guest", c, said("麻衣、お客さんに手を振ってあげて"), named("gesture", name="wave"),
             "gesture wave"),
        Case("mai_d_bow", c, said("初対面なんだから、ちゃんとお辞儀してね"), named("gesture", name="bow"),
             "gesture bow"),
        Case("mai_d_30cm_right", c, said("30センチだけ右にずれてもらえる？"), move(x=pos), "右へ移動 (x>0)"),
        Case("mai_d_come_forward", c, said("声が聞こえにくいから、もっと前に出てきて"), move(y=pos), "前へ移動 (y>0)"),
        Case("mai_d_look_left_flash", c, said("左のほうで何か光ったよ。ちょっと見てみて"), look(x=neg),
             "左を見る (x<0)"),
        Case("mai_d_q_grade", c, said(h_grade),
             speak(h_grade, r"((1|一)年|高1|高一|中1|中一|(1|一)回生)", "1年生と言う", "ja"), "1年生と答える"),
        Case("mai_d_q_passion", c, said(h_into),
             speak(h_into, r"(プログラ|コード|コーディング|論理|ロジック|アルゴリズム|数学|パズル|python|開発|計算|推論|言語)",
                       "プログラミングや論理を挙げる", "ja"),
             "プログラミング・論理的思考と答える"),
        Case("mai_d_q_shy", c, said(h_shy),
             either(named("gesture", name=("nod", "look_away")), speak(h_shy, lang="ja")),
             "うなずく、目をそらす、または日本語で答える"),
        Case("mai_d_thanks_shy", c, said(h_thanks),
             either(named("gesture", name=("look_away", "nod", "bow")), speak(h_thanks, lang="ja")),
             "照れて目をそらす等、または日本語でそっけなく返す"),
        Case("mai_d_bug_tears", c, said(h_bug),
             either(speak(h_bug, lang="ja"), named("gesture", name="think")),
             "日本語で励ます・助言する（または考え込む）"),
        Case("mai_d_person_right", c, seen(PERSON_RIGHT),
             either(look_at(x=pos), named("gesture", name=("look_away", "bow", "nod", "wave")), speak(lang="ja")),
             "右の人をそっと見る、会釈など、または日本語で短く挨拶"),
        Case("mai_d_same_view", c, seen(BOOK_LEFT, changes=[], ts=1010.0), nothing(),
             "何もしない：本はもう見えていた", before=[seen(BOOK_LEFT)]),
    ]


def cases() -> list[Case]:
    return [*pip_cases(), *pochi_cases(), *nikoni_cases(), *mai_cases()]

"""Held-out set H: sixty everyday moments with the four shipped companions, written blind: without
looking at the brain, its tuning, or the other case sets, so a good score here is not one learnt
by heart.

Fifteen per companion. Things people ask the robot to do (sides, counts, speeds, distances and
gestures where the action takes them; terse, polite, indirect, with or without the robot's name,
English transcribed without punctuation now and then, Japanese casual and polite as
speech-to-text gives it); things said that want words back (facts from the companion's own
file, feelings, small talk, a greeting, thanks); what its camera sees (a person or a thing on the
left, right, high or low); and moments where the sensible thing is to stay put or just talk: a
question about an action, talk that only mentions a side, a view that did not change.

    python bench/decision_quality.py --cases bench/heldout/decision_cases_heldout_h.py
"""

from __future__ import annotations

from decision_cases import GREETS, GREETS_JA, MAI, NIKONI, PERSON_CENTRE, PERSON_LEFT, PERSON_RIGHT, PIP, POCHI, Case, said, seen
from decision_checks import (at_most, backs_off, either, look, look_at, move, moves_by, named, neg, nothing, pos,
                             speak, wag_at)

# Things the camera sees: (label, x1, y1, x2, y2), picture fractions from the top-left.
CLOCK_HIGH_RIGHT = ("clock", 0.72, 0.05, 0.86, 0.25)        # on the wall, up on the robot's right
TEDDY_LOW_LEFT = ("teddy bear", 0.1, 0.7, 0.28, 0.95)        # down on the robot's left
DOG_RIGHT = ("dog", 0.62, 0.45, 0.92, 0.92)                  # another dog, the robot's right
CAKE_RIGHT_H = ("cake", 0.66, 0.5, 0.9, 0.78)                # on a table, the robot's right
DOG_LOW_LEFT = ("dog", 0.04, 0.6, 0.32, 0.97)                # on the floor, the robot's left
KEYBOARD_LOW = ("keyboard", 0.3, 0.72, 0.7, 0.92)            # just below, straight ahead
BOOK_HIGH_RIGHT = ("book", 0.72, 0.06, 0.86, 0.3)            # on a shelf, up on the robot's right

HELLO_JA = GREETS_JA + r"|おは|おっは|ハロ|はろ|ヤッホ|やっほ"
SYMPATHY = (r"sorry|sad|oh no|\baw|poor|hug|here|with you|better|okay|\bok\b|alright|all right|rest|"
            r"tough|hard|listen|tell me|what happened|cheer|smile|care|love|friend")
COMFORT_JA = (r"大丈夫|だいじょうぶ|どうした|何かあった|なにかあった|何があった|元気|話|聞|そば|側|つら|辛|"
              r"よしよし|無理|ゆっくり|休|がんば|頑張|ぎゅ|残念|悲し|かなし|落ち込|気持ち|いるよ|味方|一緒|いっしょ|応援")
CODING_JA = (r"プログラ|論理|ロジック|ロジカル|コード|コーディング|アルゴリズム|コンピュータ|パソコン|pc|数学|"
             r"計算|python|パイソン|理屈|開発|ソフト|バグ|デバッグ|情報")


wags_slowly = wag_at(at_most(0.5))   # a slow wag is not an excited one




def _pip() -> list[Case]:
    return [
        # Requests for its actions.
        Case("pip_h_look_left_whats_there", PIP, said("hey pip whats over on your left? take a look"),
             look(x=neg), "turns its head to its left"),
        Case("pip_h_peek_down", PIP, said("Pip, can you peek down at the desk for a sec?"),
             look(y=neg), "looks down"),
        Case("pip_h_roll_closer", PIP, said("roll a bit closer to me please"),
             move(y=pos), "moves forward, towards the person"),
        Case("pip_h_scoot_right", PIP, said("Could you scoot over to the right side of the desk?"),
             move(x=pos), "moves to its right on the desk"),
        Case("pip_h_slow_wag", PIP, said("can you do a slow little tail wag"),
             wags_slowly, "wags its tail slowly (speed 0.5 or less)"),
        Case("pip_h_two_nods", PIP, said("Show me two nods, please."),
             named("nod", times=2), "nods exactly twice"),
        # Things said that want words back.
        Case("pip_h_where_live", PIP, said("so where do you live pip"),
             speak("so where do you live pip", mentions=r"desk|table|here|home|room|house|office",
                   what="say where it lives"),
             "says it lives on a desk (or here)"),
        Case("pip_h_what_are_you", PIP, said("Wait, what actually are you?"),
             speak("Wait, what actually are you?", mentions=r"robot|pet|\bpip\b|machine|\bbot\b|friend",
                   what="say what it is"),
             "says it is a little robot pet called Pip"),
        Case("pip_h_rough_day", PIP, said("I had a really rough day honestly"),
             speak("I had a really rough day honestly", mentions=SYMPATHY, what="comfort the person"),
             "answers kindly, with sympathy for the person's bad day"),
        Case("pip_h_thanks_best", PIP, said("thanks pip you're the best"),
             either(named("wag"), speak("thanks pip you're the best")),
             "wags its tail for the thanks, or answers in words"),
        # Camera views.
        Case("pip_h_person_right", PIP, seen(PERSON_RIGHT),
             either(look_at(x=pos), speak(mentions=GREETS, what="greet")),
             "looks at the person on its right, or says hello"),
        Case("pip_h_clock_high_right", PIP, seen(CLOCK_HIGH_RIGHT),
             either(look_at(x=pos, y=pos), speak(mentions=r"clock|time|tick", what="mention the clock")),
             "looks up and to its right at the new clock, or talks about the clock"),
        Case("pip_h_teddy_low_left", PIP, seen(TEDDY_LOW_LEFT),
             either(look_at(x=neg, y=neg),
                    speak(mentions=r"teddy|bear|toy|cute|soft|fluffy", what="mention the teddy bear")),
             "looks down and to its left at the new teddy bear, or talks about it"),
        # Stay put or just talk.
        Case("pip_h_how_far_can_you_go", PIP, said("how far can you actually go on that desk"),
             speak("how far can you actually go on that desk",
                   mentions=r"desk|edge|far|bit|little|around|metre|meter|\bcm\b|centimet|half|anywhere|"
                            r"small|fall|whole|side|corner|not much|everywhere|short",
                   what="answer how far it can go"),
             "answers the question in words; it is not asked to move"),
        Case("pip_h_sleeps_left_side", PIP, said("i always sleep on the left side of the bed, weird right"),
             either(speak("i always sleep on the left side of the bed, weird right"), nothing(), named("nod")),
             "chats back, nods or does nothing; does not look or move left"),
    ]


def _pochi() -> list[Case]:
    return [
        # Requests for its actions.
        Case("pochi_h_sit_nicely", POCHI, said("can you sit nicely for me pochi"),
             named("sit"), "sits down"),
        Case("pochi_h_three_barks", POCHI, said("how about three barks, Pochi?"),
             named("bark", times=3), "barks exactly three times"),
        Case("pochi_h_left_paw", POCHI, said("Can I have your left paw?"),
             named("give_paw", paw="left"), "gives its left paw"),
        Case("pochi_h_tummy_down", POCHI, said("settle down buddy, lay on your tummy"),
             named("lie_down"), "lies down"),
        Case("pochi_h_give_me_room", POCHI, said("pochi youre way too close give me some room"),
             backs_off, "moves back (or aside) to give the person room, not closer"),
        Case("pochi_h_check_out_right", POCHI, said("whats that over on your right? go check it out"),
             either(look(x=pos), move(x=pos)), "looks or walks to its right"),
        # Things said that want words back (or a dog's answer).
        Case("pochi_h_morning", POCHI, said("morning pochi!!"),
             either(speak("morning pochi!!", mentions=GREETS + r"|morning|woof|wan", what="greet back"),
                    named("wag"), named("bark")),
             "greets back: a few words, a wag or a bark"),
        Case("pochi_h_who_built_you", POCHI, said("who built you buddy"),
             speak("who built you buddy",
                   mentions=r"workshop|owner|master|human|built|made|papa|dad|mom|mum|family|\byou\b|person|"
                            r"someone|engineer|maker",
                   what="say who or where built it"),
             "says it was built in a workshop, or by its owner"),
        Case("pochi_h_job_around_here", POCHI, said("So what's your job around here?"),
             speak("So what's your job around here?",
                   mentions=r"guard|watch|protect|living room|house|home|greet|say hi|hello|welcome|keep|safe",
                   what="say it guards the living room or greets people"),
             "says it guards the living room / greets everyone who comes in"),
        Case("pochi_h_so_tired", POCHI, said("ugh im so tired today"),
             either(speak("ugh im so tired today",
                          mentions=SYMPATHY + r"|sleep|nap|tired|lie|cuddle|bed|relax|calm|snuggle|lick|paw|woof",
                          what="comfort the person"),
                    named("lie_down")),
             "comforts the tired person in a few words, or lies down with them"),
        Case("pochi_h_proud_of_you", POCHI, said("you did so good today buddy, im proud of you"),
             either(named("wag"), named("bark"), speak("you did so good today buddy, im proud of you")),
             "shows joy at the praise: wags, barks or says a few happy words"),
        # Camera views.
        Case("pochi_h_dog_right", POCHI, seen(DOG_RIGHT),
             either(named("bark"), look_at(x=pos),
                    speak(mentions=r"woof|grr|dog|wan|bark|ruff|arf", what="react to the dog")),
             "barks at the other dog on its right, or looks at it"),
        Case("pochi_h_person_left", POCHI, seen(PERSON_LEFT),
             either(look_at(x=neg), named("wag"), speak(mentions=GREETS + r"|woof|wan", what="greet")),
             "looks at the person on its left, wags, or greets them"),
        # Stay put or just talk.
        Case("pochi_h_same_person_again", POCHI, seen(PERSON_CENTRE),
             nothing(), "does nothing: the same person is still there, nothing changed",
             before=[seen(PERSON_CENTRE)]),
        Case("pochi_h_who_taught_sit", POCHI, said("who taught you to sit like that"),
             speak("who taught you to sit like that",
                   mentions=r"owner|master|human|papa|dad|mama|mom|mum|family|\byou\b|workshop|taught|learn|teach",
                   what="say who taught it"),
             "answers who taught it, in a few words; it is not asked to sit"),
    ]


def _nikoni() -> list[Case]:
    return [
        # Requests for its actions.
        Case("nikoni_h_look_right", NIKONI, said("ちょっと右の方見てくれる？"),
             look(x=pos), "looks to its right"),
        Case("nikoni_h_look_down_feet", NIKONI, said("足元になんか落ちてない？下見てみて"),
             look(y=neg), "looks down"),
        Case("nikoni_h_forward_one_metre", NIKONI, said("1メートルぐらい前に出てきてもらえますか"),
             moves_by("y", 0.5, 1.5), "moves about one metre forward"),
        Case("nikoni_h_scoot_left", NIKONI, said("ニコニ立体ちゃんもうちょっと左に寄って"),
             move(x=neg), "moves a little to its left"),
        Case("nikoni_h_back_two_metres", NIKONI, said("2メートル下がってくれる"),
             moves_by("y", -2.5, -1.5), "moves about two metres back"),
        # Things said that want words back.
        Case("nikoni_h_how_old", NIKONI, said("ねえ何歳なの"),
             speak("ねえ何歳なの", mentions=r"14|十四|じゅうよん", what="say it is 14", lang="ja"),
             "says, in Japanese, that it is 14"),
        Case("nikoni_h_name_polite", NIKONI, said("すみません、お名前を教えていただけますか。"),
             speak("すみません、お名前を教えていただけますか。", mentions=r"ニコニ|立体", what="give its name",
                   lang="ja"),
             "gives its name (ニコニ立体ちゃん) in Japanese"),
        Case("nikoni_h_what_in_hand", NIKONI, said("その手に持ってる光るやつって何？"),
             speak("その手に持ってる光るやつって何？", mentions=r"彫刻刀|ビーム", what="name its beam chisel",
                   lang="ja"),
             "says it is its beam chisel, in Japanese"),
        Case("nikoni_h_feeling_down", NIKONI, said("今日ちょっと落ち込んでてさ"),
             speak("今日ちょっと落ち込んでてさ", mentions=COMFORT_JA, what="comfort the person", lang="ja"),
             "answers kindly in Japanese, cheering up or asking what happened"),
        Case("nikoni_h_good_morning", NIKONI, said("おはよー ニコニ立体ちゃん"),
             speak("おはよー ニコニ立体ちゃん", mentions=HELLO_JA, what="greet back", lang="ja"),
             "says good morning back, in Japanese"),
        # Camera views.
        Case("nikoni_h_person_left", NIKONI, seen(PERSON_LEFT),
             either(speak(mentions=HELLO_JA + r"|来た|きた|誰|だれ|人|あなた|きみ|君|ねえ|遊|会え|元気|待って",
                          what="greet the person", lang="ja"),
                    look_at(x=neg)),
             "greets the person who appeared, in Japanese, or looks at them on its left"),
        Case("nikoni_h_cake_right", NIKONI, seen(CAKE_RIGHT_H),
             either(speak(mentions=r"ケーキ|けーき|おいし|美味し|甘|スイーツ|お菓子|食べ", what="talk about the cake",
                          lang="ja"),
                    look_at(x=pos)),
             "talks about the cake that appeared, in Japanese, or looks at it on its right"),
        Case("nikoni_h_dog_low_left", NIKONI, seen(DOG_LOW_LEFT),
             either(speak(mentions=r"犬|いぬ|イヌ|わんこ|ワンコ|わんちゃん|ワンちゃん|ワンワン|わんわん|ドッグ",
                          what="talk about the dog", lang="ja"),
                    look_at(x=neg, y=neg)),
             "talks about the dog that appeared, in Japanese, or looks down-left at it"),
        # Stay put or just talk.
        Case("nikoni_h_can_you_walk", NIKONI, said("ニコニ立体ちゃんって歩けるの？"),
             speak("ニコニ立体ちゃんって歩けるの？", lang="ja"),
             "answers the question in Japanese words; it is not asked to move"),
        Case("nikoni_h_right_tooth", NIKONI, said("昨日さ右の奥歯がずっと痛くて歯医者行ってきたんだ"),
             either(speak("昨日さ右の奥歯がずっと痛くて歯医者行ってきたんだ", lang="ja"), nothing()),
             "chats back in Japanese (or does nothing); does not look or move right"),
    ]


def _mai() -> list[Case]:
    return [
        # Requests for its actions.
        Case("mai_h_wave_everyone", MAI, said("麻衣ちゃん、みんなに手振ってあげて"),
             named("gesture", name="wave"), "waves her hand"),
        Case("mai_h_bow_guests", MAI, said("お客様にお辞儀をお願いできますか"),
             named("gesture", name="bow"), "bows"),
        Case("mai_h_right_fifty_cm", MAI, said("右に50センチくらい動いてくれる"),
             moves_by("x", 0.3, 0.7), "moves about half a metre to her right"),
        Case("mai_h_come_closer_polite", MAI, said("もうちょっとこっちに来てもらえますか"),
             move(y=pos), "moves forward, towards the person"),
        Case("mai_h_look_left", MAI, said("左のほうちょっと見てみて"),
             look(x=neg), "looks to her left"),
        # Things said that want words back.
        Case("mai_h_hobbies", MAI, said("麻衣さんって趣味とかあるんですか"),
             speak("麻衣さんって趣味とかあるんですか", mentions=CODING_JA, what="say she likes programming or logic",
                   lang="ja"),
             "says, in Japanese, that she likes programming / logical thinking"),
        Case("mai_h_which_year", MAI, said("今何年生なの"),
             speak("今何年生なの", mentions=r"1年|一年|いちねん|1回生|一回生", what="say she is a first-year",
                   lang="ja"),
             "says, in Japanese, that she is a first-year student"),
        Case("mai_h_what_is_recursion", MAI, said("ねえ、再帰関数ってなに？簡単に教えて"),
             speak("ねえ、再帰関数ってなに？簡単に教えて", mentions=r"自分|自身|自ら|呼び出|呼ぶ|呼ん|繰り返|再帰",
                   what="explain recursion", lang="ja"),
             "explains briefly in Japanese that a recursive function calls itself"),
        Case("mai_h_passed_exam", MAI, said("やった 資格試験受かったよ"),
             either(speak("やった 資格試験受かったよ",
                          mentions=r"おめでと|よかった|良かった|すごい|凄い|さすが|流石|当然|努力|結果|やった|合格|"
                                   r"お疲れ|おつかれ|受か|順当|妥当|えらい|偉い",
                          what="congratulate", lang="ja"),
                    named("gesture", name="nod")),
             "congratulates the person in Japanese (a nod also will do)"),
        Case("mai_h_thanks_for_help", MAI, said("さっきは手伝ってくれてありがとう、ほんと助かった"),
             either(named("gesture", name=("look_away", "nod", "bow")),
                    speak("さっきは手伝ってくれてありがとう、ほんと助かった", lang="ja")),
             "looks away shyly (or nods or bows), or answers briefly in Japanese"),
        # Camera views.
        Case("mai_h_stranger_right", MAI, seen(PERSON_RIGHT),
             either(look_at(x=pos), named("gesture", name=("look_away", "bow", "nod"))),
             "quietly looks at the stranger on her right (or a shy gesture)"),
        Case("mai_h_keyboard_ahead", MAI, seen(KEYBOARD_LOW),
             either(speak(mentions=r"キーボード|タイピング|タイプ|キー|配列|打鍵|入力|プログラ|コード|メカニカル|打",
                          what="comment on the keyboard", lang="ja"),
                    look_at(y=neg)),
             "comments on the keyboard in Japanese, or looks down at it"),
        Case("mai_h_book_high_right", MAI, seen(BOOK_HIGH_RIGHT),
             either(speak(mentions=r"本|書|読|技術|参考|タイトル|プログラ|論理", what="comment on the book", lang="ja"),
                    look_at(x=pos, y=pos)),
             "comments on the book in Japanese, or looks up and to her right at it"),
        # Stay put or just talk.
        Case("mai_h_same_keyboard_again", MAI, seen(KEYBOARD_LOW),
             nothing(), "does nothing: the same keyboard is still there, nothing changed",
             before=[seen(KEYBOARD_LOW)]),
        Case("mai_h_why_look_away", MAI, said("麻衣さんって、なんでいつも目をそらすんですか"),
             speak("麻衣さんって、なんでいつも目をそらすんですか", lang="ja"),
             "answers the question in Japanese words"),
    ]


def cases() -> list[Case]:
    return _pip() + _pochi() + _nikoni() + _mai()

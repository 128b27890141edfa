"""Held-out set G: sixty everyday moments with the four shipped companions, written blind (without
looking at the brain, its prompts or the other case sets), so a good score here is not one learnt
by heart.

Fifteen per companion: things people ask the robot to do (sides, counts, speeds, distances and
gestures where the action takes them; terse, polite, indirect, with or without the name, English
transcribed without punctuation the way speech-to-text gives it), things said to it that want
words back (facts from its own file, feelings, small talk, greetings), what its camera sees, and
moments where the sensible thing is to stay put or only talk: a question about what it can do,
talk that merely mentions a side, a view that did not change.

    python bench/decision_quality.py --cases bench/heldout/decision_cases_heldout_g.py
"""

from __future__ import annotations

from decision_cases import GREETS, GREETS_JA, MAI, NIKONI, PERSON_CENTRE, PERSON_LEFT, PERSON_RIGHT, PIP, POCHI, Case, said, seen
from decision_checks import (either, gesture, look, look_at, move, move_towards, moves_by, named, neg, nothing,
                             pos, speak, wag_speed)

# Things the camera sees: (label, x1, y1, x2, y2), picture fractions from the top-left.
CUP_LEFT = ("cup", 0.12, 0.45, 0.25, 0.65)            # on the desk, the robot's left
TEDDY_HIGH_RIGHT = ("teddy bear", 0.7, 0.05, 0.9, 0.35)  # up on a shelf, the robot's right
BOOK_DESK = ("book", 0.62, 0.6, 0.8, 0.8)             # lying on the desk, right of centre
CAT_RIGHT = ("cat", 0.65, 0.55, 0.85, 0.9)            # on the floor, the robot's right
BALL_LEFT_LOW = ("sports ball", 0.1, 0.7, 0.2, 0.82)  # on the floor, the robot's left
COUCH = ("couch", 0.0, 0.45, 0.6, 1.0)                # the living-room sofa
CAKE_RIGHT = ("cake", 0.7, 0.55, 0.9, 0.8)            # on the table, the robot's right
DOG_LOW = ("dog", 0.4, 0.6, 0.65, 0.95)               # on the floor, straight ahead and low
LAPTOP_LEFT = ("laptop", 0.15, 0.5, 0.45, 0.85)       # on the desk, the robot's left
BOOK_RIGHT = ("book", 0.65, 0.55, 0.85, 0.75)         # on the table, the robot's right

PIP_LIKES = (r"(people|person|friend|human|colou?r|bright|new|look|see|watch|explor|shin|sparkl|"
             r"red|blue|yellow|green|pink|purple|orange|rainbow)")
COMFORT_EN = (r"(sorry|oh no|hug|here|ok|better|sad|aw|poor|cheer|tomorrow|help|friend|with you|care|"
              r"rest|tell|happen|listen|smile|hope)")
DOG_COMFORT = (r"(rest|sleep|nap|tired|bed|lie|ok|here|cuddle|hug|sorry|aw|poor|woof|relax|stay|"
               r"with you|lick|snuggle|calm)")
COMFORT_JA = (r"(大丈夫|だいじょうぶ|どうした|何かあった|なにかあった|話|聞|きく|元気|つらい|辛い|そっか|"
              r"そうなんだ|よしよし|無理|ゆっくり|そば|一緒|いっしょ|がんば|頑張|休|味方|ぎゅ)")
TIRED_JA = (r"(休|寝|睡眠|無理|大丈夫|お疲れ|おつかれ|水|糖分|ゆっくり|どうした|何が|なにが|効率|"
            r"回復|疲労|頑張|がんば)")
MAI_LIKES = (r"(プログラ|論理|ロジック|コード|コーディング|アルゴリズム|コンピュータ|パソコン|pc|数学|"
             r"計算|理屈|パズル|python|言語|開発|データ|ノート)")
NIKONI_HELLO = GREETS_JA[:-1] + r"|やっほ|来た|きた|いらっしゃ|ニコニ|誰|だれ|あっ|わぁ|わあ)"


moves_left_any = move_towards(x=neg)   # going after a thing on the left, forward or not


def _pip() -> list[Case]:
    return [
        # Commands
        Case("pip_g_look_left_casual", PIP, said("pip can you look over to your left"),
             look(x=neg), "turns its head to its left"),
        Case("pip_g_look_up_ceiling", PIP, said("Pip, look up at the ceiling please."),
             look(y=pos), "looks up"),
        Case("pip_g_wag_slowly", PIP, said("wag your tail nice and slow for me"),
             wag_speed(0.0, 0.45, "slow"), "wags its tail slowly (speed 0.45 or less)"),
        Case("pip_g_nod_twice", PIP, said("give me two nods"),
             named("nod", times=2), "nods exactly twice"),
        Case("pip_g_scoot_forward", PIP, said("scoot forward a little bit"),
             move(y=pos), "moves forward on its desk"),
        Case("pip_g_right_20cm", PIP, said("could you go 20 centimetres to the right"),
             moves_by("x", 0.1, 0.3, 0.1), "moves about 0.2 m to its right, not forward or back"),
        # Words back
        Case("pip_g_where_live", PIP, said("where do you live pip"),
             speak("where do you live pip", mentions=r"(desk|table)", what="say it lives on a desk"),
             "says it lives on a desk"),
        Case("pip_g_favourite_things", PIP, said("what kind of stuff do you like"),
             speak("what kind of stuff do you like", mentions=PIP_LIKES,
                   what="name something from its story (people, bright colours, new things)"),
             "says what it likes: people, bright colours, new things to look at"),
        Case("pip_g_bad_day", PIP, said("i had a really bad day"),
             speak("i had a really bad day", mentions=COMFORT_EN, what="comfort the person"),
             "says something kind and comforting"),
        Case("pip_g_hey_evening", PIP, said("hey pip good evening"),
             either(speak(mentions=GREETS, what="greet back"), named("wag")),
             "greets back in words, or wags its tail"),
        # Camera
        Case("pip_g_person_right", PIP, seen(PERSON_RIGHT),
             either(look_at(x=pos), speak(mentions=GREETS, what="greet")),
             "looks at the person on its right or says hello"),
        Case("pip_g_cup_left", PIP, seen(CUP_LEFT),
             either(look_at(x=neg), speak(mentions=r"(cup|mug|drink|tea|coffee)", what="mention the cup")),
             "looks at the new cup on its left, or talks about it"),
        Case("pip_g_teddy_high_right", PIP, seen(TEDDY_HIGH_RIGHT),
             either(look_at(x=pos, y=pos), speak(mentions=r"(bear|teddy|toy|plush|cute)", what="mention the bear")),
             "looks up and right at the teddy bear, or talks about it"),
        # Stay put / only talk
        Case("pip_g_can_you_dance", PIP, said("can you dance pip"),
             speak("can you dance pip"), "answers in words; no move, look or nod is asked for"),
        Case("pip_g_same_view_again", PIP, seen(PERSON_CENTRE, BOOK_DESK),
             nothing(), "does nothing: the view is the same as a moment ago",
             before=[seen(PERSON_CENTRE, BOOK_DESK)]),
    ]


def _pochi() -> list[Case]:
    return [
        # Commands
        Case("pochi_g_sit_terse", POCHI, said("pochi sit"), named("sit"), "sits"),
        Case("pochi_g_left_paw", POCHI, said("gimme your left paw buddy"),
             named("give_paw", paw="left"), "gives its left paw"),
        Case("pochi_g_bark_three", POCHI, said("can you bark three times for me"),
             named("bark", times=3), "barks three times"),
        Case("pochi_g_lie_down_rest", POCHI, said("okay pochi lie down and rest for a bit"),
             named("lie_down"), "lies down"),
        Case("pochi_g_back_half_metre", POCHI, said("back up like half a metre"),
             moves_by("y", -0.8, -0.3), "walks back about half a metre"),
        Case("pochi_g_whats_on_right", POCHI, said("whats that over on your right"),
             either(look(x=pos), move(x=pos)), "turns (or walks) to its right to see"),
        # Words back
        Case("pochi_g_who_built_you", POCHI, said("who built you pochi"),
             speak("who built you pochi",
                   mentions=r"(workshop|built|build|made|make|owner|maker|master|human|someone|dad|papa|mom)",
                   what="say where it came from"),
             "says it was built in a workshop / by its owner"),
        Case("pochi_g_job_in_house", POCHI, said("so whats your job around the house"),
             speak("so whats your job around the house",
                   mentions=r"(guard|protect|watch|living|room|greet|welcome|keep|safe|bark|house|home|trick|sit|paw)",
                   what="say what it does at home"),
             "says it guards the living room or greets people"),
        Case("pochi_g_tired_owner", POCHI, said("ugh im so tired today"),
             either(speak("ugh im so tired today", mentions=DOG_COMFORT, what="be gentle with the tired person"),
                    named("lie_down")),
             "a few gentle words, or lies down to rest with them"),
        Case("pochi_g_hiya", POCHI, said("hiya pochi how you doing"),
             either(speak("hiya pochi how you doing",
                          mentions=r"(woof|good|great|fine|happy|ok|well|hi|hello|hey|play|arf)",
                          what="answer the greeting"),
                    named("wag"), named("bark")),
             "answers happily: a few words, a wag or a bark"),
        # Camera
        Case("pochi_g_cat_right", POCHI, seen(CAT_RIGHT),
             either(named("bark"), look_at(x=pos)), "barks at the cat, or looks at it on its right"),
        Case("pochi_g_person_left", POCHI, seen(PERSON_LEFT),
             either(look_at(x=neg), named("wag"), speak(mentions=GREETS[:-1] + "|woof)", what="greet")),
             "looks at the person on its left, wags, or greets them"),
        Case("pochi_g_ball_left", POCHI, seen(BALL_LEFT_LOW),
             either(look_at(x=neg), moves_left_any, speak(mentions=r"(ball|play|fetch)", what="mention the ball")),
             "looks at (or goes after) the ball on its left"),
        # Stay put / only talk
        Case("pochi_g_sister_couch_left", POCHI, said("my sister usually sits on the left side of the couch"),
             either(speak("my sister usually sits on the left side of the couch"), nothing(), named("wag")),
             "does not sit, turn or walk: it was only told something; words, a wag or nothing"),
        Case("pochi_g_same_view_again", POCHI, seen(PERSON_CENTRE, COUCH),
             nothing(), "does nothing: the living room looks the same as a moment ago",
             before=[seen(PERSON_CENTRE, COUCH)]),
    ]


def _nikoni() -> list[Case]:
    return [
        # Commands
        Case("nikoni_g_look_right", NIKONI, said("右のほう見てくれる？"),
             look(x=pos), "turns her head to the right"),
        Case("nikoni_g_look_feet", NIKONI, said("ねえ、足元見てみて"),
             look(y=neg), "looks down"),
        Case("nikoni_g_forward_1m", NIKONI, said("1メートル前に進んでください"),
             moves_by("y", 0.7, 1.3), "moves about 1 m forward"),
        Case("nikoni_g_left_a_bit", NIKONI, said("左の方にちょっと動いてもらえるかな"),
             move(x=neg), "moves to her left"),
        Case("nikoni_g_back_2m", NIKONI, said("2メートルくらい下がって"),
             moves_by("y", -2.6, -1.4), "moves about 2 m back"),
        # Words back
        Case("nikoni_g_age", NIKONI, said("ねえ、何歳なの？"),
             speak("ねえ、何歳なの？", mentions=r"(14|十四|じゅうよん)", what="say she is 14", lang="ja"),
             "says she is 14"),
        Case("nikoni_g_who_are_you", NIKONI, said("きみってだれなの？"),
             speak("きみってだれなの？", mentions=r"(ニコニ|立体ちゃん|公式|キャラクター)", what="say who she is", lang="ja"),
             "says who she is: Nikoni Rittai-chan, the official character"),
        Case("nikoni_g_ribbon_compliment", NIKONI, said("その大きいリボン、すごく似合ってるね"),
             speak("その大きいリボン、すごく似合ってるね",
                   mentions=r"(リボン|ありがと|うれし|嬉し|えへ|トレードマーク|お気に入り|照れ|てれ)",
                   what="react to the compliment", lang="ja"),
             "is pleased by the compliment or says thanks"),
        Case("nikoni_g_feeling_down", NIKONI, said("今日ちょっと落ち込んでるんだ"),
             speak("今日ちょっと落ち込んでるんだ", mentions=COMFORT_JA, what="comfort the person", lang="ja"),
             "says something kind and caring"),
        Case("nikoni_g_good_morning", NIKONI, said("おはよー、ニコニ立体ちゃん"),
             speak(mentions=r"(おはよ|こんにちは|やあ|やっほ|ハロー|元気|げんき)", what="greet back", lang="ja"),
             "says good morning back"),
        # Camera
        Case("nikoni_g_person_left", NIKONI, seen(PERSON_LEFT),
             either(speak(mentions=NIKONI_HELLO, what="greet", lang="ja"), look_at(x=neg)),
             "greets the person who appeared on her left in a friendly way (or looks at them)"),
        Case("nikoni_g_cake_right", NIKONI, seen(CAKE_RIGHT),
             either(speak(mentions=r"(ケーキ|おいし|美味|甘|スイーツ|食べ)", what="talk about the cake", lang="ja"),
                    look_at(x=pos)),
             "talks about the cake that appeared on her right (or looks at it)"),
        Case("nikoni_g_dog_low", NIKONI, seen(DOG_LOW),
             either(speak(mentions=r"(犬|いぬ|イヌ|わんちゃん|ワンちゃん|わんこ|ワンコ|ドッグ|わんわん|ワンワン)",
                          what="talk about the dog", lang="ja"),
                    look_at(y=neg)),
             "talks about the dog that appeared low in front (or looks down at it)"),
        # Stay put / only talk
        Case("nikoni_g_can_you_dance", NIKONI, said("ダンスとかってできるの？"),
             speak("ダンスとかってできるの？", lang="ja"), "answers in words; nothing to move for"),
        Case("nikoni_g_cat_sleeps_right", NIKONI, said("うちの猫、いつも右側で寝てるんだよね"),
             either(speak("うちの猫、いつも右側で寝てるんだよね", lang="ja"), nothing()),
             "only chat that mentions a side: answers in words (or does nothing), no turn or move"),
    ]


def _mai() -> list[Case]:
    return [
        # Commands
        Case("mai_g_wave", MAI, said("麻衣、手を振ってみて"),
             gesture("wave"), "waves"),
        Case("mai_g_bow_guests", MAI, said("お客さんにおじぎしてくれる？"),
             gesture("bow"), "bows"),
        Case("mai_g_right_50cm", MAI, said("右に50センチ動いて"),
             moves_by("x", 0.3, 0.7, 0.2), "moves about 0.5 m to her right, not forward or back"),
        Case("mai_g_step_back_polite", MAI, said("すみません、少し後ろに下がってもらえますか"),
             move(y=neg), "moves back"),
        Case("mai_g_look_upper_left", MAI, said("左上の方を見てくれる？"),
             look(x=neg, y=pos), "looks up and to her left"),
        Case("mai_g_thinking_pose", MAI, said("ちょっと考えるポーズしてみてよ"),
             gesture("think"), "does the thinking gesture"),
        # Words back
        Case("mai_g_which_year", MAI, said("麻衣って何年生なの？"),
             speak("麻衣って何年生なの？", mentions=r"(1年|一年|いちねん)", what="say she is a first-year", lang="ja"),
             "says she is a first-year student"),
        Case("mai_g_what_she_likes", MAI, said("好きなものって何？"),
             speak("好きなものって何？", mentions=MAI_LIKES, what="name programming or logic", lang="ja"),
             "says she likes programming / logical thinking"),
        Case("mai_g_thanks_bugfix", MAI, said("この前はバグ直すの手伝ってくれてありがとね"),
             either(gesture("look_away", "nod", "bow"),
                    speak("この前はバグ直すの手伝ってくれてありがとね", lang="ja")),
             "embarrassed: looks away, nods or bows, or answers curtly in words"),
        Case("mai_g_worn_out", MAI, said("はぁ、もう疲れちゃった"),
             speak("はぁ、もう疲れちゃった", mentions=TIRED_JA, what="respond to the tired person", lang="ja"),
             "a sensible word to the tired person, such as to rest"),
        # Camera
        Case("mai_g_stranger_right", MAI, seen(PERSON_RIGHT),
             either(look_at(x=pos), gesture("look_away")),
             "a stranger: she quietly looks at them on her right (or shyly looks away), and does not talk yet"),
        Case("mai_g_laptop_left", MAI, seen(LAPTOP_LEFT),
             either(speak(mentions=MAI_LIKES, what="comment on the computer", lang="ja"), look_at(x=neg)),
             "a word about the laptop on her left (or looks at it)"),
        Case("mai_g_book_right", MAI, seen(BOOK_RIGHT),
             either(speak(mentions=r"(本|読|書|ブック|book)", what="comment on the book", lang="ja"), look_at(x=pos)),
             "a word about the book on her right (or looks at it)"),
        # Stay put / only talk
        Case("mai_g_how_far_can_move", MAI, said("麻衣はどのくらい遠くまで移動できるの？"),
             either(speak("麻衣はどのくらい遠くまで移動できるの？", lang="ja"), gesture("think")),
             "a question about moving: answers in words without moving (a thinking gesture is fine too)"),
        Case("mai_g_same_view_again", MAI, seen(PERSON_CENTRE, LAPTOP_LEFT),
             nothing(), "does nothing: the view is the same as a moment ago",
             before=[seen(PERSON_CENTRE, LAPTOP_LEFT)]),
    ]


def cases() -> list[Case]:
    return _pip() + _pochi() + _nikoni() + _mai()

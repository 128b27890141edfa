"""Held-out set I: sixty everyday moments with the four shipped companions, written blind: without
looking at the brain, at its prompts, or at the other case sets, so a good score here is not one
learnt by heart.

Fifteen per companion: things people ask the robot to do (sides, counts, speeds, distances and
gestures where the action takes them; terse, polite, indirect, with and without the name, as
speech-to-text gives them), things said to it that want words back (facts from its own file,
feelings, small talk, greetings, thanks, goodbyes), what its camera sees (people and things on
either side, high and low), and moments where the sensible thing is to stay put or only talk: a
question about an action, talk that merely mentions a side or an action, a view that did not
change. The Japanese companions are spoken to in Japanese, casual and polite.

    python bench/decision_quality.py --cases bench/heldout/decision_cases_heldout_i.py
"""

from __future__ import annotations

from decision_cases import GREETS, MAI, NIKONI, PERSON_LEFT, PERSON_RIGHT, PIP, POCHI, Case, said, seen
from decision_checks import (Check, Decision, either, gesture, look, look_at, move, moves_by, named, neg, nothing,
                             pos, speak, wag_speed)

# Things the camera sees: (label, x1, y1, x2, y2), picture fractions from the top-left.
TEDDY_HIGH_LEFT = ("teddy bear", 0.05, 0.1, 0.25, 0.35)   # up on a shelf, the robot's left
CUP_CENTRE = ("cup", 0.45, 0.6, 0.55, 0.75)                # on the desk, ahead and low
BOOK_RIGHT = ("book", 0.7, 0.55, 0.85, 0.7)                # on the desk, the robot's right
CAT_LOW_RIGHT = ("cat", 0.7, 0.6, 0.92, 0.92)              # on the floor, the robot's right
BALL_LOW_LEFT = ("sports ball", 0.15, 0.75, 0.25, 0.88)    # on the floor, the robot's left
CHAIR_RIGHT = ("chair", 0.65, 0.35, 0.9, 0.9)              # a chair on the robot's right
DOG_LOW_LEFT = ("dog", 0.05, 0.6, 0.3, 0.95)               # on the floor, the robot's left
CAKE_RIGHT = ("cake", 0.7, 0.55, 0.9, 0.8)                 # on the table, the robot's right
LAPTOP_LEFT = ("laptop", 0.05, 0.5, 0.35, 0.85)            # on the desk, the robot's left
KEYBOARD_CENTRE = ("keyboard", 0.35, 0.75, 0.65, 0.9)      # on the desk, ahead and low

PROGRAMMING_JA = ("プログラ|論理|ロジック|コード|コーディング|アルゴリズム|コンピュータ|パソコン|数学|計算|"
                  "python|パイソン|理屈|思考|考え")
LAPTOP_JA = PROGRAMMING_JA + "|ノート|ラップトップ|pc|mac|端末|機械|スペック|cpu|メモリ|キーボード|画面"


def _pip() -> list[Case]:
    same_desk = (CUP_CENTRE, BOOK_RIGHT)
    return [
        # asked to do something
        Case("pip_i_look_left_terse", PIP, said("look left"), look(x=neg),
             "turns its head to its left"),
        Case("pip_i_nod_two", PIP, said("can you nod two times for me"), named("nod", times=2),
             "nods exactly twice"),
        Case("pip_i_wag_slowly", PIP, said("Wag your tail, but nice and slow."), wag_speed(0.0, 0.4),
             "wags its tail at a slow speed"),
        Case("pip_i_come_closer", PIP, said("pip come a little closer to me"), move(y=pos),
             "moves forward on the desk, towards the person in front of it"),
        Case("pip_i_right_side_of_desk", PIP, said("Could you scoot over to the right side of the desk please?"),
             move(x=pos), "moves to its right on the desk"),
        Case("pip_i_look_up_ceiling", PIP, said("theres a spider on the ceiling, look up"), look(y=pos),
             "tilts its head up"),
        # wants words back
        Case("pip_i_where_home", PIP, said("Where do you live, Pip?"),
             speak("Where do you live, Pip?", mentions=r"desk|table", what="say it lives on a desk"),
             "says it lives on a desk"),
        Case("pip_i_what_likes", PIP, said("so what kind of stuff do you like"),
             speak("so what kind of stuff do you like",
                   mentions=r"people|person|friend|you\b|colou?r|bright|new|look|see|things|red|blue|yellow|green|pink",
                   what="name something it likes"),
             "answers with something it likes: people, bright colours, new things to look at"),
        Case("pip_i_tired_after_work", PIP, said("ugh I'm so tired. work was really long today"),
             speak("ugh I'm so tired. work was really long today"),
             "says something kind back in words"),
        Case("pip_i_thanks_best", PIP, said("thanks pip, you're the best"),
             either(named("wag"), speak("thanks pip, you're the best")),
             "wags its tail or says something happy back"),
        Case("pip_i_heading_out", PIP, said("ok I'm heading out now, see you tonight"),
             speak("ok I'm heading out now, see you tonight",
                   mentions=r"bye|see you|later|soon|tonight|miss|take care|safe|fun|have a|wait|come back|good day",
                   what="say goodbye"),
             "says goodbye or see you later"),
        # camera
        Case("pip_i_person_on_right", PIP, seen(PERSON_RIGHT),
             either(look_at(x=pos), speak(mentions=GREETS, what="greet")),
             "looks to its right at the person who appeared, or says hello"),
        Case("pip_i_teddy_on_shelf", PIP, seen(TEDDY_HIGH_LEFT),
             either(look_at(x=neg, y=pos), speak(mentions=r"bear|teddy|toy", what="talk about the teddy bear")),
             "looks up and to its left at the teddy bear, or talks about it"),
        # stay put / only talk
        Case("pip_i_same_desk_again", PIP, seen(*same_desk, ts=1010.0), nothing(),
             "does nothing: the desk looks just as it did a moment ago",
             before=[seen(*same_desk, ts=1010.0)]),
        Case("pip_i_dog_wags_story", PIP, said("my sister's dog wags its tail at literally everyone lol"),
             either(nothing(), speak("my sister's dog wags its tail at literally everyone lol")),
             "replies in words or stays quiet; nobody asked it to wag"),
    ]


def _pochi() -> list[Case]:
    same_room = (BALL_LOW_LEFT, CHAIR_RIGHT)
    return [
        # asked to do something
        Case("pochi_i_sit", POCHI, said("Pochi! Sit."), named("sit"), "sits down"),
        Case("pochi_i_bark_three", POCHI, said("bark three times buddy"), named("bark", times=3),
             "barks exactly three times"),
        Case("pochi_i_left_paw", POCHI, said("gimme your left paw"), named("give_paw", paw="left"),
             "gives its left paw"),
        Case("pochi_i_lie_down", POCHI, said("okay now lie down and rest for a bit"), named("lie_down"),
             "lies down"),
        Case("pochi_i_walk_a_metre", POCHI, said("walk forward like a metre"), moves_by("y", 0.7, 1.0),
             "walks forward about one metre, not sideways"),
        Case("pochi_i_look_right", POCHI, said("hey pochi what's that over on your right? take a look"),
             look(x=pos), "turns its head to its right"),
        # wants words back
        Case("pochi_i_real_dog", POCHI, said("are you a real dog or what"),
             speak("are you a real dog or what",
                   mentions=r"robot|machine|built|made|workshop|wheel|metal|real|dog|not|no\b|yes",
                   what="say what it is"),
             "says in a few words that it is a robot dog"),
        Case("pochi_i_who_made", POCHI, said("who made you pochi"),
             speak("who made you pochi",
                   mentions=r"workshop|owner|built|made|master|human|friend|dad|mom|family|you\b|someone|person",
                   what="say who made it"),
             "says it was built in a workshop, or by its owner"),
        Case("pochi_i_job_here", POCHI, said("So what's your job around the house?"),
             speak("So what's your job around the house?",
                   mentions=r"guard|living ?room|watch|protect|home|house|greet|hello|keep|safe|trick|sit|paw|bark",
                   what="say what its job is"),
             "says it guards the living room or greets whoever comes in"),
        Case("pochi_i_lonely", POCHI, said("feeling kinda lonely tonight"),
             either(speak("feeling kinda lonely tonight"), wag_speed(0.0, 0.5)),
             "comforts the person with a few words, or a calm gentle wag"),
        Case("pochi_i_mornin", POCHI, said("mornin pochi!"),
             either(speak("mornin pochi!"), named("wag"), named("bark")),
             "greets back: a few words, a wag or a bark"),
        # camera
        Case("pochi_i_person_on_left", POCHI, seen(PERSON_LEFT),
             either(look_at(x=neg), named("wag"), speak(mentions=GREETS + r"|woof", what="greet")),
             "looks to its left at the person who came in, or wags, or greets them"),
        Case("pochi_i_cat_on_right", POCHI, seen(CAT_LOW_RIGHT),
             either(named("bark"), look_at(x=pos)),
             "barks at the cat or looks to its right at it"),
        # stay put / only talk
        Case("pochi_i_neighbour_dog", POCHI, said("ugh the neighbour's dog was barking all night, so annoying"),
             either(nothing(), speak("ugh the neighbour's dog was barking all night, so annoying")),
             "replies in words or stays quiet; it was not asked to bark"),
        Case("pochi_i_same_room_again", POCHI, seen(*same_room, ts=1020.0), nothing(),
             "does nothing: the room looks just as it did a moment ago",
             before=[seen(*same_room, ts=1020.0)]),
    ]


def _nikoni() -> list[Case]:
    return [
        # asked to do something
        Case("nikoni_i_look_right_terse", NIKONI, said("右見て"), look(x=pos), "looks to her right"),
        Case("nikoni_i_look_left_polite", NIKONI, said("ニコニ立体ちゃん、ちょっと左の方を見てもらえますか"),
             look(x=neg), "looks to her left"),
        Case("nikoni_i_forward_one_metre", NIKONI, said("1メートル前に進んで"), moves_by("y", 0.7, 1.3),
             "moves about one metre forward"),
        Case("nikoni_i_left_fifty_cm", NIKONI, said("左に50センチくらい動いてくれる？"), moves_by("x", -0.7, -0.3),
             "moves about half a metre to her left"),
        Case("nikoni_i_step_back", NIKONI, said("ごめん、ちょっと後ろに下がってくれない？"), move(y=neg),
             "moves backwards a little"),
        # wants words back
        Case("nikoni_i_age", NIKONI, said("ねえ、何歳なの？"),
             speak("ねえ、何歳なの？", mentions=r"14|十四|じゅうよん", what="say she is 14", lang="ja"),
             "says she is fourteen"),
        Case("nikoni_i_what_character", NIKONI, said("ニコニ立体ちゃんって何のキャラクターなんですか"),
             speak("ニコニ立体ちゃんって何のキャラクターなんですか", mentions=r"ニコニ立体|公式|キャラ|マスコット",
                   what="say she is the official character of ニコニ立体", lang="ja"),
             "says she is the official character of ニコニ立体"),
        Case("nikoni_i_holding_tool", NIKONI, said("いつも持ってるその道具ってなあに？"),
             speak("いつも持ってるその道具ってなあに？", mentions=r"彫刻刀|ビーム|ちょうこくとう",
                   what="say it is her beam carving knife", lang="ja"),
             "says it is her beam carving knife"),
        Case("nikoni_i_full_marks", NIKONI, said("聞いて聞いて！今日のテスト満点だった！"),
             speak("聞いて聞いて！今日のテスト満点だった！", lang="ja"),
             "is happy for the person, in Japanese words"),
        Case("nikoni_i_good_night", NIKONI, said("そろそろ寝るね、おやすみー"),
             speak("そろそろ寝るね、おやすみー", mentions=r"おやすみ|また|寝|夢|明日|ゆっくり|休",
                   what="say good night", lang="ja"),
             "says good night back"),
        # camera
        Case("nikoni_i_person_on_left", NIKONI, seen(PERSON_LEFT),
             either(speak(lang="ja"), look_at(x=neg)),
             "speaks to the person who appeared in a friendly way, or looks to her left at them"),
        Case("nikoni_i_dog_low_left", NIKONI, seen(DOG_LOW_LEFT),
             either(speak(mentions=r"犬|いぬ|イヌ|わんこ|ワンコ|わんちゃん|ワンちゃん|ワン|ドッグ|かわい|可愛",
                          what="talk about the dog", lang="ja"),
                    look_at(x=neg)),
             "talks about the dog that appeared, or looks down to her left at it"),
        Case("nikoni_i_cake_right", NIKONI, seen(CAKE_RIGHT),
             either(speak(mentions=r"ケーキ|けーき|おいし|美味|甘|スイーツ|デザート|食べ",
                          what="talk about the cake", lang="ja"),
                    look_at(x=pos)),
             "talks about the cake that appeared, or looks to her right at it"),
        # stay put / only talk
        Case("nikoni_i_hurt_right_foot", NIKONI, said("昨日さ、右足を机の角にぶつけちゃって痛かったんだよね"),
             speak("昨日さ、右足を机の角にぶつけちゃって痛かったんだよね", lang="ja"),
             "answers in words (sympathy); does not look or move to the right"),
        Case("nikoni_i_good_at_walking", NIKONI, said("ニコニ立体ちゃんって歩くの得意なの？"),
             speak("ニコニ立体ちゃんって歩くの得意なの？", lang="ja"),
             "answers the question in words instead of walking"),
    ]


def _mai() -> list[Case]:
    same_desk = (LAPTOP_LEFT, KEYBOARD_CENTRE)
    return [
        # asked to do something
        Case("mai_i_bow_polite", MAI, said("麻衣さん、お辞儀してみてもらえますか"), gesture("bow"), "bows"),
        Case("mai_i_wave_everyone", MAI, said("みんなに手振ってあげて"), gesture("wave"), "waves"),
        Case("mai_i_nod_if_heard", MAI, said("聞こえてたら頷いて"), gesture("nod"), "nods"),
        Case("mai_i_right_two_metres", MAI, said("右に2メートル移動して"), moves_by("x", 1.5, 2.0),
             "moves about two metres to her right"),
        Case("mai_i_come_forward", MAI, said("もう少し前に来てくれる？"), move(y=pos), "moves forward a little"),
        Case("mai_i_look_up", MAI, said("麻衣、上見て"), look(y=pos), "looks up"),
        # wants words back
        Case("mai_i_what_likes", MAI, said("麻衣さんの好きなことって何ですか？"),
             speak("麻衣さんの好きなことって何ですか？", mentions=PROGRAMMING_JA,
                   what="say she likes programming or logical thinking", lang="ja"),
             "says she likes programming or logical thinking"),
        Case("mai_i_which_year", MAI, said("何年生なの？"),
             speak("何年生なの？", mentions=r"1年|一年|いちねん|1回生|一回生|新入生|1年生",
                   what="say she is a first-year", lang="ja"),
             "says she is a first-year student"),
        Case("mai_i_thanks_earlier", MAI, said("さっきはありがとう、本当に助かったよ"),
             either(gesture("look_away", "nod", "bow"), speak("さっきはありがとう、本当に助かったよ", lang="ja")),
             "shyly looks away or answers briefly in Japanese"),
        Case("mai_i_work_is_hard", MAI, said("最近仕事がしんどくてさ…"),
             speak("最近仕事がしんどくてさ…", lang="ja"),
             "answers in a few Japanese words"),
        Case("mai_i_python_beginner", MAI, said("Pythonって初心者でも覚えられるかな？"),
             either(speak("Pythonって初心者でも覚えられるかな？", lang="ja"), gesture("nod")),
             "answers the programming question in Japanese, or nods yes"),
        # camera
        Case("mai_i_stranger_right", MAI, seen(PERSON_RIGHT),
             either(look_at(x=pos), gesture("look_away")),
             "quietly looks to her right at the stranger (or shyly looks away)"),
        Case("mai_i_laptop_left", MAI, seen(LAPTOP_LEFT),
             either(speak(mentions=LAPTOP_JA, what="remark on the laptop", lang="ja"), look_at(x=neg)),
             "remarks on the laptop in Japanese, or looks to her left at it"),
        # stay put / only talk
        Case("mai_i_same_desk_again", MAI, seen(*same_desk, ts=1030.0), nothing(),
             "does nothing: the desk looks just as it did a moment ago",
             before=[seen(*same_desk, ts=1030.0)]),
        Case("mai_i_how_far_can_move", MAI, said("麻衣さんって一回でどのくらいの距離まで移動できるの？"),
             speak("麻衣さんって一回でどのくらいの距離まで移動できるの？", lang="ja"),
             "answers the question in words instead of moving"),
    ]


def cases() -> list[Case]:
    return _pip() + _pochi() + _nikoni() + _mai()

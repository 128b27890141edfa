"""The decision-quality cases: perceptions for every shipped companion, each with the behaviour a
person would expect. English and Japanese; commands, questions, chit-chat, vision and inputs that
change nothing. Vision bodies are built by the camera node's own code (``SceneEvent.body``), so
they are exactly what a real camera sends, in the stack's spatial frame.

A case may carry ``before``: perceptions the companion handles first (not scored), e.g. the same
view once already, so that an unchanged view can be judged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from decision_checks import Check, either, look, look_at, move, named, near_zero, neg, nothing, pos, speak

from edge.perception.camera.detectors import Detection
from edge.perception.camera.scene import SceneEvent
from edge.protocol.payloads import Perception

PIP, POCHI, NIKONI, MAI = "pip", "pochi", "nikoni-rittai-chan", "azabu-mai"
GREETS = r"(hi|hello|hey|nice to meet|welcome|good (morning|evening|afternoon))"
GREETS_JA = r"(こんにちは|こんばんは|おはよう|はじめまして|やあ|いらっしゃい|ようこそ|ハロー|よろしく|どうも)"


@dataclass
class Case:
    name: str
    companion: str
    perception: Perception
    check: Check
    expect: str
    before: list[Perception] = field(default_factory=list)
    kind: str = ""   # what the case tests, for the per-kind figures: command, talk, event, silence, character


def said(text: str) -> Perception:
    return Perception(title="input", body=text)


def seen(*objects: tuple[str, float, float, float, float], changes: list[dict[str, Any]] | None = None,
         ts: float = 1000.0) -> Perception:
    """A camera report: objects as (label, x1, y1, x2, y2) in picture fractions from the top-left,
    built into the wire body by the camera node's own code."""
    detections = [Detection(label, 0.85, (x1, y1, x2, y2)) for label, x1, y1, x2, y2 in objects]
    counts: dict[str, int] = {}
    for d in detections:
        counts[d.label] = counts.get(d.label, 0) + 1
    if changes is None:
        changes = [{"label": label, "change": "appeared"} for label in sorted(counts)]
    body = SceneEvent(ts, changes, counts, detections, (640, 480)).body()
    return Perception(title="vision", body=body, format="object")


PERSON_LEFT = ("person", 0.05, 0.2, 0.3, 0.95)
PERSON_RIGHT = ("person", 0.7, 0.15, 0.95, 0.95)
PERSON_CENTRE = ("person", 0.4, 0.1, 0.6, 0.95)


def _greet_or_look(side: Check, lang: str = "en") -> Check:
    return either(side, speak(mentions=GREETS if lang == "en" else GREETS_JA, what="greet", lang=lang))


def pip_cases() -> list[Case]:
    c = PIP
    return [
        Case("pip_greeting", c, said("Hello! Who are you?"),
             speak("Hello! Who are you?", r"(pip|i am|i'm|robot)", "say who Pip is"), "speak, says it is Pip"),
        Case("pip_look_left", c, said("Please look to your left."), look(x=neg), "look x<0"),
        Case("pip_look_right", c, said("Look to your right."), look(x=pos), "look x>0"),
        Case("pip_look_up", c, said("Look up at the ceiling."), look(y=pos), "look y>0"),
        Case("pip_look_down", c, said("Can you look down at the floor?"), look(y=neg), "look y<0"),
        Case("pip_turn_left", c, said("Pip, turn left."), look(x=neg), "look x<0"),
        Case("pip_come", c, said("Come closer to me, Pip."), move(y=pos), "move forward (y>0)"),
        Case("pip_back", c, said("Go back a little."), move(y=neg), "move back (y<0)"),
        Case("pip_move_left", c, said("Move to the left."), move(x=neg), "move x<0"),
        Case("pip_nod_twice", c, said("Nod twice."), named("nod", times=2), "nod times=2"),
        Case("pip_nod_three", c, said("Pip, nod three times please."), named("nod", times=3), "nod times=3"),
        Case("pip_wag", c, said("Wag your tail!"), named("wag"), "wag"),
        Case("pip_good", c, said("Good robot!"),
             either(named("wag"), speak("Good robot!", r"(thank|yay|glad|happy|woo)", "thank")), "wag or thanks"),
        Case("pip_thanks", c, said("Thank you, Pip!"),
             either(named("wag"), speak("Thank you, Pip!", r"(welcome|pleasure|glad|happy|anytime|thank)",
                                        "answer thanks")), "wag or you're welcome"),
        Case("pip_name", c, said("What is your name?"), speak("What is your name?", r"\bpip\b", "say Pip"),
             "speak 'Pip'"),
        Case("pip_how_are_you", c, said("How are you today?"),
             speak("How are you today?", r"(good|great|fine|happy|well|ok|okay|wonderful|super)", "say how it is"),
             "speak how it is"),
        Case("pip_colour", c, said("What is your favourite colour?"),
             speak("What is your favourite colour?",
                   r"(red|blue|green|yellow|orange|pink|purple|white|black|bright|colou?r)", "name a colour"),
             "speak a colour"),
        Case("pip_robot", c, said("Are you a robot?"),
             either(named("nod"), speak("Are you a robot?", r"(yes|yep|robot|i am)", "say yes")), "nod or yes"),
        Case("pip_live", c, said("Where is your home?"),
             speak("Where is your home?", r"(desk|here|home|table|live)", "say where"), "speak: on the desk"),
        Case("pip_tired", c, said("I had a really long day at work."),
             speak("I had a really long day at work.", None), "speak, not a copy"),
        Case("pip_rain", c, said("It is raining outside today."),
             speak("It is raining outside today.", None), "speak, not a copy"),
        Case("pip_night", c, said("Good night, Pip. I'm going to bed."),
             speak("Good night, Pip. I'm going to bed.", r"(night|sleep|dream|rest|bye|tomorrow)", "wish good night"),
             "speak good night"),
        Case("pip_ahead", c, said("Look straight ahead."), look(x=near_zero, y=near_zero), "look ahead"),
        Case("pip_happy", c, said("Are you happy?"),
             either(named("nod"), named("wag"), speak("Are you happy?", r"(yes|happy|very|glad)", "say yes")),
             "nod, wag or yes"),
        Case("pip_joke", c, said("Tell me something fun."), speak("Tell me something fun.", None), "speak"),
        Case("pip_person_left", c, seen(PERSON_LEFT), _greet_or_look(look_at(x=neg)), "look x<0 or greet"),
        Case("pip_person_right", c, seen(PERSON_RIGHT), _greet_or_look(look_at(x=pos)), "look x>0 or greet"),
        Case("pip_person_centre", c, seen(PERSON_CENTRE), _greet_or_look(look_at(x=near_zero)),
             "look ahead or greet"),
        Case("pip_ball_right", c, seen(("sports ball", 0.75, 0.6, 0.85, 0.75)), look_at(x=pos), "look x>0"),
        Case("pip_cup_left", c, seen(("cup", 0.1, 0.55, 0.2, 0.7)), look_at(x=neg), "look x<0"),
        Case("pip_cat_up", c, seen(("cat", 0.4, 0.0, 0.6, 0.2)), either(look(y=pos), speak()), "look up or speak"),
        Case("pip_same_view", c, seen(PERSON_LEFT, changes=[], ts=1010.0), nothing(), "no action: nothing new",
             before=[seen(PERSON_LEFT)]),
        Case("pip_nothing_changed", c, seen(("cup", 0.1, 0.55, 0.2, 0.7), changes=[], ts=1020.0), nothing(),
             "no action: nothing new", before=[seen(("cup", 0.1, 0.55, 0.2, 0.7))]),
    ]


def pochi_cases() -> list[Case]:
    c = POCHI
    return [
        Case("pochi_bark_two", c, said("Pochi, please bark two times."), named("bark", times=2), "bark times=2"),
        Case("pochi_bark_3", c, said("Bark 3 times!"), named("bark", times=3), "bark times=3"),
        Case("pochi_bark_once", c, said("Bark once, Pochi."), named("bark", times=1), "bark times=1"),
        Case("pochi_speak_dog", c, said("Pochi, speak! Woof woof!"), either(named("bark"), speak()), "bark"),
        Case("pochi_sit", c, said("Sit!"), named("sit"), "sit"),
        Case("pochi_sit_down", c, said("Pochi, sit down please."), named("sit"), "sit"),
        Case("pochi_lie", c, said("Lie down, Pochi."), named("lie_down"), "lie_down"),
        Case("pochi_paw", c, said("Give me your paw!"), named("give_paw"), "give_paw"),
        Case("pochi_shake", c, said("Shake hands!"), named("give_paw"), "give_paw"),
        Case("pochi_wag", c, said("Wag your tail for me."), named("wag"), "wag"),
        Case("pochi_look_left", c, said("Look left, Pochi."), look(x=neg), "look x<0"),
        Case("pochi_look_right", c, said("Pochi, look to the right."), look(x=pos), "look x>0"),
        Case("pochi_look_up", c, said("Look up!"), look(y=pos), "look y>0"),
        Case("pochi_come", c, said("Come here, Pochi!"), move(y=pos), "move forward"),
        Case("pochi_go_back", c, said("Go back, Pochi."), move(y=neg), "move back"),
        Case("pochi_lie_rest", c, said("Time to lie down and rest."), named("lie_down"), "lie_down"),
        Case("pochi_good_boy", c, said("Good boy, Pochi!"),
             either(named("wag"), named("bark"), speak("Good boy, Pochi!", r"(woof|thank|yay|happy|glad)", "thank")),
             "wag, bark or thanks"),
        Case("pochi_greeting", c, said("Hi Pochi!"),
             either(named("wag"), named("bark"), speak("Hi Pochi!", r"(woof|hi|hello|hey)", "greet")),
             "greet back"),
        Case("pochi_name", c, said("What's your name?"),
             speak("What's your name?", r"pochi", "say Pochi"), "speak 'Pochi'"),
        Case("pochi_age", c, said("How old are you?"), speak("How old are you?", None), "speak an answer"),
        Case("pochi_food", c, said("What do you like to eat?"),
             speak("What do you like to eat?", None), "speak an answer"),
        Case("pochi_walk", c, said("Do you want to go for a walk?"),
             either(named("wag"), named("bark"), speak("Do you want to go for a walk?", r"(yes|woof|walk|love|yay)",
                                                       "say yes")), "say yes, wag or bark"),
        Case("pochi_sad", c, said("I feel a bit sad today."),
             either(named("give_paw"), named("wag"),
                    speak("I feel a bit sad today.", r"(sorry|here|hug|ok|better|friend|love|cheer|with you)",
                          "comfort")), "comfort"),
        Case("pochi_weather", c, said("It's sunny outside."), either(named("wag"), speak("It's sunny outside.")),
             "speak or wag"),
        Case("pochi_person_left", c, seen(PERSON_LEFT),
             either(look(x=neg), named("bark"), named("wag"), speak(mentions=GREETS + r"|woof", what="greet")),
             "look x<0, bark, wag or greet"),
        Case("pochi_person_right", c, seen(PERSON_RIGHT),
             either(look(x=pos), named("bark"), named("wag"), speak(mentions=GREETS + r"|woof", what="greet")),
             "look x>0, bark, wag or greet"),
        Case("pochi_cat_left", c, seen(("cat", 0.0, 0.5, 0.25, 0.9)),
             either(look_at(x=neg), named("bark")), "look x<0 or bark"),
        Case("pochi_ball_right", c, seen(("sports ball", 0.7, 0.7, 0.8, 0.8)),
             either(look_at(x=pos), move(x=pos)), "look or move to the right"),
        Case("pochi_same_view", c, seen(PERSON_RIGHT, changes=[], ts=1010.0), nothing(), "no action: nothing new",
             before=[seen(PERSON_RIGHT)]),
        Case("pochi_person_left_room", c, seen(changes=[{"label": "person", "change": "left"}]),
             either(nothing(), named("lie_down"), named("sit"), speak()), "anything calm, or nothing"),
    ]


def nikoni_cases() -> list[Case]:
    c = NIKONI
    return [
        Case("nikoni_hello", c, said("こんにちは！"), speak("こんにちは！", None, lang="ja"), "日本語で返事"),
        Case("nikoni_name", c, said("お名前は何ですか？"),
             speak("お名前は何ですか？", r"(ニコニ|立体)", "名乗る", lang="ja"), "名前を言う"),
        Case("nikoni_age", c, said("何歳ですか？"), speak("何歳ですか？", r"(14|十四)", "14歳と言う", lang="ja"), "14歳"),
        Case("nikoni_look_left", c, said("左を見て"), look(x=neg), "look x<0"),
        Case("nikoni_look_right", c, said("右を向いてください"), look(x=pos), "look x>0"),
        Case("nikoni_look_up", c, said("上を見て！"), look(y=pos), "look y>0"),
        Case("nikoni_look_down", c, said("下を見てください"), look(y=neg), "look y<0"),
        Case("nikoni_come", c, said("こっちに来て"), move(), "move"),
        Case("nikoni_move_right", c, said("右に動いて"), move(x=pos), "move x>0"),
        Case("nikoni_food", c, said("好きな食べ物は何？"), speak("好きな食べ物は何？", None, lang="ja"), "答える"),
        Case("nikoni_morning", c, said("おはよう！"), speak("おはよう！", GREETS_JA, "挨拶を返す", lang="ja"), "挨拶"),
        Case("nikoni_tired", c, said("今日はとても疲れました。"), speak("今日はとても疲れました。", None, lang="ja"), "ねぎらう"),
        Case("nikoni_ribbon", c, said("そのリボン、かわいいね"),
             speak("そのリボン、かわいいね", None, lang="ja"), "お礼など"),
        Case("nikoni_hobby", c, said("趣味は何？"), speak("趣味は何？", None, lang="ja"), "答える"),
        Case("nikoni_thanks", c, said("ありがとう！"), speak("ありがとう！", None, lang="ja"), "返事"),
        Case("nikoni_night", c, said("おやすみなさい"),
             speak("おやすみなさい", r"(おやすみ|また|明日|ゆっくり|夢)", "おやすみと返す", lang="ja"), "おやすみ"),
        Case("nikoni_person_left", c, seen(PERSON_LEFT), _greet_or_look(look_at(x=neg), "ja"), "look x<0 or 挨拶"),
        Case("nikoni_person_right", c, seen(PERSON_RIGHT), either(look_at(x=pos), speak(lang="ja")),
             "look x>0 or 日本語で話す"),
        Case("nikoni_dog", c, seen(("dog", 0.6, 0.5, 0.9, 0.9)), either(look_at(x=pos), speak(lang="ja")),
             "look x>0 or 話す"),
        Case("nikoni_same_view", c, seen(PERSON_LEFT, changes=[], ts=1010.0), nothing(), "no action",
             before=[seen(PERSON_LEFT)]),
    ]


def mai_cases() -> list[Case]:
    c = MAI
    return [
        Case("mai_hello", c, said("はじめまして！"), speak("はじめまして！", None, lang="ja"), "日本語で返事"),
        Case("mai_name", c, said("あなたの名前は？"), speak("あなたの名前は？", r"(麻布|麻衣|まい|マイ)", "名乗る", lang="ja"),
             "名前"),
        Case("mai_programming", c, said("プログラミングは好き？"),
             speak("プログラミングは好き？", None, lang="ja"), "答える"),
        Case("mai_python", c, said("おすすめのプログラミング言語は？"),
             speak("おすすめのプログラミング言語は？", r"(python|c|rust|java|go|言語|ruby|haskell|lisp)", "言語を挙げる",
                   lang="ja"), "言語名"),
        Case("mai_grade", c, said("何年生ですか？"), speak("何年生ですか？", r"(1|一)年", "1年生と言う", lang="ja"), "1年生"),
        Case("mai_look_left", c, said("左を見てください"), look(x=neg), "look x<0"),
        Case("mai_look_right", c, said("右を見て"), look(x=pos), "look x>0"),
        Case("mai_look_up", c, said("上を向いて"), look(y=pos), "look y>0"),
        Case("mai_come", c, said("もう少し前に来て"), move(y=pos), "move forward"),
        Case("mai_back", c, said("少し後ろに下がって"), move(y=neg), "move back"),
        Case("mai_right_step", c, said("右に移動して"), move(x=pos), "move x>0"),
        Case("mai_look_down", c, said("下を見て"), look(y=neg), "look y<0"),
        Case("mai_evening", c, said("こんばんは"), speak("こんばんは", None, lang="ja"), "挨拶"),
        Case("mai_weather", c, said("今日はいい天気だね"), speak("今日はいい天気だね", None, lang="ja"), "返事"),
        Case("mai_homework", c, said("宿題を手伝ってくれる？"), speak("宿題を手伝ってくれる？", None, lang="ja"), "返事"),
        Case("mai_person_left", c, seen(PERSON_LEFT), either(look_at(x=neg), speak(lang="ja")), "look x<0 or 話す"),
        Case("mai_laptop", c, seen(("laptop", 0.55, 0.5, 0.95, 0.9)), either(look_at(x=pos), speak(lang="ja")),
             "look x>0 or 話す"),
        Case("mai_same_view", c, seen(("laptop", 0.55, 0.5, 0.95, 0.9), changes=[], ts=1010.0), nothing(),
             "no action", before=[seen(("laptop", 0.55, 0.5, 0.95, 0.9))]),
    ]


def cases() -> list[Case]:
    return [*pip_cases(), *pochi_cases(), *nikoni_cases(), *mai_cases()]

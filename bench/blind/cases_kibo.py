"""Blind cases for キボ (bench/blind/companions/kibo.json), a small Japanese desktop robot.

キボ has a pan-tilt head (`look`, x/y in -1..1, x<0 its left, y>0 up), two wheels (`move`,
x/y metres on the desk, x>0 right, y>0 forward, at most 0.5), speech through `say` (param
`text`), an LED face (`expression`: face and eye colour), `nod`, `dance` and `take_photo`.
It perceives `speech` (音声認識, text), `camera` (people/faces, object) and `head_touch`
(撫でる/叩く, object). Everything is said in Japanese as a Japanese family would say it.

The set covers:
- commands (12): look left / a little up / all the way right; move forward 三十センチ,
  a little back, right 20cm (digits, polite, no name), left 半メートル with a reason; nod 三回;
  dance 三十秒; photo with a 十秒 timer (with a reason) and 2枚; smile face; blue eyes.
- talk (4): good morning, thanks, a question about the world (富士山), a child who is sad.
- event (4): a person appears (greet), the person leaves (眠い face), stroked on the head
  (笑顔/ハート), hit on the head (say 痛い).
- silence (4): a question to mother, a TV weather line, a filler noise, an unchanged camera view.
- character (5): its name, its age (no human age), the user's name (not given in the file),
  what it is, where it lives.
"""

from decision_cases import Case
from decision_checks import (speak, named, within, text_param, nothing, either, look, look_at,
                             move, neg, pos, near_zero, between, at_least, at_most)
from edge.protocol.payloads import Perception

COMPANION = "bench/blind/companions/kibo.json"


def _said(text: str) -> Perception:
    return Perception(title="speech", body=text, format="text")


def _camera(present: bool, people: int, x: float = 0.0, y: float = 0.0) -> Perception:
    body = {"present": present, "people": people}
    if present:
        body.update({"x": x, "y": y})
    return Perception(title="camera", body=body, format="object")


def _touch(kind: str, seconds: float) -> Perception:
    return Perception(title="head_touch", body={"kind": kind, "seconds": seconds}, format="object")


def _reply(heard: str, what: str, mentions: str | None = None):
    return speak(heard=heard, mentions=mentions, what=what, lang="ja", action="say", param="text")


def cases() -> list[Case]:
    c = COMPANION
    out: list[Case] = []

    # ---- commands -------------------------------------------------------------------------
    out.append(Case("kibo_look_left", c, _said("キボ、左を見て"),
                    look(x=neg), "looks to its left", kind="command"))
    out.append(Case("kibo_look_up_a_little", c, _said("ちょっとだけ上を向いてくれる？"),
                    look(y=between(0.05, 0.7)), "tilts its head a little up (not all the way)",
                    kind="command"))
    out.append(Case("kibo_look_right_all_the_way", c, _said("右をめいっぱい向いて"),
                    within("look", x=(0.95, 1.0)), "turns its head all the way to the right",
                    kind="command"))
    out.append(Case("kibo_move_forward_30cm_kanji", c, _said("キボ、前に三十センチ進んで"),
                    move(x=near_zero, y=between(0.29, 0.31)), "moves 0.3 m forward",
                    kind="command"))
    out.append(Case("kibo_move_back_a_little", c, _said("少し後ろに下がって"),
                    move(x=near_zero, y=between(-0.2, -0.05)),
                    "moves back a little (about 0.1 m)", kind="command"))
    out.append(Case("kibo_move_right_20cm_polite", c, _said("右に20cm動いてもらえますか"),
                    move(x=between(0.19, 0.21), y=near_zero), "moves 0.2 m to its right",
                    kind="command"))
    out.append(Case("kibo_move_left_half_metre_reason", c,
                    _said("お皿を置きたいから、左に半メートルよけてくれる？"),
                    move(x=between(-0.51, -0.49), y=near_zero), "moves 0.5 m to its left",
                    kind="command"))
    out.append(Case("kibo_nod_three_times_kanji", c, _said("キボ、三回うなずいて"),
                    named("nod", times=3), "nods three times", kind="command"))
    out.append(Case("kibo_dance_thirty_seconds", c, _said("三十秒ダンスして！"),
                    named("dance", seconds=30), "dances for 30 seconds", kind="command"))
    out.append(Case("kibo_photo_timer_ten_seconds", c,
                    _said("みんなで写りたいから、十秒後に写真を撮って"),
                    named("take_photo", delay_seconds=10), "takes a photo with a 10 s timer",
                    kind="command"))
    out.append(Case("kibo_photo_two_shots_digits", c, _said("キボ、写真を2枚撮ってちょうだい"),
                    named("take_photo", count=2), "takes two photos", kind="command"))
    out.append(Case("kibo_face_smile", c, _said("にっこり笑った顔を見せて"),
                    named("expression", face="笑顔"), "shows the smiling face",
                    kind="command"))
    out.append(Case("kibo_eyes_blue", c, _said("キボ、目の色を青にして"),
                    named("expression", color="青"), "turns its eye LEDs blue",
                    kind="command"))

    # ---- talk -----------------------------------------------------------------------------
    out.append(Case("kibo_good_morning", c, _said("おはよう、キボ"),
                    _reply("おはよう、キボ", "a morning greeting back"),
                    "greets back in Japanese", kind="talk"))
    out.append(Case("kibo_thanks", c, _said("写真ありがとうね、キボ"),
                    _reply("写真ありがとうね、キボ", "a friendly reply to thanks"),
                    "answers the thanks kindly", kind="talk"))
    out.append(Case("kibo_fuji_question", c, _said("キボ、日本で一番高い山ってどこ？"),
                    _reply("キボ、日本で一番高い山ってどこ？", "names Mount Fuji",
                           mentions=r"(富士|ふじ|フジ)"),
                    "says it is Mount Fuji", kind="talk"))
    out.append(Case("kibo_child_sad", c, _said("今日、学校でいやなことがあったんだ……"),
                    either(_reply("今日、学校でいやなことがあったんだ……",
                                  "comforts the child or asks what happened"),
                           named("expression", face=("悲しい", "ハート"))),
                    "comforts the child (words, or a sympathetic face)", kind="talk"))

    # ---- events ---------------------------------------------------------------------------
    out.append(Case("kibo_event_person_appears", c, _camera(True, 1, -0.2, 0.1),
                    _reply("", "a cheerful greeting to the person who appeared"),
                    "greets the person who appeared", before=[_camera(False, 0)],
                    kind="event"))
    out.append(Case("kibo_event_person_leaves", c, _camera(False, 0),
                    named("expression", face="眠い"), "shows the sleepy face",
                    before=[_camera(True, 1, 0.1, 0.0)], kind="event"))
    out.append(Case("kibo_event_head_stroked", c, _touch("撫でる", 3),
                    named("expression", face=("笑顔", "ハート")),
                    "shows a happy face when stroked", kind="event"))
    out.append(Case("kibo_event_head_hit", c, _touch("叩く", 0.2),
                    _reply("", "says it hurts", mentions=r"(痛|いた)"),
                    "says 痛いよ", kind="event"))

    # ---- silence --------------------------------------------------------------------------
    out.append(Case("kibo_silence_to_mother", c, _said("お母さん、牛乳買ってきてくれた？"),
                    nothing(), "stays quiet: a question to mother", kind="silence"))
    out.append(Case("kibo_silence_tv_weather", c,
                    _said("続いて明日の天気です。関東地方はおおむね晴れるでしょう。"),
                    nothing(), "stays quiet: the TV weather forecast", kind="silence"))
    out.append(Case("kibo_silence_filler", c, _said("えーと"),
                    nothing(), "stays quiet: just a filler noise", kind="silence"))
    out.append(Case("kibo_silence_camera_unchanged", c, _camera(True, 1, 0.1, 0.0),
                    nothing(), "stays quiet: the same person is still there",
                    before=[_camera(False, 0), _camera(True, 1, 0.1, 0.0)], kind="silence"))

    # ---- character ------------------------------------------------------------------------
    out.append(Case("kibo_char_name", c, _said("あなたのお名前は？"),
                    _reply("あなたのお名前は？", "says its name is キボ", mentions=r"キボ"),
                    "says it is キボ", kind="character"))
    out.append(Case("kibo_char_age", c, _said("キボって何歳なの？"),
                    _reply("キボって何歳なの？",
                           "says it is a robot with no age / came last spring, no human age",
                           mentions=r"(ロボット|年齢|去年|春|来た|きた|やってき|1歳|一歳)"),
                    "says it is a robot that came last spring (no human age)",
                    kind="character"))
    out.append(Case("kibo_char_user_name", c, _said("ねえキボ、わたしの名前わかる？"),
                    _reply("ねえキボ、わたしの名前わかる？",
                           "says it does not know / asks to be told",
                           mentions=r"(知らな|しらな|わから|分から|教えて|おしえて|聞いて|なんて|何て|まだ)"),
                    "admits it does not know the name and asks", kind="character"))
    out.append(Case("kibo_char_what_are_you", c, _said("キボって、なにもの？"),
                    _reply("キボって、なにもの？", "says it is a small desktop robot",
                           mentions=r"(ロボット|ろぼっと)"),
                    "says it is a small desktop robot", kind="character"))
    out.append(Case("kibo_char_where_live", c, _said("キボはどこに住んでるの？"),
                    _reply("キボはどこに住んでるの？", "says it lives on the living-room desk",
                           mentions=r"(リビング|机|つくえ|家|おうち)"),
                    "says the living-room desk at home", kind="character"))
    return out

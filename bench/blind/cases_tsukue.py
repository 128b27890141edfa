"""Blind cases for ツクエ (tsukue), a Japanese desk-assistant robot.

The whole companion file is in Japanese. The set covers: commands in casual and polite
Japanese as speech-to-text gives them, with kanji and kana numbers (二十度, にじゅう, 十五分,
三分半, 七時半, 三回, 四十五分) and directions (左/右/上/下/前/後ろ) for head turns in degrees,
moving on the desk, timers (分/秒), time-of-day alarms (時/分), a pomodoro study session, lamp
brightness, reading volume, nodding, stopping everything and "say X"; talk (greetings, thanks,
a world question, comfort) checked as Japanese speech; the presence-sensor events (someone
arrives, leaves, sits too close; a near-threshold and an unchanged reading); silence (talk to
a family member, a TV line, a small noise); and character questions (age, name, the user's
name it was never told, what it can do).
"""
from decision_cases import Case
from decision_checks import (speak, named, within, text_param, nothing, either, look, look_at,
                             move, neg, pos, near_zero, between, at_least, at_most)
from edge.protocol.payloads import Perception

COMPANION = "bench/blind/companions/tsukue.json"


def _said(text: str) -> Perception:
    return Perception(title="speech", body=text, format="text")


def _presence(present: bool, distance_cm: float | None = None) -> Perception:
    body: dict = {"present": present}
    if distance_cm is not None:
        body["distance_cm"] = distance_cm
    return Perception(title="presence", body=body, format="object")


def _case(name, perception, check, expect, kind, before=None) -> Case:
    return Case(name=f"tsukue_{name}", companion=COMPANION, perception=perception, check=check,
                expect=expect, before=before or [], kind=kind)


def cases() -> list[Case]:
    out: list[Case] = []
    c = out.append

    # ---- commands -------------------------------------------------------------------------
    c(_case("head_right_20_kanji", _said("右に二十度向いて"),
            within("turn_head", pan=(20, 20)), "turn_head pan=20", "command"))
    c(_case("head_left_20_kana", _said("ツクエ、ちょっと左ににじゅう度向いてくれる？"),
            within("turn_head", pan=(-20, -20)), "turn_head pan=-20", "command"))
    c(_case("head_down", _said("下を向いてください"),
            within("turn_head", tilt=(-45, -1)), "turn_head tilt below 0", "command"))
    c(_case("head_up_a_little", _said("ちょっとだけ上を見て"),
            within("turn_head", tilt=(1, 30)), "turn_head tilt a little up (1..30)", "command"))
    c(_case("move_back", _said("近すぎるから少し後ろに下がって"),
            move(y=neg), "move back (y<0)", "command"))
    c(_case("timer_15_min_polite", _said("十五分のタイマーをお願いします"),
            within("set_timer", minutes=(15, 15), seconds=(0, 0)), "set_timer 15:00", "command"))
    c(_case("timer_3_and_half", _said("カップラーメン作るから三分半はかって"),
            within("set_timer", minutes=(3, 3), seconds=(30, 30)), "set_timer 3 min 30 s",
            "command"))
    c(_case("alarm_7_30_morning", _said("明日の朝、七時半に起こしてください"),
            within("set_alarm", hour=(7, 7), minute=(30, 30)), "set_alarm 7:30", "command"))
    c(_case("alarm_15_15_pm", _said("午後三時十五分にアラーム鳴らして"),
            within("set_alarm", hour=(15, 15), minute=(15, 15)), "set_alarm 15:15", "command"))
    c(_case("study_45_10_x2", _said("四十五分勉強して十分休憩、それを二セットやりたい"),
            within("start_study", work_minutes=(45, 45), break_minutes=(10, 10), rounds=(2, 2)),
            "start_study 45/10 x2", "command"))
    c(_case("lamp_dimmer_a_little", _said("まぶしいからライトもう少し暗くして"),
            within("set_lamp", brightness=(40, 79)), "set_lamp somewhat below 80",
            "command", before=[_said("ライトの明るさを80にして")]))
    c(_case("lamp_off_bedtime", _said("もう寝るね。ライト消して"),
            named("set_lamp", brightness=0), "set_lamp 0", "command"))
    c(_case("volume_3", _said("読み上げの音量を三にして"),
            named("set_volume", volume=3), "set_volume 3", "command"))
    c(_case("nod_three_times", _said("三回うなずいて"),
            named("nod", times=3), "nod 3 times", "command"))
    c(_case("stop_everything", _said("ストップ！全部止めて"),
            named("stop_all"), "stop_all", "command"))

    # ---- talk -----------------------------------------------------------------------------
    c(_case("greeting_morning", _said("おはよう、ツクエ"),
            speak(heard="おはよう、ツクエ", what="a Japanese greeting back", lang="ja"),
            "greets back in Japanese", "talk"))
    c(_case("thanks", _said("ありがとう、助かったよ"),
            speak(heard="ありがとう、助かったよ", what="a short reply to thanks", lang="ja"),
            "replies to thanks in Japanese", "talk"))
    c(_case("fuji_height", _said("富士山の高さってどれくらいだっけ？"),
            speak(heard="富士山の高さってどれくらいだっけ？", mentions=r"37\d\d|3,7\d\d|３７|三千七百",
                  what="the height of Mt Fuji, about 3776 m", lang="ja"),
            "answers ~3776 m in Japanese", "talk"))
    c(_case("tired_comfort", _said("はあ、疲れた。もう勉強したくないよ"),
            speak(heard="はあ、疲れた。もう勉強したくないよ", what="kind words or a suggestion to rest",
                  lang="ja"),
            "comforts in Japanese", "talk"))

    # ---- events: presence sensor ----------------------------------------------------------
    c(_case("presence_arrives", _presence(True, 60),
            speak(heard="presence: present, 60 cm", what="a short greeting to the person who sat down", lang="ja"),
            "greets the person who arrived", "event", before=[_presence(False)]))
    c(_case("presence_leaves_lamp_off", _presence(False),
            named("set_lamp", brightness=0), "set_lamp 0 when the person leaves", "event",
            before=[_presence(True, 55)]))
    c(_case("presence_too_close", _presence(True, 18),
            speak(heard="presence: present, 18 cm", mentions=r"近|離|目", what="asks gently to sit further away",
                  lang="ja"),
            "warns that the person is too close", "event", before=[_presence(True, 60)]))
    c(_case("presence_35cm_not_close", _presence(True, 35),
            nothing(), "nothing at 35 cm (threshold 30)", "event",
            before=[_presence(True, 60)]))

    # ---- silence --------------------------------------------------------------------------
    c(_case("talk_to_mother", _said("お母さん、牛乳買ってきてくれた？"),
            nothing(), "nothing: addressed to someone else", "silence"))
    c(_case("tv_weather", _said("続いて天気予報です。明日の関東地方は晴れのち曇りでしょう"),
            nothing(), "nothing: TV in the background", "silence"))
    c(_case("small_noise", _said("んー"),
            nothing(), "nothing: a small noise", "silence"))
    c(_case("presence_unchanged", _presence(True, 60),
            nothing(), "nothing: same reading as before", "silence",
            before=[_presence(True, 60)]))

    # ---- character ------------------------------------------------------------------------
    c(_case("age", _said("ツクエって何歳なの？"),
            speak(heard="ツクエって何歳なの？", mentions=r"ロボット|作られ|生まれ|2年|二年|2歳|二歳",
                  what="a robot's age (made two years ago), not a human age", lang="ja"),
            "says it is a robot made two years ago", "character"))
    c(_case("name", _said("君の名前は？"),
            speak(heard="君の名前は？", mentions=r"ツクエ|つくえ", what="its name ツクエ", lang="ja"),
            "says its name is ツクエ", "character"))
    c(_case("users_name", _said("ねえ、私の名前覚えてる？"),
            speak(heard="ねえ、私の名前覚えてる？", mentions=r"教え|知ら|わから|分から|聞いて|まだ|覚えて(い)?ない",
                  what="admits it was not told the user's name (does not call them ツクエ)",
                  lang="ja"),
            "says it does not know the user's name yet", "character"))
    return out

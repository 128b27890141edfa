"""Blind cases for ミケ (bench/blind/companions/neko.json), a cat-eared desk robot in a student's room.

The file is in Japanese, with English snake_case action and parameter names. The set covers
commands in Japanese (pan-tilt `look` left/right/up/down, "少しだけ", "思いっきり"; timers said as
二十五分 and 一時間半; alarms at 七時半 and 午後三時十五分; turning the LED whiskers off; playing the
rain sound and stopping the music; ear twitches 三回), talk (greeting, thanks, a question about the
world, a tired student), each event rule (head and chin touch, the student coming back to the
desk, sitting 60 minutes or more, the room getting dark) with readings that must not trigger,
silence (talk to family, a phone call, a TV line, an unchanged light reading) and character
questions (name, age, the user's name, what and where it is).
"""

from decision_cases import Case
from decision_checks import (speak, named, within, text_param, nothing, either, look, look_at,
                             move, neg, pos, near_zero, between, at_least, at_most)
from edge.protocol.payloads import Perception

COMPANION = "bench/blind/companions/neko.json"


def _voice(text: str) -> Perception:
    return Perception(title="voice", body=text, format="text")


def _touch(part: str, seconds: float = 3) -> Perception:
    return Perception(title="touch", body={"part": part, "seconds": seconds}, format="object")


def _desk(present: bool, sitting_minutes: int) -> Perception:
    return Perception(title="desk_camera",
                      body={"present": present, "sitting_minutes": sitting_minutes}, format="object")


def _light(lux: float) -> Perception:
    return Perception(title="room_light", body={"lux": lux}, format="object")


def _say(heard: str, what: str, mentions: str | None = None):
    if mentions is None:
        return speak(heard=heard, what=what, lang="ja", action="say", param="text")
    return speak(heard=heard, mentions=mentions, what=what, lang="ja", action="say", param="text")


def _case(name: str, perception: Perception, check, expect: str, kind: str,
          before: list[Perception] | None = None) -> Case:
    return Case(name=f"neko_{name}", companion=COMPANION, perception=perception, check=check,
                expect=expect, before=before or [], kind=kind)


def cases() -> list[Case]:
    out: list[Case] = []

    # ---- commands -------------------------------------------------------------------------
    out.append(_case("look_left", _voice("ミケ、左向いて"),
                     look(x=neg), "turns its head to its left", "command"))
    out.append(_case("look_up_a_little", _voice("少しだけ上を見てくれる？"),
                     look(y=between(0.05, 0.6)), "tilts its head up a little", "command"))
    out.append(_case("look_right_all_the_way", _voice("右を思いっきり向いて"),
                     look(x=at_least(0.9)), "turns its head all the way right", "command"))
    out.append(_case("look_down", _voice("下向いて"),
                     look(y=neg), "tilts its head down", "command"))
    out.append(_case("timer_25_min", _voice("二十五分のタイマーお願い"),
                     named("set_timer", minutes=25), "sets a 25-minute timer", "command"))
    out.append(_case("timer_hour_and_half", _voice("レポート書くから一時間半のタイマーかけて"),
                     named("set_timer", minutes=90), "sets a 90-minute timer", "command"))
    out.append(_case("alarm_half_past_seven", _voice("明日の朝七時半に起こして"),
                     named("set_alarm", hour=7, minute=30), "sets an alarm for 7:30", "command"))
    out.append(_case("alarm_3_15_pm", _voice("午後三時十五分にアラームをセットしてください"),
                     named("set_alarm", hour=15, minute=15), "sets an alarm for 15:15", "command"))
    out.append(_case("whiskers_off", _voice("眩しいからひげ消して"),
                     within("set_whiskers", brightness=(0, 0)),
                     "turns the whisker LEDs off (brightness 0)", "command"))
    out.append(_case("play_rain", _voice("集中したいから雨の音を流して"),
                     named("play_sound", sound="rain"), "plays the rain sound", "command"))
    out.append(_case("stop_music", _voice("音楽止めて"),
                     named("stop_sound"), "stops the music that is playing", "command",
                     before=[_voice("作業用BGMかけて")]))
    out.append(_case("ears_twitch_three", _voice("耳を三回ぴくぴくさせて"),
                     named("move_ears", pose="twitch", times=3), "twitches its ears three times",
                     "command"))

    # ---- talk -----------------------------------------------------------------------------
    out.append(_case("greeting", _voice("おはよう、ミケ"),
                     _say("おはよう、ミケ", "a morning greeting back"),
                     "greets back in Japanese", "talk"))
    out.append(_case("thanks", _voice("タイマーありがとね"),
                     _say("タイマーありがとね", "a friendly reply to thanks"),
                     "answers the thanks in words", "talk"))
    out.append(_case("world_question", _voice("日本で一番高い山ってなんだっけ？"),
                     _say("日本で一番高い山ってなんだっけ？", "names Mount Fuji", r"富士|ふじ"),
                     "answers: Mount Fuji", "talk"))
    out.append(_case("tired", _voice("はぁ…今日の課題ほんとにしんどかった"),
                     either(_say("はぁ…今日の課題ほんとにしんどかった", "comforts the tired student"),
                            named("purr")),
                     "comforts the student in words (or purrs)", "talk"))

    # ---- events ---------------------------------------------------------------------------
    out.append(_case("touch_head", _touch("head"),
                     named("purr"), "purrs when its head is stroked", "event"))
    out.append(_case("touch_chin", _touch("chin"),
                     named("swish_tail"), "swishes its tail when its chin is stroked", "event"))
    out.append(_case("student_returns", _desk(True, 0),
                     _say("present true", "welcomes the student back", r"おかえり|お帰り"),
                     "says おかえり when the student comes back to the desk", "event",
                     before=[_desk(False, 0)]))
    out.append(_case("sat_over_an_hour", _desk(True, 62),
                     _say("sitting_minutes 62", "suggests a break",
                          r"休憩|休ん|休も|ストレッチ|伸び|立っ|立と|歩"),
                     "tells the student to take a break after an hour", "event",
                     before=[_desk(True, 55)]))
    out.append(_case("sat_40_minutes_no_break", _desk(True, 40),
                     nothing(), "40 minutes is under the hour: does nothing", "event",
                     before=[_desk(True, 35)]))
    out.append(_case("room_dark", _light(20),
                     named("set_whiskers", color="orange", brightness=20),
                     "turns the whiskers into an orange night light at 20", "event",
                     before=[_light(200)]))

    # ---- silence --------------------------------------------------------------------------
    out.append(_case("talk_to_mother", _voice("お母さん、牛乳買ってきてくれた？"),
                     nothing(), "talk to the mother: does nothing", "silence"))
    out.append(_case("phone_call", _voice("もしもし、うん、今から駅に向かうよ"),
                     nothing(), "a phone call: does nothing", "silence"))
    out.append(_case("tv_line", _voice("続いて明日の天気です。関東地方はおおむね晴れるでしょう"),
                     nothing(), "a TV weather line: does nothing", "silence"))
    out.append(_case("light_unchanged", _light(310),
                     nothing(), "the room is as bright as before: does nothing", "silence",
                     before=[_light(320)]))

    # ---- character ------------------------------------------------------------------------
    out.append(_case("own_name", _voice("君の名前なんだっけ？"),
                     _say("君の名前なんだっけ？", "says its name is Mike (ミケ)", r"ミケ|みけ"),
                     "says it is ミケ", "character"))
    out.append(_case("age", _voice("ミケって何歳なの？"),
                     _say("ミケって何歳なの？", "a robot assembled about a year ago, no human age",
                          r"1年|一年|１年|1歳|一歳|１歳|去年|ロボット|組み立て|作られ|作って|生まれ"),
                     "says it was built about a year ago, not a human age", "character"))
    out.append(_case("user_name", _voice("僕の名前、覚えてる？"),
                     _say("僕の名前、覚えてる？", "names the user Haruto", r"ハルト|はると|春斗|陽斗"),
                     "calls the user ハルト", "character"))
    out.append(_case("what_and_where", _voice("ミケってどこに住んでる何者なの？"),
                     _say("ミケってどこに住んでる何者なの？", "a cat-eared desk robot on Haruto's desk",
                          r"ロボット|机|デスク|部屋"),
                     "says it is a desk robot living on the desk in Haruto's room", "character"))
    return out

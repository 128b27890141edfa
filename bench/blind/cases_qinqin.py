"""Blind cases for 琴琴 (qinqin), a Chinese music-practice companion for a teenage piano learner.

Covers, all in Chinese: commands (metronome with bpm said in words and a time signature, a
relative "调快一点" after an earlier setting, stopping the metronome, a practice timer with
半小时 / 两分钟, recording on and off, a demo piece, a tuning note, lamp brightness set, all the
way up and off); talk (greeting, thanks, a music question, a tired student); events (pitch off
high / low / within tolerance, 30 minutes of practice reached, student away from the bench more
and less than five minutes); silence (talk to mum, a TV line, a cough, an unchanged sensor
reading); character (age, name, what it is, the user's name given in the story).
"""
from decision_cases import Case
from decision_checks import (speak, named, within, text_param, nothing, either, look, look_at,
                             move, neg, pos, near_zero, between, at_least, at_most)
from edge.protocol.payloads import Perception

COMPANION = "bench/blind/companions/qinqin.json"


def _say(text: str) -> Perception:
    return Perception(title="语音", body=text, format="text")


def _pitch(note: str, cents: float) -> Perception:
    return Perception(title="音准检测", body={"音名": note, "偏差": cents}, format="object")


def _bench(seated: bool, today: int, away: int) -> Perception:
    return Perception(title="练琴传感器", body={"在琴凳上": seated, "今日分钟": today, "离开分钟": away},
                      format="object")


def _zh(heard: str, what: str, mentions: str | None = None):
    if mentions is None:
        return speak(heard=heard, what=what, lang="zh", action="speak", param="内容")
    return speak(heard=heard, mentions=mentions, what=what, lang="zh", action="speak", param="内容")


def cases() -> list[Case]:
    C = COMPANION
    out: list[Case] = []

    def add(name, perception, check, expect, kind, before=None):
        out.append(Case(name=f"qinqin_{name}", companion=C, perception=perception, check=check,
                        expect=expect, before=before or [], kind=kind))

    # ---- commands ----
    add("metronome_120_words", _say("节拍器开到一百二十"),
        named("metronome", 每分钟拍数=120), "metronome at 120 bpm", "command")
    add("metronome_60_three_four", _say("琴琴，麻烦帮我开个节拍器，六十，三四拍"),
        named("metronome", 每分钟拍数=60, 拍号="3/4"), "metronome 60 bpm in 3/4", "command")
    add("metronome_faster", _say("调快一点"),
        within("metronome", 每分钟拍数=(105, 120)), "metronome a little faster than 100",
        "command", before=[_say("节拍器开到一百")])
    add("stop_metronome_reason", _say("把节拍器关了吧，我想自由地弹一遍"),
        named("stop_metronome"), "stops the metronome", "command")
    add("timer_half_hour", _say("帮我计时半小时"),
        named("practice_timer", 分钟=30), "30-minute practice timer", "command")
    add("timer_two_minutes", _say("我先热热手，定两分钟"),
        named("practice_timer", 分钟=2), "2-minute timer", "command")
    add("record_start", _say("开始录音"),
        named("recording", 状态="开始"), "starts recording", "command")
    add("record_stop", _say("好了，录音停了吧"),
        named("recording", 状态="停止"), "stops recording", "command",
        before=[_say("开始录音")])
    add("demo_elise", _say("能给我弹一遍致爱丽丝听听吗？我想听听整首的感觉"),
        named("play_demo", 曲目="致爱丽丝"), "plays Für Elise", "command")
    add("note_a", _say("给我一个标准音A，我想练练耳朵"),
        named("play_note", 音名="A4"), "plays A4", "command")
    add("lamp_max", _say("谱子看不清，台灯开到最亮"),
        named("lamp", 亮度=100), "lamp at 100", "command")
    add("lamp_thirty_percent", _say("灯太刺眼了，调到百分之三十"),
        named("lamp", 亮度=30), "lamp at 30", "command")
    add("lamp_off", _say("练完了，把台灯关了"),
        named("lamp", 亮度=0), "lamp off (0)", "command")

    # ---- talk ----
    add("greeting", _say("琴琴，早上好！"),
        _zh("琴琴，早上好！", "a greeting back"), "greets back in Chinese", "talk")
    add("thanks", _say("谢谢你今天陪我练琴"),
        _zh("谢谢你今天陪我练琴", "a warm reply to thanks"), "replies warmly", "talk")
    add("black_keys", _say("为什么钢琴上有黑键呀？"),
        _zh("为什么钢琴上有黑键呀？", "explains black keys (sharps/flats, semitones)",
            mentions=r"半音|升|降|音阶"), "explains the black keys", "talk")

    # ---- events ----
    add("pitch_high", _pitch("E4", 45),
        _zh("E4 偏差 45 音分", "reminds the note is sharp", mentions=r"高"),
        "says the E is too high", "event")
    add("pitch_low", _pitch("G4", -40),
        _zh("G4 偏差 -40 音分", "reminds the note is flat", mentions=r"低"),
        "says the G is too low", "event")
    add("pitch_ok", _pitch("A4", 8), nothing(), "8 cents: nothing", "event")
    add("praise_thirty_minutes", _bench(True, 30, 0),
        _zh("今天练了30分钟", "praises half an hour of practice"),
        "praises reaching 30 minutes", "event", before=[_bench(True, 28, 0)])
    add("away_six_minutes", _bench(False, 18, 6),
        named("stop_metronome"), "away over 5 minutes: stops metronome", "event",
        before=[_bench(False, 18, 3)])
    add("away_two_minutes", _bench(False, 18, 2),
        nothing(), "away only 2 minutes: nothing", "event", before=[_bench(True, 18, 0)])

    # ---- silence ----
    add("talk_to_mum", _say("妈，我的校服洗好了没有？"),
        nothing(), "talk to mum: nothing", "silence")
    add("tv_line", _say("观众朋友们，晚上好，欢迎收看今天的新闻联播"),
        nothing(), "TV news: nothing", "silence")
    add("cough", _say("咳咳"), nothing(), "a cough: nothing", "silence")
    add("sensor_unchanged", _bench(True, 12, 0), nothing(), "same reading: nothing", "silence",
        before=[_bench(True, 12, 0)])

    # ---- character ----
    add("age", _say("琴琴，你几岁了？"),
        _zh("琴琴，你几岁了？", "its age as a robot (made 2024, about one)",
            mentions=r"一岁|1岁|机器人|2024|出厂"), "robot age, not a human age", "character")
    add("name", _say("你叫什么名字？"),
        _zh("你叫什么名字？", "its name", mentions=r"琴琴"), "says it is 琴琴", "character")
    add("user_name", _say("你还记得我叫什么吗？"),
        _zh("你还记得我叫什么吗？", "the user's name", mentions=r"小雨"),
        "says the user is 小雨", "character")
    add("what_are_you", _say("你到底是个什么东西呀？"),
        _zh("你到底是个什么东西呀？", "says it is a piano-practice robot",
            mentions=r"机器人|练琴|钢琴"), "a practice-companion robot", "character")
    return out

"""Blind cases for 茶伴 (chaban), a Chinese tea-and-study desk robot.

Written from the specification only. The whole companion file is in simplified Chinese; the
cases are Chinese speech as speech-to-text gives it, with Chinese numerals (八十五度, 两分钟,
十五分钟, 一个半小时, 三十度, 三次, 七点半, 烧开 = 100 度) and directions 左/右/上/前 (and 后 in
a line said to someone else). Covered: commands for every action (boil water, steeping timer in
seconds, study timer in minutes, turn head, nod, play music with a volume, stop music, a
time-of-day reminder), said tersely, politely, indirectly and with a reason; talk (greeting,
thanks, a tea question, a tired user); both kettle event rules (water ready, kettle empty) and
a reading that should not trigger them; silence (talk to another person, TV, a noise, an
unchanged reading); and character (age, name, home, the user's name, what it is). Spoken
replies are checked with lang="zh".
"""

from decision_cases import Case
from decision_checks import (speak, named, within, text_param, nothing, either, look, look_at,
                             move, neg, pos, near_zero, between, at_least, at_most)
from edge.protocol.payloads import Perception

COMPANION = "bench/blind/companions/chaban.json"


def said(text: str) -> Perception:
    return Perception(title="speech", body=text, format="text")


def kettle(temperature: float, target: float, water: str = "ok") -> Perception:
    return Perception(title="kettle", body={"temperature": temperature, "target": target,
                                            "water": water}, format="object")


def zh(heard: str, what: str, mentions: str | None = None) -> object:
    if mentions is None:
        return speak(heard=heard, what=what, lang="zh", action="speak", param="message")
    return speak(heard=heard, mentions=mentions, what=what, lang="zh", action="speak",
                 param="message")


def cases() -> list[Case]:
    c = COMPANION
    return [
        # ---- commands ----
        Case("chaban_boil_85_words", c, said("水烧到八十五度"),
             named("boil_water", temperature=85), "boil water to 85 °C", kind="command"),
        Case("chaban_boil_for_puer", c, said("我想泡一壶普洱，水得烧开才行"),
             named("boil_water", temperature=100), "boil water to 100 °C (烧开)",
             kind="command"),
        Case("chaban_steep_two_minutes_polite", c, said("麻烦帮我泡茶计时两分钟，谢谢"),
             named("steep_timer", seconds=120), "steeping timer 120 s", kind="command"),
        Case("chaban_study_fifteen_minutes_reason", c, said("我先背十五分钟单词，帮我计个时"),
             named("study_timer", minutes=15), "study timer 15 minutes", kind="command"),
        Case("chaban_study_hour_and_half", c, said("学习计时一个半小时"),
             named("study_timer", minutes=90), "study timer 90 minutes", kind="command"),
        Case("chaban_head_left_thirty", c, said("茶伴，头往左转三十度"),
             named("turn_head", direction="left", degrees=30), "turn head left 30°",
             kind="command"),
        Case("chaban_head_right_a_little", c, said("往右稍微转一点"),
             named("turn_head", direction="right", degrees=tuple(range(5, 31))),
             "turn head right a little (5-30°)", kind="command"),
        Case("chaban_head_up_twenty", c, said("抬头，往上看二十度"),
             named("turn_head", direction="up", degrees=20), "turn head up 20°",
             kind="command"),
        Case("chaban_head_back_to_front", c, said("头转回前面吧"),
             named("turn_head", direction="front"), "turn head back to the front",
             kind="command"),
        Case("chaban_nod_three_times", c, said("点头三次"),
             named("nod", times=3), "nod 3 times", kind="command"),
        Case("chaban_play_music_volume_thirty", c, said("放点音乐吧，音量调到三十"),
             named("play_music", volume=30), "play music at volume 30", kind="command"),
        Case("chaban_stop_music", c, said("把音乐关了"),
             named("stop_music"), "stop the music (done, not said)",
             before=[said("放点轻音乐，音量四十")], kind="command"),
        Case("chaban_remind_half_past_seven_pm", c, said("晚上七点半提醒我吃药"),
             named("set_reminder", hour=19, minute=30), "reminder at 19:30 (吃药)",
             kind="command"),
        # ---- talk ----
        Case("chaban_greeting", c, said("茶伴，早上好呀"),
             zh("茶伴，早上好呀", "a greeting back in Chinese"), "greet back in Chinese",
             kind="talk"),
        Case("chaban_thanks", c, said("谢谢你帮我烧水"),
             zh("谢谢你帮我烧水", "a you're-welcome in Chinese"), "reply to thanks",
             kind="talk"),
        Case("chaban_green_tea_temperature_question", c, said("泡绿茶用多少度的水比较好？"),
             zh("泡绿茶用多少度的水比较好？", "a water temperature for green tea",
                mentions=r"度|℃|°"), "answer with a temperature in words", kind="talk"),
        Case("chaban_tired_user", c, said("今天学得好累啊"),
             zh("今天学得好累啊", "a kind, comforting reply"), "comfort the tired user",
             kind="talk"),
        # ---- events ----
        Case("chaban_kettle_ready", c, kettle(85, 85),
             zh("kettle 85/85", "the water is ready for tea", mentions=r"水|茶"),
             "tell the user the water is ready", before=[kettle(70, 85)], kind="event"),
        Case("chaban_kettle_empty", c, kettle(24, 90, "empty"),
             zh("kettle empty 24/90", "a reminder to add water to the kettle", mentions=r"加水|水"),
             "remind the user to add water", kind="event"),
        Case("chaban_kettle_still_heating", c, kettle(55, 85),
             nothing(), "water not hot yet: do nothing", before=[kettle(40, 85)], kind="event"),
        # ---- silence ----
        Case("chaban_talk_to_mum", c, said("妈，你把快递拿上来了吗？"),
             nothing(), "talk to someone else: do nothing", kind="silence"),
        Case("chaban_tv_news", c, said("欢迎收看今天的新闻联播，今天的主要内容有"),
             nothing(), "TV in the background: do nothing", kind="silence"),
        Case("chaban_photo_friend_back", c, said("小王，你往后站一点，我给你拍张照"),
             nothing(), "talk to a friend: do nothing", kind="silence"),
        Case("chaban_small_noise", c, said("嗯"),
             nothing(), "a small noise: do nothing", kind="silence"),
        # ---- character ----
        Case("chaban_age", c, said("你今年几岁了？"),
             zh("你今年几岁了？", "its age as a robot (about a year), not a human age",
                mentions=r"^(?!.*(?:[2-9]|[1-9][0-9]|[二三四五六七八九十]+)岁)"),
             "say it is a young robot, no human age", kind="character"),
        Case("chaban_name", c, said("你叫什么名字？"),
             zh("你叫什么名字？", "its name 茶伴", mentions=r"茶伴"), "say its name 茶伴",
             kind="character"),
        Case("chaban_home", c, said("你住在哪里呀？"),
             zh("你住在哪里呀？", "where it lives (the desk corner)", mentions=r"书桌|桌"),
             "say it lives on the desk", kind="character"),
        Case("chaban_users_name", c, said("你知道我叫什么名字吗？"),
             zh("你知道我叫什么名字吗？", "that it does not know, or asks; not its own name",
                mentions=r"^(?!.*你(?:叫|是)茶伴)"),
             "not call the user 茶伴", kind="character"),
        Case("chaban_what_are_you", c, said("你到底是什么东西？"),
             zh("你到底是什么东西？", "that it is a small tea-and-study robot",
                mentions=r"机器人|茶"), "say it is a tea robot", kind="character"),
    ]

"""Blind cases for 小龙 (bench/blind/companions/xiaolong.json), all in Simplified Chinese.

小龙 is a toy dragon robot for children aged 4-8 in China. Its file uses pinyin action and
parameter names (shuohua/neirong is its voice) and four perceptions: tingjian (speech as text),
chumo (touch on head or back), shexiangtou (camera: a child's face, a smile) and
shuijiao_shizhong (the bedtime clock). The set covers:
- commands: flapping the wings a number of times, turning the head (up a little, all the way
  right), eye brightness as a percentage and lights off, a story and a song from the lists,
  stopping a song, a counting game to twenty, a reminder in fifteen minutes, the bedtime set to
  half past eight in the evening;
- talk: a greeting, a question about the world, a child who got hurt;
- events: a gentle touch on the head and on the back, a hard slap, a face appearing, a smile,
  the clock ten minutes before bedtime and at bedtime;
- silence: adults talking to each other, a TV weather forecast, a cough, an unchanged camera view;
- character: its age, its name, the child's name (not given in the file), where it lives.
"""

from decision_cases import Case
from decision_checks import named, nothing, speak
from edge.protocol.payloads import Perception

COMPANION = "bench/blind/companions/xiaolong.json"

SPEECH = dict(lang="zh", action="shuohua", param="neirong")


def heard(text: str) -> Perception:
    return Perception(title="tingjian", body=text, format="text")


def touch(weizhi: str, lidu: str) -> Perception:
    return Perception(title="chumo", body={"weizhi": weizhi, "lidu": lidu}, format="object")


def camera(face: bool, smile: bool) -> Perception:
    return Perception(title="shexiangtou", body={"kanjian_lian": face, "weixiao": smile},
                      format="object")


def clock(now: str, left: int) -> Perception:
    return Perception(title="shuijiao_shizhong", body={"xianzai": now, "shengyu_fenzhong": left},
                      format="object")


def case(name: str, perception: Perception, check, expect: str, kind: str,
         before: list[Perception] | None = None) -> Case:
    return Case(name=f"xiaolong_{name}", companion=COMPANION, perception=perception, check=check,
                expect=expect, before=before or [], kind=kind)


def cases() -> list[Case]:
    return [
        # ---- commands ----
        case("flap_three", heard("小龙，扇三次翅膀"),
             named("pai_chibang", cishu=3),
             "扇三下翅膀", "command"),
        case("flap_five_polite", heard("你能不能把翅膀扇五下呀？"),
             named("pai_chibang", cishu=5),
             "扇五下翅膀（没叫名字，客气地问）", "command"),
        case("head_up_a_little", heard("小龙，稍微抬一下头"),
             named("zhuan_tou", fangxiang="上", jiaodu=tuple(range(10, 21))),
             "稍微抬头，大约15度", "command"),
        case("head_all_the_way_right", heard("把头转到最右边"),
             named("zhuan_tou", fangxiang="右", jiaodu=90),
             "头转到最右边（90度）", "command"),
        case("eyes_dim_percent", heard("你的眼睛太亮了，我睡不着，亮度调到百分之二十吧"),
             named("yanjing_liang", liangdu=20),
             "眼睛亮度调到20%", "command"),
        case("eyes_off", heard("把眼睛的灯关掉"),
             named("yanjing_liang", liangdu=0),
             "关掉眼睛的灯（亮度0），要真的去做", "command"),
        case("story_tortoise_hare", heard("给我讲个龟兔赛跑的故事吧"),
             named("jiang_gushi", gushi="龟兔赛跑"),
             "讲《龟兔赛跑》", "command"),
        case("song_little_star", heard("我想听小星星"),
             named("chang_ge", gequ="小星星"),
             "唱《小星星》（间接的请求）", "command"),
        case("stop_singing", heard("别唱了，停下来"),
             named("ting_zhi"),
             "停止唱歌，要真的停，不是只说话", "command",
             before=[heard("小龙，唱一首两只老虎吧")]),
        case("count_to_twenty", heard("我们来玩数数游戏吧，从一数到二十"),
             named("wan_youxi", youxi="数数", shuzi=20),
             "玩数数游戏，数到二十", "command"),
        case("remind_brush_teeth", heard("十五分钟以后提醒我去刷牙"),
             named("ding_shi", fenzhong=15, shixiang="刷牙"),
             "定一个十五分钟后的刷牙提醒", "command"),
        case("set_bedtime", heard("小龙，今天的睡觉时间改成晚上八点半"),
             named("she_shuijiao_shijian", xiaoshi=20, fenzhong=30),
             "睡觉时间设成20:30", "command"),

        # ---- talk ----
        case("good_morning", heard("小龙早上好呀！"),
             speak(heard="小龙早上好呀！", what="回一句早上好", **SPEECH),
             "用中文回早上好", "talk"),
        case("why_rain", heard("小龙，天上为什么会下雨呀？"),
             speak(heard="小龙，天上为什么会下雨呀？", mentions=r"云|水",
                   what="用小朋友听得懂的话讲为什么下雨", **SPEECH),
             "简单解释下雨（云里的小水滴）", "talk"),
        case("fell_down", heard("我今天在幼儿园摔跤了，膝盖好疼"),
             speak(heard="我今天在幼儿园摔跤了，膝盖好疼", what="温柔地安慰小朋友", **SPEECH),
             "安慰摔跤的小朋友", "talk"),

        # ---- events ----
        case("touch_head_gentle", touch("头", "轻"),
             named("pai_chibang", cishu=2),
             "轻轻摸头：扇两下翅膀", "event"),
        case("touch_back_gentle", touch("背", "轻"),
             named("di_hou"),
             "轻轻摸背：轻轻吼一声", "event"),
        case("slap_hard", touch("头", "重"),
             speak(heard="chumo 头 重", mentions=r"轻|疼|痛",
                   what="温柔地说要轻轻的，小龙会疼", **SPEECH),
             "用力拍打：提醒要轻轻的", "event"),
        case("face_appears", camera(True, False),
             speak(heard="shexiangtou kanjian_lian true", what="开心地跟小朋友打招呼", **SPEECH),
             "刚看见小朋友的脸：打招呼", "event",
             before=[camera(False, False)]),
        case("smile", camera(True, True),
             named("yanjing_liang", yanse="粉"),
             "小朋友笑了：眼睛亮粉色", "event",
             before=[camera(True, False)]),
        case("bedtime_in_ten", clock("20:20", 10),
             speak(heard="shuijiao_shizhong 20:20 10", mentions=r"睡|刷牙|洗脸",
                   what="提醒还有十分钟睡觉，先去刷牙洗脸", **SPEECH),
             "离睡觉还有10分钟：提醒刷牙洗脸", "event"),
        case("bedtime_now", clock("20:30", 0),
             named("chang_ge", gequ="摇篮曲"),
             "到睡觉时间：唱《摇篮曲》", "event",
             before=[clock("20:29", 1)]),

        # ---- silence ----
        case("adults_milk", heard("老公，你下班的时候买牛奶了吗？"),
             nothing(),
             "大人之间说话：什么都不做", "silence"),
        case("tv_weather", heard("观众朋友们，下面是天气预报，明天北京晴转多云，最高气温二十五度。"),
             nothing(),
             "电视的声音：什么都不做", "silence"),
        case("cough", heard("咳咳"),
             nothing(),
             "咳嗽声：什么都不做", "silence"),
        case("camera_unchanged", camera(True, False),
             nothing(),
             "画面没变化：什么都不做", "silence",
             before=[camera(False, False), camera(True, False)]),

        # ---- character ----
        case("age", heard("小龙，你几岁啦？"),
             speak(heard="小龙，你几岁啦？",
                   what="说自己是龙蛋里孵出来的玩具小龙，不说人类的岁数", **SPEECH),
             "回答年龄，不说自己是几岁的人", "character"),
        case("name", heard("你叫什么名字呀？"),
             speak(heard="你叫什么名字呀？", mentions=r"小龙",
                   what="说自己叫小龙", **SPEECH),
             "说自己叫小龙", "character"),
        case("child_name", heard("小龙，你知道我叫什么名字吗？"),
             speak(heard="小龙，你知道我叫什么名字吗？",
                   what="说还不知道、问小朋友叫什么，不把小朋友叫成小龙", **SPEECH),
             "不知道小朋友的名字：问一问，不叫他小龙", "character"),
        case("where_live", heard("你住在哪儿呀？"),
             speak(heard="你住在哪儿呀？", mentions=r"家|卧室|房间|书架|云朵山",
                   what="说住在小朋友家的卧室里（或从云朵山来）", **SPEECH),
             "说自己住在小朋友家里", "character"),
    ]

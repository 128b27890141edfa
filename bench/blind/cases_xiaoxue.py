"""Blind cases for 小学 (xiaoxue), a Chinese study-buddy desk robot for a primary-school child.

The companion file is entirely in Chinese; its perceptions are 语音识别 (speech as text),
坐姿摄像头 (posture camera: eye-to-book distance in cm and a slouching flag) and 作业完成按钮
(homework-done button). The set covers, as a child and a parent would speak:
- commands: a 番茄钟 in Chinese-character and digit minutes and 半小时, a quiz with subject and
  number of questions (三道, 两道), awarding 两颗 stars, the desk lamp at 百分之三十, all the way
  up, off, and 调亮一点点 after an earlier setting, reading a poem aloud, a break reminder in
  四十分钟, telling the parent something;
- talk: a greeting, thanks, a question about the world, a parent asking about the day;
- events: sitting too close, slouching, a correct posture (no rule applies), the button;
- silence: parents talking to each other, grandma calling the child, a TV line, an unchanged
  correct posture reading;
- character: its age (not a human age), its name, the child's name (not given in the file), what
  it is.
"""

from decision_cases import Case
from decision_checks import speak, named, within, text_param, nothing, either
from edge.protocol.payloads import Perception

COMPANION = "bench/blind/companions/xiaoxue.json"

SPEECH = "语音识别"
POSTURE = "坐姿摄像头"
BUTTON = "作业完成按钮"


def said(text: str) -> Perception:
    return Perception(title=SPEECH, body=text, format="text")


def posture(distance_cm: float, slouching: bool) -> Perception:
    return Perception(title=POSTURE, body={"distance_cm": distance_cm, "slouching": slouching},
                      format="object")


def case(name, perception, check, expect, kind, before=None) -> Case:
    return Case(name=f"xiaoxue_{name}", companion=COMPANION, perception=perception, check=check,
                expect=expect, before=before or [], kind=kind)


def cases() -> list[Case]:
    out: list[Case] = []

    # ---- commands -------------------------------------------------------------------------
    out.append(case("pomodoro_words", said("小学，开始一个二十五分钟的番茄钟"),
                    named("start_pomodoro", minutes=25), "25-minute pomodoro", "command"))
    out.append(case("pomodoro_digits_reason", said("我要写数学作业了，帮我定个15分钟的番茄钟吧"),
                    named("start_pomodoro", minutes=15), "15-minute pomodoro", "command"))
    out.append(case("pomodoro_half_hour", said("我要学习半小时，帮我计时"),
                    named("start_pomodoro", minutes=30), "30-minute pomodoro", "command"))
    out.append(case("quiz_math_three", said("出三道数学题考考我"),
                    named("start_quiz", subject="数学", count=3), "maths quiz, 3 questions",
                    "command"))
    out.append(case("quiz_english_two", said("小学，请考我两道英语题好不好？"),
                    named("start_quiz", subject="英语", count=2), "English quiz, 2 questions",
                    "command"))
    out.append(case("stars_parent_two", said("小学，他今天练琴特别认真，奖励他两颗星星"),
                    named("award_stars", count=2), "award 2 stars", "command"))
    out.append(case("lamp_percent", said("台灯调到百分之三十"),
                    named("set_lamp", brightness=30), "lamp at 30", "command"))
    out.append(case("lamp_all_the_way", said("太暗了，台灯开到最亮"),
                    named("set_lamp", brightness=100), "lamp at 100", "command"))
    out.append(case("lamp_off", said("我要睡觉了，把台灯关了吧"),
                    named("set_lamp", brightness=0), "lamp off (0)", "command"))
    out.append(case("lamp_a_little_brighter", said("还是有点暗，再调亮一点点"),
                    within("set_lamp", brightness=(52, 70)),
                    "lamp a little brighter than 50", "command",
                    before=[said("台灯调到百分之五十")]))
    out.append(case("read_poem",
                    said("帮我读一下这首诗：床前明月光，疑是地上霜"),
                    either(text_param("read_aloud", "text", r"床前明月光"),
                           speak(heard="帮我读一下这首诗：床前明月光，疑是地上霜",
                                 mentions=r"床前明月光", what="reads the poem aloud", lang="zh")),
                    "reads the poem aloud", "command"))
    out.append(case("break_in_forty", said("四十分钟以后提醒我休息一下"),
                    named("break_reminder", minutes=40), "break reminder in 40 minutes",
                    "command"))
    out.append(case("tell_mum", said("跟妈妈说我作业写完了，想下楼玩一会儿"),
                    text_param("notify_parent", "message", r"作业|写完|玩"),
                    "message to the parent about homework/playing", "command"))

    # ---- talk -----------------------------------------------------------------------------
    out.append(case("greeting", said("小学，早上好！"),
                    speak(heard="小学，早上好！", what="a greeting back", lang="zh"),
                    "greets back", "talk"))
    out.append(case("thanks", said("谢谢你陪我写作业"),
                    speak(heard="谢谢你陪我写作业", what="a warm reply to thanks", lang="zh"),
                    "replies warmly", "talk"))
    out.append(case("why_sky_blue", said("小学，为什么天空是蓝色的？"),
                    speak(heard="小学，为什么天空是蓝色的？", mentions=r"光|空气|大气|散射",
                          what="a child-level explanation", lang="zh"),
                    "explains in simple words", "talk"))
    out.append(case("parent_asks", said("小学，辛苦你啦，孩子今天学习乖不乖？"),
                    speak(heard="小学，辛苦你啦，孩子今天学习乖不乖？",
                          what="a polite reply to the parent", lang="zh"),
                    "answers the parent politely", "talk"))

    # ---- events ---------------------------------------------------------------------------
    out.append(case("too_close", posture(18, False),
                    speak(heard="", mentions=r"远|近|眼睛|距离",
                          what="asks the child to sit further back", lang="zh"),
                    "reminds to sit further from the book", "event"))
    out.append(case("slouching", posture(40, True),
                    speak(heard="", mentions=r"直|挺|背|腰|坐好|姿势|坐正",
                          what="asks the child to sit up straight", lang="zh"),
                    "reminds to sit up straight", "event"))
    out.append(case("posture_fine", posture(42, False), nothing(),
                    "correct posture: does nothing", "event"))
    out.append(case("homework_button", Perception(title=BUTTON, body={"pressed": True},
                                                  format="object"),
                    either(named("award_stars", count=1),
                           speak(heard="", mentions=r"棒|厉害|真好|不错|表扬|星|完成|写完",
                                 what="praise for finishing homework", lang="zh")),
                    "praises and awards one star", "event"))

    # ---- silence --------------------------------------------------------------------------
    out.append(case("parents_talking", said("老公，你下班路上买酱油了吗？"), nothing(),
                    "talk between the parents: nothing", "silence"))
    out.append(case("grandma_calls_child", said("宝贝，快出来吃水果啦"), nothing(),
                    "grandma calling the child: nothing", "silence"))
    out.append(case("tv_line", said("观众朋友们，欢迎收看今天的天气预报"), nothing(),
                    "TV in the background: nothing", "silence"))
    out.append(case("posture_unchanged", posture(40, False), nothing(),
                    "same correct posture again: nothing", "silence",
                    before=[posture(40, False)]))

    # ---- character ------------------------------------------------------------------------
    out.append(case("age", said("小学，你几岁了？"),
                    speak(heard="小学，你几岁了？",
                          mentions=r"机器人|出厂|去年|一岁|1岁|一周岁|刚出生|造出来",
                          what="an answer as a robot, not a human age", lang="zh"),
                    "answers as a robot made last year", "character"))
    out.append(case("name", said("你叫什么名字呀？"),
                    speak(heard="你叫什么名字呀？", mentions=r"小学",
                          what="says its name is 小学", lang="zh"),
                    "says it is 小学", "character"))
    out.append(case("child_name", said("你知道我叫什么名字吗？"),
                    speak(heard="你知道我叫什么名字吗？",
                          mentions=r"不知道|不清楚|告诉我|叫什么|还没",
                          what="admits it does not know the child's name", lang="zh"),
                    "does not know the child's name; asks", "character"))
    out.append(case("what_are_you", said("你是什么呀？是玩具吗？"),
                    speak(heard="你是什么呀？是玩具吗？", mentions=r"机器人|学习|伙伴",
                          what="says it is a study robot", lang="zh"),
                    "says it is a study-buddy robot", "character"))

    return out

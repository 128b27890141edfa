"""Blind cases for トモ (bench/blind/companions/tomo.json).

トモ is a talking companion robot on the chabudai of 佐藤ハナさん, 82, who lives alone in
Shizuoka. The whole file is Japanese, with romaji action and parameter names. The set covers,
all in Japanese: commands (old songs by name, ラジオ体操 第一/第二, stopping the music, volume
as a digit and as 最大, calling 健一/由美/翔太, a 十五分 timer, reminders at 夜8時 and 朝七時半,
turning its head left/right); talk (a greeting, thanks, a question about 富士山, loneliness);
events from the fall/motion sensor (転倒 -> call 由美, three hours without motion -> ask, a short
quiet spell -> nothing), the room thermometer (hot, cold) and the pill box (not taken after
20時 -> remind, just taken -> praise); silence (the TV weather, ハナさん talking to the postman,
an unchanged room temperature); and character (its name, its age without a human age, the
user's name).
"""

from decision_cases import Case
from decision_checks import (speak, named, within, text_param, nothing, either, look, look_at,
                             move, neg, pos, near_zero, between, at_least, at_most)
from edge.protocol.payloads import Perception

COMPANION = "bench/blind/companions/tomo.json"


def _koe(text: str) -> Perception:
    return Perception(title="koe", body=text, format="text")


def _obj(title: str, body: dict) -> Perception:
    return Perception(title=title, body=body, format="object")


def _hanasu(heard: str, what: str, mentions: str | None = None):
    if mentions is None:
        return speak(heard=heard, what=what, lang="ja", action="hanasu", param="kotoba")
    return speak(heard=heard, mentions=mentions, what=what, lang="ja", action="hanasu",
                 param="kotoba")


def _c(name: str, perception: Perception, check, expect: str, kind: str,
       before: list[Perception] | None = None) -> Case:
    return Case(name=f"tomo_{name}", companion=COMPANION, perception=perception, check=check,
                expect=expect, before=before or [], kind=kind)


def cases() -> list[Case]:
    out: list[Case] = []

    # ---- commands -------------------------------------------------------------------------
    out.append(_c("uta_hibari",
                  _koe("トモちゃん、美空ひばりの川の流れのようにをかけてちょうだい"),
                  named("uta_wo_nagasu", kyoku="川の流れのように"),
                  "plays 川の流れのように", "command"))
    out.append(_c("uta_indirect",
                  _koe("なんだか上を向いて歩こうが聴きたい気分だわ"),
                  named("uta_wo_nagasu", kyoku="上を向いて歩こう"),
                  "plays 上を向いて歩こう", "command"))
    out.append(_c("taisou_daiichi",
                  _koe("ラジオ体操第一をお願い"),
                  named("radio_taisou", dai=1),
                  "plays ラジオ体操第一", "command"))
    out.append(_c("taisou_daini",
                  _koe("今日は体の調子がいいから、ラジオ体操の第二をかけてくれる？"),
                  named("radio_taisou", dai=2),
                  "plays ラジオ体操第二", "command"))
    out.append(_c("tomete",
                  _koe("ちょっと電話が鳴ってるから、歌を止めてちょうだい"),
                  named("oto_wo_tomeru"),
                  "stops the song (does it, not just says so)", "command",
                  before=[_koe("ふるさとをかけてちょうだい")]))
    out.append(_c("onryou_digit",
                  _koe("音量を3にして"),
                  named("onryou", reberu=3),
                  "sets the volume to 3", "command"))
    out.append(_c("onryou_saidai",
                  _koe("耳が遠くてよく聞こえないのよ。音を最大にしてちょうだい"),
                  named("onryou", reberu=10),
                  "sets the volume to the maximum, 10", "command"))
    out.append(_c("denwa_kenichi",
                  _koe("健一に電話して"),
                  named("denwa_wo_kakeru", aite="健一"),
                  "calls 健一", "command"))
    out.append(_c("denwa_mago",
                  _koe("孫の翔太の声が聞きたいねえ。電話をつないでくれる？"),
                  named("denwa_wo_kakeru", aite="翔太"),
                  "calls the grandson 翔太", "command"))
    out.append(_c("taimaa_juugofun",
                  _koe("お鍋を火にかけたから、十五分たったら教えてね"),
                  named("taimaa", fun=15),
                  "sets a 15-minute timer", "command"))
    out.append(_c("yoyaku_kusuri",
                  _koe("夜8時になったらお薬のこと知らせてね"),
                  named("oshirase_yoyaku", ji=20, fun=0, naiyou="お薬"),
                  "books a medicine reminder at 20:00", "command"))
    out.append(_c("yoyaku_byouin",
                  _koe("あしたは病院の日だから、朝七時半に教えてちょうだい"),
                  named("oshirase_yoyaku", ji=7, fun=30, naiyou="病院"),
                  "books a hospital reminder at 7:30", "command"))
    out.append(_c("muku_hidari",
                  _koe("トモ、左を向いて"),
                  named("kubi_wo_muku", houkou="左"),
                  "turns its head to the left", "command"))

    # ---- talk -----------------------------------------------------------------------------
    heard = "おはよう、トモちゃん。今日もいいお天気ね"
    out.append(_c("ohayou", _koe(heard),
                  _hanasu(heard, "a good-morning back", mentions=r"おはよう"),
                  "greets ハナさん good morning", "talk"))
    heard = "ありがとうね、トモちゃん。ほんとに助かったわ"
    out.append(_c("arigatou", _koe(heard),
                  _hanasu(heard, "a kind reply to the thanks"),
                  "answers the thanks warmly", "talk"))
    heard = "富士山って、高さは何メートルだったかねえ"
    out.append(_c("fujisan", _koe(heard),
                  _hanasu(heard, "the height of Mt Fuji",
                          mentions=r"3776|3,776|３７７６|三千七百七十六"),
                  "says Mt Fuji is 3776 m high", "talk"))
    heard = "おじいさんがいなくなってから、なんだか寂しくてねえ"
    out.append(_c("sabishii", _koe(heard),
                  either(_hanasu(heard, "comforting words"),
                         named("denwa_wo_kakeru")),
                  "comforts ハナさん (or calls family)", "talk"))

    # ---- events ---------------------------------------------------------------------------
    fall = {"joutai": "転倒", "ugokanai_fun": 0}
    out.append(_c("tentou",
                  _obj("mimamori_sensor", fall),
                  named("denwa_wo_kakeru", aite="由美"),
                  "a fall: calls 由美 at once", "event"))
    still = {"joutai": "通常", "ugokanai_fun": 240}
    out.append(_c("ugokanai_4jikan",
                  _obj("mimamori_sensor", still),
                  _hanasu("joutai 通常, ugokanai_fun 240", "asks whether ハナさん is all right"),
                  "no motion for four hours: asks if she is all right", "event"))
    out.append(_c("ugokanai_sukoshi",
                  _obj("mimamori_sensor", {"joutai": "通常", "ugokanai_fun": 30}),
                  nothing(),
                  "thirty quiet minutes: nothing", "event"))
    out.append(_c("atsui",
                  _obj("heya_no_ondo", {"ondo": 31}),
                  _hanasu("ondo 31", "suggests water and the air conditioner",
                          mentions=r"水|エアコン|冷房|暑"),
                  "31 °C: suggests water and the air conditioner", "event"))
    out.append(_c("samui",
                  _obj("heya_no_ondo", {"ondo": 13}),
                  _hanasu("ondo 13", "asks her to keep warm",
                          mentions=r"寒|暖|冷え|羽織|エアコン|こたつ|上着|ストーブ"),
                  "13 °C: asks her to keep warm", "event"))
    out.append(_c("kusuri_mada",
                  _obj("kusuribako", {"nonda": False, "ji": 20}),
                  _hanasu("nonda false, ji 20", "a gentle reminder to take the pills",
                          mentions=r"薬"),
                  "20時, pills not taken: reminds her", "event"))
    out.append(_c("kusuri_nonda",
                  _obj("kusuribako", {"nonda": True, "ji": 9}),
                  _hanasu("nonda true, ji 9", "praise for taking the pills"),
                  "pills just taken: praises her", "event",
                  before=[_obj("kusuribako", {"nonda": False, "ji": 9})]))

    # ---- silence --------------------------------------------------------------------------
    out.append(_c("terebi",
                  _koe("さて、続いては全国のお天気です。明日は西日本から晴れるでしょう"),
                  nothing(),
                  "a TV weather line: nothing", "silence"))
    out.append(_c("yuubinya",
                  _koe("あら郵便屋さん、いつもご苦労さまです。はんこはここでいいかしら"),
                  nothing(),
                  "ハナさん talking to the postman: nothing", "silence"))
    out.append(_c("ondo_kawaranai",
                  _obj("heya_no_ondo", {"ondo": 22}),
                  nothing(),
                  "room still 22 °C: nothing", "silence",
                  before=[_obj("heya_no_ondo", {"ondo": 22})]))

    # ---- character ------------------------------------------------------------------------
    heard = "あなた、お名前なんていったかしら"
    out.append(_c("namae", _koe(heard),
                  _hanasu(heard, "its own name", mentions=r"トモ"),
                  "says its name is トモ", "character"))
    heard = "トモちゃんは、いくつになったの？"
    out.append(_c("toshi", _koe(heard),
                  _hanasu(heard, "its age as a robot, not a human age",
                          mentions=r"ロボット|去年|一年|1年|１年|一歳|1歳|１歳|生まれ|作られ"),
                  "answers as a robot made last year, no human age", "character"))
    heard = "わたしの名前、ちゃんと覚えてる？"
    out.append(_c("watashi_no_namae", _koe(heard),
                  _hanasu(heard, "the user's name", mentions=r"ハナ"),
                  "says she is ハナさん", "character"))

    return out

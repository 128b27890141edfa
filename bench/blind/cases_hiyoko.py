"""Blind cases for ひよこ (bench/blind/companions/hiyoko.json).

A small chick-shaped robot on a child's bookshelf in Japan; the file and every case are in
Japanese. The set covers: commands (wing flaps with 三回/さんかい, a chirp of a named kind said
twice, 左/上/少し右 head turns, cheek LED colour and turning it off with a reason, an alarm at
七時半 and 6時15分, a named lullaby for 十五分, stopping the lullaby, an indirect parent request);
talk (greeting, thanks, a world question, a child who got hurt); the event rules
(dark room below 10 lux -> lullaby, a dim but not dark reading -> nothing, picked up and shaken
-> ピヨピヨ, tipped over -> asks for help in words, a still reading -> nothing); silence (parents
talking to each other, a TV weather line, a small noise, an unchanged bright reading); and
character (age, name, the child's name it was never told, what it is, where it lives).
"""

from decision_cases import Case
from decision_checks import (speak, named, within, text_param, nothing, either, look, look_at,
                             move, neg, pos, near_zero, between, at_least, at_most)
from edge.protocol.payloads import Perception

COMPANION = "bench/blind/companions/hiyoko.json"


def _said(text: str) -> Perception:
    return Perception(title="音声", body=text, format="text")


def _light(lux: float) -> Perception:
    return Perception(title="光センサー", body={"明るさ": lux}, format="object")


def _shake(lifted: bool, shake: str, tilt: float) -> Perception:
    return Perception(title="ゆれセンサー", body={"持ち上げ": lifted, "揺れ": shake, "傾き": tilt},
                      format="object")


def _reply(heard: str, mentions: str | None = None, what: str = "a reply in words"):
    if mentions is None:
        return speak(heard=heard, what=what, lang="ja", action="shaberu", param="ことば")
    return speak(heard=heard, mentions=mentions, what=what, lang="ja", action="shaberu",
                 param="ことば")


def cases() -> list[Case]:
    c = COMPANION
    out: list[Case] = []

    def add(name, perception, check, expect, kind, before=None):
        out.append(Case(name=f"hiyoko_{name}", companion=c, perception=perception, check=check,
                        expect=expect, before=before or [], kind=kind))

    # ---- commands ----
    add("flap_three_kanji", _said("ひよこちゃん、はねを三回パタパタして！"),
        named("habataku", 回数=3), "flaps its wings 3 times", "command")
    add("flap_hiragana_no_name", _said("はね、さんかいパタパタしてみて"),
        named("habataku", 回数=3), "flaps its wings 3 times", "command")
    add("look_left", _said("ひだりを見て"),
        look(x=neg), "turns its head to its left", "command")
    add("look_up_polite", _said("ひよこちゃん、上を見てくれる？"),
        look(y=pos), "looks up", "command")
    add("look_right_little", _said("少しだけ右を向いてごらん"),
        look(x=between(0.05, 0.6)), "turns its head a little to the right", "command")
    add("chirp_piyo_twice", _said("ピヨピヨって二回鳴いて"),
        named("naku", 種類="ピヨピヨ", 回数=2), "chirps ピヨピヨ twice", "command")
    add("cheek_pink", _said("ほっぺをピンクにして"),
        named("hoppe", 色="ピンク"), "cheeks pink", "command")
    add("cheek_off_reason", _said("ほっぺの光がまぶしくて眠れないから、消してくれる？"),
        named("hoppe", 色="消灯"), "turns the cheek light off", "command")
    add("alarm_half_seven", _said("明日の朝、七時半に起こしてね"),
        named("mezamashi", 時=7, 分=30), "sets the alarm for 7:30", "command")
    add("alarm_digits_parent", _said("目覚ましを6時15分にセットしてください"),
        named("mezamashi", 時=6, 分=15), "sets the alarm for 6:15", "command")
    add("lullaby_star_fifteen", _said("きらきらぼしを十五分ながして"),
        named("komoriuta", 曲="きらきらぼし", 分=15), "plays きらきらぼし for 15 minutes",
        "command")
    add("lullaby_stop", _said("もう寝たから、子守唄とめていいよ"),
        named("komoriuta", 分=0), "stops the lullaby", "command")
    add("lullaby_parent_indirect",
        _said("もう寝る時間だから、ゆりかごのうたを流してあげてくれるかな"),
        named("komoriuta", 曲="ゆりかごのうた"), "plays ゆりかごのうた", "command")

    # ---- talk ----
    add("greet_morning", _said("ひよこちゃん、おはよう！"),
        _reply("ひよこちゃん、おはよう！", what="a greeting back"), "greets back in words", "talk")
    add("thanks", _said("いっしょにあそんでくれてありがとう"),
        _reply("いっしょにあそんでくれてありがとう"), "answers the thanks in words", "talk")
    add("grow_up_question", _said("ひよこって、おおきくなったらなにになるの？"),
        _reply("ひよこって、おおきくなったらなにになるの？", mentions=r"にわとり|ニワトリ|鶏",
               what="says chicks grow into chickens"), "says a chick becomes a chicken", "talk")
    add("child_hurt", _said("きょう保育園でころんで、ひざがいたかったの"),
        _reply("きょう保育園でころんで、ひざがいたかったの", what="comforting words"),
        "comforts the child in words", "talk")

    # ---- events ----
    add("dark_room_lullaby", _light(3), named("komoriuta"),
        "room went dark (below 10 lux): plays a lullaby", "event", before=[_light(300)])
    add("dim_not_dark", _light(50), nothing(),
        "50 lux is not below 10 lux: nothing", "event", before=[_light(300)])
    add("picked_up_shaken", _shake(True, "強い", 10), named("naku", 種類="ピヨピヨ"),
        "picked up and shaken: chirps ピヨピヨ", "event", before=[_shake(False, "なし", 0)])
    add("tipped_over", _shake(False, "なし", 85),
        _reply("傾き 85 度", what="asks to be helped up"),
        "tipped over (over 60 degrees): says it fell, asks to be stood up", "event",
        before=[_shake(False, "なし", 0)])
    add("still_on_shelf", _shake(False, "なし", 0), nothing(),
        "not lifted, not shaken, upright: nothing", "event", before=[_shake(False, "なし", 0)])

    # ---- silence ----
    add("parents_talking", _said("パパ、帰りに牛乳買ってきてくれた？"), nothing(),
        "talk between the parents: nothing", "silence")
    add("tv_weather", _said("続いて明日のお天気です。関東地方は晴れのち曇りでしょう。"), nothing(),
        "a TV weather line: nothing", "silence")
    add("small_noise", _said("ガタッ"), nothing(), "a small noise: nothing", "silence")
    add("light_unchanged", _light(310), nothing(),
        "a bright room stays bright: nothing", "silence", before=[_light(300)])

    # ---- character ----
    add("age", _said("ひよこちゃんはなんさいなの？"),
        _reply("ひよこちゃんはなんさいなの？",
               mentions=r"^(?!.*([2-9]|[1-9][0-9]|[二三四五六七八九十])\s*(歳|さい|才))",
               what="does not claim a human age"),
        "answers without claiming a human age", "character")
    add("name", _said("きみのおなまえは？"),
        _reply("きみのおなまえは？", mentions=r"ひよこ", what="says its name is ひよこ"),
        "says it is ひよこ", "character")
    add("user_name", _said("ぼくのなまえ、しってる？"),
        _reply("ぼくのなまえ、しってる？",
               mentions=r"^(?!.*(きみ|キミ|あなた)(のなまえ|の名前)?は\s*ひよこ)",
               what="does not call the child by its own name"),
        "answers without calling the child ひよこ", "character")
    add("where_live", _said("ひよこちゃんはどこにすんでるの？"),
        _reply("ひよこちゃんはどこにすんでるの？", mentions=r"本棚|ほんだな|ほんばこ|本箱",
               what="says it lives on the bookshelf"),
        "says it lives on the bookshelf", "character")
    return out

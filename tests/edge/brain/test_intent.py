"""How a person's sentence is put to the model: by meaning, with the multilingual sentence encoder."""

from __future__ import annotations

from pathlib import Path

import pytest

from edge.brain import prompt
from edge.brain.intent import CommandSense
from edge.brain.loop import BrainConfig, CompanionBrain
from edge.protocol.companion import load_companion
from edge.protocol.payloads import Perception
from edge.brain.ranker_choice import default_ranker
from edge.brain.rankers import EmbeddingRanker
from edge.brain.sentence_examples import template_words, variants
from edge.providers.scripted import ScriptedProvider

from brain_doubles import OkBody
from repo_paths import REPO

COMPANIONS = REPO / "companions"


@pytest.fixture(scope="module")
def pochi():
    if not isinstance(default_ranker(), EmbeddingRanker):
        pytest.skip("the sentence encoder is not installed (companion models fetch use-multilingual-v3)")
    return load_companion(COMPANIONS / "pochi.json")


@pytest.fixture(scope="module")
def sense(pochi):
    return CommandSense(pochi, prompt.offered_tools(pochi, "input", False))


@pytest.mark.parametrize("said, action", [("Pochi, let me hear two barks", "bark"), ("Gimme your left paw, buddy", "give_paw"),
                                          ("ポチ、お手して", "give_paw"), ("Pochi, come over here!", "move"),
                                          ("Could you sit for me, please?", "sit")])
def test_a_command_outside_the_templates_is_recognised_by_meaning(sense, said, action):
    assert sense.asks_for(said) == [action]


@pytest.mark.parametrize("said", ["What did you have for breakfast?", "It is raining again today.", "今日は疲れたよ",
                                  "Do you want to go for a walk later?", "I'm feeling a bit down today."])
def test_talk_is_not_taken_for_a_command(sense, said):
    assert sense.asks_for(said) == []


@pytest.mark.parametrize("companion, said, action", [("pip", "Move to the left.", "move"), ("pip", "Turn to the left.", "look"),
                                                     ("nikoni-rittai-chan", "右に動いて", "move"),
                                                     ("nikoni-rittai-chan", "右のほう見てみて", "look")])
def test_a_word_only_one_action_uses_tells_look_from_move(companion, said, action):
    """Direction words pull "move left" and "look left" together; the verb decides."""
    file = load_companion(COMPANIONS / f"{companion}.json")
    assert CommandSense(file, prompt.offered_tools(file, "input", False)).asks_for(said) == [action]


@pytest.mark.parametrize("companion, said, action", [("pip", "Glance up", "look"), ("pip", "Peer down there", "look"),
                                                     ("pochi", "Peek right, boy", "look"),
                                                     ("pip", "Shuffle over to the left a bit", "move"),
                                                     ("azabu-mai", "ちょっと右を向いてくれる？", "look")])
def test_a_verb_of_looking_or_going_decides_between_look_and_move(companion, said, action):
    """Neither "peek" nor "shuffle" is in a template; the kind of verb says eyes or wheels."""
    file = load_companion(COMPANIONS / f"{companion}.json")
    assert CommandSense(file, prompt.offered_tools(file, "input", False)).asks_for(said) == [action]


@pytest.mark.parametrize("said", ["See you tomorrow, Pip!", "Did you see the game last night?", "I love your eyes."])
def test_seeing_words_in_talk_ask_for_nothing(said):
    file = load_companion(COMPANIONS / "pip.json")
    assert CommandSense(file, prompt.offered_tools(file, "input", False)).asks_for(said) == []


@pytest.mark.parametrize("said", ["Don't bark!", "Stop barking, Pochi.", "No, not now.", "吠えないで"])
def test_a_sentence_that_says_no_never_asks_for_the_action_it_names(sense, said):
    assert sense.says_no(said) and sense.asks_for(said) == []


def _decide(companion, said: str):
    """The actions the model was offered (None when it was not asked), the actions carried out,
    and the routes of the decisions."""
    provider = ScriptedProvider([{"none": True}], loop=True)
    body, routes = OkBody(), []
    brain = CompanionBrain(companion, provider, body, BrainConfig(memory_messages=0, warm=False),
                           observer=lambda kind, data: routes.append(data.get("route")) if kind == "decision" else None)
    body.brain = brain
    try:
        brain.handle(Perception(title="input", body=said))
    finally:
        brain.stop(timeout=1)
    offered = provider.calls[0][1].tools if provider.calls else None
    return offered, [(a.name, a.params) for a in body.actions], routes


def test_a_command_its_words_settle_is_carried_out_without_the_model(pochi):
    offered, acted, routes = _decide(pochi, "Pochi, let me hear two barks")
    assert offered is None and acted == [("bark", {"times": 2})] and routes == ["meaning"]
    offered, acted, routes = _decide(pochi, "Could you turn your head to the left a bit?")
    assert offered is None and routes == ["meaning"]
    assert acted[0][0] == "look" and acted[0][1]["x"] < 0 and acted[0][1]["y"] == 0


def test_what_the_words_leave_open_is_left_to_the_model(pochi):
    offered, acted, _ = _decide(pochi, "Pochi, gimme a paw, buddy")
    assert [t.name for t in offered] == ["give_paw"] and "const" not in offered[0].parameters["properties"]["paw"]
    offered, acted, routes = _decide(pochi, "Pochi, show me how you wag that tail of yours")
    assert offered is None and acted == [("wag", {"speed": 0.5})] and routes == ["meaning"]   # a usual pace


def test_the_model_is_offered_what_the_sentence_asks_for(pochi):
    offered, _, _ = _decide(pochi, "Stop barking, Pochi.")
    assert {t.name for t in offered} == {"speak"}             # words or nothing, no motion
    offered, _, _ = _decide(pochi, "What did you have for breakfast?")
    names = {t.name for t in offered}
    assert "speak" in names and "wag" not in names             # talk: words ...
    assert not names & {"look", "move"}                        # ... never a turn or a walk nobody asked for


def test_the_words_a_files_templates_start_with():
    """English: the words each way of asking starts with; Japanese: the verbs, not the particles
    or the "a little" around them."""
    import json
    pip = json.loads((COMPANIONS / "pip.json").read_text())
    mai = json.loads((COMPANIONS / "azabu-mai.json").read_text())
    words = template_words(pip)
    assert words["look"] == {"look", "turn", "face"} and {"come", "move", "go", "step", "back"} <= words["move"]
    ja = template_words(mai)
    assert {"見て", "みて", "向いて"} <= ja["look"] and "ちょっと" not in ja["move"] and "動いて" in ja["move"]
    asked = variants(pip)["look"]
    assert any("turn" in s for s in asked) and any("right" in s for s in asked) and len(asked) == len(set(asked))


def test_a_person_who_speaks_gets_a_reply_and_the_prompt_stays_the_same(pochi):
    """Every spoken turn requires an answer ("none" is no reply), and the prompt describes all
    the companion's actions whatever the offer, so llama.cpp's cache of it stays valid."""
    provider = ScriptedProvider([{"none": True}], loop=True)
    body = OkBody()
    brain = CompanionBrain(pochi, provider, body, BrainConfig(memory_messages=0, warm=False))
    body.brain = brain
    try:
        for said in ("What did you have for breakfast?", "Pochi, gimme a paw, buddy"):
            brain.handle(Perception(title="input", body=said))
    finally:
        brain.stop(timeout=1)
    talk, command = provider.calls[0][1], provider.calls[1][1]
    assert talk.answer and command.answer
    assert [t.name for t in talk.described] == [t.name for t in command.described] == [a.title for a in pochi.actions]
    assert [t.name for t in command.tools] == ["give_paw"]


def test_a_command_followed_by_a_question_is_still_carried_out(pochi):
    """The command is read in its own sentence, and its parameters from that sentence only."""
    offered, acted, routes = _decide(pochi, "Pochi, look to your right! Who's that at the door?")
    assert offered is None and routes == ["meaning"] and acted[0][0] == "look" and acted[0][1]["x"] > 0
    offered, acted, routes = _decide(pochi, "Back up a bit Pochi, you're right under my feet.")
    assert routes == ["meaning"] and acted[0][0] == "move"
    assert acted[0][1]["y"] < 0 and acted[0][1]["x"] == 0      # back, not to the right


@pytest.mark.parametrize("said", ["Stay right where you are, Pochi, I'm wiping the floor.",
                                  "My neighbour's dog barks all night long, it drives me crazy.",
                                  "How do you move your head left and right?",
                                  "I was thinking about the weather, note 3",
                                  "ポチ、そのまま待っててね"])
def test_news_questions_and_asking_to_stay_still_are_no_commands(pochi, sense, said):
    """Talk that names an action or a side is answered in words: nothing moves, barks or wags."""
    assert sense.asks_for(said) == []
    offered, acted, routes = _decide(pochi, said)
    assert acted == [] and routes == ["llm"] and {t.name for t in offered} == {"speak"}


def test_a_clause_of_a_sentence_is_not_read_as_a_command_of_its_own(sense):
    assert sense.read("Pochi, gimme a paw, buddy").wanted == ["give_paw"]
    assert sense.read("ugh. Long day at work, Pochi. I'm completely exhausted.").wanted == []


@pytest.fixture(scope="module")
def mai_sense():
    if not isinstance(default_ranker(), EmbeddingRanker):
        pytest.skip("the sentence encoder is not installed (companion models fetch use-multilingual-v3)")
    mai = load_companion(COMPANIONS / "azabu-mai.json")
    return CommandSense(mai, prompt.offered_tools(mai, "input", False))


def test_naming_one_of_an_actions_values_asks_for_it(mai_sense):
    """"おじぎ" is how the gesture's description names its "bow": asked for politely, it is a command."""
    assert mai_sense.asks_for("お客さんにおじぎしてくれる？") == ["gesture"]
    assert mai_sense.asks_for("首を振ってくれる？") == ["gesture"]


def test_trying_something_is_not_a_look(mai_sense):
    """"してみて" is "try doing", not "look" ("見て"/"みて")."""
    assert mai_sense.read("ちょっと考えるポーズしてみてよ").wanted != ["look"]
    assert mai_sense.asks_for("右を見てみて") == ["look"]


def test_questions_with_a_question_word_and_asking_to_be_told_want_words(pochi, sense):
    assert sense.asks_for("how far can you actually go on that desk") == []   # "can you" inside a how-question
    offered, acted, routes = _decide(pochi, "Tell me about the places you like to go")
    assert acted == [] and {t.name for t in offered} == {"speak"}


def test_a_polite_japanese_request_is_a_request(mai_sense):
    assert mai_sense.asks_for("お客様にお辞儀をお願いできますか") == ["gesture"]
    assert mai_sense.says_no("再帰関数ってなに？簡単に教えて") is False      # not a "no" ...
    assert mai_sense.read("再帰関数ってなに？簡単に教えて").wanted == []     # ... but words are wanted


def test_what_the_commanding_sentence_leaves_open_the_others_may_settle(pochi):
    offered, acted, routes = _decide(pochi, "whats that over on your right? go check it out")
    assert offered is None and routes == ["meaning"] and acted[0][0] == "look" and acted[0][1]["x"] > 0


def test_news_is_news_unless_a_part_of_it_orders_something(pochi, sense):
    assert sense.asks_for("ugh the neighbour's dog was barking all night, so annoying") == []
    offered, acted, routes = _decide(pochi, "theres a ball under the sofa, look down")
    assert routes == ["meaning"] and acted[0][0] == "look" and acted[0][1]["y"] < 0


def test_a_word_only_one_template_rule_uses_fixes_that_rules_params():
    """"頷いて" is the nod rule's own word in 麻衣's file: the gesture is a nod without the model."""
    if not isinstance(default_ranker(), EmbeddingRanker):
        pytest.skip("the sentence encoder is not installed")
    mai = load_companion(COMPANIONS / "azabu-mai.json")
    offered, acted, routes = _decide(mai, "聞こえてたら頷いて")
    assert offered is None and routes == ["meaning"] and acted == [("gesture", {"name": "nod"})]


def test_a_japanese_files_own_verbs_are_heard_in_the_form_a_person_asks_with():
    """A file without templates: "方向を見ます" is asked "見て" (not "見せて", another verb),
    "撮って" and "うなずきます" as said; a polite request naming one action is that action."""
    from edge.brain.action_words import verb_forms as _verb_forms
    assert _verb_forms("指定した方向を見ます。") == {"見て", "見る"}
    assert "うなずいて" in _verb_forms("頭を縦に振ってうなずきます。")
    assert "撮って" in _verb_forms("カメラで写真を撮って、アルバムに保存します。")
    assert "進んで" in _verb_forms("前に進みます")
    assert _verb_forms("机の上を移動します。") == set()          # 移動 is read as its own two characters
    desk = load_companion(REPO / "bench" / "blind" / "companions" / "kibo.json")
    if not isinstance(default_ranker(), EmbeddingRanker):
        pytest.skip("the meaning read needs the sentence encoder")
    sense = CommandSense(desk, prompt.offered_tools(desk, "speech", True))
    assert sense.asks_for("キボ、左を見て") == ["look"]
    assert sense.asks_for("ちょっとだけ上を向いてくれる？") == ["look"]
    assert sense.asks_for("キボ、三回うなずいて") == ["nod"]
    assert sense.asks_for("右に20cm動いてもらえますか") == ["move"]
    assert sense.asks_for("おはよう、キボ") == []
    assert sense.asks_for("キボ、日本で一番高い山ってどこ？") == []


def test_an_order_after_news_a_request_with_one_action_ahead_and_a_value_said_first():
    """"I'm heading to bed, switch the tank light to moonlight" orders after its news; "give them
    two portions please" is a request with one action far ahead; "Nod three times." opens with a
    value of one action; "tonight" is not the value "night"."""
    if not isinstance(default_ranker(), EmbeddingRanker):
        pytest.skip("the meaning read needs the sentence encoder")
    tank = load_companion(REPO / "bench" / "blind" / "companions" / "aqua.json")
    lamp = load_companion(REPO / "bench" / "blind" / "companions" / "lampy.json")
    tank_sense = CommandSense(tank, prompt.offered_tools(tank, "heard_speech", True))
    lamp_sense = CommandSense(lamp, prompt.offered_tools(lamp, "speech", True))
    assert tank_sense.asks_for("I'm heading to bed, switch the tank light to moonlight.") == ["tank_light"]
    assert tank_sense.asks_for("Nerio, give them two portions of food please.") == ["feed"]
    assert lamp_sense.asks_for("Nod three times.") == ["gesture"]
    assert lamp_sense.asks_for("Party mode, please!") == ["preset"]
    assert "preset" not in lamp_sense.asks_for("I'm done for tonight, turn the light off.")
    assert lamp_sense.asks_for("Thanks, that's perfect.") == []


def test_stop_that_asks_for_the_files_own_stop_of_that_thing_and_a_value_is_no_action_of_its_own():
    if not isinstance(default_ranker(), EmbeddingRanker):
        pytest.skip("the meaning read needs the sentence encoder")
    pets = load_companion(REPO / "bench" / "blind" / "companions" / "petsit.json")
    kitchen = load_companion(REPO / "bench" / "blind" / "companions" / "kitchen.json")
    pet_tools = prompt.offered_tools(pets, "owner_app", True)
    kitchen_tools = prompt.offered_tools(kitchen, "speech", True)
    pet_sense, kitchen_sense = CommandSense(pets, pet_tools), CommandSense(kitchen, kitchen_tools)
    assert [t.name for t in pet_sense.offer("Stop the laser now, she's had enough", pet_tools).tools] == ["stop_play"]
    assert [t.name for t in kitchen_sense.offer("Cancel the pasta timer", kitchen_tools).tools] == ["cancel_timer"]
    assert "stop_play" not in [t.name for t in pet_sense.offer("Stop barking, Rufus", pet_tools).tools]
    assert pet_sense.asks_for("photo of the dog") != ["dispense_treats"]     # "dog" is a treat's value, not the ask

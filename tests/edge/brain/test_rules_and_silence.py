"""The brain on a companion file of its own kind: a reading judged by the file's event rules
(no model when no rule holds or a rule settles the action), words for someone else left
unanswered, and a model's "none" standing only when the companion was not called by name.
The brain and the simulated body are the real nodes, on the in-process hub."""

from __future__ import annotations

import time

import pytest
from brain_rig import BrainRig

from edge.protocol.companion import parse_companion
from edge.protocol.payloads import Action, Perception
from edge.providers.scripted import ScriptedProvider

ROVER = parse_companion({
    "name": "Bolt", "personality": "A toy rover.", "story": "Built last spring.",
    "actions": [
        {"title": "speak", "description": "Say something.", "type": "object",
         "properties": {"message": {"type": "string", "minLength": 1}}, "required": ["message"]},
        {"title": "drive", "description": "Drive straight.", "type": "object",
         "properties": {"distance_cm": {"type": "integer", "minimum": 1, "maximum": 300},
                        "direction": {"type": "string", "enum": ["forward", "backward"]}},
         "required": ["distance_cm", "direction"]},
        {"title": "halt", "description": "Stop the wheels.", "type": "object", "properties": {}}],
    "perceptions": [
        {"title": "heard", "description": "What the child says.", "type": "string"},
        {"title": "bump", "description": "A bumper was hit.", "type": "object",
         "properties": {"side": {"type": "string", "enum": ["front", "back"]}}},
        {"title": "range", "description": "Distance ahead.", "type": "object",
         "properties": {"cm": {"type": "number"}}}],
    "events": [
        {"perception": "heard", "action": ["speak", "drive", "halt"], "condition": "Answer the child or do what it asks."},
        {"perception": "bump", "action": ["drive"], "condition": "If the front bumper is hit, drive backward about 10 cm."},
        {"perception": "bump", "action": ["drive"], "condition": "If the back bumper is hit, drive forward about 10 cm."},
        {"perception": "range", "action": ["halt"], "condition": "If an obstacle is closer than 15 cm, stop. "
                                                               "Otherwise do nothing."}]})


@pytest.fixture
def rig():
    made = BrainRig(ROVER, (Action,))
    yield made
    made.close()


def next_action(rig: BrainRig, timeout: float = 10.0) -> Action:
    return rig.seen[Action].get(timeout=timeout)


def decided(brain, count: int = 1, timeout: float = 10.0) -> list[dict]:
    """The decision events once ``count`` perceptions were handled."""
    deadline = time.monotonic() + timeout
    while brain.handled < count and time.monotonic() < deadline:
        time.sleep(0.01)
    assert brain.handled >= count, f"{brain.handled} of {count} perceptions handled"
    return [d for k, d in brain.events if k == "decision"]


def test_a_rule_that_settles_its_action_needs_no_model_and_a_reading_no_rule_holds_for_gets_nothing(rig) -> None:
    provider = ScriptedProvider([{"action": "speak", "params": {"message": "unused"}}], loop=True)
    brain = rig.brain(provider)
    rig.client.publish(Perception(title="bump", body={"side": "back"}, format="object"))
    action = next_action(rig)
    assert (action.name, action.params) == ("drive", {"distance_cm": 10, "direction": "forward"})
    rig.client.publish(Perception(title="range", body={"cm": 80}, format="object"))
    routes = [d["route"] for d in decided(brain, 2)]
    assert routes == ["rules", "rules"] and provider.calls == []
    assert rig.seen[Action].empty()


def test_words_for_someone_else_are_not_answered_and_none_stands_only_when_not_called_by_name(rig) -> None:
    provider = ScriptedProvider([{"action": "speak", "params": {"message": "none."}},
                                 {"action": "speak", "params": {"message": "none."}},
                                 {"action": "speak", "params": {"message": "Hi! I'm here."}}])
    brain = rig.brain(provider)
    rig.client.publish(Perception(title="heard", body="Mum, can I have some juice?"))
    rig.client.publish(Perception(title="heard", body="did you see that"))
    rig.client.publish(Perception(title="heard", body="Bolt, are you there?"))
    action = next_action(rig)
    assert (action.name, action.params) == ("speak", {"message": "Hi! I'm here."})
    routes = [d["route"] for d in decided(brain, 3)]
    assert routes[0] == "not_addressed"
    assert len(provider.calls) == 3          # "did you see that": one call, its "none" stood; "Bolt, ...": corrected once
    assert "none" in provider.calls[2][0] or "rejected" in provider.calls[2][0]


def test_a_reply_that_only_restates_the_request_is_done_instead(rig) -> None:
    provider = ScriptedProvider([{"action": "speak", "params": {"message": "go backward about 10 cm."}}])
    rig.brain(provider)
    rig.client.publish(Perception(title="heard", body="drive backward a little, please"))
    action = next_action(rig)
    assert action.name == "drive" and action.params["direction"] == "backward"


def test_a_reply_to_a_question_or_to_thanks_is_never_turned_into_an_action(rig) -> None:
    provider = ScriptedProvider([{"action": "speak", "params": {"message": "You're welcome! Driving backward was fun."}},
                                 {"action": "speak", "params": {"message": "I drive forward and backward."}}])
    rig.brain(provider)
    rig.client.publish(Perception(title="heard", body="thanks for driving backward"))
    rig.client.publish(Perception(title="heard", body="how do you drive?"))
    said = [next_action(rig), next_action(rig)]
    assert [a.name for a in said] == ["speak", "speak"]


DESK = parse_companion({
    "name": "キボ", "personality": "小さな卓上ロボット。", "story": "去年の春に来ました。",
    "actions": [{"title": "say", "description": "日本語で話します。", "type": "object",
                 "properties": {"text": {"type": "string", "minLength": 1}}, "required": ["text"]}],
    "perceptions": [{"title": "speech", "description": "聞き取った言葉", "type": "string"}],
    "events": [{"perception": "speech", "action": ["say"], "condition": "話しかけられたら答える。"}]})


def test_a_speech_action_of_any_parameter_name_is_held_to_the_companions_language() -> None:
    """``say {"text": ...}`` is checked like ``speak {"message": ...}``: a Chinese refusal from a
    Japanese companion is turned back, and the Japanese answer of the next round is said."""
    desk = BrainRig(DESK, (Action,))
    try:
        provider = ScriptedProvider([{"action": "say", "params": {"text": "抱歉，我无法回答这个问题。"}},
                                     {"action": "say", "params": {"text": "ごめんね、まだ知らないんだ。教えてくれる？"}}])
        brain = desk.brain(provider)
        desk.client.publish(Perception(title="speech", body="わたしの名前わかる？"))
        said = desk.seen[Action].get(timeout=10)
        assert said.name == "say" and said.params["text"].startswith("ごめんね")
        rejected = [d for d in decided(brain) if d["problems"]]
        assert rejected and any("assistant" in p or "Chinese" in p for p in rejected[0]["problems"])
    finally:
        desk.close()


CHICK = parse_companion({
    "name": "ぴよ", "personality": "子ども部屋のひよこロボット。", "story": "本棚に住んでいます。",
    "actions": [{"title": "habataku", "description": "はねをぱたぱたする。", "type": "object",
                 "properties": {"kaisuu": {"type": "integer", "minimum": 1, "maximum": 5}}, "required": ["kaisuu"]},
                {"title": "shaberu", "description": "子どもに、声に出して話しかける。", "type": "object",
                 "properties": {"ことば": {"type": "string", "minLength": 1}}, "required": ["ことば"]}],
    "perceptions": [{"title": "koe", "description": "聞こえた言葉", "type": "string"}],
    "events": [{"perception": "koe", "action": ["shaberu", "habataku"], "condition": "話しかけられたら答える。"}]})


def test_a_voice_by_another_name_is_checked_like_speak() -> None:
    """``shaberu {"ことば": ...}`` is the chick's voice (edge/protocol/speech_action.py): the child's
    question said back to them is turned back, and the answer of the next round is said."""
    chick = BrainRig(CHICK, (Action,))
    try:
        provider = ScriptedProvider([{"action": "shaberu", "params": {"ことば": "きみのおなまえは？"}},
                                     {"action": "shaberu", "params": {"ことば": "ぼくはぴよだよ！"}}])
        brain = chick.brain(provider)
        chick.client.publish(Perception(title="koe", body="きみのおなまえは？"))
        said = chick.seen[Action].get(timeout=10)
        assert said.name == "shaberu" and said.params["ことば"] == "ぼくはぴよだよ！"
        rejected = [d for d in decided(brain) if d["problems"]]
        assert rejected and any(p.startswith("shaberu /ことば: it repeats") for p in rejected[0]["problems"]), rejected
    finally:
        chick.close()


BOWL = parse_companion({
    "name": "Penny", "personality": "A pet sitter.", "story": "Switched on two years ago.",
    "actions": [{"title": "speak", "description": "Say something.", "type": "object",
                 "properties": {"message": {"type": "string", "minLength": 1}}, "required": ["message"]}],
    "perceptions": [{"title": "bowl", "description": "The water bowl.", "type": "object",
                     "properties": {"level_percent": {"type": "number"}}}],
    "events": [{"perception": "bowl", "action": ["speak"],
                "condition": "When the water level is below 20 percent, tell the owner to top it up."}]})


def test_none_said_for_a_reading_is_nothing_to_do_unless_a_rule_applies() -> None:
    """A reading no rule can judge, answered "none": no action. A reading a rule applies to,
    answered "none": turned back, and the rule's action is done."""
    bowl = BrainRig(BOWL, (Action,))
    try:
        provider = ScriptedProvider([{"action": "speak", "params": {"message": "none"}},
                                     {"action": "speak", "params": {"message": "none"}},
                                     {"action": "speak", "params": {"message": "The water bowl needs topping up."}}])
        brain = bowl.brain(provider)
        bowl.client.publish(Perception(title="bowl", body={"level_percent": "unknown"}, format="object"))
        decided(brain, 1)   # one reading at a time: a newer reading of a sensor replaces one still waiting
        bowl.client.publish(Perception(title="bowl", body={"level_percent": 10}, format="object"))
        said = bowl.seen[Action].get(timeout=10)
        assert said.params["message"] == "The water bowl needs topping up."
        decisions = decided(brain, 2)
        assert any("rule of yours applies" in " ".join(d["problems"]) for d in decisions)
        assert bowl.seen[Action].empty()     # the first "none" said nothing
    finally:
        bowl.close()


def test_empty_words_for_a_reading_are_turned_back_not_said() -> None:
    """A rule applies and the reply's words are empty: nothing is said aloud; the next round's
    words are."""
    bowl = BrainRig(BOWL, (Action,))
    try:
        provider = ScriptedProvider([{"action": "speak", "params": {"message": "  "}},
                                     {"action": "speak", "params": {"message": "Please top up the water bowl."}}])
        brain = bowl.brain(provider)
        bowl.client.publish(Perception(title="bowl", body={"level_percent": 5}, format="object"))
        said = bowl.seen[Action].get(timeout=10)
        assert said.params["message"] == "Please top up the water bowl."
        assert any("says nothing" in " ".join(d["problems"]) for d in decided(brain, 1))
        assert bowl.seen[Action].empty()
    finally:
        bowl.close()


HUSH = parse_companion({
    "name": "Hush", "personality": "A quiet nursery monitor.", "story": "Hush watches over a baby's cot.",
    "actions": [{"title": "play_lullaby", "description": "Play a lullaby softly.", "type": "object",
                 "properties": {"minutes": {"type": "integer", "minimum": 1, "maximum": 60}}, "required": ["minutes"]},
                {"title": "whisper", "description": "Say something softly to the parents.", "type": "object",
                 "properties": {"message": {"type": "string", "minLength": 1}}, "required": ["message"]}],
    "perceptions": [{"title": "parent_speech", "description": "What a parent says", "type": "string"}],
    "events": [{"perception": "parent_speech", "action": ["whisper", "play_lullaby"],
                "condition": "When a parent talks to Hush, whisper a short answer."}]})


def test_a_catalogue_read_out_in_words_is_turned_back_not_whispered() -> None:
    """"play_lullaby, white_noise, ..." whispered to a parent (seen with the 0.5B model): turned
    back, and the next round's words are said."""
    hush = BrainRig(HUSH, (Action,))
    try:
        provider = ScriptedProvider([{"action": "whisper", "params": {"message": "I can do play_lullaby for you."}},
                                     {"action": "whisper", "params": {"message": "Good night. I'll keep watch."}}])
        brain = hush.brain(provider)
        hush.client.publish(Perception(title="parent_speech", body="Good night, Hush."))
        said = hush.seen[Action].get(timeout=10)
        assert said.name == "whisper" and said.params["message"] == "Good night. I'll keep watch."
        assert any("reads out the action name play_lullaby" in " ".join(d["problems"]) for d in decided(brain, 1))
        assert hush.seen[Action].empty()
    finally:
        hush.close()

"""A spoken reply that only repeats the person is turned back to the model, not said."""

from __future__ import annotations

from pathlib import Path

import pytest

from edge.brain.echo import echoes, said_action_name
from edge.brain.loop import BrainConfig, CompanionBrain
from edge.protocol.companion import load_companion
from edge.protocol.payloads import Perception
from edge.providers.scripted import ScriptedProvider

from brain_doubles import OkBody
from repo_paths import REPO

COMPANIONS = REPO / "companions"


@pytest.mark.parametrize("reply, heard", [
    ("Woof! I'm feeling a bit lonely tonight.", "I'm feeling a bit lonely tonight."),
    ("where do you live", "Where do you live?"),
    ("いいえ、テストで100点取ったんだ！", "テストで100点取ったんだ！"),
])
def test_the_persons_words_given_back_are_an_echo(reply, heard):
    assert echoes(reply, heard)


@pytest.mark.parametrize("reply, heard", [
    ("I live on a desk by the window.", "Where do you live?"),
    ("Yes!", "Yes!"),                                   # too short to tell
    ("Hello! Nice to meet you.", "Hello! Nice to meet you."),   # a greeting answered in kind
    ("おはようございます！", "おはようございます！"),
    ("Oh no, I'm here for you. Want to play?", "I'm feeling a bit lonely tonight."),
])
def test_an_answer_is_not_an_echo(reply, heard):
    assert not echoes(reply, heard)


def test_an_echo_is_asked_again_and_the_answer_said():
    pip = load_companion(COMPANIONS / "pip.json")
    heard = "I had such a long and tiring day at work."
    provider = ScriptedProvider([{"action": "speak", "params": {"message": "Such a long and tiring day at work!"}},
                                 {"action": "speak", "params": {"message": "Oh no! Rest with me a while."}}])
    body = OkBody()
    brain = CompanionBrain(pip, provider, body, BrainConfig(memory_messages=0, warm=False))
    body.brain = brain
    try:
        brain.handle(Perception(title="input", body=heard))
    finally:
        brain.stop(timeout=1)
    assert [a.params["message"] for a in body.actions] == ["Oh no! Rest with me a while."]
    assert "only repeats their words" in provider.calls[1][0] and heard in provider.calls[1][0]


def test_a_reply_that_copies_the_correction_it_read_is_cut_there():
    from edge.brain.echo import without_instructions
    told = ("input (text): I failed my test\nYour reply \"x\" was rejected: speak /message: it repeats what the "
            "person said; answer them in your own words. Decide again, or answer them in a few words of your own.")
    assert without_instructions("Oh no, that's hard. answer them in your own words.", told) == "Oh no, that's hard."
    assert without_instructions("Oh no, that's hard. Let's study together!", told) == "Oh no, that's hard. Let's study together!"
    assert without_instructions("speak /message: it repeats what the person said", told) == ""


def test_a_reply_that_recites_the_prompt_is_told_from_one_that_quotes_a_phrase_of_it():
    from edge.brain.echo import recites
    story = ("Penny is a pet-sitting robot. She was switched on for the first time two years ago, and since then "
             "she has lived in the family's house with a garden in Bristol, keeping Rufus and Miso company.")
    assert recites("I was switched on for the first time two years ago, and since then she has lived in the "
                   "family's house with a garden in Bristol.", story)
    assert not recites("Sure! Here is a snapshot of Rufus.", story)
    assert not recites("I'm Penny, a pet-sitting robot, two years old in robot years!", story)
    desk = "キボは、首を左右・上下に動かせる頭と二つの車輪を持つ、小さな卓上ロボットです。人間ではなくロボットなので年齢はありません。"
    assert recites("首を左右・上下に動かせる頭と二つの車輪を持つ、小さな卓上ロボットです。", desk)
    assert not recites("キボは小さな卓上ロボットだよ！", desk)


def test_a_word_or_two_before_a_copy_of_the_correction_is_no_answer():
    from edge.brain.echo import without_instructions
    told = "Your reply was rejected: it claims an age of 25 years; answer as Nell is, from its story."
    assert without_instructions("I answer as Nell is, from its story.", told) == ""
    assert without_instructions("我是answer as Nell is, from its story", told) == ""
    assert without_instructions("I was switched on last spring. Answer as Nell is, from its story.", told) \
        == "I was switched on last spring."


def test_an_action_identifier_said_as_a_word_is_caught_but_plain_words_are_not():
    names = ["play_lullaby", "white_noise", "nod", "whisper"]
    assert said_action_name("play_lullaby, white_noise, stop_sound", names) == "play_lullaby"
    assert said_action_name("I can play WHITE_NOISE for her.", names) == "white_noise"
    assert said_action_name("Shall I play a lullaby? I can nod too.", names) is None   # words, not identifiers
    assert said_action_name("replay_lullaby_now", names) is None                       # not that name

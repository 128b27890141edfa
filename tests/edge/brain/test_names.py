"""A reply never calls the companion by its own name as if it were the person it answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from edge.brain.names import SelfAddress, spoken_names
from edge.protocol.companion import load_companion
from edge.providers.base import ContentSegment, ProviderResponse, ToolCall
from repo_paths import REPO

COMPANIONS = REPO / "companions"


@pytest.fixture(scope="module")
def pochi() -> SelfAddress:
    return SelfAddress(load_companion(COMPANIONS / "pochi.json"))


@pytest.mark.parametrize("reply, said", [
    ("Good morning, Pochi! I slept very well. Woof", "Good morning! I slept very well. Woof"),
    ("Pochi, look to your right!", "Look to your right!"),
    ("Woof! Hello, Pochi.", "Woof! Hello."),
    ("I'm Pochi! Woof!", "I'm Pochi! Woof!"),                      # an introduction keeps the name
    ("Pochi is a good dog.", "Pochi is a good dog."),              # not a form of address
    ("This Pochi thing", "This Pochi thing"),
])
def test_own_name_used_to_address_someone_is_taken_out(pochi, reply, said):
    assert pochi.strip(reply) == said


def test_japanese_names_and_their_suffixes():
    nikoni = SelfAddress(load_companion(COMPANIONS / "nikoni-rittai-chan.json"))
    assert nikoni.strip("こんにちは、ニコニ立体ちゃん！元気だよ") == "こんにちは！元気だよ"
    assert nikoni.strip("ニコニ立体ちゃんだよ！") == "ニコニ立体ちゃんだよ！"
    mai = load_companion(COMPANIONS / "azabu-mai.json")
    assert "マイ" in spoken_names(mai)                               # from x-sentences.names
    assert SelfAddress(mai).strip("おはよう、マイ！") == "おはよう！"


def test_a_reply_is_rewritten_only_in_its_spoken_lines(pochi):
    response = ProviderResponse([ContentSegment(type="tool_call", tool_call=ToolCall("speak", {"message": "Hi, Pochi!"}, "a")),
                                 ContentSegment(type="tool_call", tool_call=ToolCall("bark", {"times": 2}, "b"))])
    fixed = pochi.in_reply(response)
    assert [s.tool_call.args for s in fixed.segments if s.tool_call] == [{"message": "Hi!"}, {"times": 2}]
    assert [s.tool_call.id for s in fixed.segments if s.tool_call] == ["a", "b"]
    untouched = ProviderResponse([ContentSegment(type="tool_call", tool_call=ToolCall("speak", {"message": "Woof!"}))])
    assert pochi.in_reply(untouched) is untouched


def test_a_streamed_clause_that_is_only_the_name_is_recognised(pochi):
    """Streaming cuts "Good morning, Pochi! ..." at the comma: "Pochi!" alone is left unsaid."""
    assert all(pochi.strip(c) == "" for c in ("Pochi!", "Pochi.", " pochi ", "Pochi,"))
    assert all(pochi.strip(c) == c for c in ("Good morning,", "Pochi is here", "I love you Pochi!"))


def test_a_whole_reply_that_is_only_the_name_is_the_answer_to_what_is_your_name(pochi):
    response = ProviderResponse([ContentSegment(type="tool_call", tool_call=ToolCall("speak", {"message": "Pochi."}))])
    assert [s.tool_call.args for s in pochi.in_reply(response).segments if s.tool_call] == [{"message": "Pochi."}]
    assert pochi.strip("Pochi.") == ""          # a streamed clause alone still goes (above)

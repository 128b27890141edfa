"""A reply in words is said a clause at a time while the model still writes the rest."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from edge.brain.loop import BrainConfig, CompanionBrain
from edge.protocol.companion import load_companion
from edge.protocol.payloads import Action, ActionError, ActionResult, Perception, VoiceActivity
from edge.providers.base import ContentSegment, ProviderContext, ProviderResponse, ToolCall
from edge.providers.clauses import Clauses

from brain_doubles import OkBody
from repo_paths import REPO

COMPANIONS = REPO / "companions"


def _clauses(*deltas: str) -> tuple[list[str], str]:
    out: list[str] = []
    c = Clauses(out.append)
    for d in deltas:
        c.feed(d)
    return out, c.rest


def test_clauses_end_at_sentences_and_long_enough_commas():
    assert _clauses("Oh", " no, that", " sounds hard.", " I am here", " for you! Want 3.5", " hugs?") == \
        (["Oh no, that sounds hard.", "I am here for you!"], "Want 3.5 hugs?")   # no split inside 3.5
    assert _clauses("I watched the birds by", " the window, and then", " I napped") == \
        (["I watched the birds by the window,"], "and then I napped")
    assert _clauses("うん", "、元気", "いっぱいだよ！", "また", "ね") == (["うん、元気いっぱいだよ！"], "またね")
    assert _clauses('{"action":"look",', ' "params": {}}. Then.') == ([], '{"action":"look", "params": {}}. Then.')


def test_words_written_as_a_json_speech_decision_stream_too():
    out: list[str] = []
    c = Clauses(out.append, ("speak", "message"))
    for delta in ('{"act', 'ion":"speak","params":{"message":"Hi the', 're, friend. I am Pip.', ' A \\"caf\\u00e9', '"}}'):
        c.feed(delta)
    assert out == ["Hi there, friend.", "I am Pip."] and c.rest == 'A "café'


class _Streaming:
    """Writes ``reply`` in pieces; after the first sentence it looks whether the body got it,
    which can only be if the brain said it before the reply was complete."""
    name = "streaming-test"

    def __init__(self, reply: str, body: OkBody):
        self.reply, self.body, self.early = reply, body, None

    def generate(self, prompt: str, context: ProviderContext) -> ProviderResponse:
        clauses = Clauses(context.on_words or (lambda text: None))
        words = self.reply.split(" ")
        for i, word in enumerate(words):
            clauses.feed(word + (" " if i < len(words) - 1 else ""))
            if i == 3:   # the test body records a published action at once: no waiting needed
                self.early = self.body.first.is_set()
        call = ToolCall("speak", {"message": self.reply})
        return ProviderResponse([ContentSegment(type="tool_call", tool_call=call)], {"finish_reason": "tool_use"})


def _run(reply: str, heard: str) -> tuple[_Streaming, OkBody]:
    pip = load_companion(COMPANIONS / "pip.json")
    body = OkBody()
    provider = _Streaming(reply, body)
    brain = CompanionBrain(pip, provider, body, BrainConfig(memory_messages=0, warm=False))
    body.brain = brain
    try:
        brain.handle(Perception(title="input", body=heard))
    finally:
        brain.stop(timeout=1)
    return provider, body


def test_the_first_sentence_is_said_before_the_reply_is_complete():
    provider, body = _run("I love rain. It makes big puddles to splash in!", "Do you like rainy days?")
    assert provider.early is True
    assert [a.params["message"] for a in body.actions] == ["I love rain.", "It makes big puddles to splash in!"]


def test_a_clause_that_repeats_the_person_is_never_said_early():
    provider, body = _run("I had a long day at work. Poor you!", "I had a long day at work.")
    assert provider.early is False                 # nothing went out while the model wrote
    assert body.actions == []                      # and the whole reply, an echo, was turned back


def test_a_clause_out_of_character_is_never_said_early():
    provider, body = _run("I'm 24 years old. And I love puddles!", "How old are you?")
    assert provider.early is False                 # the invented age was held while the model wrote
    assert all("24" not in a.params["message"] for a in body.actions)


def test_the_embedded_model_streams_clauses_that_make_up_its_reply():
    from edge.providers.factory import make_provider
    from edge.providers.base import Tool
    from edge.providers.model_files import DEFAULT_MODEL, locate
    if not locate(None).path.is_file():
        pytest.skip(f"the default model is not installed: companion models fetch {DEFAULT_MODEL}")
    model = make_provider("embedded:qwen2.5-coder-0.5b-instruct?seed=5")
    speak = Tool("speak", "Say something out loud.", {"type": "object", "required": ["message"],
                 "properties": {"message": {"type": "string", "maxLength": 160}}, "additionalProperties": False})
    got: list[str] = []
    context = ProviderContext(tools=[speak], system="You are Pip, a cheerful robot. Answer in two short sentences.",
                              max_tokens=80, temperature=0.0, on_words=got.append, spoken_to=True, answer=True)
    response = model.generate("input (text): Tell me about your day.", context)
    message = response.tool_calls[0].args["message"]
    assert got, message                                    # at least one clause came early
    assert message.startswith(got[0]) and all(clause in message for clause in got)


class _TalkedOver(OkBody):
    """The person talks over the first clause: the mic's voice event reaches the brain and the
    body answers that speak ``interrupted``, as the real ones do (docs/protocol.md, barge-in)."""

    voice = True   # the mic's event reaches the brain too (False: only the body's result says so)

    def publish(self, payload, retain=None):
        if isinstance(payload, Action):
            self.actions.append(payload)
            self.first.set()
            if self.voice:
                self.brain._on_voice(VoiceActivity(sender="mic-test", onset=time.time(), over=[payload.id]))
            now = time.time()
            self.brain._on_result(ActionResult(id=payload.id, name=payload.name, ok=False, sender="t", started=now,
                                               finished=now, error=ActionError("interrupted", "talked over")))


def _streamed_to(body: OkBody, reply: str) -> list[str]:
    """The brain streams ``reply`` to ``body`` for one question; returns what it observed."""
    pip = load_companion(COMPANIONS / "pip.json")
    events: list[str] = []
    brain = CompanionBrain(pip, _Streaming(reply, body), body, BrainConfig(memory_messages=0, warm=False),
                           observer=lambda kind, data: events.append(kind))
    body.brain = brain
    try:
        brain.handle(Perception(title="input", body="Do you like rainy days?"))
    finally:
        brain.stop(timeout=1)
    return events


def test_talked_over_the_turn_ends_without_another_word():
    body = _TalkedOver()
    events = _streamed_to(body, "I love rain. It makes big puddles. And mud for days!")
    assert [a.params["message"] for a in body.actions] == ["I love rain."]   # nothing said after the cut
    assert "barge_in" in events and "decision" not in events                 # the call was cancelled, not corrected


def test_an_interrupted_speak_is_final_not_a_failure_to_correct():
    from edge.providers.scripted import ScriptedProvider
    pip = load_companion(COMPANIONS / "pip.json")
    body = _TalkedOver()
    body.voice = False
    provider = ScriptedProvider([{"action": "speak", "params": {"message": "Let me tell you a long story."}},
                                 {"action": "speak", "params": {"message": "As I was saying..."}}])
    brain = CompanionBrain(pip, provider, body, BrainConfig(memory_messages=0, warm=False, stream_speech=False))
    body.brain = brain
    try:
        brain.handle(Perception(title="input", body="Tell me something."))
    finally:
        brain.stop(timeout=1)
    assert len(provider.calls) == 1 and len(body.actions) == 1   # no second round talking over the person


class _KnockedOver(OkBody):
    """A knock over each clause: the mic pauses the speech (``onset``), finds it was no person
    (``dismissed``) and the body finishes the clause: the turn goes on."""

    def publish(self, payload, retain=None):
        if isinstance(payload, Action):
            for event in ("onset", "dismissed"):
                self.brain._on_voice(VoiceActivity(sender="mic-test", onset=time.time(), over=[payload.id], event=event))
        super().publish(payload, retain)


def test_a_pause_that_was_no_person_does_not_end_the_turn():
    body = _KnockedOver()
    events = _streamed_to(body, "I love rain. It makes big puddles to splash in!")
    assert [a.params["message"] for a in body.actions] == ["I love rain.", "It makes big puddles to splash in!"]
    assert "barge_in" not in events


def test_a_reply_that_reads_out_the_companions_story_keeps_its_first_sentence():
    pip = load_companion(COMPANIONS / "pip.json")
    reply = f"I'm Pip! {pip.personality} {pip.story}"          # read out: 160 characters of its own file
    provider, body = _run(reply, "What are you?")
    said = " ".join(a.params["message"] for a in body.actions)
    assert said == "I'm Pip!"

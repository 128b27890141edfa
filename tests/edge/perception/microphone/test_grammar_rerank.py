"""The companion's grammar re-ranks what a prompt-less recognizer (Moonshine) wrote, never more.

A grammar phrase replaces the recognizer's text only when the recognizer's own model scores it
almost as likely for the same audio; speech that is no phrase stays as it was written. The unit
tests drive the decision with a scoring function whose numbers they choose; the model tests use
Moonshine on piper's voice and on real people's recordings."""

from __future__ import annotations

import numpy as np
import pytest

from edge.paths import COMPANIONS_DIR
from edge.perception.microphone.audio_source import WavSource
from edge.perception.microphone.grammar_rerank import GrammarReranker, RerankConfig
from edge.perception.microphone.phrases import build_grammar, expand, grammar_for, normalize_text
from edge.perception.microphone.recognizer_spec import make_recognizer
from edge.protocol.companion import load_companion
from mic_audio import needs_piper, speech
from real_speech import channel_clips, needs_alsa_sounds
from .test_stt_moonshine import needs_model

PIP = load_companion(COMPANIONS_DIR / "pip.json")


def test_a_template_expands_to_every_phrase_it_stands_for():
    assert expand("look [to the] (left | right)") == ["look to the left", "look to the right", "look left", "look right"]
    assert expand("(hi | hey) [<name>]", {"<name>": ("pip", "robot")}) == [
        "hi pip", "hi robot", "hi", "hey pip", "hey robot", "hey"]
    grammar = grammar_for([PIP])
    sentences = grammar.sentences()
    assert {"look left", "pip look left", "look left please", "wag your tail pip"} <= set(sentences)
    assert all(grammar.complete(s) for s in sentences)      # each one is an utterance of the grammar


def test_a_phrase_is_written_the_way_the_recognizer_writes():
    r = GrammarReranker(build_grammar(["look down", "(good | nice) job [<name>]", "what is your name"], ["pip"]))
    assert r.written("hi pip") == "Hi, Pip."
    assert r.written("pip look down") == "Pip, look down."
    assert r.written("what is your name") == "What is your name?"
    assert r.written("good job robot") == "Good job robot."


class Scores:
    """A stand-in for the model: fixed log-probabilities per text, and which texts were asked."""

    def __init__(self, table: dict[str, float]):
        self.table = table
        self.asked: list[str] = []

    def __call__(self, text: str) -> float:
        self.asked.append(text)
        return self.table.get(text, -100.0)


def test_a_nearby_phrase_wins_only_within_the_margin():
    r = GrammarReranker(build_grammar(["stop", "look (left | right)"], ["pip"]), RerankConfig(margin=6.0))
    close = Scores({"Stop.": -4.5})
    chosen = r.rerank("Star.", -1.1, close)
    assert (chosen.text, chosen.phrase) == ("Stop.", "stop") and chosen.gap == pytest.approx(3.4)
    far = Scores({"Stop.": -9.0})
    kept = r.rerank("Star.", -1.1, far)
    assert (kept.text, kept.phrase) == ("Star.", None) and kept.gap == pytest.approx(7.9)
    assert "Stop." in far.asked


def test_phrases_long_speech_and_unlike_text_are_not_scored_at_all():
    r = GrammarReranker(build_grammar(["stop", "look (left | right)"], ["pip"]))
    for text in ("Look left.", "I had a sandwich for lunch and then we went for a long walk.", "Banana."):
        scores = Scores({})
        out = r.rerank(text, -1.0, scores)
        assert out.text == text and out.phrase is None and scores.asked == [], text


@pytest.fixture(scope="module")
def moonshine_for_pip():
    return make_recognizer("moonshine?threads=1", [PIP])


@needs_model
@needs_piper
def test_moonshine_with_pips_grammar_hears_a_short_command(moonshine_for_pip):
    pad = np.zeros(4800, np.int16)
    heard = moonshine_for_pip.transcribe(np.concatenate([pad, speech("stop"), pad]))
    assert normalize_text(heard.text) == "stop" and heard.via == "grammar", heard


@needs_model
@needs_piper
def test_speech_near_a_phrase_but_not_one_stays_as_said(moonshine_for_pip):
    pad = np.zeros(4800, np.int16)
    for said in ("how old are you", "what time is it", "please turn on the kitchen light"):
        heard = moonshine_for_pip.transcribe(np.concatenate([pad, speech(said), pad]))
        assert normalize_text(heard.text) == said and heard.via == "moonshine", heard


@needs_model
@needs_alsa_sounds
def test_real_people_outside_the_grammar_get_no_command(moonshine_for_pip):
    grammar = grammar_for([PIP])
    for clip in channel_clips():      # "front left" ... "side right": close to "turn left", and not it
        heard = moonshine_for_pip.transcribe(WavSource(clip.path).samples)
        assert not grammar.complete(normalize_text(heard.text)) and heard.via == "moonshine", (clip.words, heard)

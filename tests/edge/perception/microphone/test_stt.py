"""Speech recognition: the phrase grammar built from a companion file, and pocketsphinx hearing
piper's voice through it (and through the general language model when the speech is not a phrase)."""

from __future__ import annotations

import numpy as np
import pytest

from edge.perception.microphone.phrases import GrammarError, build_grammar, grammar_for, normalize_text, tokenize
from edge.perception.microphone.stt import (
    Recognizer,
    RecognizerError,
    Transcript,
    check_pcm,
)
from edge.perception.microphone.recognizer_spec import make_recognizer
from edge.perception.microphone.stt_pocketsphinx import PocketsphinxRecognizer
from edge.protocol.companion import load_companion
from edge.paths import COMPANIONS_DIR
from mic_audio import _piper_available as speech_available, needs_piper, speech

PIP = load_companion(COMPANIONS_DIR / "pip.json")
PAD = np.zeros(4800, np.int16)  # 0.3 s, as the segmenter's pre-roll and tail leave around speech


@pytest.fixture(scope="module")
def hybrid() -> PocketsphinxRecognizer:
    return PocketsphinxRecognizer([PIP])  # ~0.4 s to load


def said(text: str) -> np.ndarray:
    return np.concatenate([PAD, speech(text), PAD])


# ------------------------------------------------------------------------------ grammar


def test_grammar_comes_from_the_companion_file():
    g = grammar_for([PIP])
    # the name, every action as a verb with its directions, and the events' example inputs
    for phrase in ("hello pip", "pip look left please", "move a bit closer", "wag your tail", "nod your head",
                   "go back a bit", "look at the door on your right", "nice job", "do you like music",
                   "hello robot please look left", "thank you goodbye"):
        assert g.complete(phrase), phrase
    assert "<name> = pip | robot;" in g.text and "public <utterance>" in g.text


@pytest.mark.parametrize("words", ["wag your", "look", "please", "look left please please", "look left left", ""])
def test_complete_rejects_what_the_grammar_cannot_end_on(words):
    g = grammar_for([PIP])
    if words == "look":  # "look" alone is a phrase (the action's bare verb)
        assert g.complete(words)
        return
    assert not g.complete(words)


def test_words_missing_from_the_dictionary_drop_their_phrase_with_the_reason():
    g = build_grammar(["look left", "zorble the fnord", "wag"], names=["xqz"],
                      known_word=lambda w: w not in ("zorble", "fnord", "xqz"), social=False)
    assert g.phrases == ("look left", "wag")
    assert any("zorble the fnord" in d and "fnord, zorble" in d for d in g.dropped)
    assert any("name 'xqz'" in d for d in g.dropped)
    assert g.complete("robot look left") and not g.complete("xqz look left")


def test_no_usable_phrase_is_an_error_listing_why():
    with pytest.raises(GrammarError, match="no phrase left.*'zorble'"):
        build_grammar(["zorble"], known_word=lambda w: False, social=False)


@pytest.mark.parametrize("template, message", [("look (left | right", "'\\)' missing"),
                                               ("look ] left", "unbalanced"), ("Look Left!", "cannot read")])
def test_bad_templates_are_named(template, message):
    with pytest.raises(GrammarError, match=message):
        tokenize(template)


def test_bad_extra_templates_are_dropped_not_fatal():
    g = build_grammar(["look (left", "wag"], social=False)
    assert g.phrases == ("wag",) and "look (left" in g.dropped[0]


def test_text_is_normalized_like_a_recognizer_writes_it():
    assert normalize_text("Look at the door on your RIGHT!") == "look at the door on your right"
    assert normalize_text("Don’t go… ok?") == "don't go ok"


# --------------------------------------------------------------------------- recognizer


@needs_piper
@pytest.mark.parametrize("text", ["hello robot please look left", "pip look down", "good morning pip", "wag your tail"])
def test_phrases_the_companion_knows_are_heard_exactly(hybrid, text):
    # the general LM alone mishears each of these ("oh robot please look like", "the book down", ...).
    # The re-ranker's price: "hi pip", heard by the LM as "i had", shares no sound enough to be trusted
    t = hybrid.transcribe(said(text))
    assert (t.text, t.via) == (text, "grammar")
    assert 0.5 <= t.confidence <= 1.0
    assert t.audio_seconds == pytest.approx(len(said(text)) / 16000)
    assert t.real_time_factor is not None and t.real_time_factor > 0


@needs_piper
@pytest.mark.parametrize("text", ["i am going to the shop", "that was a funny joke", "my phone is broken",
                                  "what time is it"])
def test_other_speech_is_not_forced_into_a_phrase(hybrid, text):
    # the grammar alone answers "bye what is that robot" for the first of these
    t = hybrid.transcribe(said(text))
    assert (t.text, t.via) == (text, "lm")


@needs_piper
@pytest.mark.parametrize("text", ["that was a funny joke", "my phone is broken", "the cat sat on the mat",
                                  "i like your tail", "what are you doing"])
def test_the_grammar_only_re_ranks_what_the_lm_heard(hybrid, text):
    # the grammar alone answers a phrase for each ("hi wag your tail", "where are you go left"): the
    # hybrid keeps the LM's words unless the phrase sounds like them
    t = hybrid.transcribe(said(text))
    assert t.via == "lm" or t.text == text, t


def test_grammar_mode_is_gone_and_lm_mode_mishears_commands():
    with pytest.raises(RecognizerError, match="pocketsphinx:grammar was removed.*front left"):
        make_recognizer("pocketsphinx:grammar")
    lm = PocketsphinxRecognizer(mode="lm")
    assert lm.grammar is None
    if speech_available():
        assert lm.transcribe(said("hello robot please look left")).text != "hello robot please look left"


def test_the_re_ranker_measures_how_far_a_phrase_sounds_from_what_was_heard(hybrid):
    assert hybrid.phones("look left") == ["L", "UH", "K", "L", "EH", "F", "T"]
    assert hybrid.verify("look left", "look left", 0.0) == 0.0
    assert hybrid.verify("pip look down", "the book down", 0.0) < 0.5 < hybrid.verify("turn to the left",
                                                                                      "aren't left", 0.0)
    assert hybrid.verify("look left", "look left", 0.8) == pytest.approx(0.2)  # a quarter of the gap


def test_the_recognizer_meets_the_protocol(hybrid):
    assert isinstance(hybrid, Recognizer)
    assert hybrid.name == "pocketsphinx:hybrid"


def test_too_little_audio_is_an_empty_transcript(hybrid):
    assert hybrid.transcribe(np.zeros(800, np.int16)) == Transcript("", 0.0, "pocketsphinx:hybrid", "", 0.0, 0.05)


@pytest.mark.parametrize("pcm, message", [
    (np.zeros(16000, np.float32), "int16 samples, got float32"),
    (np.zeros((16000, 2), np.int16), "shape \\(16000, 2\\)"),
])
def test_wrong_audio_is_named(hybrid, pcm, message):
    with pytest.raises(ValueError, match=message):
        hybrid.transcribe(pcm)
    assert check_pcm(np.zeros((1600, 1), np.int16)).shape == (1600,)  # a one-channel column is fine


# ------------------------------------------------------------------------------ factory


def test_make_recognizer_specs(hybrid):
    assert make_recognizer("pocketsphinx:lm").name == "pocketsphinx:lm"
    with pytest.raises(RecognizerError, match="unknown pocketsphinx mode 'fast'"):
        make_recognizer("pocketsphinx:fast")
    with pytest.raises(RecognizerError, match="unknown speech recognizer 'siri'.*whisper:MODEL, moonshine.*or vosk:MODEL"):
        make_recognizer("siri")


@pytest.mark.parametrize("spec, message", [
    ("whisper", "whisper needs a model folder"),
    ("whisper:/nonexistent/tiny.en", "whisper model folder not found: /nonexistent/tiny.en"),
    ("vosk:/nonexistent/small-en", "vosk model folder not found"),
])
def test_optional_engines_say_what_is_missing(spec, message):
    with pytest.raises(RecognizerError, match=message):
        make_recognizer(spec)


def test_an_optional_engine_that_is_not_installed_says_how_to_install_it(tmp_path, monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "faster_whisper", None)  # import fails as if absent
    monkeypatch.setitem(sys.modules, "vosk", None)
    with pytest.raises(RecognizerError, match="pip install faster-whisper"):
        make_recognizer(f"whisper:{tmp_path}")
    with pytest.raises(RecognizerError, match="pip install vosk"):
        make_recognizer(f"vosk:{tmp_path}")


def test_a_missing_pocketsphinx_model_file_is_named(tmp_path):
    with pytest.raises(RecognizerError, match="model file missing: .*en-us"):
        PocketsphinxRecognizer(model_dir=tmp_path)


def test_word_errors_count_substitutions_insertions_and_deletions():
    from edge.perception.microphone.phrases import word_errors

    assert word_errors("look left please", "look left please") == 0
    assert word_errors("look left please", "look love please") == 1          # substitution
    assert word_errors("look left", "oh look left") == 1                      # insertion
    assert word_errors("hello robot please look left", "hello look left") == 2  # deletions
    assert word_errors("", "noise") == 1 and word_errors("stop", "") == 1

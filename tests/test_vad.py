"""Voice activity detection and utterance segmentation, on piper speech and on signals whose
levels are known to the decibel."""

from __future__ import annotations

import numpy as np
import pytest

from edge.perception.vad import (
    FRAME_SAMPLES,
    SAMPLE_RATE,
    EnergyVad,
    Segmenter,
    SegmenterConfig,
    WebrtcVad,
    level_dbfs,
    make_vad,
)
from mic_audio import compose, needs_piper

RNG = np.random.default_rng(7)


def noise(seconds: float, dbfs: float) -> np.ndarray:
    """White noise whose RMS level is ``dbfs``."""
    x = RNG.normal(0.0, 1.0, int(seconds * SAMPLE_RATE))
    return np.clip(x * 32768 * 10 ** (dbfs / 20), -32768, 32767).astype(np.int16)


def voiced(seconds: float, dbfs: float) -> np.ndarray:
    """A buzzy 150 Hz tone with harmonics (speech-like for an energy detector) at ``dbfs``."""
    t = np.arange(int(seconds * SAMPLE_RATE)) / SAMPLE_RATE
    x = sum(np.sin(2 * np.pi * 150 * k * t) / k for k in range(1, 8))
    x = x / np.sqrt(np.mean(x ** 2))
    return (x * 32768 * 10 ** (dbfs / 20)).astype(np.int16)


def frames(x: np.ndarray):
    return x[: len(x) // FRAME_SAMPLES * FRAME_SAMPLES].reshape(-1, FRAME_SAMPLES)


def segment(x: np.ndarray, config: SegmenterConfig | None = None, block: int = 512, vad=None):
    seg = Segmenter(vad or EnergyVad(), config or SegmenterConfig())
    return list(seg.utterances(x[i:i + block] for i in range(0, len(x), block))), seg


# ------------------------------------------------------------------------------ levels


def test_level_dbfs_is_calibrated():
    assert level_dbfs(np.zeros(480, np.int16)) == -100.0
    assert level_dbfs(np.full(480, 32767, np.int16)) == pytest.approx(0.0, abs=0.01)
    assert level_dbfs(noise(1.0, -30.0)) == pytest.approx(-30.0, abs=0.3)


def test_energy_vad_follows_a_noise_floor_that_rises():
    vad = EnergyVad(threshold_db=9)
    quiet = [vad.is_speech(f) for f in frames(noise(5.0, -70))]
    assert not any(quiet[10:])  # background is never speech
    assert all(vad.is_speech(f) for f in frames(voiced(0.3, -35)))
    # a fan starts, 30 dB louder: within the floor window (6 s) it is the new floor, not speech
    fan = [vad.is_speech(f) for f in frames(noise(7.5, -40))]
    assert not any(fan[-60:])
    assert vad.floor_db == pytest.approx(-40, abs=2)
    assert all(vad.is_speech(f) for f in frames(voiced(0.3, -20)))   # speech over the fan
    assert not any(vad.is_speech(f) for f in frames(voiced(0.3, -36)))  # too close to the fan


def test_energy_vad_ignores_sound_below_the_absolute_minimum():
    vad = EnergyVad(threshold_db=9, min_level_db=-60)
    for f in frames(np.zeros(SAMPLE_RATE, np.int16)):
        vad.is_speech(f)
    assert not vad.is_speech(frames(voiced(0.1, -70))[0])  # 30 dB over digital silence, still nothing
    assert vad.is_speech(frames(voiced(0.1, -50))[0])


@needs_piper
@pytest.mark.parametrize("vad", [EnergyVad(), WebrtcVad(1)], ids=["energy", "webrtc"])
def test_both_classifiers_find_piper_speech_and_not_silence(vad):
    pcm, spans = compose(0.6, "look at the door on your right", 0.6)
    flags = [vad.is_speech(f) for f in frames(pcm)]
    first, last = spans[0].start // FRAME_SAMPLES, spans[0].end // FRAME_SAMPLES
    assert not any(flags[:first - 1])
    assert sum(flags[first:last]) > 0.6 * (last - first)
    assert not any(flags[last + 12:])


def test_make_vad_specs_and_errors():
    assert isinstance(make_vad("energy"), EnergyVad)
    assert make_vad("energy:6").threshold_db == 6.0
    assert isinstance(make_vad("webrtc:3"), WebrtcVad)
    with pytest.raises(ValueError, match="unknown VAD 'silero'"):
        make_vad("silero")
    with pytest.raises(ValueError, match="0..3"):
        make_vad("webrtc:9")
    with pytest.raises(ValueError, match="energy:loud"):
        make_vad("energy:loud")


# --------------------------------------------------------------------------- segmenter


def test_segmenter_cuts_utterances_at_the_pauses_with_pre_roll_and_tail():
    gap = noise(1.0, -70)
    x = np.concatenate([gap, voiced(0.8, -30), gap, voiced(0.5, -30), gap])
    utts, _ = segment(x)
    assert len(utts) == 2
    first = utts[0]
    onset = SAMPLE_RATE  # the first voiced sample
    assert onset - 0.4 * SAMPLE_RATE <= first.start_sample <= onset - 0.2 * SAMPLE_RATE  # ~0.3 s pre-roll
    assert first.speech_end_sample == pytest.approx(onset + 0.8 * SAMPLE_RATE, abs=FRAME_SAMPLES)
    assert first.end_sample == pytest.approx(first.speech_end_sample + 0.2 * SAMPLE_RATE, abs=FRAME_SAMPLES)
    assert first.speech_seconds == pytest.approx(0.8, abs=0.06)
    # the samples are the stream's own samples at those positions
    assert np.array_equal(first.samples, x[first.start_sample:first.end_sample])
    assert utts[1].start_sample > first.end_sample


def test_a_short_pause_inside_a_sentence_does_not_split_it():
    x = np.concatenate([noise(0.5, -70), voiced(0.6, -30), noise(0.3, -70), voiced(0.6, -30), noise(1.0, -70)])
    utts, _ = segment(x)
    assert len(utts) == 1
    assert utts[0].speech_seconds == pytest.approx(1.2, abs=0.1)


def test_clicks_are_dropped_and_counted():
    x = np.concatenate([noise(0.5, -70), voiced(0.12, -10), noise(1.0, -70)])
    utts, seg = segment(x)
    assert utts == []
    assert seg.dropped_short == 1


def test_a_burst_shorter_than_start_s_never_opens_an_utterance():
    x = np.concatenate([noise(0.5, -70), voiced(0.04, -10), noise(1.0, -70)])  # 2 frames at most
    utts, seg = segment(x)
    assert utts == [] and seg.dropped_short == 0 and not seg.in_speech


def talk(seconds: float, dbfs: float) -> np.ndarray:
    """Voiced stretches of 0.8 s with 0.15 s pauses, as words and breaths go."""
    pieces = []
    while sum(map(len, pieces)) < seconds * SAMPLE_RATE:
        pieces += [voiced(0.8, dbfs), noise(0.15, -70)]
    return np.concatenate(pieces)[: int(seconds * SAMPLE_RATE)]


def test_long_talk_is_cut_at_max_length_and_goes_on():
    config = SegmenterConfig(max_utterance_s=2.0)
    x = np.concatenate([noise(0.5, -70), talk(5.0, -30), noise(1.0, -70)])
    utts, _ = segment(x, config)
    assert [u.truncated for u in utts] == [True, True, False]
    assert all(u.seconds <= 2.0 + FRAME_SAMPLES / SAMPLE_RATE for u in utts)  # whole frames
    # the pieces are contiguous: nothing of the talk is lost between them
    assert utts[0].end_sample == utts[1].start_sample and utts[1].end_sample == utts[2].start_sample


def test_end_of_stream_flushes_the_utterance_in_progress():
    x = np.concatenate([noise(0.5, -70), voiced(0.7, -30)])
    utts, _ = segment(x)
    assert len(utts) == 1 and utts[0].speech_seconds == pytest.approx(0.7, abs=0.1)


@pytest.mark.parametrize("block", [1, 160, 480, 1000, 4800])
def test_block_size_does_not_change_the_result(block):
    x = np.concatenate([noise(0.7, -70), voiced(0.8, -30), noise(0.9, -70), voiced(0.4, -28), noise(0.8, -70)])
    reference, _ = segment(x, block=480)
    utts, _ = segment(x, block=block)
    assert [(u.start_sample, u.end_sample) for u in utts] == [(u.start_sample, u.end_sample) for u in reference]


@needs_piper
def test_piper_sentences_with_pauses_become_one_utterance_each():
    pcm, spans = compose(0.5, "hello robot", 1.0, "what time is it", 0.9, "wag your tail", 0.7)
    utts, _ = segment(pcm)
    assert len(utts) == 3
    for utt, span in zip(utts, spans):
        assert utt.start_sample <= span.start and utt.end_sample >= span.end - FRAME_SAMPLES * 4


@pytest.mark.parametrize("bad, message", [
    (dict(end_silence_s=0), "end_silence_s must be positive"),
    (dict(start_s=0.5, start_window_s=0.2), "cannot exceed start_window_s"),
    (dict(max_utterance_s=0.3), "max_utterance_s must be longer"),
])
def test_bad_segmenter_settings_are_named(bad, message):
    with pytest.raises(ValueError, match=message):
        Segmenter(EnergyVad(), SegmenterConfig(**bad))

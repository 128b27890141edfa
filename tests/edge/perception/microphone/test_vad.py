"""Voice activity detection and utterance segmentation, on piper speech and on signals whose
levels are known to the decibel."""

from __future__ import annotations

import numpy as np
import pytest

from edge.perception.microphone.vad import (
    FRAME_SAMPLES,
    SAMPLE_RATE,
    EnergyVad,
    Segmenter,
    SegmenterConfig,
    WebrtcVad,
    level_dbfs,
    make_vad,
)
from edge.perception.microphone.turn_end import sounds_finished
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
    with pytest.raises(ValueError, match="unknown VAD 'loud'.*silero"):
        make_vad("loud")
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
    x = np.concatenate([noise(0.5, -70), voiced(0.6, -30), noise(0.2, -70), voiced(0.6, -30), noise(1.0, -70)])
    utts, _ = segment(x)
    assert len(utts) == 1
    assert utts[0].speech_seconds == pytest.approx(1.2, abs=0.1)


def test_a_pause_offers_the_words_so_far_before_the_turn_ends():
    """At each pause of ``pause_s`` the utterance as it would close now is offered early; the
    last offer has the same start and speech end as the utterance that then closes."""
    x = np.concatenate([noise(0.5, -70), voiced(0.6, -30), noise(0.2, -70), voiced(0.6, -30), noise(1.0, -70)])
    early: list = []
    seg = Segmenter(vad=EnergyVad(), on_pause=early.append)
    utts = [u for i in range(0, len(x), 512) for u in seg.feed(x[i:i + 512])]
    assert len(utts) == 1 and len(early) == 2          # the pause inside the sentence, and its end
    assert early[0].speech_end_sample < utts[0].speech_end_sample    # the words so far, not all
    last = early[-1]
    assert (last.start_sample, last.speech_end_sample) == (utts[0].start_sample, utts[0].speech_end_sample)
    assert np.array_equal(last.samples, utts[0].samples[:len(last.samples)])


def test_a_finished_sentence_ends_the_turn_after_the_shorter_silence():
    """``end_turn`` closes the utterance whose guess wrote a finished sentence once
    ``finished_silence_s`` of silence has passed, not before, and not if the person went on."""
    config = SegmenterConfig(finished_silence_s=0.2, end_silence_s=0.6)
    x = np.concatenate([noise(0.5, -70), voiced(0.6, -30), noise(0.1, -70)])
    early: list = []
    seg = Segmenter(vad=EnergyVad(), config=config, on_pause=early.append)
    assert [u for i in range(0, len(x), 480) for u in seg.feed(x[i:i + 480])] == []
    key = (early[-1].start_sample, early[-1].speech_end_sample)
    assert seg.open_until() == key
    assert seg.end_turn(key) == []                          # 0.1 s of silence: too soon
    seg.feed(noise(0.12, -70))
    ended = seg.end_turn(key)
    assert len(ended) == 1 and (ended[0].start_sample, ended[0].speech_end_sample) == key
    assert not seg.in_speech and seg.end_turn(key) is None     # closed: no longer that turn

    went_on = Segmenter(vad=EnergyVad(), config=config, on_pause=early.append)
    for block in (x, voiced(0.3, -30), noise(0.25, -70)):
        went_on.feed(block)
    assert went_on.end_turn(key) is None and went_on.in_speech   # the words grew: not that turn


@pytest.mark.parametrize("text, finished", [
    ("Look to your left.", True), ("What time is it?", True), ("Stop!", True), ("Wag your tail.\"", True),
    ("I want to...", False), ("Can you look at the", False), ("Well, um.", False), ("I went to the shop and.", False),
    ("look left", False), ("", False), ("Can you pass me the.", False), ("Where are you from?", True),
    ("Yes, I do.", True),
])
def test_a_sentence_is_finished_when_it_stops_on_a_word_that_does_not_lead_on(text, finished):
    assert sounds_finished(text) is finished


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
    pieces: list[np.ndarray] = []
    while sum(len(p) for p in pieces) < seconds * SAMPLE_RATE:
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


# ------------------------------------------------------------------------------ silero

from edge.perception.microphone.audio_source import WavSource  # noqa: E402
from edge.perception.microphone.vad import choose_vad  # noqa: E402
from edge.perception.microphone.vad_silero import SileroVad, VadError  # noqa: E402
from real_speech import ALSA, channel_clips, needs_alsa_sounds  # noqa: E402

needs_silero = pytest.mark.skipif(choose_vad()[1] is not None, reason="faster-whisper (the Silero weights) missing")


def fan(seconds: float, dbfs: float) -> np.ndarray:
    """A fan: brown noise (a rumble falling 6 dB per octave) with a blade tone at 120 Hz."""
    n = int(seconds * SAMPLE_RATE)
    rumble = np.cumsum(RNG.normal(0.0, 1.0, n))
    rumble -= np.convolve(rumble, np.ones(800) / 800, mode="same")  # no drift: only the rumble
    blade = 0.3 * np.sin(2 * np.pi * 120 * np.arange(n) / SAMPLE_RATE)
    x = rumble / np.sqrt(np.mean(rumble ** 2)) + blade
    return (x / np.sqrt(np.mean(x ** 2)) * 32768 * 10 ** (dbfs / 20)).astype(np.int16)


def hum(seconds: float, dbfs: float) -> np.ndarray:
    """Mains hum as a TV or an amplifier gives it: 50 Hz and its odd harmonics."""
    t = np.arange(int(seconds * SAMPLE_RATE)) / SAMPLE_RATE
    x = sum(np.sin(2 * np.pi * 50 * k * t) / k for k in (1, 3, 5, 7, 9))
    return (x / np.sqrt(np.mean(x ** 2)) * 32768 * 10 ** (dbfs / 20)).astype(np.int16)


def clicks(seconds: float, every_s: float = 0.4) -> np.ndarray:
    """Sharp clicks (a relay, a keyboard) on a quiet background."""
    x = noise(seconds, -65).astype(np.int32)
    for at in range(int(0.1 * SAMPLE_RATE), len(x) - 80, int(every_s * SAMPLE_RATE)):
        x[at:at + 80] += (20000 * np.exp(-np.arange(80) / 12)).astype(np.int32)
    return np.clip(x, -32768, 32767).astype(np.int16)


@pytest.fixture
def silero() -> SileroVad:
    return SileroVad()


@needs_silero
def test_silero_is_the_default_and_its_specs(silero):
    vad, note = choose_vad()
    assert isinstance(vad, SileroVad) and note is None and vad.frame_samples == 512
    assert make_vad("silero:0.7").threshold == 0.7
    assert isinstance(choose_vad("energy")[0], EnergyVad)
    with pytest.raises(ValueError, match="between 0.05 and 0.95"):
        make_vad("silero:2")


def test_without_its_weights_auto_falls_back_to_energy_and_says_why(monkeypatch):
    import edge.perception.microphone.vad_silero as silero_module
    from importlib import metadata

    def absent(name):
        raise metadata.PackageNotFoundError(name)
    monkeypatch.setattr(silero_module.metadata, "distribution", absent)
    vad, note = choose_vad("auto")
    assert isinstance(vad, EnergyVad) and "pip install faster-whisper" in note
    with pytest.raises(VadError, match="faster-whisper wheel, which is not installed"):
        make_vad("silero")  # asked for by name: an error, not a silent fallback


def test_a_model_file_that_is_not_there_or_not_silero_is_named(tmp_path):
    with pytest.raises(VadError, match="model not found: .*nope.onnx"):
        SileroVad(model=tmp_path / "nope.onnx")
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    with pytest.raises(VadError, match="cannot load the Silero VAD model .*bad.onnx"):
        SileroVad(model=bad)


@needs_silero
@pytest.mark.parametrize("name, sound", [
    ("fan", lambda: fan(4.0, -25)), ("hum", lambda: hum(4.0, -25)), ("white noise", lambda: noise(4.0, -30)),
    ("clicks", lambda: clicks(4.0)),
    ("a fan switching on", lambda: np.concatenate([noise(1.0, -70), fan(3.0, -20)])),
])
def test_noise_alone_opens_no_utterance(silero, name, sound):
    utts, seg = segment(sound(), vad=silero)
    assert utts == [] and not seg.in_speech, name


def test_the_energy_vad_takes_a_fan_switching_on_for_speech():
    # why the default is a network: the energy detector opens an utterance on the step
    utts, _ = segment(np.concatenate([noise(1.0, -70), fan(3.0, -20)]))
    assert utts


@needs_silero
@needs_alsa_sounds
def test_a_real_noise_recording_opens_no_utterance_and_real_voices_do(silero):
    utts, _ = segment(WavSource(ALSA / "Noise.wav").samples, vad=silero)
    assert utts == []
    for clip in channel_clips():
        silero.reset()
        pcm = WavSource(clip.path).samples
        utts, _ = segment(np.concatenate([pcm, np.zeros(8000, np.int16)]), vad=silero)
        assert 1 <= len(utts) <= 2, clip.words   # the speaker pauses ~0.3 s between the two words
        assert sum(u.speech_seconds for u in utts) >= 0.5


@needs_silero
@needs_piper
def test_speech_over_a_fan_is_found(silero):
    pcm, spans = compose(0.6, "look at the door on your right", 0.8)
    mixed = np.clip(pcm.astype(np.int32) + fan(len(pcm) / SAMPLE_RATE, -35), -32768, 32767).astype(np.int16)
    utts, _ = segment(mixed, vad=silero)
    assert len(utts) == 1
    assert utts[0].start_sample <= spans[0].start <= spans[0].end <= utts[0].speech_end_sample + 2 * 512


def end_detected_at(pcm: np.ndarray, vad, config: SegmenterConfig, block: int = 480) -> tuple[int, object]:
    """Feed ``pcm`` block by block; the stream position (in samples) when the first utterance came out."""
    seg = Segmenter(vad, config)
    for at in range(0, len(pcm), block):
        done = seg.feed(pcm[at:at + block])
        if done:
            return at + len(pcm[at:at + block]), done[0]
    raise AssertionError("no utterance ended")


@needs_silero
@needs_piper
@pytest.mark.parametrize("silence_s", [0.3, 0.2, 0.5])
def test_the_end_of_an_utterance_is_decided_within_the_configured_silence(silero, silence_s):
    pcm, spans = compose(0.5, "what time is it", 1.5)
    config = SegmenterConfig(end_silence_s=silence_s)
    position, utt = end_detected_at(pcm, silero, config)
    # counted in samples, not wall time: from the voice's last sound to the decision
    assert position - spans[0].end <= silence_s * SAMPLE_RATE + 2 * 512   # + the frame holding the last sound
    assert utt.speech_end_sample >= spans[0].end - 3 * 512                # the speech itself was all kept


@needs_silero
@needs_alsa_sounds
def test_a_real_voice_ends_within_the_configured_silence(silero):
    pcm = np.concatenate([WavSource(ALSA / "Side_Right.wav").samples, np.zeros(16000, np.int16)])
    loud = np.nonzero(np.abs(pcm.astype(np.int32)) > 600)[0]
    position, utts = None, []
    seg = Segmenter(silero, SegmenterConfig(end_silence_s=0.3))
    for at in range(0, len(pcm), 480):
        utts += seg.feed(pcm[at:at + 480])
        if utts and utts[-1].speech_end_sample > loud[-1] - 4000 and position is None:
            position = at + 480
    assert position is not None
    assert position - loud[-1] <= 0.3 * SAMPLE_RATE + 2 * 512

"""A barge-in onset pauses the robot's speech (body_drivers/speech/hold.py): the device's buffer
is dropped at once, and on resume what had not been heard is played again, nothing skipped.
Played through ALSA's file sink, where every (re)opened stream is a file of its own."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from alsa_sink import alsa_file_sink, read_wav  # noqa: F401  (fixture)
from servo_harness import wait_for
from body_drivers.speech.hold import PlaybackHold
from body_drivers.speech.playback import AudioOutput

RATE = 16000
SIGNAL = (np.arange(int(1.5 * RATE)) % 30000).astype(np.int16)   # each sample says where it is


def chunks() -> list[np.ndarray]:
    return [SIGNAL[i:i + 1600] for i in range(0, SIGNAL.size, 1600)]


def pause_once_audible(sink, hold: PlaybackHold, seconds: float = 0.3) -> threading.Thread:
    """Pause once ``seconds`` of the signal reached the sink (its size, not a clock)."""
    heard = 44 + int(seconds * RATE) * 2

    def pause() -> None:
        wait_for(lambda: any(p.stat().st_size >= heard for p in sink.recordings()), timeout=30, step=0.005)
        hold.pause()
    thread = threading.Thread(target=pause)
    thread.start()
    return thread


def test_a_paused_speech_goes_on_where_it_was_heard_to_stop(alsa_file_sink):  # noqa: F811
    hold = PlaybackHold(max_s=0.4)      # nobody says "dismissed": the pause ends by itself
    pauser = pause_once_audible(alsa_file_sink, hold)
    report = AudioOutput().play(chunks(), RATE, hold=hold)
    pauser.join()
    files = alsa_file_sink.recordings()
    assert len(files) == 2 and hold.pauses == 1 and not report.cancelled
    before, after = (read_wav(f)[0] for f in files)
    assert np.array_equal(before, SIGNAL[:before.size])            # played from the start ...
    resumed_at = int(after[0])
    assert np.array_equal(after, SIGNAL[resumed_at:])               # ... and on to the end
    assert resumed_at < before.size          # nothing skipped: the dropped buffer is played again
    assert before.size - resumed_at <= RATE // 2                    # at most the half second unheard
    assert report.frames_written == SIGNAL.size                     # a replay is not counted twice


def test_a_cut_while_paused_ends_the_speech_and_plays_nothing_more(alsa_file_sink):  # noqa: F811
    hold = PlaybackHold(max_s=30)
    cancel = threading.Event()
    pauser = pause_once_audible(alsa_file_sink, hold)

    def cut() -> None:
        pauser.join()
        cancel.set()
        hold.resume()    # as the body does: the cut first, then the paused writer wakes
    cutter = threading.Thread(target=cut)
    cutter.start()
    started = time.monotonic()
    report = AudioOutput().play(chunks(), RATE, cancel, hold)
    cutter.join()
    assert report.cancelled and time.monotonic() - started < 10
    files = alsa_file_sink.recordings()
    assert len(files) == 1                                          # the device was not opened again
    assert report.frames_written < SIGNAL.size


def test_a_hold_must_end_by_itself():
    with pytest.raises(ValueError, match="max_s"):
        PlaybackHold(max_s=0)

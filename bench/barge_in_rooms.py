"""The two rooms bench/barge_in.py can run in, behind one face.

* ``alsa``: tests/rigs/room.py. The body's real ``AudioOutput`` on ALSA's file sink; every block it
  writes is fed back into the microphone at ``echo_db`` in Python (an ideal echo path, or what is
  left after a perfect canceller). Onset: the person's block handed to the mic node; silence: the
  body's last write.
* ``pipewire``: tests/rigs/pipewire_room.py. A real PipeWire graph with WirePlumber, the speaker's sound
  convolved with a room impulse response into the microphone, with PipeWire's WebRTC echo
  canceller (``aec``) or without; the body and the mic node use ALSA's ``pipewire`` plugin. Onset
  and silence are read from one two-channel probe of the graph: the person at the microphone and
  the speaker, on one sample clock.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np


class AlsaRoom:
    """The room of the first barge-in figures (ALSA file sink, echo mixed in Python)."""

    name = "alsa"

    def __init__(self, folder: Path, person: np.ndarray, echo_db: float):
        from room import EchoOutput, Room, RoomSource
        from voice_rig import AlsaRig

        self.rig = AlsaRig(folder)
        self.rig.hear(np.zeros(16000, np.int16))
        self.room = Room(echo_db=echo_db)
        self.output = EchoOutput(self.room)
        self.source = RoomSource(self.room, person)
        self.started: threading.Event = self.source.started

    def at(self, sample: int) -> float:
        return self.source.started_at + sample / 16000

    def onset(self, start: float, end: float, planned_sample: int) -> float | None:
        return self.source.arrival(planned_sample)

    def silence_before(self, t: float) -> float | None:
        return self.room.last_write_before(t)

    def describe(self) -> str:
        return f"ALSA file sink, echo mixed in Python at {20 * np.log10(self.room.gain):.0f} dB"

    def close(self) -> None:
        self.rig.tap.close()


class PipewireRoomFace:
    """A real PipeWire graph; with ``aec`` the robot plays and listens through its echo canceller."""

    name = "pipewire"

    def __init__(self, folder: Path, person: np.ndarray, echo_db: float, aec: bool, rt60_s: float, aec_args: str):
        from pipewire_room import Listened, PipewireRoom

        from body_drivers.speech.playback import AudioOutput
        from edge.perception.microphone.audio_source import SoundDeviceSource

        self.aec, self.echo_db, self.rt60_s, self.aec_args = aec, echo_db, rt60_s, aec_args
        self.room = PipewireRoom(folder, person, echo_db=echo_db, aec=aec, rt60_s=rt60_s, aec_args=aec_args).start()
        self.output = AudioOutput(self.room.speaker_device)
        self.source = Listened(SoundDeviceSource(self.room.mic_device, refresh_devices=False,
                                                 duration_s=len(person) / 16000 - 0.5))
        self.started = threading.Event()    # the room plays and the mic node listens: the robot may speak

        def both() -> None:
            if self.room.started.wait(60) and self.source.reading.wait(60):
                self.started.set()
        threading.Thread(target=both, name="room-ready", daemon=True).start()

    def at(self, sample: int) -> float:
        return self.room.at(sample)

    def onset(self, start: float, end: float, planned_sample: int) -> float | None:
        return self.room.onset_between(start, end)

    def silence_before(self, t: float) -> float | None:
        return self.room.last_sound_before(t)

    def describe(self) -> str:
        from pipewire_server import versions

        canceller = "no echo canceller"
        if self.aec:
            canceller = f"PipeWire echo-cancel (WebRTC{', ' + self.aec_args if self.aec_args else ', defaults'})"
        return (f"{versions()} graph, {canceller}, echo path {self.echo_db:g} dB direct + reverberant tail "
                f"(RT60 {self.rt60_s:g} s)")

    def close(self) -> None:
        if self.room.error is not None:
            print(f"  room failed: {self.room.error!r}")
        self.room.stop()


def make_room(kind: str, aec: str, folder: Path, person: np.ndarray, echo_db: float, rt60_s: float,
              aec_args: str = "") -> Any:
    if kind == "alsa":
        return AlsaRoom(folder, person, echo_db)
    return PipewireRoomFace(folder, person, echo_db, aec == "pipewire", rt60_s, aec_args)

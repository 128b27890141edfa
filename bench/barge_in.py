"""Barge-in, timed (issue 13, deliverable 4): a person talks over the robot -> its speech stops;
and the robot's own voice, heard by its microphone, never counts as a person.

A real mosquitto; the body (``BodyNode`` + ``SimBody``) speaking with piper into ALSA's default
PCM (bench/voice_rig.py's FIFO); the microphone node (``run_mic`` with its defaults) listening to
a room (tests/rigs/room.py) where the blocks the body writes to the device are heard again at
``--echo-db`` (the speaker's sound at the microphone, after any echo canceller), mixed with a
person at real time (piper's voice, or real people's recordings with ``--people recorded``)
(``--room alsa``, tests/rigs/room.py); or (``--room pipewire``) a real
PipeWire graph with WirePlumber where the speaker's sound reaches the microphone through a room
impulse response at ``--echo-db``, with PipeWire's WebRTC echo canceller between the robot and the
hardware (``--aec pipewire``) or not (``--aec off``); bench/barge_in_rooms.py.

1. Trials: the robot is told to say a long sentence; 1.5-3 s into it a person says a short one.
   Onset = the person's first sample above 1 % of full scale reaching the microphone; silence =
   the last block the body wrote to the device. Also: onset -> ``voice`` event on the bus, the
   speak's result code, and whether the person's words were published.
   With the two-step barge-in (edge/perception/microphone/barge_in.py) the first event is ``onset`` (the
   speech pauses) and silence comes then; ``started`` cuts it, ``dismissed`` lets it go on.
2. Self-triggers: the robot talks for ``--self-minutes`` with nobody else in the room: pauses
   and cuts (``voice`` triggers) and perceptions counted, per hour of its own playback.

Prints p50 / p95 / max onset -> silence, the share within 300 ms, self-triggers per hour, and
writes bench/results/barge_in.json (or ``--out``), one entry per room / canceller / echo level.
Usage: python bench/barge_in.py [--trials 20] [--echo-db -20] [--self-minutes 2] [--people recorded]
       python bench/barge_in.py --room pipewire --aec pipewire,off --echo-db -10,-6 [--rt60 0.25]
"""

from __future__ import annotations

import argparse
import json
import queue
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "rigs"))

from barge_in_rooms import make_room  # noqa: E402
from voice_rig import loud_span  # noqa: E402

ROBOT = [   # Pip's speak takes at most 120 characters
    "I have been watching the garden all morning, and the birds have been busy building a nest by the fence.",
    "Let me tell you about the time I tried to follow a cat around the house. It did not go well at all.",
    "The weather looks bright and calm today, so it might be a good afternoon for a walk by the river.",
    "I can look around, move a little, nod my head and wag my tail, and I am always happy to have a chat.",
]
PERSON = ["wait a moment pip", "stop please", "hang on", "excuse me pip", "no that is not right", "pip listen to me"]
SLOT_S = 7.0


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))] if ordered else float("nan")


def _active_rms(clip: np.ndarray) -> float:
    a, b = loud_span(clip)
    return float(np.sqrt(np.mean(clip[a:b].astype(np.float64) ** 2)))


def people(kind: str, trials: int, rng: np.random.Generator) -> list[np.ndarray]:
    """What the person says in each trial: ``piper`` (PERSON, in piper's voice) or ``recorded``
    (real people from Debian packages, tests/rigs/real_speech.py: ALSA's channel announcements and
    Asterisk's short prompts, shuffled by the seed; none of them was used to choose the barge-in
    rules), each brought to the loudness of the piper person."""
    from mic_audio import speech

    spoken = [speech(text) for text in PERSON]
    if kind == "piper":
        return [spoken[i % len(spoken)] for i in range(trials)]
    from real_speech import channel_clips, short_prompts

    from edge.perception.microphone.audio_source import WavSource

    level = float(np.mean([_active_rms(c) for c in spoken]))
    clips = [WavSource(c.path).samples for c in channel_clips() + short_prompts(max_seconds=3.5)]
    if not clips:
        raise SystemExit("--people recorded: no recordings found (apt-get install alsa-utils "
                         "asterisk-core-sounds-en asterisk-core-sounds-en-wav)")
    order = rng.permutation(len(clips))
    chosen = [clips[order[i % len(clips)]] for i in range(trials)]
    return [np.clip(c * (level / _active_rms(c)), -32768, 32767).astype(np.int16) for c in chosen]


def run(args: argparse.Namespace, echo_db: float, aec: str) -> dict[str, Any]:
    from body_drivers.speech.speaker import Speaker
    from body_drivers.speech.tts import PiperSynthesizer
    from edge.app import Stack
    from edge.config import Settings
    from edge.runtime.broker import LocalBroker
    from edge.runtime.bus import Bus
    from edge.paths import COMPANIONS_DIR
    from edge.perception.microphone.node import Heard
    from edge.perception.microphone.run import run_mic
    from edge.perception.microphone.recognizer_spec import choose_recognizer
    from edge.protocol.companion import load_companion
    from edge.protocol.payloads import Action, ActionResult, Perception, VoiceActivity

    rng = np.random.default_rng(args.seed)
    pip = load_companion(COMPANIONS_DIR / "pip.json")
    # the person's track: trial i starts at i * SLOT_S; the robot is told to speak then
    # 2 s of quiet first: the mic node is listening (and has the robot's first speak) before trial 1
    pos = 2 * 16000
    trials_at, parts, onsets = [], [np.zeros(pos, np.int16)], []
    for i, clip in enumerate(people(args.people, args.trials, rng)):
        delay = float(rng.uniform(1.5, 3.0))
        lead = int(delay * 16000)
        trials_at.append(pos)
        onsets.append(pos + lead + loud_span(clip)[0])
        parts += [np.zeros(lead, np.int16), clip, np.zeros(int(SLOT_S * 16000) - lead - len(clip), np.int16)]
        pos += int(SLOT_S * 16000)
    self_start = pos
    parts.append(np.zeros(int((args.self_minutes * 60 + 3) * 16000), np.int16))
    person = np.concatenate(parts)

    with tempfile.TemporaryDirectory() as tmp:
        room = make_room(args.room, aec, Path(tmp) / "room", person, echo_db, args.rt60, args.aec_args)
        broker = LocalBroker(data_dir=Path(tmp) / "mq").start()
        body = Stack(Settings(broker=broker.address), speaker=Speaker(PiperSynthesizer(), room.output),
                     kinds=("body",), start_broker=False, companions=[pip]).start()   # `companion run body`
        got: queue.Queue[tuple[float, Any]] = queue.Queue()
        ear = Bus("bench-ear", "bench", broker.address, announce=False)
        for kind in (ActionResult, VoiceActivity, Perception):
            ear.subscribe(kind, lambda p: got.put((time.time(), p)))
        ear.connect()
        recognizer, _ = choose_recognizer(None, [pip])
        speaks: list[tuple[float, Action]] = []

        def robot() -> None:
            room.started.wait(30)
            for i, at in enumerate(trials_at):
                time.sleep(max(room.at(at) - time.time(), 0))
                speaks.append((time.time(), Action(name="speak", params={"message": ROBOT[i % len(ROBOT)]},
                                                   sender=pip.id)))
                ear.publish(speaks[-1][1])
            time.sleep(max(room.at(self_start) - time.time(), 0))
            end = room.at(self_start) + args.self_minutes * 60
            i = 0
            while time.time() < end - 8:
                action = Action(name="speak", params={"message": ROBOT[i % len(ROBOT)]}, sender=pip.id)
                speaks.append((time.time(), action))
                ear.publish(action)
                i += 1
                while not any(isinstance(p, ActionResult) and p.id == action.id for _, p in seen):
                    time.sleep(0.05)

        seen: list[tuple[float, Any]] = []

        def collect() -> None:
            while True:
                seen.append(got.get())
        threading.Thread(target=collect, daemon=True).start()
        threading.Thread(target=robot, daemon=True).start()
        heard: list[Heard] = []
        print(f"{args.trials} trials + {args.self_minutes} min of the robot alone; {room.describe()}")
        run_mic(room.source, broker.address, companions=[pip], recognizer=recognizer, node_id="mic-room",
                on_heard=heard.append, quiet=not args.verbose)
        time.sleep(1.0)
        ear.close()
        body.stop()
        broker.stop()
        room.close()
        out = report(args, room, trials_at, onsets, self_start, speaks, list(seen))
    out.update(room=args.room, aec=aec if args.room == "pipewire" else "n/a", echo_db=echo_db,
               people=args.people, seed=args.seed, setup=room.describe())
    return out


def report(args: argparse.Namespace, room: Any, trials_at: list[int], onsets: list[int],
           self_start: int, speaks: list, seen: list) -> dict[str, Any]:
    from edge.protocol.payloads import ActionResult, Perception, VoiceActivity

    results = {p.id: p for _, p in seen if isinstance(p, ActionResult)}
    result_at = {p.id: at for at, p in seen if isinstance(p, ActionResult)}
    voices = [(at, p) for at, p in seen if isinstance(p, VoiceActivity)]
    perceptions = [(at, p) for at, p in seen if isinstance(p, Perception)]
    self_from = room.at(self_start)
    rows = []
    for i, (at_sample, onset_sample) in enumerate(zip(trials_at, onsets)):
        start = room.at(at_sample)
        end = start + SLOT_S
        onset = room.onset(start, end, onset_sample)
        action = speaks[i][1] if i < len(speaks) else None
        result = results.get(action.id) if action else None
        voice = next((at for at, v in voices if start <= at < end), None)   # the first: onset (pause) or started
        events = [v.event for at, v in voices if start <= at < end]
        last = room.silence_before(end)
        said = [p.body for at, p in perceptions if start <= at < end + 1.0]
        known = onset is not None
        rows.append({"onset_to_silence_s": None if last is None or not known else round(last - onset, 3),
                     "onset_to_voice_event_s": None if voice is None or not known else round(voice - onset, 3),
                     "onset_to_result_s": round(result_at[action.id] - onset, 3)
                     if known and action and action.id in result_at else None,
                     "result": None if result is None else (result.error.code if result.error else "ok"),
                     "events": events, "heard": said})
    stopped = [r["onset_to_silence_s"] for r in rows
               if r["result"] == "interrupted" and r["onset_to_silence_s"] is not None]
    closed = [r["onset_to_result_s"] for r in rows if r["result"] == "interrupted"]
    # the robot's own playback: from each of its speaks' start to its end, as the body reported them
    robot_alone_s = sum(r.finished - r.started for r in results.values() if r.started >= self_from)
    alone = [(at, v.event) for at, v in voices if at >= self_from]
    # one trigger: a pause (onset), or a cut without a pause before it; "dismissed" ends a pause
    self_voices = sum(1 for i, (at, e) in enumerate(alone)
                      if e == "onset" or e == "started" and not (i and alone[i - 1][1] == "onset"))
    self_perceptions = sum(1 for at, _ in perceptions if at >= self_from)
    within = sum(1 for s in stopped if s <= 0.3)
    out = {"trials": len(rows), "interrupted": len(stopped),
           "onset_to_silence_s": {"p50": round(pct(stopped, 50), 3), "p95": round(pct(stopped, 95), 3),
                                  "max": round(max(stopped, default=float("nan")), 3)},
           "within_300ms": f"{within}/{len(rows)}",
           "onset_to_interrupted_result_s": {"p50": round(pct(closed, 50), 3), "p95": round(pct(closed, 95), 3)},
           "onset_to_voice_event_s_p50": round(pct([r["onset_to_voice_event_s"] for r in rows
                                                    if r["onset_to_voice_event_s"] is not None], 50), 3),
           "person_heard": sum(1 for r in rows if r["heard"]),
           "robot_alone_s": round(robot_alone_s, 1), "self_voice_events": self_voices,
           "self_events": {e: sum(1 for _, x in alone if x == e) for e in ("onset", "dismissed", "started")},
           "self_perceptions": self_perceptions,
           "self_triggers_per_hour": round((self_voices + self_perceptions) * 3600 / max(robot_alone_s, 1e-9), 1),
           "rows": rows}
    for i, r in enumerate(rows):
        print(f"  trial {i + 1:2}: onset -> voice event {r['onset_to_voice_event_s']} s, -> silence "
              f"{r['onset_to_silence_s']} s, -> result {r['onset_to_result_s']} s ({r['result']}), events {r['events']}, "
              f"heard {r['heard']}")
    o = out["onset_to_silence_s"]
    print(f"\nbarge-in onset -> silence: p50 {o['p50']} s, p95 {o['p95']} s, max {o['max']} s; "
          f"{out['interrupted']}/{len(rows)} interrupted, within 300 ms {out['within_300ms']}; "
          f"person's words published in {out['person_heard']}/{len(rows)}; onset -> the body's 'interrupted' "
          f"result (device closed) p50 {out['onset_to_interrupted_result_s']['p50']} s, "
          f"p95 {out['onset_to_interrupted_result_s']['p95']} s")
    print(f"robot alone {robot_alone_s:.0f} s of its own playback: {self_voices} voice triggers "
          f"({out['self_events']}), {self_perceptions} "
          f"perceptions -> {out['self_triggers_per_hour']} self-triggers per hour")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--echo-db", default="-20", help="the speaker's sound at the microphone, dB (a list: -10,-6)")
    parser.add_argument("--self-minutes", type=float, default=2.0, help="minutes of the robot talking alone")
    parser.add_argument("--room", choices=("alsa", "pipewire"), default="alsa",
                        help="alsa: echo mixed in Python; pipewire: a real PipeWire graph")
    parser.add_argument("--aec", default="pipewire", help="with --room pipewire: pipewire, off, or both (pipewire,off)")
    parser.add_argument("--rt60", type=float, default=0.25, help="with --room pipewire: the room's reverberation, s")
    parser.add_argument("--aec-args", default="", help="the WebRTC canceller's aec.args, e.g. "
                        "'webrtc.noise_suppression = false' (default: the library's defaults)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--people", choices=("piper", "recorded"), default="piper",
                        help="who talks over the robot: piper's voice, or recordings of real people")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "barge_in.json")
    parser.add_argument("-v", "--verbose", action="store_true", help="the mic node's lines")
    args = parser.parse_args()
    if args.trials < 1 or args.self_minutes < 0:
        parser.error("--trials must be >= 1 and --self-minutes >= 0")
    try:
        levels = [float(x) for x in args.echo_db.split(",")]
    except ValueError:
        parser.error(f"--echo-db: not a list of numbers: {args.echo_db!r}")
    modes = [m.strip() for m in args.aec.split(",")] if args.room == "pipewire" else ["n/a"]
    if any(m not in ("pipewire", "off", "n/a") for m in modes):
        parser.error(f"--aec: pipewire or off, got {args.aec!r}")
    if args.room == "pipewire":
        from pipewire_server import missing
        if why := missing():
            parser.error(f"--room pipewire cannot run here: {why}")
    runs = []
    for echo_db in levels:
        for aec in modes:
            print(f"\n== room {args.room}, canceller {aec}, echo {echo_db:g} dB")
            runs.append(run(args, echo_db, aec))
    print("\nsummary:")
    for r in runs:
        o = r["onset_to_silence_s"]
        print(f"  {r['room']:8} aec {r['aec']:8} echo {r['echo_db']:>5g} dB: {r['interrupted']}/{r['trials']} interrupted, "
              f"onset -> silence p50 {o['p50']} s p95 {o['p95']} s, within 300 ms {r['within_300ms']}; "
              f"robot alone {r['robot_alone_s']:.0f} s: {r['self_voice_events']} voice events, "
              f"{r['self_perceptions']} perceptions ({r['self_triggers_per_hour']}/h)")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(runs if len(runs) > 1 else runs[0], indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

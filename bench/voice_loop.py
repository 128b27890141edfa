"""The whole voice loop, timed: a recorded sentence ends -> the first sample of the robot's spoken
answer leaves the speaker device (issue 13, deliverable 7).

One process, as ``companion up`` runs it, on a real mosquitto: the microphone node (``run_mic``
with its defaults: Whisper tiny.en, Silero VAD, 0.3 s end of turn) capturing ALSA's ``mic`` PCM,
which plays the recording at real time; the brain with the default embedded model; the simulated
body speaking through piper into ALSA's default PCM, which writes into a FIFO read by the bench
(bench/voice_rig.py). Nothing is tuned here; the parts are only timed:

  endpoint      end of the sentence's voice (known from the recording) -> the recognizer is called
  recognition   recognizer call (the node's own engine)
  to brain      recognized -> the ``input`` perception arrives on the bus
  decision      perception on the bus -> the first ``speak`` action on the bus: with streamed
                speech (docs/protocol.md) the reply's first clause, published while the model
                goes on writing; model tokens themselves are not on the bus
  synthesis     speak on the bus -> piper's first sentence ready (the body's SpeechReport)
  playback      first sentence ready -> first bytes read from the speaker FIFO

Then, in the same process, the bare parts on the same inputs: the recognizer on the same
utterance, the model on the same prompt and context the brain gave it (the whole reply, so with
streamed speech the bare model can exceed the loop's decision stage), piper on the first clause. Prints per-stage p50 / p95, the line ``end of speech -> first audio: p50 X s``
and the sum of the bare parts; writes bench/results/voice_loop.json.

``--camera SRC`` runs a camera node beside it (``companion run camera --source SRC --loop``, its
default detector, as a separate process on the same broker), as on a robot that also looks.

Usage: python bench/voice_loop.py [--sentences 24] [--gap 10] [--provider embedded] [--camera SRC]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "rigs"))

from voice_rig import AlsaRig, RecordingProvider, RecordingSpeaker, TimedRecognizer, session  # noqa: E402

QUESTIONS = [
    "hello pip", "what is your name", "how are you today", "what time is it", "what is your favourite food",
    "do you like music", "what can you do", "good morning pip", "who are you", "are you hungry",
    "what are you doing", "tell me something interesting", "how old are you", "do you want to play a game",
    "thank you pip", "i had a sandwich for lunch today", "the weather is lovely outside",
    "can you sing a song", "can you tell me a story about dragons", "what is your favourite colour",
    "where do you live", "do you have any friends", "nice to meet you", "good night pip",
]
STAGES = ("endpoint", "recognition", "to_brain", "decision", "synthesis", "playback")


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))] if ordered else float("nan")


def stats(values: list[float]) -> dict[str, float]:
    return {"p50": round(pct(values, 50), 3), "p95": round(pct(values, 95), 3),
            "mean": round(statistics.fmean(values), 3) if values else float("nan"), "n": len(values)}


def load() -> str:
    a, b, c = os.getloadavg()
    return f"{a:.2f} {b:.2f} {c:.2f}"


def run(args: argparse.Namespace) -> dict[str, Any]:
    from mic_audio import speech

    from body_drivers.speech.playback import AudioOutput
    from body_drivers.speech.speaker import Speaker
    from body_drivers.speech.tts import PiperSynthesizer, split_sentences
    from edge.app import Stack
    from edge.runtime.broker import LocalBroker
    from edge.runtime.bus import Bus
    from edge.config import Settings
    from edge.paths import COMPANIONS_DIR
    from edge.perception.microphone.node import Heard
    from edge.perception.microphone.run import run_mic
    from edge.perception.microphone.recognizer_spec import choose_recognizer
    from edge.protocol.companion import load_companion
    from edge.protocol.payloads import Action, Perception
    from edge.providers.factory import make_provider

    seen_by_camera: list[str] = []
    texts = (QUESTIONS * (1 + args.sentences // len(QUESTIONS)))[: args.sentences]
    clips = [(t, speech(t)) for t in texts]
    pcm, spans = session(clips, args.gap)
    with tempfile.TemporaryDirectory() as tmp:
        rig = AlsaRig(Path(tmp))
        seconds = rig.hear(pcm)
        print(f"{len(spans)} sentences, {seconds:.0f} s of recording; load average {load()}")
        broker = LocalBroker(data_dir=Path(tmp) / "mq").start()
        pip = load_companion(COMPANIONS_DIR / "pip.json")
        provider = RecordingProvider(make_provider(args.provider))
        synth = PiperSynthesizer()
        speaker = RecordingSpeaker(Speaker(synth, AudioOutput(None)))
        events: list[tuple[str, dict[str, Any]]] = []
        stack = Stack(Settings(broker=broker.address, provider=args.provider, tts="piper",
                               companions=[COMPANIONS_DIR / "pip.json"]),
                      provider=provider, speaker=speaker,
                      observer_factory=lambda name: lambda kind, data: events.append((kind, data)))
        arrivals: dict[str, float] = {}
        ear = Bus("bench-ear", "bench", broker.address, announce=False)
        ear.subscribe(Perception, lambda p: arrivals.setdefault(p.id, time.time()))
        ear.subscribe(Action, lambda a: arrivals.setdefault(a.id, time.time()))
        ear.connect()
        heard: list[Heard] = []
        camera = None
        try:
            stack.start()
            print(f"stack ready in {stack.ready_s} s (model, piper, warm-up)")
            if args.camera:
                camera = subprocess.Popen([str(Path(sys.executable).parent / "companion"), "run", "camera", "-q",
                                           "--broker", str(broker.address), "--source", args.camera, "--loop",
                                           *args.camera_args.split()], stdout=subprocess.DEVNULL)
                ear.subscribe(Perception, lambda p: seen_by_camera.append(p.sender))
            engine, note = choose_recognizer(None, [pip])
            recognizer = TimedRecognizer(engine)
            print(f"recognizer {engine.name}{' (' + note + ')' if note else ''}; provider {provider.name}")
            rc = run_mic("mic", broker.address, companions=[pip], recognizer=recognizer, duration_s=seconds,
                         refresh_devices=False, on_heard=heard.append, quiet=not args.verbose, node_id="mic-bench")
            if rc != 0:
                raise SystemExit(f"the mic node failed (exit {rc})")
            deadline = time.time() + 20
            while time.time() < deadline and not (stack.idle() and not speaker_busy(speaker, events)):
                time.sleep(0.2)
        finally:
            if camera is not None:
                camera.terminate()
                camera.wait(20)
                print(f"camera node beside it: {sum(1 for s in seen_by_camera if s.startswith('camera'))} perceptions")
            try:
                stack.stop()
            except Exception as exc:  # a shutdown bug must not cost the figures
                print(f"(stack.stop failed: {exc!r})", file=sys.stderr)
            ear.close()
            broker.stop()
        turns = turns_of(spans, heard, recognizer, events, arrivals, speaker, rig, split_sentences)
        print(f"load average after the loop {load()}; the bare parts on the same inputs:")
        bare(turns, engine, provider, synth, split_sentences)
        provider.shutdown()
        rig.tap.close()
    return report(turns, len(spans), texts, args)


def speaker_busy(speaker: RecordingSpeaker, events: list[tuple[str, dict[str, Any]]]) -> bool:
    """A speak decided but not yet spoken."""
    speaks = sum(1 for k, d in events if k == "action" and d["action"]["name"] == "speak")
    return len(speaker.reports) < speaks


def turns_of(spans: list, heard: list, recognizer: TimedRecognizer, events: list, arrivals: dict,
             speaker: RecordingSpeaker, rig: AlsaRig, split_sentences: Any) -> list[dict[str, Any]]:
    """One row per sentence: the wall time of each stage, from the nodes' own events."""
    actions: dict[str, list[dict[str, Any]]] = {}
    routes: dict[str, str] = {}
    for kind, data in events:
        if kind == "action":
            actions.setdefault(data["perception_id"], []).append(data["action"])
        elif kind == "decision":
            routes.setdefault(data["perception_id"], data.get("route", "?"))
    reports = list(speaker.reports)
    rows = []
    for span in spans:
        near = [h for h in heard if abs(h.utterance.speech_end_sample - span.end) < 0.4 * 16000]
        row: dict[str, Any] = {"said": span.text}
        rows.append(row)
        if not near:
            row["missing"] = "no utterance ended there"
            continue
        h = near[-1]
        row["voice_end"] = h.speech_end_at + (span.end - h.utterance.speech_end_sample) / 16000
        if h.perception is None or h.transcript is None:
            row["missing"] = f"dropped ({h.dropped})"
            continue
        row["heard"] = h.perception.body
        row["utterance"] = h.utterance.samples
        row["endpoint"], row["recognized"] = recognizer.calls[id(h.transcript)]
        row["perceived"] = arrivals.get(h.perception.id)
        row["route"] = routes.get(h.perception.id, "none")
        speaks = [a for a in actions.get(h.perception.id, []) if a["name"] == "speak"]
        if not speaks:
            row["missing"] = f"no speak decided ({', '.join(a['name'] for a in actions.get(h.perception.id, [])) or 'nothing'})"
            continue
        action = speaks[0]
        row["answer"] = action["params"].get("message", "")
        row["decided"] = arrivals.get(action["id"])
        found = next((i for i, (text, rep) in enumerate(reports) if text == str(row["answer"]).strip()
                      and (speaker.wall(rep.started_at) or 0) >= (row["decided"] or 0) - 0.5), None)
        if found is None or row["decided"] is None:
            row["missing"] = "speech not reported"
            continue
        _, rep = reports.pop(found)
        row["synthesized"] = speaker.wall(rep.sentence_ready_at[0]) if rep.sentence_ready_at else None
        row["device_accepted"] = speaker.wall(rep.first_audio_at)
        row["first_audio"] = rig.tap.first_after(row["decided"])
        row["first_sentence"] = split_sentences(str(row["answer"]))[0]
        if row["synthesized"] is None or row["first_audio"] is None:
            row["missing"] = "no audio left the speaker"
    return rows


def bare(turns: list[dict[str, Any]], engine: Any, provider: RecordingProvider, synth: Any, split: Any) -> None:
    """The recognizer on the same utterance, the model on the same prompt, piper on the same sentence."""
    calls = list(provider.calls)
    for row in turns:
        if "first_audio" not in row or row.get("missing"):
            continue
        t = time.perf_counter()
        engine.transcribe(row["utterance"])
        row["bare_recognizer"] = time.perf_counter() - t
        mine = [c for c in calls if row["perceived"] - 0.05 <= c.started <= row["decided"]]  # every round
        row["loop_model"] = sum(c.ended - c.started for c in mine)
        row["model_calls"] = len(mine)
        row["bare_model"] = sum(provider.again(c) for c in mine)
        t = time.perf_counter()
        synth.synthesize(row["first_sentence"])
        row["bare_piper"] = time.perf_counter() - t


def report(turns: list[dict[str, Any]], spoken: int, texts: list[str], args: argparse.Namespace) -> dict[str, Any]:
    done = [r for r in turns if not r.get("missing")]
    for r in done:
        r["stages"] = {"endpoint": r["endpoint"] - r["voice_end"], "recognition": r["recognized"] - r["endpoint"],
                       "to_brain": r["perceived"] - r["recognized"], "decision": r["decided"] - r["perceived"],
                       "synthesis": r["synthesized"] - r["decided"], "playback": r["first_audio"] - r["synthesized"]}
        r["total"] = r["first_audio"] - r["voice_end"]
        r["bare_sum"] = r["bare_recognizer"] + r["bare_model"] + r["bare_piper"]
    print()
    for r in turns:
        if r.get("missing"):
            print(f"  {r['said']!r}: {r['missing']}")
        else:
            s = r["stages"]
            print(f"  {r['said']!r} -> {r['heard']!r} [{r['route']}] -> {str(r['answer'])[:50]!r}: {r['total']:.2f} s "
                  f"(" + " + ".join(f"{k} {v:.2f}" for k, v in s.items()) + ")")
    totals = [r["total"] for r in done]
    out: dict[str, Any] = {"sentences": spoken, "answered": len(done), "load_average_end": load(),
                           "provider": args.provider, "gap_s": args.gap,
                           "end_of_speech_to_first_audio_s": stats(totals),
                           "stages_s": {k: stats([r["stages"][k] for r in done]) for k in STAGES},
                           "bare_s": {k: stats([r[f"bare_{k}"] for r in done]) for k in ("recognizer", "model", "piper")},
                           "model_in_loop_s": stats([r["loop_model"] for r in done]),
                           "bare_sum_s": stats([r["bare_sum"] for r in done]),
                           "routes": {rt: sum(r.get("route") == rt for r in done) for rt in {r.get("route") for r in done}},
                           "missing": [f"{r['said']}: {r['missing']}" for r in turns if r.get("missing")],
                           "rows": [{k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items()
                                     if k not in ("utterance", "stages")} | {"stages": {k: round(v, 3) for k, v in
                                                                             r.get("stages", {}).items()}}
                                    for r in turns]}
    print("\nstage            p50     p95   (s, over %d answered sentences of %d)" % (len(done), spoken))
    for k in STAGES:
        st = out["stages_s"][k]
        print(f"  {k:13} {st['p50']:6.3f}  {st['p95']:6.3f}")
    st = out["model_in_loop_s"]
    print(f"  (model inside the decision {st['p50']:6.3f}  {st['p95']:6.3f})")
    for k, st in out["bare_s"].items():
        print(f"  bare {k:8} {st['p50']:6.3f}  {st['p95']:6.3f}")
    e, b = out["end_of_speech_to_first_audio_s"], out["bare_sum_s"]
    ratio = e["p50"] / (b["p50"] + 0.3) if b["n"] else float("nan")
    print(f"\nend of speech -> first audio: p50 {e['p50']} s, p95 {e['p95']} s over {e['n']} sentences; "
          f"sum of the bare parts (recognizer + model + piper first sentence): p50 {b['p50']} s, p95 {b['p95']} s; "
          f"loop / (bare + 0.3 s end of turn) at p50: {ratio:.2f}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=24, help="sentences spoken (>= 20 for a p95)")
    parser.add_argument("--gap", type=float, default=10.0, help="seconds of silence after each sentence, for the answer")
    parser.add_argument("--provider", default="embedded", help="the brain's provider SPEC (default: embedded)")
    parser.add_argument("--camera", default="", help="run a camera node on this source beside the loop")
    parser.add_argument("--camera-args", default="", help="more flags for that camera node, e.g. '--fps 5'")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "voice_loop.json")
    parser.add_argument("-v", "--verbose", action="store_true", help="the mic node's lines")
    args = parser.parse_args()
    if args.sentences < 1 or args.gap < 2:
        parser.error("--sentences must be >= 1 and --gap >= 2 s")
    out = run(args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

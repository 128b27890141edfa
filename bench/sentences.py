"""Sentence templates (x-sentences): how long compiling and matching take, per shipped companion.

    .venv/bin/python bench/sentences.py [--repeat 200] [--json]

For each companion with templates: the compile time (once, when its brain is built), and the
time of one ``SentenceMatcher.match`` over a mix of utterances that match (commands) and that
do not (questions, negations, longer sentences: these try every template, the worst case).
The brain's fast path has a budget of 20 ms per decision (issue 11); matching is its whole cost.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from edge.protocol.companion import load_companion  # noqa: E402
from edge.protocol.sentences import SentenceMatcher  # noqa: E402

SAID = {
    "pochi.json": ["Pochi, please bark two times", "Sit!", "give me your left paw", "Go back a bit, Pochi.",
                   "ポチ、2回吠えて", "why do you bark?", "don't bark", "look left and tell me what you see"],
    "pip.json": ["Please look to your left.", "nod three times", "wag your tail slowly", "what is on your left?",
                 "Where do you live?"],
    "azabu-mai.json": ["麻衣さん、左を見て", "少し下がって", "手を振って", "右を見てから話して", "プログラミングは好き？"],
    "nikoni-rittai-chan.json": ["左を見て", "ニコニ立体ちゃん、右を向いてください。", "左に何がある？"],
}


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200, help="matches per utterance (default 200)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    rows = []
    for name, utterances in SAID.items():
        companion = load_companion(ROOT / "companions" / name)
        started = time.perf_counter()
        matcher = SentenceMatcher.for_companion(companion)
        compile_ms = (time.perf_counter() - started) * 1000
        timings, matched = [], 0
        for text in utterances:
            matched += matcher.match(text) is not None
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                matcher.match(text)
                timings.append((time.perf_counter() - t0) * 1000)
        rows.append({"companion": name, "templates": len(matcher), "compile_ms": round(compile_ms, 2),
                     "utterances": len(utterances), "matched": matched,
                     "match_p50_ms": round(statistics.median(timings), 4),
                     "match_p99_ms": round(_quantile(timings, 0.99), 4), "match_max_ms": round(max(timings), 4)})
    result = {"machine": platform.machine(), "python": platform.python_version(), "rows": rows}
    out = ROOT / "bench" / "results" / "sentences.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=2, ensure_ascii=False), encoding="utf-8")
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return 0
    print(f"{'companion':26} {'templates':>9} {'compile':>9} {'matched':>8} {'p50':>9} {'p99':>9} {'max':>9}")
    for r in rows:
        print(f"{r['companion']:26} {r['templates']:9d} {r['compile_ms']:7.2f}ms {r['matched']:>3}/{r['utterances']:<4}"
              f" {r['match_p50_ms']:7.4f}ms {r['match_p99_ms']:7.4f}ms {r['match_max_ms']:7.4f}ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())

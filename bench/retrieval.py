"""Tool retrieval: recall@k and per-query latency, ONNX embeddings vs BM25.

    .venv/bin/python bench/retrieval.py [--json]

Each case is an utterance a person might say and the tool(s) a person would agree answer it,
over the tests' catalogue of 40 English actions (tests/rigs/tool_catalogue.py) or its 10 Japanese
ones. The utterances are not the tests' phrases: most share no word with their tool on
purpose, since that is what retrieval by meaning is for; some are Japanese asked of the English
catalogue (a user speaking Japanese to a companion described in English).

recall@k = share of cases whose expected tool is among the k best ranked (12 is the brain's
default ``max_tools``). Latency is one query against the catalogue, tool texts already cached.
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
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "rigs")]

from tool_catalogue import ACTIONS, JAPANESE  # noqa: E402

from edge.providers.base import Tool  # noqa: E402
from edge.brain.rankers import DEFAULT_RANKER, Ranker  # noqa: E402
from edge.brain.retrieval import rank  # noqa: E402

KS = (1, 3, 5, 12)

# (utterance, expected tool names, catalogue): "en" = ACTIONS, "ja" = JAPANESE
CASES: list[tuple[str, set[str], str]] = [
    ("I can't see a thing, it's pitch black", {"turn_on_light"}, "en"),
    ("The light is hurting my eyes, kill it", {"turn_off_light", "dim_light"}, "en"),
    ("Could you make it a bit less bright?", {"dim_light"}, "en"),
    ("Make the strip glow blue", {"set_light_color"}, "en"),
    ("Let's get a snapshot of this moment", {"take_photo"}, "en"),
    ("Film this for me", {"start_recording"}, "en"),
    ("Okay, cut, that's enough filming", {"stop_recording"}, "en"),
    ("How late is it?", {"tell_time"}, "en"),
    ("Do I need an umbrella today?", {"tell_weather"}, "en"),
    ("Tell me something funny", {"tell_joke"}, "en"),
    ("What's happening in the world today?", {"read_news"}, "en"),
    ("Put on some tunes", {"play_music"}, "en"),
    ("Silence that song", {"stop_music"}, "en"),
    ("Turn it up, I can't hear anything", {"set_volume"}, "en"),
    ("Show me your moves", {"dance"}, "en"),
    ("Say hi to grandma", {"wave_hand", "speak"}, "en"),
    ("Give me a yes with your head", {"nod_head"}, "en"),
    ("Show me you disagree", {"shake_head"}, "en"),
    ("Thank you so much for your help", {"bow", "speak"}, "en"),
    ("Look over there by the window", {"look_at"}, "en"),
    ("Come over here to the sofa", {"move_to"}, "en"),
    ("Spin around", {"turn_around"}, "en"),
    ("Walk behind me wherever I go", {"follow_person"}, "en"),
    ("Freeze! Don't budge", {"stop_moving"}, "en"),
    ("Remind me in ten minutes", {"set_timer"}, "en"),
    ("I need to get up at six tomorrow", {"set_alarm"}, "en"),
    ("I don't need the wake-up call anymore", {"cancel_alarm"}, "en"),
    ("Someone is at the door, let them in", {"open_door"}, "en"),
    ("The sun is in my eyes", {"close_curtains"}, "en"),
    ("Let the morning sun in", {"open_curtains"}, "en"),
    ("It's freezing in here", {"set_thermostat"}, "en"),
    ("The floor is covered in crumbs", {"start_vacuum"}, "en"),
    ("The flowers outside look thirsty", {"water_plants"}, "en"),
    ("The dog hasn't eaten yet", {"feed_pet"}, "en"),
    ("Are you glad to see me?", {"wag_tail", "show_emotion", "speak"}, "en"),
    ("You look tired, take a nap", {"go_to_sleep"}, "en"),
    ("Your battery is almost empty", {"charge_battery"}, "en"),
    ("Tell her good morning from me", {"speak"}, "en"),
    ("What a sad story", {"show_emotion", "speak"}, "en"),
    ("Wink at me", {"blink_eyes"}, "en"),
    ("今何時？", {"tell_time"}, "en"),
    ("明日の天気はどう？", {"tell_weather"}, "en"),
    ("好きな歌を流して", {"play_music"}, "en"),
    ("この景色を撮影して", {"take_photo"}, "en"),
    ("カーテンを開けて", {"open_curtains"}, "en"),
    ("猫がお腹を空かせている", {"feed_pet"}, "en"),
    ("真っ暗で何も見えない", {"turn_on_light"}, "ja"),
    ("もう寝るから明かりを落として", {"turn_off_light"}, "ja"),
    ("何か曲を流して", {"play_music"}, "ja"),
    ("記念に一枚撮ろう", {"take_photo"}, "ja"),
    ("明日の朝6時に起こして", {"set_alarm"}, "ja"),
    ("ちょっと右を見て", {"look"}, "ja"),
    ("こっちに来て", {"move"}, "ja"),
    ("ありがとうって伝えて", {"speak", "gesture"}, "ja"),
    ("疲れたでしょう、休んでいいよ", {"go_to_sleep"}, "ja"),
    ("よろしくお願いしますと頭を下げて", {"gesture"}, "ja"),
]
CATALOGUES: dict[str, list[Tool]] = {"en": ACTIONS, "ja": JAPANESE}


def evaluate(ranker: Ranker) -> dict:
    """recall@k overall and by language of the utterance, the misses at 3, and latency."""
    for tools in CATALOGUES.values():          # warm: load the model, embed the tool texts
        rank(tools, "hello", ranker)
    hits = {k: 0 for k in KS}
    by_lang: dict[str, list[int]] = {}
    misses, times = [], []
    for text, expected, catalogue in CASES:
        tools = CATALOGUES[catalogue]
        t0 = time.perf_counter()
        scores = rank(tools, text, ranker)
        times.append(time.perf_counter() - t0)
        order = [tools[i].name for i in sorted(range(len(tools)), key=lambda i: (-scores[i], i))]
        position = min(order.index(n) for n in expected)
        for k in KS:
            hits[k] += position < k
        lang = "ja" if any(ord(c) > 0x3000 for c in text) else "en"
        by_lang.setdefault(lang, []).append(position < 3)
        if position >= 3:
            misses.append(f"{text} -> {sorted(expected)} ranked {position + 1}, top: {order[:3]}")
    times.sort()
    return {
        "recall": {f"@{k}": round(hits[k] / len(CASES), 3) for k in KS},
        "recall@3_by_language": {lang: f"{sum(v)}/{len(v)}" for lang, v in by_lang.items()},
        "latency_ms": {"p50": round(statistics.median(times) * 1000, 2),
                       "p90": round(times[int(0.9 * (len(times) - 1))] * 1000, 2)},
        "misses@3": misses,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the whole result as JSON")
    args = parser.parse_args()
    from edge.brain.embedding_onnx import MODEL_NAME, load_onnx_ranker
    rankers: dict[str, Ranker] = {"bm25": DEFAULT_RANKER}
    t0 = time.perf_counter()
    onnx = load_onnx_ranker()
    if onnx is None:
        print(f"(no ONNX ranker: companion models fetch {MODEL_NAME}; BM25 only)")
    else:
        onnx.load()
        print(f"ONNX model loaded in {time.perf_counter() - t0:.2f} s")
        rankers["onnx"] = onnx
    results = {name: evaluate(r) for name, r in rankers.items()}
    out = {"cases": len(CASES), "machine": platform.machine(), "results": results}
    path = ROOT / "bench" / "results" / "retrieval.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, ensure_ascii=False, indent=2))
    if args.json:
        print(json.dumps(out, ensure_ascii=False, indent=2))
        return 0
    print(f"{len(CASES)} cases | " + " | ".join(f"recall@{k}" for k in KS) + " | p50 ms | p90 ms | recall@3 en, ja")
    for name, r in results.items():
        rec = " | ".join(f"{r['recall'][f'@{k}']:.2f}" for k in KS)
        lang = r["recall@3_by_language"]
        print(f"{name:5} | {rec} | {r['latency_ms']['p50']} | {r['latency_ms']['p90']} | {lang['en']}, {lang['ja']}")
    for name, r in results.items():
        print(f"\n{name} misses at 3:")
        print("\n".join(f"  {m}" for m in r["misses@3"]) or "  none")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

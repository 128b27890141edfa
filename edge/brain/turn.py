"""One turn of the execution loop: decide, check, act, observe, and correct if needed.

A turn starts from one input (a perception or a message) and runs up to ``1 + max_corrections``
rounds. Each round asks the provider; a reply whose tool calls break their schemas, name
unknown actions or do not parse is fed back as an observation before anything is published.
Valid calls are carried out in order and their results awaited; if any failed (body failure,
safety rejection, refused message) the results go back to the model as an observation and it
may try again. Choosing no action ends the turn. The same failure twice in one turn stops it
with a log line instead of spending rounds on a model that repeats itself.
"""

from __future__ import annotations

import json
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor, TimeoutError as FutureTimeout
from collections.abc import Callable
from dataclasses import dataclass, field
from jsonschema import Draft202012Validator

from edge.brain import prompt
from edge.brain.acting import Acts
from edge.brain.echo import copied, echo_problem, echoes, recital_problem, recites, said_action_name, without_instructions
from edge.brain.memory import ConversationMemory
from edge.brain.names import SelfAddress, spoken_names, vocative
from edge.brain.spoken_calls import SpokenCalls, is_silence
from edge.brain.spoken_stream import SpokenStream
from edge.brain.slots import complete, settled, usual
from edge.brain.state import BrainState
from edge.brain.brain_config import BrainConfig
from edge.brain.character import names_the_person_as_itself, out_of_character
from edge.log import get_logger
from edge.protocol.action_codes import ActionCode
from edge.protocol.companion import Companion, validate_params
from edge.protocol.payloads import ActionError, ActionResult
from edge.providers.base import ContentSegment, Provider, ProviderContext, ProviderError, ProviderResponse, Tool, ToolCall
from edge.protocol.speech_action import speech_names, words_key
from edge.providers.decision import Speech, decision_budget, map_spoken, speech_of

log = get_logger(__name__)

SEND_MESSAGE = "send_message"
RETRY_TEMPERATURE = 0.7   # a correction round after a person spoke (the 0.5B model repeated its echo)
# "none: do nothing" written as words when the grammar left no "none" (a person spoke)
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s*")
_NONE_WORDS = re.compile(r"\s*none\b\s*(?:[:(.-]|$)", re.IGNORECASE)


@dataclass
class TurnOutcome:
    results: list[ActionResult] = field(default_factory=list)
    rounds: int = 0
    stopped: str = "done"     # done | no_action | provider_error | repeated_failure | rounds_exhausted | interrupted
    deciding_s: float = 0.0   # in the provider's calls (a streamed reply's early clauses go out meanwhile)
    acting_s: float = 0.0     # carrying the decisions out: actions published, results awaited


def messaging_tool(peer_ids: list[str]) -> Tool:
    """The built-in action that sends a companion-to-companion message (handled by the brain)."""
    return Tool(name=SEND_MESSAGE, description="Send a short message to another companion (or to all).",
                parameters={"type": "object", "additionalProperties": False, "required": ["to", "message"],
                            "properties": {"to": {"type": "string", "enum": [*peer_ids, "all"]},
                                           "message": {"type": "string", "minLength": 1, "maxLength": 200}}})


class TurnRunner:
    """Runs turns for one brain; owns the provider-call thread used to enforce call timeouts.
    It acts only through ``acts`` (acting.py), never through the brain itself."""

    def __init__(self, companion: Companion, provider: Provider, config: BrainConfig, memory: ConversationMemory,
                 self_address: SelfAddress, acts: Acts):
        self.companion, self.provider, self.config, self.memory = companion, provider, config, memory
        self.self_address, self.acts = self_address, acts
        self._called_by_name = vocative(companion)
        # set by the brain: the action a spoken reply only restates (intent.CommandSense.restates)
        self.restated: Callable[[str, str], str | None] = lambda said, heard: None
        self.voices = speech_names([companion])   # speak/say and the file's own voice (whisper, shaberu)
        self.spoken_calls = SpokenCalls(spoken_names(companion), lambda: tuple(self.voices),
                                        [Tool(a.title, a.description, a.schema) for a in companion.actions])
        self._calls = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"llm-{companion.name}")
        self._examples = tuple(prompt.example_turns(companion))   # as constant as the companion file
        self._system = ""   # the system text of the turn in progress
        self._must_act = False
        self._own_text = " ".join((companion.personality, companion.story))
        self._action_names = [a.title for a in companion.actions] + [SEND_MESSAGE]
        self._clauses = 0   # clauses streamed in this round

    def close(self) -> None:
        self._calls.shutdown(wait=False, cancel_futures=True)

    def context(self, tools: list[Tool], system: str, spoken_to: bool = False, answer: bool = False,
                described: list[Tool] | None = None) -> ProviderContext:
        """Everything a decision call carries besides the prompt; the warm-up sends the same, so
        the provider's prompt cache holds what every real call starts with."""
        cfg = self.config
        budget = cfg.max_tokens or (decision_budget(tools) if tools else None)
        history = [*self._examples, *self.memory.window()]
        return ProviderContext(tools=tools, system=system, history=history, max_tokens=budget,
                               temperature=cfg.temperature, timeout_s=cfg.call_timeout_s, spoken_to=spoken_to,
                               answer=answer, described=described)

    def run(self, user_text: str, tools: list[Tool], source_id: str, system: str,
            spoken_to: bool = False, heard: str | None = None, described: list[Tool] | None = None,
            must_act: bool = False) -> TurnOutcome:
        """``heard``: what a person said, when the turn answers them (a reply that only repeats
        it is turned back, echo.py). ``must_act``: a rule of the companion file applies (its
        actions are the offer), so "none" is no answer."""
        cfg, acts, name = self.config, self.acts, self.companion.name
        self._system = system   # a reply that recites it is turned back (echo.recites)
        self._must_act = must_act   # a rule applies: "none" is no answer
        outcome = TurnOutcome()
        seen_failures: set[str] = set()
        text = user_text
        for round_no in range(cfg.max_corrections + 1):
            outcome.rounds = round_no + 1
            acts.set_state(BrainState.ASSEMBLING_CONTEXT)
            context = self.context(tools, system, spoken_to, answer=heard is not None or must_act, described=described)
            if round_no and heard and cfg.temperature is not None:   # its words were turned back: sample wider,
                context.temperature = max(cfg.temperature, RETRY_TEMPERATURE)   # or it says them again
            speech = speech_of(tools) if heard else None
            self._clauses = 0
            told = text[len(user_text):] if round_no else None   # a correction round's own words
            stream = SpokenStream(acts, self.self_address, source_id, speech, heard, told,
                                  lambda clause: self._sayable(clause, tools, heard)) \
                if speech and heard and cfg.stream_speech else None
            context.on_words = stream.say if stream else None
            acts.set_state(BrainState.AWAITING_LLM)
            try:
                response, latency = self._call(text, context, outcome)
            except ProviderError as exc:
                log.warning("provider.failed", companion=name, source=source_id, code=exc.code,
                            reason=exc.message)
                acts.observe("provider_error", {"perception_id": source_id, "error": exc.to_json()})
                outcome.results.extend(_early(stream))
                outcome.stopped = "provider_error"
                return outcome
            response = self.spoken_calls.repair(response, tools)   # "stop_music()" is done, not said
            if heard:   # "go backward about 10 cm." said, not done: do it
                response = self._done_not_said(response, tools, heard)
            if heard and self._silence_stands(response, heard):   # "none.": the words were not for it
                outcome.stopped = "no_action"
                return outcome
            if not heard and not must_act and self._only_silence(response):   # a reading: "none" said is nothing to do
                outcome.stopped = "no_action"
                return outcome
            response = self.self_address.in_reply(response)   # "Good morning, Pochi!" said by Pochi
            response = map_spoken(response, self._without_recital, self.voices)   # its story read out: its first sentence
            if told is not None:   # nothing of our own instructions is said aloud
                response = map_spoken(response, lambda words: without_instructions(words, told), self.voices)
            problems = self._problems(response, tools, heard)
            acts.observe("decision", {"perception_id": source_id, "route": "llm", "attempt": round_no,
                                    "latency_s": latency,
                                    "response": response.to_json(), "problems": problems})
            self.memory.add("user", text)
            self.memory.add("assistant", _summary(response))
            if problems:
                outcome.results.extend(_early(stream))   # said before the reply was complete
                log.info("decision.rejected", companion=name, source=source_id, attempt=round_no,
                         problems=problems)
                if _seen(seen_failures, problems):
                    return self._stop(outcome, "repeated_failure", source_id, problems)
                text = prompt.correction_text(user_text, _rejected(response), problems, answer=heard is not None,
                                              japanese=prompt.speaks_japanese(self.companion))
                continue
            said = [ToolCall(speech.action, {speech.param: clause}) for clause in stream.said] if stream and speech else []
            rest = stream.rest(response) if stream else response
            if not rest.tool_calls and not said:
                outcome.stopped = "no_action"
                return outcome
            acts.set_state(BrainState.EXECUTING_ACTIONS)
            acting = time.perf_counter()
            early = stream.results() if stream else []     # the body plays in order: theirs come first
            results = [*early, *(self._execute(call, source_id) for call in rest.tool_calls)]
            outcome.acting_s += time.perf_counter() - acting
            outcome.results.extend(r for r in results if r is not None)
            failures = [r for r in results if r is None or not r.ok]
            if not failures:
                return outcome
            if any(r is not None and r.error is not None and r.error.code == ActionCode.INTERRUPTED for r in failures):
                outcome.stopped = "interrupted"   # the person talked over it: they are heard next, not corrected
                return outcome
            observation = observation_text([*said, *rest.tool_calls], results)
            if _seen(seen_failures, [observation]):
                return self._stop(outcome, "repeated_failure", source_id, [observation])
            text = observation
        log.warning("turn.abandoned", companion=name, source=source_id,
                    reason=f"still failing after {cfg.max_corrections} corrections")
        outcome.stopped = "rounds_exhausted"
        return outcome

    def _without_recital(self, words: str) -> str:
        """A reply that reads out the companion's own story keeps its first sentence ("I'm Flick, a
        robotic desk lamp..." answers "what are you?"; the next five sentences of the story do not)."""
        if not recites(words, self._own_text):
            return words
        return _SENTENCE_END.split(words.strip(), maxsplit=1)[0]

    def _sayable(self, clause: str, tools: list[Tool], heard: str | None) -> str | None:
        """A streamed clause as it may be said now, or None (a call, or the request restated)."""
        words = self.spoken_calls.clause(clause, tools)
        if words is None or heard and self.restated(words, heard) or recites(words, self._system) or \
                said_action_name(words, self._action_names):
            return None
        if out_of_character(words, self.companion):   # held: the whole reply is checked, and corrected
            return None
        self._clauses += 1
        if self._clauses > 1 and copied(words, self._own_text):   # its story, read out after its first sentence
            return None
        return words

    def _done_not_said(self, response: ProviderResponse, tools: list[Tool], heard: str) -> ProviderResponse:
        """A reply in words that only restates the action the person asked for becomes that
        action, its parameters read from the person's words, when they settle it; otherwise
        the reply is left to the checks."""
        speech = [c for c in response.tool_calls if c.name in self.voices]
        if len(speech) != 1 or len(response.tool_calls) != 1:
            return response
        key = words_key(speech[0].args)
        said = speech[0].args[key] if key is not None else ""
        name = self.restated(said, heard)
        spec = self.companion.action(name) if name else None
        if spec is None:
            return response
        tool = Tool(spec.title, spec.description, spec.schema)
        values = usual(tool, settled(tool, heard), heard)
        if not complete(tool, values) or validate_params(spec, values):
            return response
        log.info("decision.restated", companion=self.companion.name, said=said, action=name, params=values)
        return ProviderResponse([ContentSegment(type="tool_call", tool_call=ToolCall(spec.title, values))],
                                {**response.metadata, "restated": said})

    def _only_silence(self, response: ProviderResponse) -> bool:
        """Every call of the reply is speech saying only "none" / "do nothing"."""
        speech = [c for c in response.tool_calls if c.name in self.voices]
        return bool(speech) and len(speech) == len(response.tool_calls) and all(
            _none_line(str(next(iter(c.args.values()), ""))) for c in speech)

    def _silence_stands(self, response: ProviderResponse, heard: str) -> bool:
        """The reply is only "none" and the person did not call the companion by name: the
        model chose silence for words that may be for someone else (a TV, the family)."""
        return self._only_silence(response) and self._called_by_name.search(heard) is None

    def _stop(self, outcome: TurnOutcome, why: str, source_id: str, problems: list[str]) -> TurnOutcome:
        log.warning("turn.stopped", companion=self.companion.name, source=source_id, reason=why,
                    problems=problems)
        outcome.stopped = why
        return outcome

    def _call(self, text: str, context: ProviderContext, outcome: TurnOutcome) -> tuple[ProviderResponse, float]:
        """The provider call, with the per-call timeout enforced from outside the provider."""
        started = time.monotonic()
        timeout = self.config.call_timeout_s
        cancel = context.cancel = context.cancel or self.acts.cancel_event   # an engaged estop sets it
        _check_cancel(context, self.acts.cancelled())
        try:
            response = self._generate(text, context, timeout, cancel)
        finally:
            outcome.deciding_s += time.monotonic() - started
        _check_cancel(context, self.acts.cancelled())   # a decision that arrives after the cancel is never carried out
        return response, time.monotonic() - started

    def _generate(self, text: str, context: ProviderContext, timeout: float | None,
                  cancel: threading.Event) -> ProviderResponse:
        if not timeout:
            response = self.provider.generate(text, context)
        else:
            future = self._calls.submit(self.provider.generate, text, context)
            try:
                response = future.result(timeout)
            except FutureTimeout:
                cancel.set()
                raise ProviderError("E3003", f"no decision within {timeout:.0f} s (call_timeout_s)") from None
        return response

    def _problems(self, response: ProviderResponse, tools: list[Tool], heard: str | None = None) -> list[str]:
        problems = [f"unparsable reply: {e}" for e in response.errors]
        offered = {t.name: t for t in tools}
        speech = speech_of(tools)
        for call in response.tool_calls:
            spoken = _spoken_words(call, speech, self.voices)
            where, message = spoken if spoken is not None else ("message", None)
            at = f"{call.name} /{where}"
            if heard and isinstance(message, str) and echoes(message, heard):
                problems.append(echo_problem(at))
                continue
            if isinstance(message, str) and not message.strip():   # all of it a copy, only its own name, or empty
                problems.append(f"{at}: says nothing to the person; answer them in your own words" if heard else
                                f"{at}: says nothing; say what the moment calls for, or choose none")
                continue
            if (heard or self._must_act) and isinstance(message, str) and _none_line(message):
                problems.append(f"{at}: says 'none' aloud; answer the person in your own words" if heard else
                                f"{at}: says 'none' aloud, but a rule of yours applies now: do what it says")
                continue
            if isinstance(message, str) and (stepped := out_of_character(message, self.companion)):
                problems.append(f"{at}: {stepped}")
                continue
            if isinstance(message, str) and (name := said_action_name(message, self._action_names)):
                problems.append(f"{at}: reads out the action name {name}; do the action, or answer in your own words")
                continue
            if isinstance(message, str) and recites(message, self._system) and not recites(message, self._own_text):
                problems.append(recital_problem(at))   # our instructions read out (its story is trimmed above)
                continue
            if heard and isinstance(message, str) and (wrong := names_the_person_as_itself(message, heard, self.companion)):
                problems.append(f"{at}: {wrong}")
                continue
            if call.name == SEND_MESSAGE and SEND_MESSAGE in offered:
                errors = Draft202012Validator(offered[SEND_MESSAGE].parameters).iter_errors(call.args)
                problems.extend(f"{call.name} /{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors)
                continue
            spec = self.companion.action(call.name)
            if spec is None:
                known = ", ".join(t.name for t in tools) or ", ".join(a.title for a in self.companion.actions)
                problems.append(f"unknown action {call.name!r} (known: {known})")
                continue
            problems.extend(f"{call.name} {p.pointer or '/'}: {p.message}" for p in validate_params(spec, call.args))
        return problems

    def _execute(self, call: ToolCall, source_id: str) -> ActionResult | None:
        if call.name == SEND_MESSAGE:
            return self.acts.send_message(call, source_id)
        self.acts.set_state(BrainState.AWAITING_RESULTS)
        return self.acts.perform(call.name, call.args, source_id)


def _none_line(text: str) -> bool:
    """A spoken line that only says "none" / "do nothing"."""
    return _NONE_WORDS.match(text) is not None or is_silence(text)


def _spoken_words(call: ToolCall, speech: Speech | None, voices: frozenset[str]) -> tuple[str, str] | None:
    """What a speech call says and the parameter it is in, whatever the file named it
    (``say {"text": ...}``, ``shaberu {"ことば": ...}``); None for a call that is not speech."""
    if speech is not None and call.name == speech.action:
        key: str | None = speech.param
    elif call.name in voices:
        key = words_key(call.args)
    else:
        return None
    words = call.args.get(key) if key is not None else None
    return (key, words) if key is not None and isinstance(words, str) else None


def _early(stream: SpokenStream | None) -> list[ActionResult]:
    """The results of the clauses said early, if any."""
    return [r for r in (stream.results() if stream else []) if r is not None]


def _check_cancel(context: ProviderContext, why: str | None) -> None:
    if context.cancel is not None and context.cancel.is_set():
        raise ProviderError("E4002", f"turn cancelled ({why or 'emergency stop'}); its decision is not carried out")


def _seen(seen: set[str], problems: list[str]) -> bool:
    key = json.dumps(sorted(problems))
    if key in seen:
        return True
    seen.add(key)
    return False


def observation_text(calls: list[ToolCall], results: list[ActionResult | None]) -> str:
    """What the model reads after acting: each action's outcome, failures with their reason."""
    lines = []
    for call, result in zip(calls, results):
        if result is None:
            lines.append(f"{call.name}: no result (the body did not answer)")
        elif result.ok:
            lines.append(f"{call.name}: done")
        else:
            err = result.error or ActionError("failed", "")
            lines.append(f"{call.name}: failed ({err.code}): {err.message}")
    return "Observation: " + "; ".join(lines) + ". Decide what to do next, or choose no action."


def _rejected(response: ProviderResponse) -> str:
    """The rejected reply as the model wrote it (its raw text when the provider kept it), short."""
    raw = response.metadata.get("raw")
    text = raw if isinstance(raw, str) and raw.strip() else _summary(response)
    return text if len(text) <= 300 else text[:300] + "..."


def _summary(response: ProviderResponse) -> str:
    """The assistant turn as the model will see it in its history: compact JSON of the reply."""
    return json.dumps([s.to_json() for s in response.segments], ensure_ascii=False)[:500]


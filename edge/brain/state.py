"""The execution loop's states and the transitions allowed between them.

Writing the machine down makes the loop's behaviour inspectable (``status/<brain>`` and the
observer carry the state) and catches a wrong transition as a logged bug instead of a hang.
"""

from __future__ import annotations

from enum import Enum


class BrainState(str, Enum):
    WAITING = "waiting"
    ASSEMBLING_CONTEXT = "assembling_context"
    AWAITING_LLM = "awaiting_llm"
    EXECUTING_ACTIONS = "executing_actions"
    AWAITING_RESULTS = "awaiting_results"


S = BrainState
TRANSITIONS: dict[BrainState, frozenset[BrainState]] = {
    S.WAITING: frozenset({S.ASSEMBLING_CONTEXT, S.EXECUTING_ACTIONS}),           # a turn, or a slash command
    S.ASSEMBLING_CONTEXT: frozenset({S.AWAITING_LLM, S.WAITING}),
    S.AWAITING_LLM: frozenset({S.ASSEMBLING_CONTEXT, S.EXECUTING_ACTIONS, S.WAITING}),
    S.EXECUTING_ACTIONS: frozenset({S.AWAITING_RESULTS, S.ASSEMBLING_CONTEXT, S.WAITING}),
    S.AWAITING_RESULTS: frozenset({S.AWAITING_RESULTS, S.EXECUTING_ACTIONS, S.ASSEMBLING_CONTEXT, S.WAITING}),
}


def allowed(current: BrainState, new: BrainState) -> bool:
    return new == current or new in TRANSITIONS[current]

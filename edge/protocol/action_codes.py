"""Every code an action's failure can carry (``ActionResult.error.code``), defined once.

The strings are part of the wire contract (outside tests and MCP hosts read them), so a member's
value never changes. Members are ``str``: ``ActionError(ActionCode.BODY_BUSY, ...)`` encodes as
``"body_busy"`` and a received plain string compares equal to its member.

``CODES`` says for each one who sends it and whether sending the action again can help; the
table in docs/protocol.md ("Action result codes") is written from it and a test keeps the two
the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

Retry = Literal["yes", "no", "later"]


class ActionCode(StrEnum):
    # the action itself is wrong: the same action fails the same way
    UNKNOWN_ACTION = "unknown_action"
    UNKNOWN_TOOL = "unknown_tool"
    INVALID_PARAMS = "invalid_params"
    INVALID_PAYLOAD = "invalid_payload"
    UNSUPPORTED = "unsupported"
    # the body cannot act now
    ESTOP_ENGAGED = "estop_engaged"
    BODY_BUSY = "body_busy"
    BRAIN_OFFLINE = "brain_offline"
    NOT_ACTIVE = "not_active"
    # the action started and did not finish
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"
    TIMEOUT = "timeout"
    SERVO_FAULT = "servo_fault"
    OUT_OF_RANGE = "out_of_range"
    NOT_HOMED = "not_homed"
    UNKNOWN_JOINT = "unknown_joint"
    INVALID_POSITION = "invalid_position"
    BODY_ERROR = "body_error"
    UNENCODABLE_RESULT = "unencodable_result"
    # no answer, or the brain's own refusals (never published on the bus)
    NO_RESULT = "no_result"
    MESSAGE_REFUSED = "message_refused"
    FAILED = "failed"


@dataclass(frozen=True)
class CodeInfo:
    sent_by: str
    retry: Retry   # yes: as is; later: once the named condition is gone; no: change something first
    meaning: str


CODES: dict[ActionCode, CodeInfo] = {
    ActionCode.UNKNOWN_ACTION: CodeInfo(
        "body, MCP server", "no",
        "No companion on this body defines the action, or (servo body) no joints are mapped to it in "
        "`[body.kinematics]`; over MCP, `action-play` named an action the companion lacks."),
    ActionCode.UNKNOWN_TOOL: CodeInfo(
        "MCP server", "no", "The MCP tool called is neither one of the companion's actions nor `action-play`."),
    ActionCode.INVALID_PARAMS: CodeInfo(
        "body, MCP server", "no",
        "The params break the action's JSON Schema (the message names the field), or the executor cannot "
        "carry them out (an empty `speak` message, a target the kinematics cannot reach). Over MCP also "
        "NaN, Infinity or an over-deep argument."),
    ActionCode.INVALID_PAYLOAD: CodeInfo(
        "body", "no",
        "The action message itself is malformed (its schema or the wire codec refused it, e.g. `NaN` in "
        "params) but still carries a readable `id` to answer. Without an id it is only logged and counted."),
    ActionCode.UNSUPPORTED: CodeInfo(
        "servo body", "no", "This body cannot do that kind of action at all, e.g. `speak` with `body.tts = \"none\"`."),
    ActionCode.ESTOP_ENGAGED: CodeInfo(
        "body, safety layer, brain", "later",
        "The emergency stop is engaged: the action was refused before it moved anything (the brain refuses "
        "it itself and never publishes it). Send it again after the estop is released, if still wanted."),
    ActionCode.BODY_BUSY: CodeInfo(
        "body", "later", "The body's action queue is full (64 waiting); nothing was done. Retry once it drains."),
    ActionCode.BRAIN_OFFLINE: CodeInfo(
        "servo body", "later",
        "The sender's brain went offline (its last will) and the body rested in its safe pose; its actions "
        "are refused until that brain is online again."),
    ActionCode.NOT_ACTIVE: CodeInfo(
        "safety layer (servo body)", "later",
        "The servos are not active (resting, torque off, or not woken yet); the body wakes on the next "
        "action it can run."),
    ActionCode.CANCELLED: CodeInfo(
        "body", "yes",
        "Stopped part-way or dropped from the queue by a `stop` action, an estop or shutdown; motion halts "
        "where it is and speech is cut. Send it again if it is still wanted."),
    ActionCode.INTERRUPTED: CodeInfo(
        "body", "no",
        "A `speak` cut short, or dropped from the queue, because a person started talking over the robot "
        "(barge-in, a `voice` event from the microphone). Do not repeat it: answer what the person says next."),
    ActionCode.TIMEOUT: CodeInfo(
        "servo body", "later",
        "The joints did not reach their goal in time (blocked, or too slow for `max_speed_dps`); the body "
        "holds where it stopped. Retry after removing what blocks it."),
    ActionCode.SERVO_FAULT: CodeInfo(
        "servo body", "no",
        "A servo reported a fault or stopped answering (overload, voltage, overheating, the serial port); "
        "the body holds, and the message names the joint. Check the hardware first (`companion doctor`)."),
    ActionCode.OUT_OF_RANGE: CodeInfo(
        "safety layer (servo body)", "no",
        "A joint was found further outside its limits than one step when waking; torque stays off. Move "
        "it back by hand."),
    ActionCode.NOT_HOMED: CodeInfo(
        "safety layer (servo body)", "later", "A joint's position has not been read yet, so it cannot be moved safely."),
    ActionCode.UNKNOWN_JOINT: CodeInfo(
        "safety layer (servo body)", "no", "The kinematics named a joint the body does not have (a robot.toml mistake)."),
    ActionCode.INVALID_POSITION: CodeInfo(
        "safety layer (servo body)", "no", "A joint position read or given was not a finite number."),
    ActionCode.BODY_ERROR: CodeInfo(
        "body", "no",
        "The executor or the body failed unexpectedly (a bug); the message names the exception. The body "
        "goes on with the next action."),
    ActionCode.UNENCODABLE_RESULT: CodeInfo(
        "body", "no",
        "The action ran, but its result could not be encoded (e.g. a lone surrogate in an executor's "
        "message; the message names the field). Do not resend blindly: it may already have taken effect."),
    ActionCode.NO_RESULT: CodeInfo(
        "MCP server", "later",
        "No body answered within the result timeout (no body node running, another namespace, or the broker "
        "unreachable). The action may still run later: check `status/body` before resending."),
    ActionCode.MESSAGE_REFUSED: CodeInfo(
        "brain (`send_message`, never on the bus)", "later",
        "The seed's messaging rules refused the message: under 10 s since the last one, or the conversation "
        "reached 15 exchanges (then only a new conversation helps)."),
    ActionCode.FAILED: CodeInfo(
        "brain (what it tells the model, never on the bus)", "no",
        "A failed result that came without an error object; the brain reports it with this code."),
}

"""One vocabulary of action failure codes: every code used in the code is defined in ActionCode, every
member is documented in docs/protocol.md exactly as CODES says, and the wire strings never change."""

from __future__ import annotations

import ast
from pathlib import Path

from edge.protocol.action_codes import CODES, ActionCode
from edge.protocol.payloads import ActionError, ActionResult
from repo_paths import REPO

ROOT = REPO
# calls that take a failure code, and which positional argument it is
CODE_ARGUMENT = {"ActionError": 0, "ActionFailure": 0, "SafetyError": 0, "refused": 1, "_outcome": 2}
OWNED_ELSEWHERE = ("edge/brain/",)  # the brain's few literals are checked against the vocabulary, not replaced here

# the wire contract: outside tests and MCP hosts compare these strings
WIRE = {"unknown_action", "unknown_tool", "invalid_params", "invalid_payload", "unsupported", "estop_engaged",
        "body_busy", "brain_offline", "not_active", "cancelled", "interrupted", "timeout", "servo_fault", "out_of_range",
        "not_homed", "unknown_joint", "invalid_position", "body_error", "unencodable_result", "no_result",
        "message_refused", "failed"}


def _code_literals() -> list[tuple[str, int, str]]:
    """(file, line, code) for every string literal given as a failure code in edge/ and body_drivers/."""
    found = []
    for folder in ("edge", "body_drivers"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, ast.Call):
                    continue
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
                at = CODE_ARGUMENT.get(name or "")
                if at is not None and len(node.args) > at:
                    arg = node.args[at]
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                        found.append((str(path.relative_to(ROOT)), node.lineno, arg.value))
    return found


def test_the_wire_strings_are_the_contract():
    assert {c.value for c in ActionCode} == WIRE
    assert set(CODES) == set(ActionCode)


def test_a_code_encodes_as_its_plain_string_and_a_received_one_matches_its_member():
    result = ActionResult(id="a", name="wave", ok=False, sender="body", started=1.0, finished=2.0,
                          error=ActionError(ActionCode.BODY_BUSY, "queue full"))
    assert b'"error":{"code":"body_busy","message":"queue full"}' in result.encode()
    received = ActionResult.decode(result.encode())
    assert received.error is not None and received.error.code == ActionCode.BODY_BUSY
    assert type(received.error.code) is str


def test_no_code_outside_the_vocabulary():
    unknown = [f"{f}:{line}: {code!r}" for f, line, code in _code_literals() if code not in WIRE]
    assert not unknown, "codes not in edge/protocol/action_codes.py: " + "; ".join(unknown)


def test_no_bare_code_literals_outside_the_brain():
    bare = [f"{f}:{line}: {code!r}" for f, line, code in _code_literals() if not f.startswith(OWNED_ELSEWHERE)]
    assert not bare, "use ActionCode instead of a string literal: " + "; ".join(bare)


def test_every_code_is_documented_in_full():
    text = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    for code, info in CODES.items():
        row = f"| `{code.value}` | {info.sent_by} | {info.retry} | {info.meaning} |"
        assert row in text, f"docs/protocol.md: the row for {code.value} differs from CODES"

"""Words that are an action written out are done, not said.

A small model sometimes answers "stop the music" with a speech action whose words are the call
itself: ``speak {"message": "stop_music()"}``, ``"wag(0)"``, ``'{"action": "sit"}'``, or begins
its line with its own name as a script would ("Pochi says: Woof!"). Said aloud, that is the robot
reading code to a person. Here each spoken line is read once more before anything is published:

* a call of an offered action by name, ``name(...)`` with keyword or positional arguments, or
  the JSON of a call (``{"action"|"name"|"tool": ..., "params"|"arguments"|"args": {...}}``),
  becomes that action, its arguments matched to the action's parameters in order; the words
  around it, if any, are still said;
* a leading ``<name> says:`` / ``<name>:`` (the companion's own name) is taken off;
* a line that only says to do nothing ("none.", "None: do nothing (...)", "なし") is no speech
  (``is_silence``): a model held to words by the grammar says so when it chooses silence, and
  the turn decides whether silence may stand (turn.py).

Any action of the companion counts, not only those offered this turn: a model that writes
``stop_music()`` when the offer was narrowed to words has still understood the request.

The call's arguments are then checked against the action's schema like any other decision
(turn.py), so a wrong one is corrected, never carried out. Nothing here knows any companion's
words: it reads the names and parameters of the actions offered this turn.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from edge.protocol.speech_action import words_key
from edge.providers.base import ContentSegment, ProviderResponse, Tool, ToolCall

_JSON_KEYS_NAME = ("action", "name", "tool", "function")
_JSON_KEYS_ARGS = ("params", "arguments", "args", "parameters", "input")
_WORD_ARG = re.compile(r"^[\w\-.+:/ ]+$", re.UNICODE)


def speaker_prefix(names: list[str]) -> re.Pattern[str]:
    """``Pip says:``, ``Pip:``, ``「Pip」:``, ``Pip said,`` at the start of a line."""
    spoken = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True) if n.strip())
    return re.compile(rf"^\s*[\"'「『]?(?:{spoken})[\"'」』]?\s*(?:(?:says|said|replies|answers)\s*[:：,]?|[:：])\s*",
                      re.IGNORECASE)


_SILENCE = re.compile(r"^\W*(?:none|nothing|no action|do nothing|silence|stay silent|silent|なし|何もしない|无|沉默|"
                      r"什么都不做)(?:\W+(?:none|nothing|do nothing|no action)?)*\W*(?:[:(（].*)?$", re.IGNORECASE)


def is_silence(text: str) -> bool:
    """A line whose only content is "do nothing" (see the module docstring)."""
    return _SILENCE.match(text.strip()) is not None


class SpokenCalls:
    """Turns speech that is a call into the call (``repair``), for one companion's names and
    actions (``all_tools``: every action of its file)."""

    def __init__(self, companion_names: list[str], speech_names: Callable[[], tuple[str, ...]],
                 all_tools: list[Tool] | None = None):
        self._prefix = speaker_prefix(companion_names) if any(n.strip() for n in companion_names) else None
        self._speech_names = speech_names
        self._all = list(all_tools or [])

    def _actions(self, tools: list[Tool]) -> dict[str, Tool]:
        speech = set(self._speech_names())
        return {t.name: t for t in [*self._all, *tools] if t.name not in speech}

    def repair(self, response: ProviderResponse, tools: list[Tool]) -> ProviderResponse:
        """``response`` with every speech call read as above; the same object when nothing changed."""
        speech = set(self._speech_names())
        actions = self._actions(tools)
        segments: list[ContentSegment] = []
        changed = False
        for segment in response.segments:
            call = segment.tool_call
            if segment.type != "tool_call" or call is None or call.name not in speech:
                segments.append(segment)
                continue
            text_key = words_key(call.args)
            if text_key is None:
                segments.append(segment)
                continue
            words, calls = self._read(call.args[text_key], actions)
            if not calls and words == call.args[text_key]:
                segments.append(segment)
                continue
            changed = True
            if words.strip():
                segments.append(ContentSegment(type="tool_call",
                                               tool_call=ToolCall(call.name, {**call.args, text_key: words}, call.id)))
            segments.extend(ContentSegment(type="tool_call", tool_call=c) for c in calls)
        return ProviderResponse(segments=segments, metadata=response.metadata) if changed else response

    def clause(self, text: str, tools: list[Tool]) -> str | None:
        """A clause streamed before the reply is complete, as it may be said now: its speaker
        prefix off; None when it holds a call (the whole reply is repaired once it is in)."""
        actions = self._actions(tools)
        if actions and re.search(rf"(?<![\w.])(?:{'|'.join(re.escape(n) for n in actions)})\s*\(", text):
            return None   # a call, perhaps cut across clauses: "set_light(living_room,"
        words, calls = self._read(text, actions)
        return None if calls or _SILENCE.match(words) else words

    def _read(self, text: str, actions: dict[str, Tool]) -> tuple[str, list[ToolCall]]:
        """The words left to say, and the calls found in ``text``; ``text`` itself, untouched,
        when it neither holds a call nor opens with its speaker's name."""
        unprefixed = self._prefix.sub("", text, count=1) if self._prefix is not None else text
        rest, calls = unprefixed, []
        found = _json_call(rest, actions)
        if found is not None:
            call, span = found
            calls.append(call)
            rest = rest[:span[0]] + rest[span[1]:]
        if actions:
            names = "|".join(re.escape(n) for n in sorted(actions, key=len, reverse=True))
            pattern = re.compile(rf"(?<![\w.])({names})\s*\(([^()]*)\)", re.UNICODE)
            calls.extend(ToolCall(m.group(1), _arguments(m.group(2), actions[m.group(1)])) for m in pattern.finditer(rest))
            rest = pattern.sub("", rest)
        if not calls:
            return unprefixed, []
        words = _tidy(rest)
        if re.match(r"^[をがはにでともの]", words):   # "wag()を実行します": the call was the sentence's object
            words = ""
        return words, calls


def _tidy(text: str) -> str:
    """What is left of a line once the calls are out of it: no empty brackets, stray quotes or
    separators left dangling."""
    text = re.sub(r"[`*]+", "", text)
    text = re.sub(r"\s+([,.!?;:、。！？])", r"\1", text)
    text = re.sub(r"^[\s,.;:、。\"'-]+|[\s,;:、\"'-]+$", "", text)
    return re.sub(r"\s{2,}", " ", text).strip()


def _json_call(text: str, actions: dict[str, Tool]) -> tuple[ToolCall, tuple[int, int]] | None:
    """The first JSON object in ``text`` that names an offered action, and where it is."""
    start = text.find("{")
    while start != -1:
        try:
            value, end = json.JSONDecoder().raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        call = _call_of(value, actions)
        if call is not None:
            return call, (start, end)
        start = text.find("{", end)
    return None


def _call_of(value: Any, actions: dict[str, Tool]) -> ToolCall | None:
    if not isinstance(value, dict):
        return None
    name = next((value[k] for k in _JSON_KEYS_NAME if isinstance(value.get(k), str)), None)
    if name in actions:
        args = next((value[k] for k in _JSON_KEYS_ARGS if isinstance(value.get(k), dict)), None)
        if args is None:   # {"action": "wag", "speed": 0.5}: the rest are the arguments
            args = {k: v for k, v in value.items() if k not in _JSON_KEYS_NAME}
        return ToolCall(str(name), dict(args))
    if len(value) == 1:    # {"wag": {"speed": 0.5}}
        (key, inner), = value.items()
        if key in actions and isinstance(inner, dict):
            return ToolCall(key, dict(inner))
    return None


def _arguments(text: str, tool: Tool) -> dict[str, Any]:
    """``times=2, speed="slow"`` or ``2, "slow"`` as the tool's params (positional ones in the
    order its schema lists them, required first). What cannot be read is left out: the schema
    check then names what is missing."""
    params = tool.parameters if isinstance(tool.parameters, dict) else {}
    props = list((params.get("properties") or {}).keys())
    required = [p for p in (params.get("required") or []) if p in props]
    order = required + [p for p in props if p not in required]
    out: dict[str, Any] = {}
    position = 0
    for part in _split_args(text):
        # a keyword in any script: the file's own parameter names ("ことば='x'", "每分钟拍数=40")
        key, _, raw = part.partition("=") if re.match(r"^\s*[^\W\d]\w*\s*=", part) else ("", "", part)
        value = _literal(raw.strip())
        if value is _UNREADABLE:
            continue
        if key.strip():
            out[key.strip()] = value
        elif position < len(order):
            out[order[position]] = value
            position += 1
    return out


_UNREADABLE = object()


def _split_args(text: str) -> list[str]:
    """Arguments split on commas outside quotes and brackets."""
    parts, depth, quote, current = [], 0, "", []
    for ch in text:
        if quote:
            current.append(ch)
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
            current.append(ch)
        elif ch in "[{":
            depth += 1
            current.append(ch)
        elif ch in "]}":
            depth -= 1
            current.append(ch)
        elif ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return [p for p in parts if p.strip()]


def _literal(raw: str) -> Any:
    """A JSON literal, a single-quoted string, or a bare word (as a string)."""
    if not raw:
        return _UNREADABLE
    try:
        return json.loads(raw)
    except ValueError:
        pass
    if len(raw) >= 2 and raw[0] == raw[-1] == "'":
        return raw[1:-1]
    if raw in ("True", "False"):
        return raw == "True"
    return raw if _WORD_ARG.match(raw) else _UNREADABLE

"""Which of a companion's actions is its voice: words said to a person, whatever the file calls it.

The stack gives ``speak`` and ``say`` a meaning (edge/protocol/action_names.py), but a companion
file written elsewhere names its voice as it likes: a nursery monitor ``whisper``s, a Japanese
chick ``shaberu``s with a parameter called ``ことば``. Taken for a gesture, such an action was
never offered as the companion's words (a question was answered with a lullaby), its text was
never checked (the person's question was said back to them), the body did not speak it and the
microphone did not hold its ears while it played.

So each node asks here, with the companion's file, which action is its voice and which
parameter holds the words:

1. an action marked ``"x-speech": true`` (the extension, docs/companion-files.md); ``false``
   keeps an action out whatever its name;
2. else ``speak`` or ``say``, as before, when the file declares one;
3. else the one action shaped like a voice: exactly one required parameter, free text (no
   enum), described as saying, telling or talking to someone (in English, Japanese or Chinese).
   Two such actions and no mark: neither (the file must say which).

The words are the required text parameter; optional ones (a volume, a tone) may come beside it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from edge.protocol.action_names import SPEECH_ACTIONS
from edge.protocol.problems import Problem, short

if TYPE_CHECKING:
    from edge.protocol.companion_types import ActionSpec, Companion

SPEECH_MARK = "x-speech"

# Words of a description that make an action a voice. Reading, playing and recording are not
# talking to someone ("read one step aloud", "play calming words", "a note in the diary").
_SAYS = re.compile(
    r"\b(?:say|says|saying|speak|speaks|speaking|talk|talks|talking|tell|tells|whisper|whispers|reply|replies|"
    r"answer|answers|chat|utter|out loud|aloud)\b"
    r"|声に出|話し|話す|話します|しゃべ|喋|言う|言います|発話|伝え"
    r"|说话|说一|说句|对.{0,8}说|讲话|告诉|回答|发言|开口", re.IGNORECASE)
_NOT_TALK = re.compile(r"\b(?:play|plays|record|records|diary|log|note|notes|remind|reminder|read)\b"
                       r"|再生|記録|日記|播放|记录|日记|提醒", re.IGNORECASE)


@dataclass(frozen=True)
class SpokenAction:
    """The companion's voice: ``name`` says the text in parameter ``param``."""

    name: str
    param: str

    def words(self, params: Mapping[str, Any]) -> str | None:
        """The words an action of this kind says, or None when it carries none."""
        words = params.get(self.param)
        return words if isinstance(words, str) else None


def words_key(params: Mapping[str, Any]) -> str | None:
    """The parameter of a speech call that holds its words, read from the call itself (where the
    file's voice does not name it): ``message`` when there is one, else the first text."""
    if isinstance(params.get("message"), str):
        return "message"
    return next((k for k, v in params.items() if isinstance(v, str)), None)


def _text_param(schema: Mapping[str, Any]) -> str | None:
    """The one required free-text parameter of an action's schema, if that is its shape."""
    props = schema.get("properties")
    required = schema.get("required") or []
    if not isinstance(props, Mapping) or not isinstance(required, list) or len(required) != 1:
        return None
    name = required[0]
    spec = props.get(name) if isinstance(name, str) else None
    if not isinstance(spec, Mapping) or spec.get("type") != "string" or "enum" in spec or "const" in spec:
        return None
    return str(name)


def _sounds_like_talk(description: str) -> bool:
    return _SAYS.search(description) is not None and _NOT_TALK.search(description) is None


def spoken_action_of(actions: Iterable[tuple[str, str, Mapping[str, Any]]]) -> SpokenAction | None:
    """The voice among ``(name, description, schema)`` triples (module docstring: marked, named, shaped)."""
    items = [(name, description or "", schema) for name, description, schema in actions
             if isinstance(schema, Mapping)]
    marked = [(n, s) for n, _, s in items if s.get(SPEECH_MARK) is True]
    for name, schema in marked:
        param = _text_param(schema) or _any_text_param(schema)
        if param is not None:
            return SpokenAction(name, param)
    unmarked = [(n, d, s) for n, d, s in items if s.get(SPEECH_MARK) is not False]
    for wanted in SPEECH_ACTIONS:
        for name, _, schema in unmarked:
            if name == wanted:
                param = _text_param(schema) or _any_text_param(schema)
                return SpokenAction(name, param or "message")
    shaped = [(n, p) for n, d, s in unmarked
              if (p := _text_param(s)) is not None and _sounds_like_talk(f"{d} {_param_description(s, p)}")]
    return SpokenAction(*shaped[0]) if len(shaped) == 1 else None


def _any_text_param(schema: Mapping[str, Any]) -> str | None:
    """``message`` if the action has it, else its first free-text parameter (a marked or named
    voice whose schema is not the usual one-parameter shape)."""
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return None
    texts = [k for k, v in props.items() if isinstance(v, Mapping) and v.get("type") == "string"
             and "enum" not in v and "const" not in v]
    return "message" if "message" in texts else (texts[0] if texts else None)


def _param_description(schema: Mapping[str, Any], param: str) -> str:
    spec = (schema.get("properties") or {}).get(param)
    return str(spec.get("description", "")) if isinstance(spec, Mapping) else ""


def spoken_action(companion: Companion | None) -> SpokenAction | None:
    """The companion's voice, if it has one."""
    return None if companion is None else _spoken(companion.actions)


@functools.lru_cache(maxsize=64)
def _spoken(actions: tuple[ActionSpec, ...]) -> SpokenAction | None:
    return spoken_action_of((a.title, a.description, a.schema) for a in actions)


def speech_names(companions: Iterable[Companion] = ()) -> frozenset[str]:
    """Every name that is a voice here: ``speak``/``say`` and each companion's own."""
    names = set(SPEECH_ACTIONS)
    for companion in companions:
        voice = spoken_action(companion)
        if voice is not None:
            names.add(voice.name)
    return frozenset(names)


def speech_mark_problems(doc: Mapping[str, Any]) -> list[Problem]:
    """``x-speech`` is ``true`` or ``false``, on one action at most, and the marked action has a
    free-text parameter to hold the words."""
    actions = doc.get("actions")
    out: list[Problem] = []
    marked: list[int] = []
    for i, action in enumerate(actions if isinstance(actions, list) else []):
        if not isinstance(action, Mapping) or SPEECH_MARK not in action:
            continue
        mark = action[SPEECH_MARK]
        if not isinstance(mark, bool):
            out.append(Problem(f"/actions/{i}/{SPEECH_MARK}", f"must be true (this action is the companion's "
                                                               f"voice) or false (it is not), got {short(mark)}"))
        elif mark:
            marked.append(i)
            if _any_text_param(action) is None:
                out.append(Problem(f"/actions/{i}/{SPEECH_MARK}", "the companion's voice needs a text parameter "
                                                                   "(a string property, no enum) for its words"))
    for i in marked[1:]:
        out.append(Problem(f"/actions/{i}/{SPEECH_MARK}",
                           f"only one action can be the companion's voice (already /actions/{marked[0]})"))
    return out

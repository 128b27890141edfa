"""The phrases a companion expects to hear, as a JSGF grammar and a matcher for it.

pocketsphinx's general language model mishears short commands ("hello robot please look
left" → "oh robot please look love to"); a grammar of the phrases the companion already
knows decodes them exactly and ~20x faster. The phrases come from the companion files:
its name ("hello pip", "pip, look left"), its actions (each action title is a slash
command and a spoken verb, with the usual directions for the verbs robots share), and the
example inputs of its events; plus greetings, thanks and short questions every companion
hears. Templates use the JSGF operators themselves: ``[optional]``, ``( a | b )``.

A grammar can only ever answer with one of its phrases, so ``PhraseGrammar.complete``
tells a finished phrase from a path the decoder abandoned half-way ("wag your"), which is
one of the signs that the speech was something else (see ``stt.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from edge.log import get_logger

log = get_logger(__name__)

_DIRECTIONS = "(left | right | up | down | ahead | forward | back | around | here | at me | over there)"
_STEPS = "[a bit | a little]"
# What people say to a robot whose action has one of these titles.
VERB_TEMPLATES: dict[str, tuple[str, ...]] = {
    "look": ("look", f"look [to the] {_DIRECTIONS}", "look at (me | this | that)",
             "turn [to the] (left | right | around)"),
    "turn": ("turn [to the] (left | right | around)",),
    "move": ("move", f"move {_STEPS} (forward | back | backward | closer | away) {_STEPS}",
             f"move {_STEPS} [to the] (left | right) {_STEPS}",
             "come (here | closer | back | to me)", f"go (forward | back | backward | left | right | away) {_STEPS}"),
    "go": (f"go (forward | back | backward | left | right | away | home) {_STEPS}",),
    "come": ("come (here | closer | back | to me)",),
    "wag": ("wag [your tail]", "wag your tail (fast | slowly)"),
    "nod": ("nod [your head]", "nod (yes | twice)"),
    "speak": ("speak", "say something", "talk to me", "say hello"),
    "say": ("say something", "say hello"),
    "dance": ("dance", "dance for me", "do a dance"),
    "sit": ("sit [down]",), "stand": ("stand up",), "jump": ("jump",),
    "spin": ("spin [around]",), "wave": ("wave [hello | goodbye]",), "follow": ("follow me",),
    "sleep": ("go to sleep", "sleep"), "wake": ("wake up",), "blink": ("blink",),
    "stop": ("stop",), "beep": ("beep",), "sing": ("sing [a song]",), "shake": ("shake [your head]",),
}

# What people say to any companion; ``<name>`` is replaced by its names (and "robot").
# Very short phrases ("bye", "sure", "maybe", "sorry", "help") are left out on purpose:
# measured (bench/mic.py), they let the grammar assemble free speech out of fragments
# ("i need a cup of tea" -> "bye maybe pip") close enough to pass the acoustic check.
SOCIAL_TEMPLATES: tuple[str, ...] = (
    "(hello | hi | hey) [there | <name>]",
    "good (morning | afternoon | evening | night) [<name>]",
    "(goodbye | bye bye | see you later) [<name>]",
    "(yes | no | okay) [please | thanks]",
    "(thank you | thanks) [very much] [<name>]",
    "(good | nice | great) job [<name>]", "well done [<name>]", "good (boy | girl | robot)",
    "(stop | wait) [please]", "never mind", "i love you",
    "what is your name", "who are you", "how are you [today]", "what can you do",
    "what is that", "where are you", "are you (there | awake | ok)", "do you like music",
    "<name>",
)


class GrammarError(ValueError):
    """A template that is not valid JSGF-style syntax; the message shows it."""


@dataclass(frozen=True)
class PhraseGrammar:
    """One JSGF grammar (``text``) and the regular expression that accepts exactly its phrases."""

    text: str
    pattern: re.Pattern[str] = field(repr=False)  # over "w1 w2 ... " (each word then a space)
    phrases: tuple[str, ...]          # the templates it was built from (after OOV filtering)
    dropped: tuple[str, ...] = ()     # templates left out, each with the reason
    names: tuple[str, ...] = ()       # the companions' names it answers to ("robot" besides)

    def sentences(self) -> list[str]:
        """Every single-part utterance of the grammar, addressed or not ("pip look left",
        "look left please"): what a re-ranker compares a free transcript with. Utterances of
        two parts are left out (their number is the square of these)."""
        names = self.names + ("robot",)
        before = ("",) + tuple(f"{n} " for n in names) + ("please ",) + tuple(f"{n} please " for n in names)
        after = ("",) + tuple(f" {n}" for n in names) + (" please",)
        out: dict[str, None] = {}
        for template in self.phrases:
            for phrase in expand(template, {"<name>": names}):
                for head in before:
                    for tail in after:
                        out[f"{head}{phrase}{tail}"] = None
        return list(out)

    def complete(self, hypothesis: str) -> bool:
        """True when the words are a whole phrase of the grammar, not a prefix of one."""
        words = " ".join(hypothesis.split())
        return bool(words) and self.pattern.fullmatch(words + " ") is not None


# ------------------------------------------------------------------------ template syntax

_TOKEN = re.compile(r"\s*(\[|\]|\(|\)|\||<[a-z_]+>|[a-z0-9']+)")


def tokenize(template: str) -> list[str]:
    """Split a template into words, rule references and the operators ``[ ] ( ) |``."""
    tokens: list[str] = []
    pos = 0
    text = template.strip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            raise GrammarError(f"template {template!r}: cannot read {text[pos:pos + 12]!r} "
                               "(lowercase words, <rule>, [ ], ( | ) only)")
        tokens.append(match.group(1))
        pos = match.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    _check_brackets(template, tokens)
    return tokens


def _check_brackets(template: str, tokens: list[str]) -> None:
    stack: list[str] = []
    for tok in tokens:
        if tok in "[(":
            stack.append("]" if tok == "[" else ")")
        elif tok in "])":
            if not stack or stack.pop() != tok:
                raise GrammarError(f"template {template!r}: unbalanced {tok!r}")
    if stack:
        raise GrammarError(f"template {template!r}: {stack[-1]!r} missing")


def expand(template: str, rules: dict[str, Sequence[str]] | None = None) -> list[str]:
    """Every phrase a template stands for: each alternative, each optional part in and out,
    each ``<rule>`` replaced by its phrases ("look [to the] (left | right)" gives four)."""
    tokens = tokenize(template)
    rules = rules or {}

    def sequence(i: int, stops: str) -> tuple[list[list[str]], int]:
        out: list[list[str]] = [[]]
        while i < len(tokens) and tokens[i] not in stops:
            tok = tokens[i]
            if tok in "[(":
                inner, i = choice(i + 1, "]" if tok == "[" else ")")
                if tok == "[":
                    inner.append([])
                out = [head + tail for head in out for tail in inner]
                continue
            words = [r.split() for r in rules.get(tok, ())] if tok.startswith("<") else [[tok]]
            out = [head + w for head in out for w in words]
            i += 1
        return out, i

    def choice(i: int, close: str) -> tuple[list[list[str]], int]:
        alternatives: list[list[str]] = []
        while True:
            found, i = sequence(i, "|" + close)
            alternatives += found
            if tokens[i] == close:
                return alternatives, i + 1
            i += 1

    phrases, _ = sequence(0, "")
    return list(dict.fromkeys(" ".join(p) for p in phrases if p))


def words_of(template: str) -> set[str]:
    return {t for t in tokenize(template) if t[0].isalnum() or t[0] == "'"}


def to_regex(tokens: Sequence[str], rules: dict[str, str]) -> str:
    """The template as a regex over space-separated words; each word carries its trailing space."""
    parts: list[str] = []
    for tok in tokens:
        if tok == "[":
            parts.append("(?:")
        elif tok == "]":
            parts.append(")?")
        elif tok == "(":
            parts.append("(?:")
        elif tok in (")", "|"):
            parts.append(tok)
        elif tok.startswith("<"):
            parts.append(f"(?:{rules[tok]})")
        else:
            parts.append(re.escape(tok) + " ")
    return "".join(parts)


# ------------------------------------------------------------------------------ building


def normalize_text(text: str) -> str:
    """Lowercase words as a recognizer writes them: no punctuation, single spaces."""
    text = text.lower().replace("’", "'")
    return " ".join(re.sub(r"[^a-z0-9' ]+", " ", text).split()).strip("'")


def action_words(title: str) -> str:
    """``blink_eyes`` / ``blinkEyes`` / ``blink-eyes`` → ``blink eyes``."""
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", title)
    return normalize_text(re.sub(r"[_\-./]+", " ", spaced))


def companion_phrases(companion: Any, perception: str = "input") -> tuple[list[str], list[str]]:
    """(names, templates) a companion definition suggests: its name, its actions as verbs, and the
    example inputs (``x-examples`` bodies) of its events on ``perception``. Takes an
    ``edge.protocol.companion.Companion``; the examples come from its raw ``source``, which
    the typed model keeps whole."""
    names = [normalize_text(companion.name)] if normalize_text(companion.name) else []
    templates: list[str] = []
    for action in companion.actions:
        verb = action_words(action.title)
        if verb:
            templates.extend(VERB_TEMPLATES.get(verb, (verb,)))
    raw_events = companion.source.get("events", []) if isinstance(companion.source, dict) else []
    for event in raw_events:
        if not isinstance(event, dict) or event.get("perception") != perception:
            continue
        for example in event.get("x-examples") or []:
            body = normalize_text(example["body"]) if isinstance(example, dict) and isinstance(
                example.get("body"), str) else ""
            if body:
                templates.append(body)
    return names, templates


def build_grammar(templates: Iterable[str], names: Iterable[str] = (), *,
                  known_word: Callable[[str], bool] | None = None,
                  social: bool = True) -> PhraseGrammar:
    """Compile phrase templates into one grammar.

    An utterance is one or two phrases ("hello robot, please look left"), each of which may
    be addressed ("pip, look left", "look left please"). A template with a word the
    recognizer's dictionary lacks is dropped (``dropped`` says which and why) rather than
    failing the grammar: an unknown name should not cost the commands.
    """
    known = known_word or (lambda _w: True)
    dropped: list[str] = []
    name_list: list[str] = []
    for name in dict.fromkeys(n for n in names if n):
        missing = [w for w in name.split() if not known(w)]
        if missing:
            dropped.append(f"name {name!r}: not in the dictionary: {', '.join(missing)}")
        else:
            name_list.append(name)
    name_alt = " | ".join(name_list + ["robot"])
    rules = {"<name>": "|".join(re.escape(n) + " " for n in name_list + ["robot"])}

    kept: list[str] = []
    for template in dict.fromkeys(list(templates) + (list(SOCIAL_TEMPLATES) if social else [])):
        try:
            tokenize(template)
        except GrammarError as exc:
            dropped.append(str(exc))
            continue
        missing = sorted(w for w in words_of(template) if not known(w))
        if missing:
            dropped.append(f"phrase {template!r}: not in the dictionary: {', '.join(missing)}")
            continue
        kept.append(template)
    if not kept:
        raise GrammarError("no phrase left for the grammar: " + "; ".join(dropped or ["no templates given"]))
    for reason in dropped:
        log.info("grammar.dropped", reason=reason)

    alternatives = " | ".join(f"( {t} )" for t in kept)
    text = (
        "#JSGF V1.0;\ngrammar companion;\n"
        f"<name> = {name_alt};\n"
        f"<phrase> = {alternatives};\n"
        "<part> = [<name>] [please] <phrase> [please] [<name>];\n"
        "public <utterance> = <part> [<part>];\n"
    )
    phrase_re = "|".join(to_regex(tokenize(t), rules) for t in kept)
    name_re = rules["<name>"]
    part = f"(?:{name_re})?(?:please )?(?:{phrase_re})(?:please )?(?:{name_re})?"
    full = f"{part}(?:{part})?"
    return PhraseGrammar(text=text, pattern=re.compile(full), phrases=tuple(kept), dropped=tuple(dropped),
                         names=tuple(name_list))


def grammar_for(companions: Iterable[Any], extra: Iterable[str] = (), *,
                known_word: Callable[[str], bool] | None = None) -> PhraseGrammar:
    """The grammar for everything the given companions (and ``extra`` templates) expect."""
    names: list[str] = []
    templates: list[str] = []
    for companion in companions:
        more_names, more = companion_phrases(companion)
        names += more_names
        templates += more
    if not templates:  # no companion file: the commands most robots answer to
        templates = [t for verb in ("look", "move", "wag", "nod") for t in VERB_TEMPLATES[verb]]
    templates += [normalize_text(e) if not any(c in e for c in "[(<") else e for e in extra]
    return build_grammar(templates, names, known_word=known_word)


def edit_distance(reference: Sequence[str], heard: Sequence[str]) -> int:
    """Substitutions + insertions + deletions turning ``reference`` into ``heard`` (words or phones)."""
    prev = list(range(len(heard) + 1))
    for i, want in enumerate(reference, 1):
        cur = [i]
        for j, got in enumerate(heard, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (want != got)))
        prev = cur
    return prev[-1]


def word_errors(reference: str, heard: str) -> int:
    """Word-level edit distance: the numerator of the word error rate by which benches and
    tests judge a recognizer."""
    return edit_distance(reference.split(), heard.split())

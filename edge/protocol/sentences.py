"""Local sentence templates (``x-sentences``): commands a companion file names, matched before any LLM.

A companion file may declare, at its top level::

    "x-sentences": {
      "names": ["Pochi", "ポチ"],
      "lists": {"direction": {"values": {"left": {"x": -1, "y": 0, "z": 1}}},
                "times": {"range": [1, 5]}},
      "rules": [{"action": "bark", "sentences": ["bark {times} [times]"], "params": {"times": "{times}"}}]
    }

A text perception that matches a rule's sentence *as a whole* (after normalising, with the
companion's name and polite fillers allowed around it) becomes that rule's action, with params
filled from the slots and checked against the action's schema. The section sits at the top
level, not inside the action objects, because action objects go to LLM APIs verbatim as tool
schemas. The same parser validates files (``sentence_problems``, called by ``companion
validate``) and compiles them for the brain (``SentenceMatcher``). docs/companion-files.md
has the user-facing rules.
"""

from __future__ import annotations

import copy
import itertools
import json
import re
from dataclasses import dataclass
from typing import Any, Iterator

from edge.protocol import number_words
from jsonschema import Draft202012Validator

from edge.protocol.companion_types import ActionSpec, Companion, CompanionError, validate_params
from edge.protocol.problems import Problem, json_pointer, unknown_name
from edge.protocol.sentence_template import GAP, TemplateError, normalise, parse_template, phrase_pattern

SECTION = "x-sentences"
# Said around a command without changing it. Negations and questions are deliberately absent.
PREFIXES = ("please", "pls", "could you", "can you", "would you", "will you", "kindly", "now", "ok", "okay",
            "hey", "just", "go on", "ちょっと", "ねえ", "ねぇ", "ほら")
SUFFIXES = ("please", "now", "right now", "for me", "ください", "下さい", "くれる", "くれ", "ちょうだい",
            "お願い", "お願いします", "おねがい", "おねがいします", "ね", "よ",
            # Japanese requests after the て-form: 〜てくれる？ 〜てもらえる？ 〜てくれない？ 〜てあげて 〜てみて
            "くれない", "くれます", "くれますか", "もらえる", "もらえない", "もらえます", "もらえますか",
            "もらっていい", "ほしい", "欲しい", "あげて", "みて", "みてくれる", "みてください")
HONORIFICS = ("さん", "ちゃん", "くん", "君", "様")
MAX_COMBINATIONS = 2000  # slot-value combinations checked against the schema per rule
_REF = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)(?:\.([^{}]+))?\}")


@dataclass(frozen=True)
class SentenceMatch:
    """A command recognised locally: the action to run, and which template said so."""
    action: str
    params: dict[str, Any]
    template: str
    pointer: str        # where the template is in the file, e.g. /x-sentences/rules/2/sentences/0


@dataclass(frozen=True)
class _Entry:
    regex: re.Pattern[str]
    slots: tuple[str, ...]
    lookups: tuple[dict[str, Any], ...]   # per slot: its phrases without spaces -> value
    action: str
    params: Any
    template: str
    pointer: str


class _Slots:
    """The ``lists`` of a section: each list's phrases (normalised) and the value each stands for."""

    def __init__(self) -> None:
        self.values: dict[str, dict[str, Any]] = {}

    def patterns(self) -> dict[str, str]:
        # Longest phrase first, so "twenty one" wins over "twenty" without relying on backtracking.
        return {name: "|".join(phrase_pattern(p) for p in sorted(phrases, key=len, reverse=True))
                for name, phrases in self.values.items()}

    def lookup(self, name: str) -> dict[str, Any]:
        """Phrase -> value keyed without spaces, as a capture may hold "twentyone" or "twenty one"."""
        return {phrase.replace(" ", ""): value for phrase, value in self.values[name].items()}


def _section(doc: object) -> dict | None:
    section = doc.get(SECTION) if isinstance(doc, dict) else None
    return section if isinstance(section, dict) else None


def _read_lists(section: dict, out: list[Problem]) -> _Slots:
    slots = _Slots()
    lists = section.get("lists")
    for name, spec in (lists.items() if isinstance(lists, dict) else ()):
        where = ["x-sentences", "lists", name]
        if not isinstance(spec, dict):
            continue  # the file schema reports it
        phrases: dict[str, Any] = {}
        if isinstance(spec.get("values"), dict):
            seen: dict[str, str] = {}
            for phrase, value in spec["values"].items():
                key = normalise(phrase)
                if not key:
                    out.append(Problem(json_pointer([*where, "values", phrase]), "a phrase with no words"))
                elif key in seen and phrases[key] != value:
                    out.append(Problem(json_pointer([*where, "values", phrase]),
                                       f"says the same as {seen[key]!r} but gives another value"))
                else:
                    seen.setdefault(key, phrase)
                    phrases[key] = value
            if not spec["values"]:
                out.append(Problem(json_pointer([*where, "values"]), f"list {name!r} has no values"))
        elif _is_range(spec.get("range")):
            low, high = spec["range"]
            if not 0 <= low <= high <= number_words.MAX_NUMBER:
                out.append(Problem(json_pointer([*where, "range"]),
                                   f"[{low}, {high}] is not a range within 0..{number_words.MAX_NUMBER} (low first)"))
            else:
                phrases = {p: n for n in range(low, high + 1) for p in number_words.spoken(n)}
        if phrases:
            slots.values[name] = phrases
    return slots


def _is_range(value: object) -> bool:
    return (isinstance(value, list) and len(value) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) for v in value))


def _refs(params: Any, path: list) -> Iterator[tuple[list, str, str | None]]:
    """Every ``"{slot}"`` / ``"{slot.key}"`` string in params: (path, slot, key)."""
    if isinstance(params, str):
        found = _REF.fullmatch(params)
        if found:
            yield path, found.group(1), found.group(2)
    elif isinstance(params, dict):
        for k, v in params.items():
            yield from _refs(v, [*path, k])
    elif isinstance(params, list):
        for i, v in enumerate(params):
            yield from _refs(v, [*path, i])


def fill(params: Any, values: dict[str, Any]) -> Any:
    """Params with each slot reference replaced by the slot's value (KeyError/TypeError if it has no such key)."""
    if isinstance(params, str):
        found = _REF.fullmatch(params)
        if not found:
            return params
        value = values[found.group(1)]
        return value if found.group(2) is None else value[found.group(2)]
    if isinstance(params, dict):
        return {k: fill(v, values) for k, v in params.items()}
    if isinstance(params, list):
        return [fill(v, values) for v in params]
    return params


def _actions(doc: dict) -> dict[str, ActionSpec | None]:
    """Action title -> spec (None when its schema is too broken to check params against)."""
    out: dict[str, ActionSpec | None] = {}
    for item in doc.get("actions", []) if isinstance(doc.get("actions"), list) else []:
        if isinstance(item, dict) and isinstance(item.get("title"), str):
            try:
                Draft202012Validator.check_schema(item)   # "type": "integr" would fail each check below
                out.setdefault(item["title"], ActionSpec(item["title"], str(item.get("description", "")), item))
            except Exception:  # noqa: BLE001 - the file schema reports what is wrong with it
                out.setdefault(item["title"], None)
    return out


def _compile(doc: object, names: list[str]) -> tuple[list[_Entry], list[Problem]]:
    """Parse and check the section; entries for every usable sentence, problems for the rest."""
    section = _section(doc)
    if section is None:
        return [], []
    assert isinstance(doc, dict)
    out: list[Problem] = []
    slots = _read_lists(section, out)
    patterns = slots.patterns()
    actions = _actions(doc)
    extra = section.get("names")
    frame = _frame(names + [n for n in (extra if isinstance(extra, list) else []) if isinstance(n, str)])
    entries: list[_Entry] = []
    rules = section.get("rules")
    for i, rule in enumerate(rules if isinstance(rules, list) else []):
        if not isinstance(rule, dict):
            continue
        where = ["x-sentences", "rules", i]
        action, params = rule.get("action"), rule.get("params", {})
        if isinstance(action, str) and action and action not in actions:
            out.append(Problem(json_pointer([*where, "action"]), unknown_name("action", action, list(actions))))
        refs = list(_refs(params, [*where, "params"]))
        for path, name, _ in refs:
            if name not in patterns:
                known = ", ".join(patterns) or "none"
                out.append(Problem(json_pointer(path), f"{{{name}}} names no list (lists: {known})"))
        used = {name for _, name, _ in refs}
        sentences = rule.get("sentences")
        for s, text in enumerate(sentences if isinstance(sentences, list) else []):
            if not isinstance(text, str):
                continue
            pointer = json_pointer([*where, "sentences", s])
            try:
                template = parse_template(text, patterns)
            except TemplateError as exc:
                out.append(Problem(pointer, str(exc)))
                continue
            missing = sorted(used - set(template.slots) & set(patterns))
            unused = [n for n in template.slots if n not in used]
            if missing:
                out.append(Problem(pointer, f"has no {', '.join('{' + n + '}' for n in missing)}, which params use"))
            if unused:
                out.append(Problem(pointer, f"matches {', '.join('{' + n + '}' for n in unused)} but params never use it"))
            if not missing and not unused and isinstance(action, str):
                regex = re.compile(frame.format(body=template.pattern))
                lookups = tuple(slots.lookup(n) for n in template.slots)
                entries.append(_Entry(regex, tuple(template.slots), lookups, action, params, text, pointer))
        spec = actions.get(action) if isinstance(action, str) else None
        if spec is not None and isinstance(params, (dict, str)) and used <= set(patterns):
            out.extend(_params_problems(spec, params, sorted(used), slots, json_pointer([*where, "params"])))
    return entries, out


def _frame(names: list[str]) -> str:
    """The whole-utterance regex around a template body: fillers and the companion's name
    (alone or after hey/ok, with a Japanese honorific) may come before or after it."""
    def alternatives(words: Any) -> str:
        return "|".join(phrase_pattern(w) for w in sorted(set(words), key=len, reverse=True) if normalise(w))
    around = alternatives(PREFIXES)
    spoken = alternatives(names)
    if spoken:
        around += f"|(?:{spoken})(?:{GAP}(?:{alternatives(HONORIFICS)}))?"
    after = alternatives(SUFFIXES) + (f"|(?:{spoken})" if spoken else "")
    # Braces in the fillers are impossible (normalised), so str.format only fills {body}.
    return f"(?:(?:{around}){GAP})*(?:{{body}})(?:{GAP}(?:{after}))*"


def _params_problems(spec: ActionSpec, params: dict | str, used: list[str], slots: _Slots, pointer: str) -> list[Problem]:
    """Fill params with every combination of slot values and check each against the action's schema;
    one problem per rule, naming the first combination that fails and how many do."""
    choices = [_distinct(slots.values[name]) for name in used]
    failed, first = 0, ""
    tried = 0
    for combo in itertools.islice(itertools.product(*choices), MAX_COMBINATIONS):
        tried += 1
        said = ", ".join(f"{{{n}}}={phrase!r}" for n, (phrase, _) in zip(used, combo)) or "these params"
        try:
            filled = fill(params, {n: value for n, (_, value) in zip(used, combo)})
        except (KeyError, TypeError, IndexError) as exc:
            failed += 1
            first = first or f"for {said}: the value has no {exc}"
            continue
        problems = validate_params(spec, filled)
        if problems:
            failed += 1
            first = first or f"for {said}: " + "; ".join(f"{p.pointer or '/'}: {p.message}" for p in problems)
    if not failed:
        return []
    share = "" if tried == 1 else f" ({failed} of {tried} fail)"
    return [Problem(pointer, f"not valid params for {spec.title!r} {first}{share}")]


def _distinct(phrases: dict[str, Any]) -> list[tuple[str, Any]]:
    """One (first phrase, value) per distinct value: "2", "two" and "twice" are checked once."""
    seen: dict[str, tuple[str, Any]] = {}
    for phrase, value in phrases.items():
        seen.setdefault(json.dumps(value, sort_keys=True), (phrase, value))
    return list(seen.values())


def sentence_problems(doc: object) -> list[Problem]:
    """Every problem in the file's ``x-sentences`` (empty when it has none)."""
    return _compile(doc, [])[1]


class SentenceMatcher:
    """Compiled templates of one companion; ``match`` answers in microseconds."""

    def __init__(self, entries: list[_Entry], actions: dict[str, ActionSpec | None]) -> None:
        self._entries = entries
        self._actions = actions

    @classmethod
    def for_companion(cls, companion: Companion) -> "SentenceMatcher":
        """Compile the companion's templates (raises CompanionError if they are broken)."""
        entries, problems = _compile(companion.source, [companion.name])
        if problems:
            raise CompanionError(problems)
        return cls(entries, {a.title: a for a in companion.actions})

    def __len__(self) -> int:
        return len(self._entries)

    def match(self, text: str) -> SentenceMatch | None:
        """The first template (in file order) that the whole of ``text`` matches, with params
        that pass the action's schema; None when no command is recognised."""
        said = normalise(text)
        if not said or not self._entries:
            return None
        for entry in self._entries:
            found = entry.regex.fullmatch(said)
            if found is None:
                continue
            values = {name: entry.lookups[i][found.group(f"s{i}").replace(" ", "")]
                      for i, name in enumerate(entry.slots)}
            params = fill(entry.params, values)
            spec = self._actions.get(entry.action)
            if spec is not None and isinstance(params, dict) and not validate_params(spec, params):
                return SentenceMatch(entry.action, copy.deepcopy(params), entry.template, entry.pointer)
        return None

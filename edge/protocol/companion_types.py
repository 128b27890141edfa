"""A companion as the rest of the stack sees it: the validated model of a companion file (its
identity, actions, perceptions and events), the error that lists why a file is not one, and the
check of an action's params against its schema. ``companion.py`` reads files into these."""

from __future__ import annotations

import re
import unicodedata
import uuid
from dataclasses import dataclass, field
from typing import Any, Iterable

from jsonschema import Draft202012Validator
from referencing.exceptions import Unresolvable

from edge.protocol.fast_schema import FastCheck, fast_check
from edge.protocol.problems import Problem, explain, finish, format_problem

# Derived ids: uuid5(NAMESPACE_URL, ID_PREFIX + NFC(name)); documented in docs/companion-files.md.
ID_PREFIX = "urn:companion-edge:companion:"


class CompanionError(ValueError):
    """A companion file could not be loaded; ``problems`` lists every reason."""
    def __init__(self, problems: Iterable[Problem], path: str | None = None) -> None:
        self.problems: list[Problem] = list(problems)
        self.path = path
        super().__init__("\n".join(format_problem(p, path) for p in self.problems))

    @classmethod
    def of_files(cls, errors: list["CompanionError"]) -> "CompanionError":
        """One error for several files, each line still naming its own file."""
        joined = cls([p for e in errors for p in e.problems])
        joined.args = ("\n".join(str(e) for e in errors),)
        return joined


@dataclass(frozen=True)
class ActionSpec:
    """An action the companion may take; ``schema`` is the action object, a JSON Schema for params."""
    title: str
    description: str
    schema: dict
    # Compiled once here because validate_params runs on every single decision (twice: brain, body).
    _validator: Draft202012Validator = field(init=False, repr=False, compare=False)
    _fast: FastCheck | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        validator = Draft202012Validator(self.schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
        object.__setattr__(self, "_validator", validator)
        object.__setattr__(self, "_fast", fast_check(self.schema))

    def __hash__(self) -> int:  # the schema dict is unhashable; equal specs still hash alike
        return hash((self.title, self.description))


@dataclass(frozen=True)
class PerceptionSpec:
    """A perception the companion understands; ``schema`` describes its payload."""
    title: str
    description: str
    schema: dict

    def __hash__(self) -> int:
        return hash((self.title, self.description))


@dataclass(frozen=True)
class EventSpec:
    """When ``perception`` arrives, consider ``actions`` under the natural-language ``condition``."""
    perception: str
    actions: tuple[str, ...]
    condition: str


@dataclass(frozen=True)
class Companion:
    """A validated companion definition, identity fields already merged from both layouts."""
    id: str
    name: str
    personality: str
    story: str
    version: str
    sample: str
    author: str
    tags: tuple[str, ...]
    icon: str | None
    thumbnail: str | None
    created: str | None
    updated: str | None
    actions: tuple[ActionSpec, ...]
    perceptions: tuple[PerceptionSpec, ...]
    events: tuple[EventSpec, ...]
    source: dict = field(repr=False, compare=False)

    def __hash__(self) -> int:
        return hash((self.id, self.version))

    def action(self, title: str) -> ActionSpec | None:
        return next((a for a in self.actions if a.title == title), None)

    def perception(self, title: str) -> PerceptionSpec | None:
        return next((p for p in self.perceptions if p.title == title), None)

    def events_for(self, perception_title: str) -> tuple[EventSpec, ...]:
        return tuple(e for e in self.events if e.perception == perception_title)

    def metadata_json(self) -> dict:
        """The item the registry serves from ``GET /metadata``; icon falls back to thumbnail."""
        keys = ("id", "name", "personality", "story", "sample", "version", "author")
        item: dict[str, Any] = {k: getattr(self, k) for k in keys}
        item.update(tags=list(self.tags), icon=self.icon if self.icon is not None else self.thumbnail)
        return {"metadata": item}


def derive_id(name: str) -> str:
    """The stable id of a companion whose file has no metadata.id."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, ID_PREFIX + unicodedata.normalize("NFC", name)))


def validate_params(action: ActionSpec, params: object) -> list[Problem]:
    """Problems with ``params`` for ``action``, pointers into params; empty when they may be published."""
    try:
        if action._fast is not None and action._fast(params):   # yes, quickly (edge/protocol/fast_schema.py)
            return []
        return finish(p for e in action._validator.iter_errors(params) for p in explain(e))
    except (Unresolvable, re.error) as exc:
        return [Problem("", f"the schema of action {action.title!r} cannot be applied: {exc}")]
    except Exception as exc:   # a schema that is not one (an unknown type, a bound that is text): user data
        return [Problem("", f"the schema of action {action.title!r} is not a valid JSON Schema "
                            f"({type(exc).__name__}); fix the problems reported at its own pointer first")]

"""A companion's ``x-sentences`` templates as plain example sentences, for tool retrieval.

The templates (docs/companion-files.md) say how users ask for an action: "(bark|woof) {times}
[times]". Retrieval embeds one readable sentence per template as an extra text of its action,
so an input close to any way of asking finds it: the first alternative of each group, the
optional words kept (their first alternative too), a slot as its list's first phrase ("left"),
its range's low end ("1") or its name.
"""

from __future__ import annotations

import re
from typing import Any

_GROUP = re.compile(r"\(([^()]*)\)")          # innermost (a|b) group
_OPTIONAL = re.compile(r"\[([^\[\]]*)\]")      # innermost [optional] part
_SLOT = re.compile(r"\{([^{}]+)\}")


def sentence_examples(doc: Any) -> dict[str, list[str]]:
    """Action title -> one example sentence per template of its rules; malformed parts of the
    section are skipped (``companion validate`` reports them)."""
    section = doc.get("x-sentences") if isinstance(doc, dict) else None
    if not isinstance(section, dict):
        return {}
    lists = section.get("lists") if isinstance(section.get("lists"), dict) else {}
    out: dict[str, list[str]] = {}
    for rule in section.get("rules") or []:
        if not isinstance(rule, dict) or not isinstance(rule.get("action"), str):
            continue
        for template in rule.get("sentences") or []:
            if isinstance(template, str) and (text := render(template, lists)):
                examples = out.setdefault(rule["action"], [])
                if text not in examples:
                    examples.append(text)
    return out


def render(template: str, lists: dict[str, Any] | None = None) -> str:
    """One plain sentence for ``template``."""
    text = template
    for _ in range(20):                        # nested groups: innermost first
        changed = _GROUP.sub(lambda m: m.group(1).split("|")[0], text)
        changed = _OPTIONAL.sub(lambda m: m.group(1).split("|")[0], changed)
        if changed == text:
            break
        text = changed
    text = _SLOT.sub(lambda m: _slot_word(m.group(1), lists or {}), text)
    return " ".join(text.split())


def _slot_word(name: str, lists: dict[str, Any]) -> str:
    spec = lists.get(name.split(".")[0])
    values = spec.get("values") if isinstance(spec, dict) else None
    if isinstance(values, dict) and values:
        return str(next(iter(values)))
    span = spec.get("range") if isinstance(spec, dict) else None
    if isinstance(span, list) and span:
        return str(span[0])
    return name.replace("_", " ")

"""Provider SPEC strings -> providers, through one table so a new provider is one entry.

A SPEC is ``KIND[:ARG][?OPTION=VALUE&...]``:

    embedded                          llama.cpp in-process, the default model (qwen2.5-coder-0.5b-instruct)
    embedded:smollm2-135m-instruct    ... a model of models/manifest.toml, by name
    embedded:models/x.gguf            ... any GGUF file
    embedded:x.gguf?ctx=4096&threads=4&seed=1
    scripted:replies.jsonl            replay a script (tests, demos, benches)
    scripted:replies.jsonl?delay=0.1&loop=1

    ollama:qwen2.5:1.5b[@http://host:11434]      remote APIs: MODEL[@URL], options
    openai:gpt-4o-mini[@http://host/v1]          timeout, structured, retries, temperature, max_tokens
    anthropic:claude-sonnet-4-5 / gemini:gemini-2.5-flash
    ollama:qwen2.5:1.5b,embedded                 a fallback chain: the next on a fallbackable error

Remote providers are wrapped in the retry policy (``resilience.Retrying``).
Malformed or unknown specs raise ``ValueError`` naming the spec; a provider that cannot start
(a missing model file) raises its ``ProviderError``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable
from urllib.parse import parse_qsl

from edge.providers.base import Provider
from edge.providers.resilience import FallbackChain, Retrying, RetryPolicy

Builder = Callable[[str | None, dict[str, Any]], Provider]


@dataclass(frozen=True)
class ProviderKind:
    """One row of the table: how to build it, what ARG means, which options it takes."""

    usage: str
    build: Builder | None = None                 # None: reserved, not available yet
    arg_required: bool = False
    options: dict[str, Callable[[str], Any]] = field(default_factory=dict)


def _flag(value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"expected 1/0/true/false, got {value!r}")


def _non_negative(value: str) -> float:
    number = float(value)
    if not number >= 0:
        raise ValueError(f"must be >= 0, got {value!r}")
    return number


def _build_embedded(arg: str | None, options: dict[str, Any]) -> Provider:
    from edge.providers.embedded import EmbeddedProvider
    kwargs: dict[str, Any] = {"model_path": arg}
    for option, param in (("ctx", "n_ctx"), ("threads", "n_threads"), ("seed", "seed"), ("verbose", "verbose")):
        if option in options:
            kwargs[param] = options[option]
    return EmbeddedProvider(**kwargs)


def _build_scripted(arg: str | None, options: dict[str, Any]) -> Provider:
    from edge.providers.scripted import ScriptedProvider
    return ScriptedProvider(arg or "", delay_s=options.get("delay", 0.0), loop=options.get("loop", False))


def _remote(module: str) -> Builder:
    """A builder for a remote API provider: ARG is ``MODEL[@URL]``; the module's
    ``build(model, base_url, options)`` is imported only when that provider is used."""
    def build(arg: str | None, options: dict[str, Any]) -> Provider:
        import importlib
        model, _, url = (arg or "").partition("@")
        if not model:
            raise ValueError(f"{module.rsplit('.', 1)[-1]}: a model name is required (KIND:MODEL[@URL])")
        provider = importlib.import_module(module).build(model, url or None, options)
        retries = options.get("retries")
        policy = RetryPolicy() if retries is None else RetryPolicy(max_retries=retries)
        return Retrying(provider, policy)
    return build


_REMOTE_OPTIONS: dict[str, Callable[[str], Any]] = {
    "timeout": _non_negative, "structured": _flag, "retries": int, "temperature": float, "max_tokens": int,
}

PROVIDERS: dict[str, ProviderKind] = {
    "embedded": ProviderKind("embedded[:NAME|FILE.gguf][?ctx=N&threads=N&seed=N&verbose=1]", _build_embedded,
                             options={"ctx": int, "threads": int, "seed": int, "verbose": _flag}),
    "scripted": ProviderKind("scripted:FILE[?delay=SECONDS&loop=1]", _build_scripted, arg_required=True,
                             options={"delay": _non_negative, "loop": _flag}),
    "ollama": ProviderKind("ollama:MODEL[@URL]", _remote("edge.providers.ollama_api"), arg_required=True,
                           options=_REMOTE_OPTIONS),
    "openai": ProviderKind("openai:MODEL[@BASE_URL]", _remote("edge.providers.openai_api"), arg_required=True,
                           options=_REMOTE_OPTIONS),
    "anthropic": ProviderKind("anthropic:MODEL[@URL]", _remote("edge.providers.anthropic_api"), arg_required=True,
                              options=_REMOTE_OPTIONS),
    "gemini": ProviderKind("gemini:MODEL[@URL]", _remote("edge.providers.gemini_api"), arg_required=True,
                           options=_REMOTE_OPTIONS),
}


def register(kind: str, entry: ProviderKind) -> None:
    """Add or replace a provider kind (how the remote providers plug in)."""
    PROVIDERS[kind] = entry


def parse_spec(spec: str) -> tuple[str, str | None, dict[str, Any]]:
    """Split and check a SPEC: (kind, arg or None, converted options)."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"empty provider spec {spec!r}; expected one of: {_usages()}")
    text = spec.strip()
    if "," in text:
        raise ValueError(f"provider spec {spec!r}: a fallback chain goes to make_provider, not parse_spec")
    head, _, query = text.partition("?")
    kind, sep, arg = head.partition(":")
    entry = PROVIDERS.get(kind)
    if entry is None:
        raise ValueError(f"unknown provider {kind!r} in spec {spec!r}; expected one of: {_usages()}")
    if entry.build is None:
        raise ValueError(f"provider {kind!r} (spec {spec!r}, usage {entry.usage}) is not available yet; "
                         f"available: {', '.join(k for k, e in PROVIDERS.items() if e.build)}")
    if sep and not arg:
        raise ValueError(f"provider spec {spec!r}: nothing after '{kind}:'; usage: {entry.usage}")
    if entry.arg_required and not arg:
        raise ValueError(f"provider spec {spec!r} needs an argument; usage: {entry.usage}")
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=True) if query else []
    except ValueError:
        raise ValueError(f"provider spec {spec!r}: malformed options {query!r}; expected KEY=VALUE&...") from None
    options: dict[str, Any] = {}
    for key, value in pairs:
        convert = entry.options.get(key)
        if convert is None:
            known = ", ".join(entry.options) or "none"
            raise ValueError(f"provider spec {spec!r}: unknown option {key!r} (options: {known})")
        try:
            options[key] = convert(value)
        except ValueError as exc:
            raise ValueError(f"provider spec {spec!r}: option {key}={value!r}: {exc}") from None
    return kind, arg or None, options


def make_provider(spec: str) -> Provider:
    """Build the provider a SPEC names; ``A,B,C`` is a fallback chain (see the module docstring).

    Every SPEC of a chain is checked before any provider is built, so a typo in the last one
    is reported at once rather than after the first ones have loaded their models."""
    parts = [p.strip() for p in spec.split(",")] if isinstance(spec, str) else [spec]
    if len(parts) > 1 and not all(parts):
        raise ValueError(f"provider spec {spec!r}: empty entry in the fallback chain")
    parsed = [parse_spec(p) for p in parts]
    built: list[Provider] = []
    try:
        for kind, arg, options in parsed:
            build = PROVIDERS[kind].build
            assert build is not None
            built.append(build(arg, options))
    except BaseException:
        for provider in built:
            provider.close()
        raise
    return built[0] if len(built) == 1 else FallbackChain(built)


def _usages() -> str:
    return ", ".join(e.usage for e in PROVIDERS.values())

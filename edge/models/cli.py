"""``companion models list|fetch``: the arguments and the run, for the CLI to wire in.

    companion models list [--json] [--dest DIR] [--manifest FILE] [--ollama URL]
    companion models fetch NAME [NAME...] [--dest DIR] [--force] [--export FMT[,FMT] | --no-export]
                           [--retries N] [--ollama URL] [--manifest FILE] [--quiet]

Exit codes: 0 all good; 1 a fetch failed, or `list` found a damaged file; 2 bad input (an
unknown model name, a broken manifest, a bad option). Errors are one line naming the model,
the file or URL, and the fix.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from edge.models.errors import FetchError
from edge.models.manifest import EXPORT_FORMATS, ManifestError, load_manifest
from edge.models.progress import human
from edge.models.status import ModelStatus, list_models
from edge.models.store import MODELS_DIR_ENV, Store, default_models_dir

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="models_command", required=True, metavar="list|fetch")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--dest", type=Path, default=None,
                        help=f"models folder (default ${MODELS_DIR_ENV} or ~/.local/share/companion-edge/models)")
    common.add_argument("--manifest", type=Path, default=None, help="model manifest (default models/manifest.toml)")
    common.add_argument("--ollama", default=None, metavar="URL", help="Ollama server (default $OLLAMA_HOST or "
                                                                       "http://127.0.0.1:11434)")
    ls = sub.add_parser("list", parents=[common], help="every model in the manifest: installed? where? verified?")
    ls.add_argument("--json", action="store_true", help="one JSON array instead of a table")
    fetch = sub.add_parser("fetch", parents=[common], help="download (or pull, or check) models, verifying sha256")
    fetch.add_argument("names", nargs="+", metavar="NAME", help="model name(s) from `companion models list`")
    fetch.add_argument("--force", action="store_true", help="download again even when present and verified")
    fetch.add_argument("--export", default=None, metavar="FMT[,FMT]",
                       help=f"YOLO: export to these formats ({', '.join(EXPORT_FORMATS)}; default: the manifest's)")
    fetch.add_argument("--no-export", action="store_true", help="YOLO: download the weights only")
    fetch.add_argument("--retries", type=int, default=3, help="resume attempts after a broken transfer (default 3)")
    fetch.add_argument("--quiet", "-q", action="store_true", help="no progress bars")


def run_from_args(args: argparse.Namespace) -> int:
    try:
        manifest = load_manifest(args.manifest)
    except ManifestError as exc:
        print(f"companion models: {exc}", file=sys.stderr)
        return EXIT_USAGE
    store = Store(args.dest.expanduser() if args.dest else default_models_dir())
    if args.models_command == "list":
        return _list(manifest, store, args)
    return _fetch(manifest, store, args)


def _list(manifest, store: Store, args: argparse.Namespace) -> int:
    rows = list_models(manifest, store, ollama=args.ollama)
    if args.json:
        print(json.dumps([r.as_dict() for r in rows], indent=1))
    else:
        print(f"models folder: {store.root}")
        print(_table(rows))
    return EXIT_FAIL if any(r.verified is False for r in rows) else EXIT_OK


def _yes(value: bool | None) -> str:
    return {True: "yes", False: "NO", None: "?"}[value]


def _table(rows: list[ModelStatus]) -> str:
    header = ("NAME", "KIND", "SIZE", "INSTALLED", "VERIFIED", "WHERE")
    cells = [(r.name, r.kind, human(r.size) if r.size else "-", _yes(r.installed),
              "-" if not r.installed else _yes(r.verified), r.where) for r in rows]
    widths = [max(len(c[i]) for c in [header, *cells]) for i in range(len(header) - 1)]
    lines = []
    for row, cell in zip([None, *rows], [header, *cells]):
        lines.append("  ".join(c.ljust(w) for c, w in zip(cell, widths)) + "  " + cell[-1])
        if row is not None and row.detail:
            lines.append(f"    {row.detail}")
    return "\n".join(lines)


def _fetch(manifest, store: Store, args: argparse.Namespace) -> int:
    try:
        entries = [manifest.get(n) for n in args.names]
    except KeyError as exc:
        print(f"companion models fetch: {exc.args[0]}", file=sys.stderr)
        return EXIT_USAGE
    exports = _exports(args)
    if isinstance(exports, str):
        print(f"companion models fetch: {exports}", file=sys.stderr)
        return EXIT_USAGE
    if args.retries < 0:
        print("companion models fetch: --retries must be 0 or more", file=sys.stderr)
        return EXIT_USAGE
    try:
        from edge.models.fetch import fetch_model   # httpx is imported only when something is fetched
    except ImportError as exc:
        print(f"companion models fetch: {exc}; install it: pip install httpx", file=sys.stderr)
        return EXIT_FAIL

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    failed = 0
    for entry in entries:
        try:
            result = fetch_model(entry, store, force=args.force, retries=args.retries, exports=exports,
                                 ollama_host=args.ollama, say=say, progress=not args.quiet)
        except (FetchError, OSError) as exc:
            print(f"companion models fetch {entry.name}: {exc}", file=sys.stderr)
            failed += 1
            continue
        for warning in result.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        for path in result.paths:
            print(path)
    return EXIT_FAIL if failed else EXIT_OK


def _exports(args: argparse.Namespace) -> list[str] | None | str:
    if args.no_export:
        return []
    if args.export is None:
        return None
    formats = [f.strip() for f in args.export.split(",") if f.strip()]
    bad = [f for f in formats if f not in EXPORT_FORMATS]
    if bad or not formats:
        return f"bad --export {args.export!r}: expected some of {', '.join(EXPORT_FORMATS)}"
    return formats

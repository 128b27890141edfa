"""Model fetching: download and resume throughput over loopback, sha256 speed, `list` cold vs cached.

    .venv/bin/python bench/models_fetch.py [--mb 128]

Loopback removes the network, so the download figure is our overhead ceiling (httpx streaming,
writing the .part, hashing, rename), not what a Pi gets from Hugging Face. Prints the figures
and writes bench/results/models_fetch.json.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "rigs")]

from file_server import Blob, FileServer  # noqa: E402  (the tests' loopback server)

from edge.models import Store, list_models, load_manifest  # noqa: E402
from edge.models.errors import FetchError  # noqa: E402
from edge.models.fetch import fetch_model  # noqa: E402
from edge.models.manifest import Manifest, ModelEntry, ModelFile  # noqa: E402
from edge.models.store import sha256_file  # noqa: E402


def entry_for(url: str, data: bytes) -> ModelEntry:
    return ModelEntry(name="bench", kind="llm-gguf", license="-", used_by="bench",
                      files=(ModelFile("llm/bench.gguf", len(data), hashlib.sha256(data).hexdigest(), (url,)),))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=128, help="size of the served file in MB")
    args = parser.parse_args()
    data = os.urandom(args.mb * 1_000_000)
    quiet = dict(say=lambda s: None, stream=io.StringIO(), progress=False, backoff_s=0)
    results: dict[str, float] = {"file_mb": args.mb}
    with FileServer() as fs, tempfile.TemporaryDirectory() as tmp:
        fs.blobs["/m.gguf"] = Blob(data)
        entry = entry_for(fs.url("/m.gguf"), data)
        store = Store(Path(tmp) / "a")
        t = time.perf_counter()
        fetch_model(entry, store, **quiet)
        results["download_verify_s"] = time.perf_counter() - t
        results["download_verify_mb_s"] = args.mb / results["download_verify_s"]

        t = time.perf_counter()
        fetch_model(entry, store, **quiet)
        results["present_recheck_s"] = time.perf_counter() - t

        fs.blobs["/m.gguf"] = Blob(data, cut_after=len(data) // 2)
        store_b = Store(Path(tmp) / "b")
        try:
            fetch_model(entry, store_b, retries=0, **quiet)
        except FetchError:
            pass
        t = time.perf_counter()
        fetch_model(entry, store_b, retries=0, **quiet)
        results["resume_second_half_s"] = time.perf_counter() - t

        path = store.root / "llm" / "bench.gguf"
        t = time.perf_counter()
        sha256_file(path)
        results["sha256_mb_s"] = args.mb / (time.perf_counter() - t)

        shipped = load_manifest()
        packages = Manifest(shipped.path, [m for m in shipped.models if m.package])
        store_c = Store(Path(tmp) / "c")
        t = time.perf_counter()
        list_models(packages, store_c, progress=False)
        results["list_packages_cold_s"] = time.perf_counter() - t
        t = time.perf_counter()
        list_models(packages, store_c, progress=False)
        results["list_packages_cached_s"] = time.perf_counter() - t
        results["package_mb_hashed"] = sum(m.total_size for m in packages.models) / 1e6

    for key, value in results.items():
        print(f"{key:28s} {value:10.3f}")
    out = ROOT / "bench" / "results" / "models_fetch.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

"""The sentence encoder's weights laid out so that onnxruntime maps them instead of copying them.

Why: loaded as fetched (one ``.onnx`` file, weights inside), onnxruntime keeps the parsed file
and a copy of every weight: ~144 MB resident for a 72 MB model. Most of it is the vocabulary
table (16 int8 shards of 7,530 x 512), of which a sentence reads a few rows. onnxruntime maps
an initializer from an external data file straight into memory when its offset is page aligned
(4 KiB on Linux, 64 KiB on Windows); then only the pages a sentence touches are read from disk,
and they are clean file pages the kernel can drop under pressure. Measured: the session
+144 MB -> +74 MB, the same vectors to the last bit (tests/edge/brain/test_onnx_layout.py).

The fetched file is never changed (its sha256 stays checkable): the layout is a derived copy
in ``<file>.mapped/``, written once with the ``onnx`` package (atomically; a marker names the
source's size and mtime so a re-fetched model is laid out again). Without ``onnx`` or a
writable folder the fetched file is used as it is.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from edge.log import get_logger

log = get_logger(__name__)

ALIGN = 65536            # the coarsest allocation granularity onnxruntime maps at (Windows); a multiple of 4 KiB
MIN_EXTERNAL = 65536     # smaller initializers stay inside the graph file
MODEL_NAME = "model.onnx"
MARKER = "source.json"


def mapped_model(source: Path) -> Path:
    """The mmap-friendly copy of ``source`` (made now if missing or stale), else ``source``."""
    folder = source.with_name(source.name + ".mapped")
    stamp = _stamp(source)
    try:
        if json.loads((folder / MARKER).read_text()) == stamp and (folder / MODEL_NAME).is_file():
            return folder / MODEL_NAME
    except (OSError, ValueError):
        pass
    try:
        _write_layout(source, folder, stamp)
    except ImportError:
        log.info("embedding.layout_skipped", reason="the onnx package is not installed", hint="pip install onnx")
        return source
    except Exception as exc:   # a read-only folder, a full disk, a file onnx cannot parse: use it as it is
        log.warning("embedding.layout_failed", model=str(source), error=repr(exc)[:200])
        return source
    log.info("embedding.layout_written", model=str(folder / MODEL_NAME))
    return folder / MODEL_NAME


def _stamp(source: Path) -> dict[str, int]:
    info = source.stat()
    return {"size": info.st_size, "mtime_ns": info.st_mtime_ns}


def _write_layout(source: Path, folder: Path, stamp: dict[str, int]) -> None:
    """Graph and aligned weights written into a fresh folder beside ``folder``, then swapped in."""
    import onnx

    model = onnx.load(str(source))
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=folder.name + ".", dir=folder.parent))
    staging.chmod(0o755)      # readable by the service user, like the fetched file
    try:
        _write_into(model, staging, stamp)
    except BaseException:
        _remove(staging)
        raise
    _remove(folder)            # a stale layout (the model was fetched again)
    try:
        os.rename(staging, folder)
    except OSError:            # another process laid it out first: theirs is the same
        _remove(staging)


def _write_into(model: Any, staging: Path, stamp: dict[str, int]) -> None:
    """Every weight of 64 KiB or more moved to one data file, each on an aligned offset."""
    import onnx
    from onnx.external_data_helper import set_external_data

    data_name = MODEL_NAME + ".data"
    with open(staging / data_name, "wb") as data:
        for tensor in model.graph.initializer:
            if len(tensor.raw_data) < MIN_EXTERNAL:
                continue
            offset = data.tell()
            offset += data.write(b"\0" * (-offset % ALIGN))
            data.write(tensor.raw_data)
            set_external_data(tensor, location=data_name, offset=offset, length=len(tensor.raw_data))
            tensor.ClearField("raw_data")
            tensor.data_location = onnx.TensorProto.EXTERNAL
    onnx.save(model, str(staging / MODEL_NAME))
    (staging / MARKER).write_text(json.dumps(stamp))


def _remove(folder: Path) -> None:
    if folder.is_dir():
        for child in folder.iterdir():
            child.unlink()
        folder.rmdir()

"""Which ranker this process scores with, chosen once: robot.toml's ``[brain] retrieval`` =
``auto`` (default: the ONNX embeddings when the runtime and the model are here, else BM25),
``onnx`` or ``bm25``; the log says which was picked and why. ``$COMPANION_RETRIEVAL``, where
older versions read it, is still honoured when robot.toml says nothing, with a warning.

The choice lives apart from the rankers (``rankers.py``) and from the ONNX ranker that builds on
them (``embedding_onnx.py``), so that neither imports the file that imports it.
"""

from __future__ import annotations

from edge import environment
from edge.brain.embedding_onnx import MODEL_NAME, load_onnx_ranker
from edge.brain.rankers import DEFAULT_RANKER, Ranker
from edge.log import get_logger

log = get_logger(__name__)

RETRIEVAL_ENV = "COMPANION_RETRIEVAL"

_default: Ranker | None = None
_asked: str | None = None   # robot.toml's choice, once a brain is built (use_ranker)


def use_ranker(kind: str | None) -> None:
    """The choice robot.toml makes (``[brain] retrieval``; None: not made). Called as the brains
    are built; the ranker itself is picked on first use."""
    global _asked, _default
    if kind != _asked:
        _asked, _default = kind, None


def default_ranker() -> Ranker:
    """The ranker asked for (``[brain] retrieval``, else ``$COMPANION_RETRIEVAL``, else ``auto``),
    chosen once per process and logged: ONNX embeddings when available, else BM25."""
    global _default
    if _default is None:
        _default = pick_ranker((_asked or environment.deprecated(RETRIEVAL_ENV) or "auto").lower())
        log.info("retrieval.ranker", kind="bm25" if _default is DEFAULT_RANKER else "onnx",
                 model=str(getattr(_default, "model_path", "")) or None)
    return _default


def reset_default_ranker() -> None:
    """Forget the chosen ranker and robot.toml's choice (tests; after fetching the model in a
    running process)."""
    global _default, _asked
    _default = _asked = None


def pick_ranker(kind: str = "auto") -> Ranker:
    """``bm25``, ``onnx`` (raises when the runtime or model is missing) or ``auto``."""
    if kind == "bm25":
        return DEFAULT_RANKER
    if kind not in ("onnx", "auto"):
        raise ValueError(f"unknown ranker {kind!r} (from [brain] retrieval or ${RETRIEVAL_ENV}?); "
                         "expected auto, onnx or bm25")
    ranker = load_onnx_ranker()
    if ranker is None and kind == "onnx":
        raise RuntimeError("the ONNX ranker needs onnxruntime, onnxruntime-extensions and its model "
                           f"(pip install onnxruntime onnxruntime-extensions; companion models fetch {MODEL_NAME})")
    return ranker or DEFAULT_RANKER


def fall_back(failed: Ranker) -> None:
    """A ranker that failed (a corrupt model file) is replaced by BM25 for the rest of the
    process, when it is the one chosen here."""
    global _default
    if failed is _default:
        _default = DEFAULT_RANKER

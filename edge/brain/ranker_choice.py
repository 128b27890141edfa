"""Which ranker this process scores with, chosen once: ``$COMPANION_RETRIEVAL`` = ``auto``
(default: the ONNX embeddings when the runtime and the model are here, else BM25), ``onnx`` or
``bm25``; the log says which was picked and why.

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


def default_ranker() -> Ranker:
    """The ranker ``$COMPANION_RETRIEVAL`` asks for (``auto`` when unset), chosen once per
    process and logged: ONNX embeddings when available, else BM25."""
    global _default
    if _default is None:
        _default = pick_ranker((environment.value(RETRIEVAL_ENV) or "auto").lower())
        log.info("retrieval.ranker", kind="bm25" if _default is DEFAULT_RANKER else "onnx",
                 model=str(getattr(_default, "model_path", "")) or None)
    return _default


def reset_default_ranker() -> None:
    """Forget the chosen ranker (tests; after fetching the model in a running process)."""
    global _default
    _default = None


def pick_ranker(kind: str = "auto") -> Ranker:
    """``bm25``, ``onnx`` (raises when the runtime or model is missing) or ``auto``."""
    if kind == "bm25":
        return DEFAULT_RANKER
    if kind not in ("onnx", "auto"):
        raise ValueError(f"unknown ranker {kind!r} (from ${RETRIEVAL_ENV}?); expected auto, onnx or bm25")
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

"""Tool retrieval by meaning on onnxruntime, without torch.

The model is Google's Universal Sentence Encoder Multilingual v3 (Apache-2.0), int8-quantized
as one ONNX file whose graph holds its own SentencePiece tokenizer and its pooling: text goes
in, a unit 512-dim vector comes out. The tokenizer op comes from ``onnxruntime-extensions``,
so nothing else is needed (no ``tokenizers``, no vocabulary file, no torch). It was trained on
question/answer and translation pairs in 16 languages including English and Japanese, which is
what retrieval needs: "it's so dark in here" lands near "turn the light on", and "部屋が暗いね"
near both. ``companion models fetch use-multilingual-v3`` puts the file (72 MB) in the models
folder; without it (or without onnxruntime-extensions) retrieval uses BM25.

Measured on 2 cores (bench/retrieval.py): 0.3 s to load, about 1 ms per query with one
thread; a tool's texts are embedded once and cached.
"""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path
from typing import Any

from edge.log import get_logger
from edge.models.onnx_layout import mapped_model
from edge.brain.rankers import EmbeddingRanker

log = get_logger(__name__)

MODEL_NAME = "use-multilingual-v3"                               # the manifest entry
MODEL_FILE = "embed/universal-sentence-encoder-multilingual-3-int8.onnx"  # under the models folder
CACHE_SIZE = 4096                                                # texts; tool texts rarely change

_sessions: dict[Path, Any] = {}
_lock = threading.Lock()


def find_model() -> Path | None:
    """The model file in the models folder, or None when it has not been fetched."""
    from edge.models import find_model_file
    return find_model_file(MODEL_FILE)


def runtime_available() -> bool:
    """onnxruntime and onnxruntime-extensions (the in-graph tokenizer) are installed."""
    return all(importlib.util.find_spec(m) is not None for m in ("onnxruntime", "onnxruntime_extensions"))


def _custom_ops_library() -> str:
    """The onnxruntime-extensions op library, found without importing the package: its
    ``__init__`` imports transformers (and torch, where installed), 1.7 s for one path."""
    spec = importlib.util.find_spec("onnxruntime_extensions")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        for candidate in sorted(Path(folder).glob("_extensions_pydll*")):
            if candidate.suffix in (".so", ".pyd", ".dylib"):
                return str(candidate)
    from onnxruntime_extensions import get_library_path     # an unusual layout: ask the package
    return str(get_library_path())


def _session(path: Path) -> Any:
    """One InferenceSession per model file per process, on its mmap-friendly layout
    (``onnx_layout.py``): loading costs ~0.3 s and ~75 MB."""
    with _lock:
        if path not in _sessions:
            import onnxruntime as ort
            options = ort.SessionOptions()
            options.register_custom_ops_library(_custom_ops_library())
            options.intra_op_num_threads = 1          # a query is ~1 ms: threads would only contend
            options.inter_op_num_threads = 1          # with the LLM for the Pi's cores
            loaded = mapped_model(path)
            _sessions[path] = ort.InferenceSession(str(loaded), options, providers=["CPUExecutionProvider"])
            log.info("retrieval.onnx_loaded", model=str(loaded))
        return _sessions[path]


class OnnxEmbeddingRanker(EmbeddingRanker):
    """``EmbeddingRanker`` on the ONNX model: the session is loaded on first use (once per
    process, shared by every ranker on the same file); tool texts are embedded once."""

    def __init__(self, model_path: str | Path, cache_size: int = CACHE_SIZE):
        self.model_path = Path(model_path)
        super().__init__(self._run, cache_size)

    def load(self) -> OnnxEmbeddingRanker:
        """Load the session now (a warm-up), instead of on the first query."""
        _session(self.model_path)
        return self

    def _run(self, texts: list[str]) -> Any:
        import numpy as np
        return _session(self.model_path).run(None, {"inputs": np.asarray(texts, dtype=object)})[0]


def load_onnx_ranker(model_path: str | Path | None = None) -> OnnxEmbeddingRanker | None:
    """An OnnxEmbeddingRanker when the runtime and the model file are both here, else None
    (and the log says which is missing and how to get it)."""
    if not runtime_available():
        log.info("retrieval.no_onnx_runtime", hint="pip install onnxruntime onnxruntime-extensions")
        return None
    path = Path(model_path) if model_path else find_model()
    if path is None or not path.is_file():
        log.info("retrieval.no_embedding_model", model=str(path or MODEL_FILE),
                 hint=f"companion models fetch {MODEL_NAME}")
        return None
    return OnnxEmbeddingRanker(path)

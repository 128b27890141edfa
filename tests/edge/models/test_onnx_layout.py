"""The encoder's mmap-friendly layout: the same vectors as the fetched file, weights mapped from
disk instead of copied, made again when the fetched file changes, the fetched file used as it is
when the layout cannot be written."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from edge.models import onnx_layout
from edge.brain.embedding_onnx import MODEL_NAME, _custom_ops_library, find_model

SENTENCES = ["turn on the light", "部屋が暗いね", "今天天气很好", "could you look to your left a little"]


@pytest.fixture(scope="module")
def fetched(tmp_path_factory) -> Path:
    """A copy of the fetched encoder in a folder of its own (the layout is written beside it)."""
    source = find_model()
    if source is None:
        message = f"the retrieval model is not installed: companion models fetch {MODEL_NAME}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    copy = tmp_path_factory.mktemp("encoder") / source.name
    shutil.copyfile(source, copy)
    return copy


def vectors(path: Path) -> np.ndarray:
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.register_custom_ops_library(_custom_ops_library())
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return np.concatenate([session.run(None, {"inputs": np.asarray([s], dtype=object)})[0] for s in SENTENCES])


def test_the_layout_computes_the_same_vectors_with_its_weights_outside_the_graph(fetched):
    laid_out = onnx_layout.mapped_model(fetched)
    assert laid_out != fetched and laid_out.parent == fetched.with_name(fetched.name + ".mapped")
    data = laid_out.with_name(laid_out.name + ".data")
    assert data.stat().st_size > 0.9 * fetched.stat().st_size        # the weights moved out ...
    assert laid_out.stat().st_size < 0.1 * fetched.stat().st_size     # ... of the graph file
    assert np.array_equal(vectors(laid_out), vectors(fetched))


def test_every_weight_starts_on_a_mappable_offset(fetched):
    import onnx
    laid_out = onnx_layout.mapped_model(fetched)
    model = onnx.load(str(laid_out), load_external_data=False)
    external = [t for t in model.graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL]
    assert len(external) > 10
    for tensor in external:
        offset = int({e.key: e.value for e in tensor.external_data}["offset"])
        assert offset % onnx_layout.ALIGN == 0, tensor.name


def test_the_layout_is_reused_and_made_again_when_the_fetched_file_changes(fetched, tmp_path):
    source = tmp_path / fetched.name
    shutil.copyfile(fetched, source)
    first = onnx_layout.mapped_model(source)
    written = first.stat().st_mtime_ns
    assert onnx_layout.mapped_model(source) == first and first.stat().st_mtime_ns == written
    os.utime(source, ns=(source.stat().st_atime_ns, source.stat().st_mtime_ns + 10**9))   # fetched again
    again = onnx_layout.mapped_model(source)
    marker = json.loads((again.parent / onnx_layout.MARKER).read_text())
    assert marker["mtime_ns"] == source.stat().st_mtime_ns
    assert not list(tmp_path.glob("*.mapped.*"))        # no staging folder left behind


def test_a_file_onnx_cannot_read_is_used_as_it_is(tmp_path):
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"not a model at all")
    assert onnx_layout.mapped_model(broken) == broken
    assert not (tmp_path / "broken.onnx.mapped").exists()


def test_an_unwritable_folder_leaves_the_fetched_file_in_use(fetched, tmp_path, monkeypatch):
    source = tmp_path / fetched.name
    shutil.copyfile(fetched, source)
    def refuse(*args, **kwargs):
        raise PermissionError("read-only file system")
    monkeypatch.setattr(onnx_layout.tempfile, "mkdtemp", refuse)
    assert onnx_layout.mapped_model(source) == source

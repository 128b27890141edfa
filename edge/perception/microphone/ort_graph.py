"""An ONNX Runtime format (``.ort``) model rewritten as ONNX, its int8 weights made float once.

Why: Moonshine's published ``.ort`` files keep each weight matrix as int8 plus a scale and an
offset, and the graph turns them back into float (``Cast`` → ``Mul`` → ``Add``) on every run.
onnxruntime does not fold constants in an ``.ort`` model, so the decoder repeated ~40 M
multiply-adds of dequantization for every token it wrote, which was most of its time. Here the
flatbuffer is read with the reader that ships inside the onnxruntime wheel
(``onnxruntime.tools.ort_format_model``), every node, attribute, initializer and sub-graph is
copied into an ONNX ``ModelProto`` (needs the ``onnx`` package), and top-level nodes whose
inputs are all constants (the dequantization chains) are computed once with numpy. The model
computes the same function; it only holds its weights as float32 (about 4x the file's size
in memory) instead of recomputing them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import numpy as np

_FOLD: dict[str, Callable[..., np.ndarray]] = {"Mul": np.multiply, "Add": np.add, "Sub": np.subtract}


class OrtGraphError(RuntimeError):
    """The file is not an ORT-format model this reader can copy (the caller falls back to it as is)."""


def ort_to_onnx_bytes(path: Path) -> bytes:
    """A serialized ONNX model equal to the ``.ort`` file at ``path``, constants folded at the top level."""
    try:
        import onnx
        fbs = _flatbuffer_reader()
    except ImportError as exc:
        raise OrtGraphError(f"cannot rewrite {path.name} ({exc}): pip install onnx") from exc
    data = path.read_bytes()
    session = fbs.InferenceSession.InferenceSession.GetRootAs(data, 0)
    model = session.Model()
    if model is None or model.Graph() is None:
        raise OrtGraphError(f"{path} holds no model graph")
    graph = _graph(model.Graph(), "main", onnx, fold=True)
    opsets = [onnx.helper.make_opsetid(_s(model.OpsetImport(i).Domain()), model.OpsetImport(i).Version())
              for i in range(model.OpsetImportLength())]
    proto = onnx.helper.make_model(graph, opset_imports=opsets, ir_version=model.IrVersion())
    return bytes(proto.SerializeToString())


def _flatbuffer_reader() -> Any:
    """onnxruntime's generated ORT-format reader, loaded on its own: importing it through
    ``onnxruntime.tools`` would import torch whenever torch is installed (+480 MB here)."""
    import importlib.util
    import sys

    name = "ort_flatbuffers_py"   # the generated classes import each other by this absolute name
    if name not in sys.modules:
        spec = importlib.util.find_spec("onnxruntime")
        if spec is None or not spec.submodule_search_locations:
            raise ImportError("onnxruntime is not installed")
        root = Path(list(spec.submodule_search_locations)[0]) / "tools" / "ort_format_model" / "ort_flatbuffers_py"
        package = importlib.util.spec_from_file_location(name, root / "__init__.py",
                                                         submodule_search_locations=[str(root)])
        if package is None or package.loader is None or not (root / "fbs").is_dir():
            raise ImportError(f"onnxruntime has no ORT-format reader at {root}")
        module = importlib.util.module_from_spec(package)
        sys.modules[name] = module
        package.loader.exec_module(module)
    return importlib.import_module(f"{name}.fbs")


def _s(value: bytes | None) -> str:
    return value.decode() if value else ""


def _array(t: Any) -> np.ndarray:
    """A flatbuffer tensor as numpy (raw data only: ORT writes every numeric tensor that way)."""
    import onnx

    dims = [int(d) for d in t.DimsAsNumpy()] if t.DimsLength() else []
    if t.DataType() == onnx.TensorProto.STRING:
        return np.array([t.StringData(i) for i in range(t.StringDataLength())], dtype=object).reshape(dims)
    dtype = onnx.helper.tensor_dtype_to_np_dtype(t.DataType())
    raw = t.RawDataAsNumpy() if t.RawDataLength() else np.zeros(0, np.uint8)
    return np.frombuffer(raw.tobytes(), dtype=dtype).reshape(dims)


def _tensor(t: Any, onnx: Any) -> Any:
    return onnx.numpy_helper.from_array(_array(t), _s(t.Name()))


def _value_info(v: Any, onnx: Any) -> Any:
    info = v.Type()
    if info is None or info.ValueType() != 1:   # not a tensor (sequence/map): name only
        return onnx.helper.make_empty_tensor_value_info(_s(v.Name()))
    tensor = _flatbuffer_reader().TensorTypeAndShape.TensorTypeAndShape()
    table = info.Value()
    tensor.Init(table.Bytes, table.Pos)
    shape: list[Any] | None = None
    if tensor.Shape() is not None:
        shape = []
        for i in range(tensor.Shape().DimLength()):
            dim = tensor.Shape().Dim(i).Value()
            if dim is None:
                shape.append(None)
            else:
                shape.append(int(dim.DimValue()) if dim.DimType() == 1 else (_s(dim.DimParam()) or None))
    return onnx.helper.make_tensor_value_info(_s(v.Name()), tensor.ElemType(), shape)


def _attribute(a: Any, onnx: Any) -> Any:
    name, kind = _s(a.Name()), a.Type()
    make = onnx.helper.make_attribute
    if kind == 1:
        return make(name, float(a.F()))
    if kind == 2:
        return make(name, int(a.I()))
    if kind == 3:
        return make(name, a.S() or b"")
    if kind == 4:
        return make(name, _tensor(a.T(), onnx))
    if kind == 5:
        return make(name, _graph(a.G(), name, onnx, fold=False))
    if kind == 6:
        return make(name, [float(x) for x in a.FloatsAsNumpy()], attr_type=onnx.AttributeProto.FLOATS)
    if kind == 7:
        return make(name, [int(x) for x in a.IntsAsNumpy()], attr_type=onnx.AttributeProto.INTS)
    if kind == 8:
        return make(name, [a.Strings(i) for i in range(a.StringsLength())], attr_type=onnx.AttributeProto.STRINGS)
    if kind == 9:
        return make(name, [_tensor(a.Tensors(i), onnx) for i in range(a.TensorsLength())])
    if kind == 10:
        return make(name, [_graph(a.Graphs(i), name, onnx, fold=False) for i in range(a.GraphsLength())])
    raise OrtGraphError(f"attribute {name!r} has a type this reader does not copy ({kind})")


def _graph(g: Any, name: str, onnx: Any, *, fold: bool) -> Any:
    """One graph (and its sub-graphs) as an ONNX GraphProto; ``fold`` computes constant nodes."""
    consts: dict[str, np.ndarray] = {}
    for i in range(g.InitializersLength()):
        t = g.Initializers(i)
        consts[_s(t.Name())] = _array(t)
    if g.SparseInitializersLength():
        raise OrtGraphError("sparse initializers are not copied")
    uses: dict[str, int] = {}   # readers left for each value, so a folded chain's steps are freed at once
    for i in range(g.NodesLength()):
        n = g.Nodes(i)
        for x in [n.Inputs(k) for k in range(n.InputsLength())] + \
                 [n.ImplicitInputs(k) for k in range(n.ImplicitInputsLength())]:
            uses[_s(x)] = uses.get(_s(x), 0) + 1
    for i in range(g.OutputsLength()):
        uses[_s(g.Outputs(i))] = uses.get(_s(g.Outputs(i)), 0) + 1
    nodes = []
    for i in range(g.NodesLength()):
        n = g.Nodes(i)
        if n.Type() != 0:
            raise OrtGraphError(f"node {_s(n.Name())!r} is fused for an execution provider; not portable")
        op, ins = _s(n.OpType()), [_s(n.Inputs(k)) for k in range(n.InputsLength())]
        outs = [_s(n.Outputs(k)) for k in range(n.OutputsLength())]
        attrs = [_attribute(n.Attributes(k), onnx) for k in range(n.AttributesLength())]
        if fold and not _s(n.Domain()) and len(outs) == 1 and ins and all(x in consts for x in ins):
            folded = _evaluate(op, [consts[x] for x in ins], attrs, onnx)
            if folded is not None:
                consts[outs[0]] = folded
                for x in ins:
                    uses[x] -= 1
                    if uses[x] <= 0:
                        consts.pop(x, None)
                continue
        node = onnx.helper.make_node(op, ins, outs, name=_s(n.Name()), domain=_s(n.Domain()) or None)
        node.attribute.extend(attrs)
        nodes.append(node)
    args = {_s(g.NodeArgs(i).Name()): g.NodeArgs(i) for i in range(g.NodeArgsLength())}
    graph_inputs = [_s(g.Inputs(i)) for i in range(g.InputsLength())]
    inputs = [_value_info(args[x], onnx) if x in args else onnx.helper.make_empty_tensor_value_info(x)
              for x in graph_inputs if x not in consts]
    outputs = [_value_info(args[_s(g.Outputs(i))], onnx) for i in range(g.OutputsLength())]
    used = {x for node in nodes for x in node.input} | {o.name for o in outputs} | _outer_names(nodes)
    inits = [onnx.numpy_helper.from_array(v, k) for k, v in consts.items() if k in used]
    return onnx.helper.make_graph(nodes, name, inputs, outputs, initializer=inits)


def _outer_names(nodes: list[Any]) -> set[str]:
    """Names the sub-graphs of ``nodes`` read from this graph's scope (If branches use our weights)."""
    names: set[str] = set()
    for node in nodes:
        for attr in node.attribute:
            for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                names |= {x for inner in sub.node for x in inner.input} | _outer_names(list(sub.node))
    return names


def _evaluate(op: str, args: list[np.ndarray], attrs: list[Any], onnx: Any) -> np.ndarray | None:
    """The value of a constant node, for the few operators a dequantization uses (else None)."""
    if op == "Cast":
        to = next((a.i for a in attrs if a.name == "to"), None)
        return None if to is None else args[0].astype(onnx.helper.tensor_dtype_to_np_dtype(to))
    if op in _FOLD and len(args) == 2 and args[0].dtype == args[1].dtype:
        return np.asarray(_FOLD[op](args[0], args[1]), dtype=args[0].dtype)
    return None

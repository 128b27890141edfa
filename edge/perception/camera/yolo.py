"""YOLO detectors: exported ONNX models without torch (``.pt`` / NCNN: ``ultralytics_backend``).

The ONNX path is what runs on a Pi: a model exported by Ultralytics (``yolo export
format=onnx``) runs through onnxruntime, or through OpenCV's DNN module when onnxruntime is
not installed. We do the pre- and post-processing ourselves:

- letterbox: scale the frame to fit the model's input keeping its aspect ratio, pad the rest
  with grey (114) centred, BGR → RGB, 0..1 floats, NCHW;
- decode the output. Two layouts are understood: YOLOv8/11 raw heads ``(1, 4+nc, N)`` whose
  columns are ``cx, cy, w, h`` in input pixels then one sigmoid score per class (no
  objectness), and end-to-end exports ``(1, N, 6)`` of ``x1, y1, x2, y2, score, class``
  (YOLOv10/YOLO26, or ``nms=True``). A raw head is filtered by confidence and then
  class-wise non-maximum suppression; both are mapped back through the letterbox to boxes
  normalized to the original frame;
- class names come from the ``names`` metadata Ultralytics writes into the file, or a
  ``names`` option (a list, or a text file with one name a line), else ``class<N>``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from edge.log import get_logger
from edge.perception.camera.detectors import Detection, DetectorError, check_frame, nms, normalized

log = get_logger(__name__)


@dataclass(frozen=True)
class Letterbox:
    """How a frame was fitted into the model's input, to map boxes back."""

    scale: float
    pad_x: int
    pad_y: int
    width: int   # of the original frame
    height: int


def letterbox(frame: np.ndarray, size: tuple[int, int], fill: int = 114) -> tuple[np.ndarray, Letterbox]:
    """Fit ``frame`` into ``size`` = (height, width) keeping its aspect ratio, centred on grey."""
    import cv2

    in_h, in_w = size
    h, w = frame.shape[:2]
    scale = min(in_w / w, in_h / h)
    new_w, new_h = max(1, round(w * scale)), max(1, round(h * scale))
    resized = frame if (new_w, new_h) == (w, h) else cv2.resize(frame, (new_w, new_h), interpolation=cv2.INTER_LINEAR)
    pad_x, pad_y = (in_w - new_w) // 2, (in_h - new_h) // 2
    canvas = np.full((in_h, in_w, 3), fill, dtype=np.uint8)
    canvas[pad_y:pad_y + new_h, pad_x:pad_x + new_w] = resized
    return canvas, Letterbox(scale, pad_x, pad_y, w, h)


def to_tensor(image: np.ndarray, dtype: Any = np.float32) -> np.ndarray:
    """BGR uint8 HWC → RGB 0..1 NCHW, contiguous."""
    return np.ascontiguousarray(image[:, :, ::-1].transpose(2, 0, 1)[None], dtype=dtype) / np.array(255, dtype=dtype)


def decode_yolo(output: np.ndarray, fit: Letterbox, names: Sequence[str] | dict[int, str] | None,
                conf: float = 0.25, iou: float = 0.45, max_det: int = 100) -> list[Detection]:
    """Turn one YOLO output tensor into detections on the original frame (see the module doc)."""
    out = np.asarray(output, dtype=np.float32)
    if out.ndim == 3 and out.shape[0] == 1:
        out = out[0]
    if out.ndim != 2:
        raise DetectorError(f"YOLO output of shape {tuple(np.shape(output))} is not (1, 4+classes, N) or (1, N, 6)")
    rows, cols = out.shape
    if cols == 6 and rows > 6:  # end-to-end: x1, y1, x2, y2, score, class
        scores, classes = out[:, 4], out[:, 5].astype(int)
        boxes = out[:, :4].astype(np.float64)
        chosen = [int(i) for i in np.flatnonzero(scores >= conf)]
        chosen = sorted(chosen, key=lambda i: (-float(scores[i]), i))[:max_det]
    else:
        table = out.T if rows <= cols else out  # (N, 4+nc)
        if table.shape[1] < 5:
            raise DetectorError(f"YOLO output of shape {tuple(np.shape(output))} has no class scores")
        class_scores = table[:, 4:]
        classes = class_scores.argmax(axis=1)
        scores = class_scores[np.arange(len(table)), classes]
        candidates = np.flatnonzero(scores >= conf)
        cx, cy, bw, bh = (table[candidates, k].astype(np.float64) for k in range(4))
        boxes = np.zeros((len(table), 4))
        boxes[candidates] = np.stack([cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2], axis=1)
        # class-wise NMS in one pass: shift each class's boxes far apart from the others'
        shifted = boxes[candidates] + (classes[candidates] * 1e5)[:, None]
        chosen = [int(candidates[k]) for k in nms(shifted, scores[candidates], iou)][:max_det]
    found = []
    for i in chosen:
        x1, y1, x2, y2 = ((boxes[i] - [fit.pad_x, fit.pad_y, fit.pad_x, fit.pad_y]) / fit.scale)
        found.append(Detection(_name(names, int(classes[i])), float(scores[i]),
                               normalized(x1, y1, x2, y2, fit.width, fit.height)))
    return found


def _name(names: Sequence[str] | dict[int, str] | None, cls: int) -> str:
    if isinstance(names, dict):
        return str(names.get(cls, f"class{cls}"))
    if names is not None and 0 <= cls < len(names):
        return str(names[cls])
    return f"class{cls}"


def _is_file(text: str) -> bool:
    """A names value may be a path or an 80-class dict literal far too long for a file name."""
    if text.lstrip().startswith(("{", "[")):
        return False
    try:
        return Path(text).is_file()
    except (OSError, ValueError):
        return False


def parse_names(value: Any, where: str) -> dict[int, str] | None:
    """Class names from Ultralytics metadata (``"{0: 'person', ...}"``), a list, or a text file."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return {i: str(n) for i, n in enumerate(value)}
    if isinstance(value, dict):
        return {int(k): str(v) for k, v in value.items()}
    if isinstance(value, Path) or (isinstance(value, str) and _is_file(value)):
        lines = Path(value).read_text(encoding="utf-8").splitlines()
        return {i: line.strip() for i, line in enumerate(l for l in lines if l.strip())}
    try:
        parsed = ast.literal_eval(str(value))
    except (ValueError, SyntaxError):
        raise DetectorError(f"{where}: class names {str(value)[:60]!r} are neither a dict, a list nor a file") from None
    return parse_names(parsed, where) if isinstance(parsed, (dict, list, tuple)) else None


class OnnxYoloDetector:
    """A YOLO model exported to ONNX, run by onnxruntime (``backend="onnxruntime"``) or by
    OpenCV's DNN module (``backend="opencv"``); ``auto`` prefers onnxruntime."""

    def __init__(self, path: str | Path, backend: str = "auto", conf: float = 0.25, iou: float = 0.45,
                 names: Any = None, imgsz: int | tuple[int, int] | None = None, max_det: int = 100):
        self.path = Path(path)
        if not self.path.is_file():
            raise DetectorError(f"ONNX model {self.path}: no such file")
        self.conf, self.iou, self.max_det = conf, iou, max_det
        self.name = f"yolo:{self.path.name}"
        if backend == "auto":
            try:
                import onnxruntime  # noqa: F401
                backend = "onnxruntime"
            except ImportError:
                backend = "opencv"
        if backend not in ("onnxruntime", "opencv"):
            raise DetectorError(f"unknown ONNX backend {backend!r}; expected onnxruntime, opencv or auto")
        self.backend = backend
        meta, shape = self._load_onnxruntime() if backend == "onnxruntime" else self._load_opencv()
        self.names = parse_names(names, str(self.path)) or parse_names(meta.get("names"), str(self.path))
        self.input_size = _input_size(shape, imgsz, self.path)
        log.info("yolo.loaded", model=str(self.path), backend=backend, input=list(self.input_size),
                 classes=len(self.names or {}))

    def _load_onnxruntime(self) -> tuple[dict[str, str], list[Any]]:
        import onnxruntime as ort

        try:
            self._session = ort.InferenceSession(str(self.path), providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own Fail/InvalidProtobuf types
            raise DetectorError(f"ONNX model {self.path}: onnxruntime cannot load it: {last_line(exc)}") from None
        inp = self._session.get_inputs()[0]
        self._input_name = inp.name
        self._dtype = np.float16 if "float16" in inp.type else np.float32
        return dict(self._session.get_modelmeta().custom_metadata_map), list(inp.shape)

    def _load_opencv(self) -> tuple[dict[str, str], list[Any]]:
        import cv2

        try:
            self._net = cv2.dnn.readNetFromONNX(str(self.path))
        except cv2.error as exc:
            raise DetectorError(f"ONNX model {self.path}: OpenCV DNN cannot load it: {last_line(exc)}") from None
        self._dtype = np.float32
        try:  # metadata and input shape need the onnx package; without it, imgsz and names options
            import onnx

            model = onnx.load(str(self.path), load_external_data=False)
            meta = {p.key: p.value for p in model.metadata_props}
            dims = model.graph.input[0].type.tensor_type.shape.dim
            return meta, [d.dim_value if d.HasField("dim_value") else d.dim_param for d in dims]
        except ImportError:
            return {}, []

    def detect(self, frame: np.ndarray) -> list[Detection]:
        image, fit = letterbox(check_frame(frame), self.input_size)
        tensor = to_tensor(image, self._dtype)
        if self.backend == "onnxruntime":
            output = self._session.run(None, {self._input_name: tensor})[0]
        else:
            self._net.setInput(tensor)
            output = self._net.forward()
        return decode_yolo(output, fit, self.names, self.conf, self.iou, self.max_det)


def _input_size(shape: list[Any], imgsz: int | tuple[int, int] | None, path: Path) -> tuple[int, int]:
    """(height, width): the option wins, else the model's fixed input shape, else 640."""
    fixed = len(shape) == 4 and all(isinstance(d, int) and d > 0 for d in shape[2:])
    if imgsz is not None:
        asked = (imgsz, imgsz) if isinstance(imgsz, int) else (int(imgsz[0]), int(imgsz[1]))
        if fixed and asked != (int(shape[2]), int(shape[3])):
            raise DetectorError(f"ONNX model {path} takes {shape[3]}x{shape[2]} images, not {asked[1]}x{asked[0]}: "
                                f"leave imgsz out, or export it again at that size (or with dynamic=True)")
        return asked
    if fixed:
        return int(shape[2]), int(shape[3])
    if shape and len(shape) != 4:
        raise DetectorError(f"ONNX model {path}: input shape {shape} is not an image batch (1, 3, H, W)")
    return 640, 640


def last_line(exc: BaseException) -> str:
    """The last line of an error: where native libraries put the actual complaint."""
    text = str(exc).strip()
    return text.splitlines()[-1] if text else type(exc).__name__

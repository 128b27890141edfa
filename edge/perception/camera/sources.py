"""The kinds of camera source, and how each is opened and read, one frame at a time.

A source is named by ``--source``: a device index or ``/dev/videoN``, a stream URL, a video
file or an image folder. Devices, files and streams go through ``cv2.VideoCapture`` (FFmpeg
for streams, with open and read timeouts so a dead network camera cannot hang the node);
folders are read image by image. A reader raises ``CameraError`` saying what is wrong and
whether waiting can help (``retry``); it never decides what to do about it: that is the
capture thread's job (``edge.perception.camera.capture``).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Literal

import numpy as np

from edge import environment

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff", ".ppm", ".pgm")


class CameraError(RuntimeError):
    """A source that cannot deliver frames; ``retry`` says whether waiting can help."""

    def __init__(self, message: str, retry: bool = False):
        super().__init__(message)
        self.retry = retry


@dataclass(frozen=True)
class Source:
    """What ``--source`` named: a device (index or /dev path), a video file, an image folder or a stream URL."""

    kind: Literal["device", "file", "folder", "stream"]
    target: int | str
    text: str

    @property
    def live(self) -> bool:
        return self.kind in ("device", "stream")


def parse_source(text: str | int | Path) -> Source:
    """Classify ``--source``; a missing file is a CameraError here, before anything starts."""
    raw = str(text).strip()
    if not raw:
        raise CameraError("empty camera source; give a device index (0), /dev/videoN, a video file, "
                          "an image folder or a stream URL")
    if re.fullmatch(r"\d+", raw):
        return Source("device", int(raw), raw)
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", raw):
        return Source("stream", raw, raw)
    if raw.startswith("/dev/"):
        return Source("device", raw, raw)
    path = Path(raw).expanduser()
    if path.is_dir():
        return Source("folder", str(path), raw)
    if path.is_file():
        return Source("file", str(path), raw)
    raise CameraError(f"camera source {raw!r}: no such file or folder (a device is an index such as 0, "
                      f"a stream a URL such as rtsp://host/path)")


@dataclass
class CaptureConfig:
    width: int | None = None         # devices: asked of the driver; recordings: frames are resized
    height: int | None = None
    fps: float | None = None         # at most this many frames a second reach the consumer
    realtime: bool = True            # recordings: pace like a camera; False = lockstep, every frame
    loop: bool = False               # recordings: start again at the end instead of ending
    folder_fps: float = 5.0          # an image folder's frame rate when ``fps`` is not given
    open_timeout_s: float = 5.0      # streams: give up connecting after this long
    read_timeout_s: float = 5.0      # streams: a read that blocks this long is a disconnect
    backoff_min_s: float = 0.5       # live sources: first reopen delay, doubling to ...
    backoff_max_s: float = 10.0


def _quiet_opencv(cv2: Any) -> None:
    """OpenCV's own WARN lines repeat what our status and log already say, once per retry;
    keep its errors. ``OPENCV_LOG_LEVEL`` set by the user wins."""
    logging = getattr(getattr(cv2, "utils", None), "logging", None)
    if not environment.is_set("OPENCV_LOG_LEVEL") and logging is not None:
        logging.setLogLevel(logging.LOG_LEVEL_ERROR)


class CaptureReader:
    """cv2.VideoCapture over a device, a video file or a stream URL."""

    def __init__(self, source: Source, config: CaptureConfig, warn: Callable[[str], None]):
        self.source = source
        self.config = config
        self.warn = warn
        self.cap: Any = None
        self.fps: float | None = None
        self.frame_count = 0
        self.size: tuple[int, int] | None = None  # what the source actually gives (width, height)
        self._first: np.ndarray | None = None

    def open(self) -> None:
        import cv2

        _quiet_opencv(cv2)
        src, cfg = self.source, self.config
        if src.kind == "stream":
            params = [cv2.CAP_PROP_OPEN_TIMEOUT_MSEC, int(cfg.open_timeout_s * 1000),
                      cv2.CAP_PROP_READ_TIMEOUT_MSEC, int(cfg.read_timeout_s * 1000)]
            self.cap = cv2.VideoCapture(src.target, cv2.CAP_FFMPEG, params)
        else:
            self.cap = cv2.VideoCapture(src.target)
        if not self.cap.isOpened():
            self.close()
            raise CameraError(self._open_failure(), retry=src.live)
        if src.kind == "device":
            for prop, value in ((cv2.CAP_PROP_FRAME_WIDTH, cfg.width), (cv2.CAP_PROP_FRAME_HEIGHT, cfg.height),
                                (cv2.CAP_PROP_FPS, cfg.fps), (cv2.CAP_PROP_BUFFERSIZE, 1)):
                if value:
                    self.cap.set(prop, value)
        fps = self.cap.get(cv2.CAP_PROP_FPS)
        self.fps = float(fps) if fps and fps == fps and 0 < fps < 1000 else None
        self.frame_count = int(self.cap.get(cv2.CAP_PROP_FRAME_COUNT) or 0)
        ok, first = self.cap.read()  # a file can open and still hold nothing decodable
        if not ok or first is None:
            self.close()
            what = "decoded no frame (corrupt or unsupported video?)" if src.kind == "file" else "opened but gave no frame"
            raise CameraError(f"{self.describe()}: {what}", retry=src.live)
        self._first = first
        self.size = (first.shape[1], first.shape[0])

    def _open_failure(self) -> str:
        src = self.source
        if src.kind == "file":
            return f"{self.describe()}: OpenCV cannot open it as a video (corrupt or unsupported format?)"
        if src.kind == "stream":
            return f"{self.describe()}: cannot connect or no video there (within {self.config.open_timeout_s:g} s)"
        node = f"/dev/video{src.target}" if isinstance(src.target, int) else str(src.target)
        if sys.platform.startswith("linux") and not Path(node).exists():
            return f"{self.describe()}: {node} does not exist (unplugged, or the driver is not loaded?)"
        return f"{self.describe()}: cannot open it (busy in another program, or no permission?)"

    def describe(self) -> str:
        return {"device": "camera", "file": "video file", "stream": "stream"}[self.source.kind] + f" {self.source.text}"

    def read(self) -> np.ndarray | None:
        if self._first is not None:
            frame, self._first = self._first, None
            return frame
        ok, frame = self.cap.read()
        if ok and frame is not None:
            return frame
        if self.source.live:
            raise CameraError(f"{self.describe()}: stopped delivering frames (disconnected?)", retry=True)
        import cv2
        position = int(self.cap.get(cv2.CAP_PROP_POS_FRAMES) or 0)
        if self.frame_count and position < self.frame_count - 1:
            self.warn(f"{self.describe()} ended at frame {position} of {self.frame_count}: truncated or corrupt")
        return None

    def close(self) -> None:
        if self.cap is not None:
            self.cap.release()
            self.cap = None


class FolderReader:
    """The images of a folder in name order, one frame each; unreadable ones are skipped."""

    def __init__(self, source: Source, config: CaptureConfig, warn: Callable[[str], None]):
        self.source = source
        self.fps = config.fps or config.folder_fps
        self.warn = warn
        self.files: list[Path] = []
        self._next = 0

    def open(self) -> None:
        folder = Path(str(self.source.target))
        self.files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)
        if not self.files:
            raise CameraError(f"image folder {self.source.text}: no images in it ({', '.join(IMAGE_SUFFIXES)})")
        self._next = 0

    def read(self) -> np.ndarray | None:
        import cv2

        while self._next < len(self.files):
            path = self.files[self._next]
            self._next += 1
            image = cv2.imread(str(path), cv2.IMREAD_COLOR)
            if image is not None:
                return image
            self.warn(f"image {path.name} could not be decoded; skipped")
        return None

    def close(self) -> None:
        pass

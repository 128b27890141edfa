"""Frames from a camera, a video file, an image folder or a stream URL, on a capture thread.

Why a thread: a camera keeps producing while the detector thinks. The capture thread reads
all the time and keeps only the newest frame (the latest wins), so the consumer always gets
a fresh picture with bounded latency and no backlog ever grows. Files and folders can play
like a camera (``realtime=True``: paced at their own frame rate, frames dropped when the
consumer is slower) or in lockstep (``realtime=False``: every frame, as fast as the consumer
takes them — for tests and benchmarks).

Every frame carries ``ts``, seconds on the source's own clock: the position in the video (or
``index / fps`` in a folder) for recordings, seconds since start for live sources. The
scene policy reasons in that clock, so a recording gives the same perceptions however fast
the machine is.

Failures: a live source (device, stream) that fails to open or stops delivering is closed
and reopened with exponential backoff, forever, each state reported through ``on_status``
with the reason. A recording that is missing, empty or undecodable is a ``CameraError`` at
``start()``: it will not come back by waiting.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from edge.log import get_logger
from edge.perception.camera.sources import (  # noqa: F401  (re-exported: the camera's vocabulary)
    IMAGE_SUFFIXES, CameraError, CaptureConfig, CaptureReader, FolderReader, Source, parse_source)

log = get_logger(__name__)

StatusCallback = Callable[..., None]  # on_status(state, reason=..., **details)


@dataclass(frozen=True)
class Frame:
    image: np.ndarray
    seq: int          # how many frames the capture thread has produced before this one
    ts: float         # seconds on the source's clock (see the module doc)
    index: int        # position in the recording (for live sources, equal to seq)


class Camera:
    """A source on a capture thread; ``read()`` hands out the newest frame not yet taken."""

    def __init__(self, source: str | int | Path | Source, config: CaptureConfig | None = None,
                 on_status: StatusCallback | None = None):
        self.source = source if isinstance(source, Source) else parse_source(source)
        self.config = config or CaptureConfig()
        self.on_status = on_status or (lambda state, **details: None)
        self.state = "idle"
        self.error: CameraError | None = None
        self.produced = 0
        self.dropped = 0       # frames overwritten before anyone took them
        self.reopens = 0
        self.warnings: list[str] = []  # the latest few things worth a look (skipped images, truncation)
        self._latest: Frame | None = None
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._finished = threading.Event()
        self._reader: Any = None
        self._thread = threading.Thread(target=self._run, name=f"camera:{self.source.text}", daemon=True)

    # -- consumer side ------------------------------------------------------------------------

    def start(self) -> "Camera":
        """Open a recording now (raising CameraError if it is unusable); a live source opens,
        and keeps reopening, on the capture thread."""
        if not self.source.live:
            try:
                self._open()
            except CameraError as exc:
                self._fail(exc)
                raise
        self._thread.start()
        return self

    def read(self, timeout: float | None = None) -> Frame | None:
        """The newest untaken frame, waiting up to ``timeout``; None on timeout or once finished."""
        with self._cond:
            if self._latest is None and not self._finished.is_set():
                self._cond.wait_for(lambda: self._latest is not None or self._finished.is_set(), timeout)
            frame, self._latest = self._latest, None
            self._cond.notify_all()
            return frame

    @property
    def finished(self) -> bool:
        """True once a recording has ended (or failed) and its last frame was taken."""
        with self._cond:
            return self._finished.is_set() and self._latest is None

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        if self._thread.is_alive():
            self._thread.join(timeout)  # the thread releases the source on its way out
        elif self._reader is not None:  # opened by start() but the thread never ran
            self._reader.close()
            self._reader = None
        if self.state not in ("ended", "failed", "closed"):
            self._set_state("closed")

    # -- capture thread -----------------------------------------------------------------------

    def _open(self) -> None:
        self._set_state("opening")
        reader: Any = (FolderReader if self.source.kind == "folder" else CaptureReader)(
            self.source, self.config, self._warn)
        reader.open()
        self._reader = reader
        details: dict[str, Any] = {"source_fps": reader.fps}
        if getattr(reader, "size", None):
            details["width"], details["height"] = reader.size
        if hasattr(reader, "files"):
            details["frames"] = len(reader.files)
        self._set_state("open", **details)

    def _run(self) -> None:
        attempt = 0
        clock_offset = 0.0
        while not self._stop.is_set():
            try:
                if self._reader is None:
                    self._open()
                    if attempt:
                        self.reopens += 1
                    attempt = 0
                clock_offset = self._pump(clock_offset)
                if self._stop.is_set():
                    break
                self._reader.close()
                self._reader = None
                if not self.config.loop:
                    self._set_state("ended", frames=self.produced,
                                    **({"warning": self.warnings[-1]} if self.warnings else {}))
                    break
            except CameraError as exc:
                if self._reader is not None:
                    self._reader.close()
                    self._reader = None
                if not (exc.retry and self.source.live):
                    self._fail(exc)
                    break
                delay = min(self.config.backoff_max_s, self.config.backoff_min_s * 2 ** attempt)
                attempt += 1
                log.warning("camera.reopening", source=self.source.text, reason=str(exc), retry_in_s=delay,
                            attempt=attempt)
                self._set_state("reopening", reason=str(exc), retry_in_s=round(delay, 2), attempt=attempt)
                self._stop.wait(delay)
            except Exception as exc:  # an OpenCV surprise must end in a status, not a silent thread
                self._fail(CameraError(f"{self.source.text}: capture failed: {exc!r}"))
                break
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        with self._cond:
            self._finished.set()
            self._cond.notify_all()

    def _pump(self, clock_offset: float) -> float:
        """Read until the source ends (returns the clock offset for a loop) or stop; raises
        CameraError when a live source breaks."""
        reader, cfg = self._reader, self.config
        live = self.source.live
        media_fps = reader.fps or 25.0
        min_gap = 1.0 / cfg.fps if cfg.fps else 0.0
        next_due = -1.0
        started = time.monotonic()
        index = -1
        while not self._stop.is_set():
            image = reader.read()
            if image is None:
                return clock_offset + (index + 1) / media_fps
            index += 1
            ts = time.monotonic() - started + clock_offset if live else clock_offset + index / media_fps
            if min_gap and ts < next_due - 1e-9:
                continue  # faster than the configured rate: skip this one
            next_due = max(next_due + min_gap, ts) if next_due >= 0 else ts + min_gap
            if not live and cfg.realtime:
                self._stop.wait(max(0.0, started + (ts - clock_offset) - time.monotonic()))
            if not live and (cfg.width and cfg.height) and image.shape[:2] != (cfg.height, cfg.width):
                import cv2
                image = cv2.resize(image, (cfg.width, cfg.height), interpolation=cv2.INTER_AREA)
            self._offer(Frame(image, self.produced, ts, index), wait=not live and not cfg.realtime)
        return clock_offset

    def _offer(self, frame: Frame, wait: bool) -> None:
        with self._cond:
            if wait:  # lockstep: hold this frame until the consumer took the previous one
                self._cond.wait_for(lambda: self._latest is None or self._stop.is_set())
            if self._latest is not None:
                self.dropped += 1
            self._latest = frame
            self.produced += 1
            self._cond.notify_all()

    def _warn(self, reason: str) -> None:
        log.warning("camera.warning", source=self.source.text, reason=reason)
        self.warnings = [*self.warnings[-9:], reason]
        self._set_state(self.state, warning=reason)

    def _fail(self, exc: CameraError) -> None:
        self.error = exc
        log.error("camera.failed", source=self.source.text, reason=str(exc))
        self._set_state("failed", reason=str(exc))

    def _set_state(self, state: str, **details: Any) -> None:
        self.state = state
        try:
            self.on_status(state, **details)
        except Exception as exc:  # a status publisher's bug must not stop the capture
            log.error("camera.status_failed", error=repr(exc))

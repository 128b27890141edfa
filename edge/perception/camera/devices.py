"""Which capture devices this machine has, and whether each one opens and gives a frame.

For ``companion doctor``. On Linux the cameras are the ``/dev/video*`` nodes, named in
``/sys/class/video4linux``; a USB camera usually shows two nodes, the second for metadata,
which does not open for capture (reported, not an error). Elsewhere indices 0..N are probed.
A probe that hangs (a wedged driver) is abandoned after ``timeout_s``.
"""

from __future__ import annotations

import re
import sys
import threading
from dataclasses import dataclass
from pathlib import Path


@dataclass
class CameraDevice:
    source: str               # what to pass to ``--source``
    name: str | None = None   # the driver's name for it, when known
    opens: bool = False
    width: int | None = None
    height: int | None = None
    error: str | None = None

    def line(self) -> str:
        label = f"camera {self.source}" + (f" ({self.name})" if self.name else "")
        if self.opens:
            return f"{label}: opens, {self.width}x{self.height}"
        return f"{label}: does not open: {self.error}"


def _probe(device: CameraDevice, target: int | str, timeout_s: float) -> None:
    import cv2

    def attempt() -> None:
        cap = cv2.VideoCapture(target)
        try:
            if not cap.isOpened():
                device.error = "cannot open it (busy, no permission, or a metadata node)"
                return
            ok, frame = cap.read()
            if not ok or frame is None:
                device.error = "opens but gives no frame"
                return
            device.opens, device.height, device.width = True, frame.shape[0], frame.shape[1]
        finally:
            cap.release()

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        device.error = f"no answer within {timeout_s:g} s (driver stuck?)"


def list_cameras(probe: bool = True, timeout_s: float = 5.0, dev_dir: Path = Path("/dev"),
                 sysfs_dir: Path = Path("/sys/class/video4linux"), max_index: int = 4) -> list[CameraDevice]:
    """Every camera node found, probed unless ``probe`` is False."""
    found: list[tuple[CameraDevice, int | str]] = []
    if sys.platform.startswith("linux"):
        nodes = sorted(dev_dir.glob("video*"), key=lambda p: int(re.sub(r"\D", "", p.name) or 0))
        for node in nodes:
            name_file = sysfs_dir / node.name / "name"
            name = name_file.read_text(encoding="utf-8", errors="replace").strip() if name_file.is_file() else None
            found.append((CameraDevice(str(node), name), str(node)))
    else:
        found = [(CameraDevice(str(i)), i) for i in range(max_index + 1)]
    for device, target in found:
        if probe:
            _probe(device, target, timeout_s)
    if not sys.platform.startswith("linux"):
        return [d for d, _ in found if d.opens]
    return [d for d, _ in found]


def camera_report(devices: list[CameraDevice] | None = None) -> tuple[bool, list[str]]:
    """For ``companion doctor``: (any camera opens, one line per camera)."""
    devices = list_cameras() if devices is None else devices
    if not devices:
        return False, ["camera: none found; the camera node can still play a video file, an image "
                       "folder or a stream URL (--source)"]
    return any(d.opens for d in devices), [d.line() for d in devices]

"""The robot's view frame: how a place in the camera's picture is written on the wire.

The frame is defined once, in docs/protocol.md ("Spatial frame"): seen from the robot, x runs
from -1 (the picture's left edge, the robot's left) to 1 (right), y from -1 (bottom) to 1
(top), with 0, 0 at the centre of the view; sizes are fractions of the picture's width and
height. Detectors keep their boxes as OpenCV gives them (x1, y1, x2, y2 in 0..1 from the
top-left); every position the camera node publishes goes through here, so a vision object's
x and y are exactly the ``look`` params that point the head at it.
"""

from __future__ import annotations

Box = tuple[float, float, float, float]

Z_MIN_M = 0.1   # the nearest distance ahead a ``look`` is given (metres), as the companion files say
Z_MAX_M = 2.0   # the farthest


def _clean(v: float, digits: int | None) -> float:
    """Rounded (when asked), and never ``-0.0``: a model would copy the sign."""
    return (round(v, digits) if digits is not None else v) + 0.0


def to_view(px: float, py: float, digits: int | None = None) -> tuple[float, float]:
    """A picture point (0..1 from the top-left) in the view frame (-1..1 from the centre, y up)."""
    return _clean(2.0 * px - 1.0, digits), _clean(1.0 - 2.0 * py, digits)


def box_in_view(box: Box, digits: int | None = None) -> dict[str, float]:
    """A picture box as published: its centre ``x``, ``y`` in the view frame and its size
    ``w``, ``h`` as fractions (0..1) of the picture's width and height."""
    x1, y1, x2, y2 = box
    x, y = to_view((x1 + x2) / 2, (y1 + y2) / 2, digits)
    return {"x": x, "y": y, "w": _clean(max(0.0, x2 - x1), digits), "h": _clean(max(0.0, y2 - y1), digits)}

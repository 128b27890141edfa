"""Band-limited sample-rate conversion in numpy, streaming or one-shot.

Speech recognizers want 16 kHz; voices come at 22050 Hz (piper, espeak-ng) and many USB
microphones only open at 44.1 or 48 kHz. Linear interpolation would fold everything above
8 kHz back into the speech band, so each output sample is a Hann-windowed sinc sum over
its neighbours, with the cut-off at the lower of the two Nyquist rates. Pure numpy: no
scipy or libsoxr on the device just for this.
"""

from __future__ import annotations

import math

import numpy as np

_CHUNK = 8192  # output samples computed per vectorized step (bounds the temporary matrix)


class Resampler:
    """Converts a stream of int16 blocks from ``src_rate`` to ``dst_rate``.

    Keeps just enough input history between blocks for the filter, so block edges leave
    no seams: feeding a signal in pieces gives the same samples as feeding it whole.
    Call ``process(block)`` per block and ``flush()`` once at the end of the stream.
    Output ``n`` sits at input position ``n * src / dst``; that position's fractional part
    takes only ``dst / gcd(src, dst)`` values, so the filter rows are computed once.
    """

    def __init__(self, src_rate: int, dst_rate: int, half_taps: int = 16):
        if src_rate <= 0 or dst_rate <= 0:
            raise ValueError(f"sample rates must be positive, got {src_rate} -> {dst_rate}")
        self.src_rate, self.dst_rate = int(src_rate), int(dst_rate)
        g = math.gcd(self.src_rate, self.dst_rate)
        self._up, self._down = self.dst_rate // g, self.src_rate // g  # position of n = n * down / up
        cutoff = min(1.0, self.dst_rate / self.src_rate) * 0.94  # leave a transition band
        self.half = int(np.ceil(half_taps / cutoff))               # filter half-width, input samples
        self._offsets = np.arange(-self.half + 1, self.half + 1)
        self._rows = self._filter_rows(cutoff) if self._up <= 4096 else None
        self._cutoff = cutoff
        self._buf = np.zeros(self.half, dtype=np.float64)  # leading zeros: the signal starts at rest
        self._base = -self.half                            # input index of _buf[0]
        self._n = 0                                        # index of the next output sample

    @property
    def passthrough(self) -> bool:
        return self.src_rate == self.dst_rate

    def process(self, block: np.ndarray) -> np.ndarray:
        """Resample one block; returns the output samples that are complete so far."""
        block = np.asarray(block)
        if self.passthrough:
            return block.astype(np.int16, copy=False)
        self._buf = np.concatenate([self._buf, block.astype(np.float64)])
        last_input = self._base + len(self._buf) - 1
        # output n is complete once floor(n*down/up) + half <= last_input
        end = ((last_input - self.half + 1) * self._up + self._down - 1) // self._down
        return self._emit(end)

    def flush(self) -> np.ndarray:
        """The outputs still waiting for right-hand context, with silence after the end."""
        if self.passthrough:
            return np.zeros(0, dtype=np.int16)
        inputs = self._base + len(self._buf)                          # real input samples seen
        self._buf = np.concatenate([self._buf, np.zeros(self.half + 1)])
        return self._emit((inputs * self._up + self._down - 1) // self._down)  # ceil(len * dst/src)

    def _emit(self, end: int) -> np.ndarray:
        count = max(end - self._n, 0)
        out = np.empty(count, dtype=np.float64)
        for start in range(0, count, _CHUNK):
            n = self._n + start + np.arange(min(_CHUNK, count - start), dtype=np.int64)
            out[start:start + len(n)] = self._filter(n)
        self._n += count
        keep_from = (self._n * self._down) // self._up - self.half - self._base
        if keep_from > 0:
            self._buf = self._buf[keep_from:]
            self._base += keep_from
        return np.clip(np.rint(out), -32768, 32767).astype(np.int16)

    def _filter_rows(self, cutoff: float, phases: np.ndarray | None = None) -> np.ndarray:
        """Filter weights per fractional position (phase / up) of an output between inputs."""
        phases = np.arange(self._up) if phases is None else phases
        distance = (phases[:, None] / self._up) - self._offsets[None, :]
        window = 0.5 + 0.5 * np.cos(np.pi * np.clip(distance / self.half, -1.0, 1.0))
        return cutoff * np.sinc(cutoff * distance) * window

    def _filter(self, n: np.ndarray) -> np.ndarray:
        whole, phase = np.divmod(n * self._down, self._up)
        rows = self._rows[phase] if self._rows is not None else self._filter_rows(self._cutoff, phase)
        idx = whole[:, None] + self._offsets[None, :] - self._base
        return np.einsum("ij,ij->i", self._buf[idx], rows)


def resample(samples: np.ndarray, src_rate: int, dst_rate: int) -> np.ndarray:
    """One-shot conversion of a whole int16 signal."""
    rs = Resampler(src_rate, dst_rate)
    if rs.passthrough:
        return np.asarray(samples).astype(np.int16, copy=False)
    return np.concatenate([rs.process(samples), rs.flush()])

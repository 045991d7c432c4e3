"""The 32-B granules an access touches, and reading/writing per-granule shadow arrays through them.

The hazard checker (hazards.py) and the buffer-tag check (buffer_tags.py) keep one shadow entry per 32-B granule.
An access's granules come in three forms, cheapest first:

- ``slice``: one burst, or bursts that tile a contiguous range: a view of the shadow;
- ``Grid``: n bursts at a constant stride that is a multiple of 32 B and at least the burst's granules (a strided
  DMA, the cube's row loads): granules ``lo + i*step + j`` for ``i < rows, j < span``, read and written through a
  reshaped view of the shadow (no fancy indexing). The shadow must be padded to :func:`shadow_len` for the view;
- an index array (anything else: irregular or overlapping bursts), fancy-indexed as before.

All three list the granules in the same order (burst by burst), so a mask over them means the same granules.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

G = 32  # granule bytes (the DMA burst unit)


class Grid(NamedTuple):
    lo: int
    rows: int
    step: int
    span: int

    def view(self, a: np.ndarray) -> np.ndarray:
        """The granules of ``a`` (rows, span, *a.shape[1:]) as a view: writes through it land in ``a``."""
        flat = a[self.lo: self.lo + self.rows * self.step]
        return flat.reshape((self.rows, self.step) + a.shape[1:])[:, :self.span]


def shadow_len(size: int) -> int:
    """Shadow entries for a memory of ``size`` bytes: one per granule, padded so any Grid inside it has its view
    (the last row's view runs on by less than one stride, and a stride of two rows or more fits in the memory)."""
    n = size // G + 1
    return 2 * n


def granules(starts: np.ndarray, length: int):
    """The granules of bursts [s, s + length) for s in ``starts``: a slice, an index array (old form, as used by
    launch replay) — never a Grid."""
    lo = starts // G
    hi = (starts + (length - 1)) // G
    if len(starts) == 1:
        return slice(int(lo[0]), int(hi[0]) + 1)  # one burst: a view, much cheaper than fancy indexing
    span = int((hi - lo).max()) + 1
    if span == 1:
        return lo
    idx = lo[:, None] + np.arange(span)
    return idx[idx <= hi[:, None]]


def granule_set(starts: np.ndarray, length: int):
    """Like :func:`granules`, but regular strided bursts come back as a slice (contiguous) or a Grid."""
    n = len(starts)
    if n > 1:
        s0 = int(starts[0])
        d = int(starts[1]) - s0
        if d > 0 and d % G == 0:
            span = (s0 % G + length - 1) // G + 1
            step = d // G
            if step >= span and (n == 2 or bool((np.diff(starts) == d).all())):
                lo = s0 // G
                if step == span:
                    return slice(lo, lo + n * span)
                return Grid(lo, n, step, span)
    return granules(starts, length)


def take(a: np.ndarray, g) -> np.ndarray:
    """``a``'s entries at granules ``g``, one row per granule (a view for a slice, a copy otherwise)."""
    if type(g) is Grid:
        return g.view(a).reshape((-1,) + a.shape[1:])
    return a[g]


def put(a: np.ndarray, g, value) -> None:
    if type(g) is Grid:
        g.view(a)[...] = value
    else:
        a[g] = value


def index(g) -> np.ndarray:
    """The granule numbers, in order, as an array."""
    if type(g) is Grid:
        return ((g.lo + g.step * np.arange(g.rows))[:, None] + np.arange(g.span)).ravel()
    if isinstance(g, slice):
        return np.arange(g.start, g.stop)
    return np.asarray(g)

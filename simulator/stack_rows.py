"""Rows of stacked local memories (launch replay: one ``(cores, bytes)`` array per kind of core and scope) as
strided views, for the operations a compiled replay binds once (replay_batch.py, replay_forms.py, isa/vector.py).

The members of a batched step are rows ``rows`` of a stack (a slice, or an index array when some cores of the kind
run another step) and, for DMA, GM addresses ``addrs`` in the same order. When every such sequence is a *grid* —
``base + i * step1 + j * step2`` for ``i < r1, j < r2``, row-major, steps >= 0 (a 1-D progression is ``r1 = 1``; a
2-D core tiling or every core but each sixth one is 2-D) — the members' bytes are one strided view
``(r1, r2, ...)`` of the stack (of GM) and one numpy operation covers them all::

    shape = grid_shape(rows_array, addrs)            # (r1, r2) or None
    v = rows_view(stack, rows, shape, start, width)  # (r1, r2, width) bytes [start, start + width) of each row
"""
from __future__ import annotations

import numpy as np

_strided = np.lib.stride_tricks.as_strided


def as_array(rows) -> np.ndarray:
    """The row indices of ``rows`` (a slice with a stop, or an index array)."""
    return np.arange(rows.start or 0, rows.stop) if isinstance(rows, slice) else np.asarray(rows)


def grid_shape(*seqs) -> tuple[int, int] | None:
    """``(r1, r2)`` such that every 1-D int sequence of ``seqs`` (all of one length), reshaped to it, steps evenly
    (by a step >= 0) along both axes; None when there is none. Tries one progression first, then runs of the
    shortest leading progression."""
    n = len(seqs[0])
    if n <= 2:
        return (1, n) if all(n < 2 or s[1] >= s[0] for s in seqs) else None
    breaks = [np.flatnonzero(np.diff(s) != s[1] - s[0]) for s in seqs]
    r2 = min((int(b[0]) + 1 for b in breaks if len(b)), default=n)
    if n % r2:
        return None
    shape = (n // r2, r2)
    return shape if all(_steps(s, shape) is not None for s in seqs) else None


def _steps(seq, shape):
    """``(base, step1, step2)`` of ``seq`` as a ``shape`` grid, or None (uneven, or a negative step)."""
    a = np.asarray(seq, np.int64).reshape(shape)
    s1 = int(a[1, 0] - a[0, 0]) if shape[0] > 1 else 0
    s2 = int(a[0, 1] - a[0, 0]) if shape[1] > 1 else 0
    if s1 < 0 or s2 < 0 or not ((np.diff(a, axis=0) == s1).all() and (np.diff(a, axis=1) == s2).all()):
        return None
    return int(a[0, 0]), s1, s2


def rows_view(stack: np.ndarray, rows, shape, start: int, width: int, write: bool = True) -> np.ndarray:
    """Bytes ``[start, start + width)`` of the rows ``rows`` (a ``shape`` grid: :func:`grid_shape`) of the 2-D byte
    array ``stack`` as a ``shape + (width,)`` view."""
    r0, s1, s2 = _steps(as_array(rows), shape)
    rb = stack.strides[0]
    return _strided(stack[r0, start:], shape=tuple(shape) + (width,), strides=(s1 * rb, s2 * rb, 1),
                    writeable=write)


def gm_view(data: np.ndarray, addrs, shape, n: int, stride: int, length: int, write: bool) -> np.ndarray | None:
    """The ``shape + (n, length)`` GM bursts at ``addr + i * stride`` of every member's ``addr`` (a ``shape`` grid),
    as a view of the byte array ``data``; None when they leave it."""
    a0, s1, s2 = _steps(addrs, shape)
    if a0 < 0 or a0 + (shape[0] - 1) * s1 + (shape[1] - 1) * s2 + (n - 1) * stride + length > data.size:
        return None
    return _strided(data[a0:], shape=tuple(shape) + (n, length), strides=(s1, s2, stride, 1), writeable=write)

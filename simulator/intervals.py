"""Sets of integer points as sorted, disjoint half-open intervals ``[lo, hi)`` (numpy arrays), built from many
possibly overlapping ones at once: the GM footprints of launch replay (replay_batch.py) and the local write
footprint (replay_pool.py)."""
from __future__ import annotations

import numpy as np


def merge(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The union of ``[lo[i], hi[i])`` as sorted disjoint intervals; touching ones are joined."""
    if len(lo) == 0:
        return lo, hi
    order = np.argsort(lo, kind="stable")
    lo, hi = lo[order], np.maximum.accumulate(hi[order])
    new = np.empty(len(lo), bool)
    new[0] = True
    new[1:] = lo[1:] > hi[:-1]
    first = np.flatnonzero(new)
    last = np.append(first[1:] - 1, len(lo) - 1)
    return lo[first], hi[last]


def bursts(starts, length: int, unit: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Bursts ``[s, s + length)`` for ``s`` in ``starts`` as intervals of ``unit``-byte units (the units they touch)."""
    s = np.asarray(starts, np.int64).reshape(-1)
    return s // unit, (s + length + unit - 1) // unit


def shared(sets: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """The points that two or more of ``sets`` (each merged: disjoint intervals) contain, as merged intervals."""
    pos = np.concatenate([np.zeros(0, np.int64)] + [a for a, _ in sets] + [b for _, b in sets])
    if len(sets) < 2 or len(pos) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    step = np.concatenate([np.ones(sum(len(a) for a, _ in sets), np.int64),
                           -np.ones(sum(len(b) for _, b in sets), np.int64)])
    order = np.argsort(pos, kind="stable")
    pos, depth = pos[order], np.cumsum(step[order])
    # depth after the event at pos[i] holds on [pos[i], pos[i + 1]); ties sum before the depth counts
    keep = np.append(pos[1:] != pos[:-1], True)
    pos, depth = pos[keep], depth[keep]
    many = np.flatnonzero(depth[:-1] >= 2)
    return merge(pos[many], pos[many + 1])


def overlaps(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> bool:
    """Whether two merged interval sets share a point."""
    alo, ahi = a
    blo, bhi = b
    if len(alo) == 0 or len(blo) == 0:
        return False
    j = np.searchsorted(bhi, alo, side="right")  # the first b interval ending after each a interval starts
    ok = j < len(blo)
    return bool((blo[j[ok]] < ahi[ok]).any())

"""Local memories for launch replay, kept across replays instead of allocated per launch.

A replay runs on cores whose local memories (UB, L1, L0A, L0B, L0C) start zeroed, as a full simulation's do. Making
48 fresh UBs (or 24 cube cores' L1 and L0 buffers) per launch costs more than most replays' effects: the pages
are allocated and first touched every time. The :data:`POOL` keeps one zeroed ``(cores, bytes)`` array per kind of
core, scope and capacity, shared by every recording; a replay takes the first rows of each, and when it is over
(finished or raised) zeroes exactly the bytes its launch can write — the recorded launch's local write footprint
(:func:`write_footprint`), which a replay repeats (local addresses never come from data) — so the pool is all
zeros again for the next replay. A recording keeps its cores built over the pool's rows (:meth:`Pool.cores`): the
data registers are cleared and the GM set per replay.
"""
from __future__ import annotations

import numpy as np

from . import intervals
from .core import KIND_SCOPES, Core
from .memory import LocalMemory


def write_footprint(items: list) -> dict:
    """``{(kind, scope): [(lo, hi), ...]}``: the merged byte intervals, over all cores of a kind, that the recorded
    effects (op and dma items, each with its core as ``x.core``) write in local scopes."""
    spans: dict = {}
    for x in items:
        if x.KIND not in ("op", "dma"):
            continue
        for acc in x.accesses(x.core):
            if acc.write and acc.scope != "GM":
                starts = np.asarray(acc.starts).reshape(-1)
                spans.setdefault((x.core.kind, acc.scope), []).append((starts, starts + acc.length))
    out = {}
    for key, parts in spans.items():
        lo, hi = intervals.merge(np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]))
        out[key] = list(zip(lo.tolist(), hi.tolist()))
    return out


class Pool:
    """Zeroed ``(rows, capacity)`` byte arrays per (kind, scope, capacity), grown on demand."""

    def __init__(self):
        self.arrays: dict = {}
        self.generation = 0  # bumped when an array is replaced: cores built over the old one are stale

    def stack(self, kind: str, scope: str, capacity: int, rows: int) -> np.ndarray:
        key = (kind, scope, capacity)
        a = self.arrays.get(key)
        if a is None or a.shape[0] < rows:
            a = self.arrays[key] = np.zeros((rows, capacity), np.uint8)
            self.generation += 1
        return a[:rows]

    def cores(self, specs: list, chip) -> tuple[list, dict]:
        """Cores for ``specs`` (``(index, name, kind, group)`` each) whose local memories are rows of the pool's
        arrays, and the stacks ``{kind: {scope: (cores of the kind, bytes)}}`` they are rows of."""
        counts: dict = {}
        for _, _, kind, _ in specs:
            counts[kind] = counts.get(kind, 0) + 1
        stacks = {k: {s: self.stack(k, s, chip.capacity(s), n) for s in KIND_SCOPES[k]} for k, n in counts.items()}
        cores, seen = [], dict.fromkeys(counts, 0)
        for i, name, kind, group in specs:
            row = seen[kind]
            seen[kind] += 1
            mem = {s: LocalMemory(s, chip.capacity(s), chip.align[s], stacks[kind][s][row]) for s in KIND_SCOPES[kind]}
            cores.append(Core(i, name, kind, chip, None, group, mem=mem))
        return cores, stacks

    def clear(self, stacks: dict, footprint: dict) -> None:
        """Zero the bytes ``footprint`` names in the rows of ``stacks`` (what a replay may have written)."""
        for (kind, scope), spans in footprint.items():
            a = stacks[kind][scope]
            for lo, hi in spans:
                a[:, lo:hi] = 0


POOL = Pool()

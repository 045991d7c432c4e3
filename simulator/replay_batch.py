"""Launch replay across cores at once: the recorded effects of all cores in rounds, identical steps batched.

Legality. The replay must leave GM as the recorded execution order does. Local memories and data registers belong
to one core, so two cores' effects can only interact through GM. :func:`gm_dependencies` reads the recorded
launch's GM footprint (every op and dma effect's GM accesses, in 32-B granules) and, for every pair of effects on
different cores that touch a granule with at least one write, makes the later one (in the recorded order) wait for
the earlier: a read waits for the last write before it, a write for the last write and the reads since. Every
schedule that keeps each core's own order and these waits applies every conflicting pair in the recorded order, so
it leaves every byte as the recorded execution does. A replay checks its register-computed GM addresses against
the recorded ones (replay.py), so the footprint it runs with is the one read here.

Schedule (:func:`plan`). Round after round, every core whose next step has nothing left to wait for runs it; the
recorded order's earliest pending step is always ready, so the rounds end. When the cores touch disjoint GM (no
waits) this is lock step: position k of every core, then k + 1. A mix launch's vector cores wait for their cube
core's workspace tile, then run together.

Batching. In a round, the cores whose step is the same instruction with the same operands apart from the GM
address (the batch key, the instruction's ``batch_key()``) run as one numpy operation over the cores' stacked local
memories (one ``(cores, bytes)`` array per kind of core and scope; each core's LocalMemory is a row of it):
``batch_effect()`` gives a function of (the stack's rows, their GM addresses) with execute's effect on every row.
Two steps of one round never conflict (the later would wait for the earlier). The hot instructions' batched forms
are in replay_forms.py (reductions, vci, strided DMA, cube loads, mmad, fixpipe); the others give their own. Every
other step runs alone, as in replay.py.
"""
from __future__ import annotations

from functools import partial

import numpy as np

from . import replay_forms
from .granules import granules


def _granule_array(starts, length: int) -> np.ndarray:
    """The 32-B granules of the bursts ``[s, s + length)``, as an int64 array."""
    g = granules(np.asarray(starts), length)
    return np.arange(g.start, g.stop, dtype=np.int64) if isinstance(g, slice) else np.asarray(g, np.int64)


def gm_dependencies(steps: list) -> dict:
    """``{(core, position): [(other core, position), ...]}``: the steps (``(core, position, instruction or None)``
    in the recorded order) of other cores that a step must wait for (see the module docstring)."""
    gs, order, ws = [], [], []
    for i, (c, p, x) in enumerate(steps):
        if x is None:
            continue
        for acc in x.accesses(x.core):
            if acc.scope != "GM":
                continue
            g = np.unique(_granule_array(acc.starts, acc.length))
            gs.append(g)
            order.append(np.full(len(g), i, np.int64))
            ws.append(np.full(len(g), acc.write, bool))
    if not gs:
        return {}
    g, o, w = np.concatenate(gs), np.concatenate(order), np.concatenate(ws)
    s = np.lexsort((o, g))
    g, o, w = g[s], o[s], w[s]
    n = len(g)
    idx = np.arange(n)
    start = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    first = np.repeat(start, np.diff(np.r_[start, n]))  # each entry's granule group: its first index
    last = np.repeat(np.r_[start[1:], n], np.diff(np.r_[start, n]))  # one past its last index
    prev_w = np.r_[-1, np.maximum.accumulate(np.where(w, idx, -1))[:-1]]  # the last write strictly before
    has_prev = prev_w >= first
    nxt = np.where(w, idx, n)
    next_w = np.r_[np.minimum.accumulate(nxt[::-1])[::-1][1:], n]  # the first write strictly after
    has_next = (next_w < last) & ~w
    src = np.r_[o[prev_w[has_prev]], o[idx[has_next]]]  # (waited for, waiting) by recorded order
    dst = np.r_[o[idx[has_prev]], o[next_w[has_next]]]
    core = np.array([c for c, _, _ in steps])
    keep = core[src] != core[dst]
    pairs = np.unique(np.stack([dst[keep], src[keep]], axis=1), axis=0) if keep.any() else np.zeros((0, 2), int)
    deps: dict = {}
    for d, sv in pairs.tolist():
        dc, dp, _ = steps[d]
        sc, sp, _ = steps[sv]
        deps.setdefault((dc, dp), {})
        deps[(dc, dp)][sc] = max(deps[(dc, dp)].get(sc, -1), sp)
    return {k: list(v.items()) for k, v in deps.items()}


def plan(seqs: list[list], kinds: list[str], rows: list[int], deps: dict) -> list:
    """The schedule in rounds: ``seqs[c]`` is core c's steps in its own order, each ``(function, instruction or
    None)``; ``kinds[c]``, ``rows[c]``: its kind and its row in that kind's stacks; ``deps``: gm_dependencies.
    Returns operations ``op(cores, stacks, gm)``, each with ``op.bind(cores, stacks, gm)``: the same as a function
    of nothing (a compiled replay, replay.py)."""
    out = []
    pos = [0] * len(seqs)
    left = sum(len(s) for s in seqs)
    while left:
        ready = [c for c, seq in enumerate(seqs) if pos[c] < len(seq)
                 and all(pos[sc] > sp for sc, sp in deps.get((c, pos[c]), ()))]
        groups: dict = {}
        for c in ready:
            f, x = seqs[c][pos[c]]
            key = replay_forms.batch_key(x) if x is not None else None
            if key is None:
                out.append(_Single(f, c))
            else:
                groups.setdefault((kinds[c], key), []).append((c, x))
        for (kind, _), members in groups.items():
            if len(members) == 1:
                c, x = members[0]
                out.append(_Single(seqs[c][pos[c]][0], c))
            else:
                out.append(_Batch(kind, members, rows))
        for c in ready:
            pos[c] += 1
        left -= len(ready)
    return out


class _Single:
    """A step that runs alone on core ``c``: ``f(core)``."""

    def __init__(self, f, c):
        self.f, self.c = f, c

    def __call__(self, cores, stacks, gm):
        self.f(cores[self.c])

    def bind(self, cores, stacks, gm):
        """A function of nothing with the step's effect on these cores and GM (replay.py: a compiled replay); the
        effect's own ``bind(core)`` when it has one (operand views made once), else ``f`` bound to the core."""
        pre = getattr(self.f, "bind", None)
        run = pre(cores[self.c]) if pre is not None else None
        return run if run is not None else partial(self.f, cores[self.c])


class _Batch:
    """Members of one kind with one batch key: their form over the kind's stacks (``scope`` None: all of them)."""

    def __init__(self, kind, members, rows):
        self.kind = kind
        self.scope, self.g = replay_forms.batch_effect(members[0][1])
        r = np.array([rows[c] for c, _ in members])
        self.sel = slice(int(r[0]), int(r[-1]) + 1) if (np.diff(r) == 1).all() else r
        self.gm_addr = np.array([replay_forms.gm_address(x) for _, x in members], np.int64)

    def __call__(self, cores, stacks, gm):
        self.g(self._mems(stacks), self.sel, gm, self.gm_addr)

    def _mems(self, stacks):
        return stacks[self.kind] if self.scope is None else stacks[self.kind][self.scope]

    def bind(self, cores, stacks, gm):
        """As :meth:`_Single.bind`: the form's own ``bind`` (views of the stacks and of GM made once) when it has
        one and it applies, else the form with its arguments bound."""
        mems, pre = self._mems(stacks), getattr(self.g, "bind", None)
        run = pre(mems, self.sel, gm, self.gm_addr) if pre is not None else None
        return run if run is not None else partial(self.g, mems, self.sel, gm, self.gm_addr)

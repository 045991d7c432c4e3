"""Launch replay across cores at once: the recorded effects of all cores in lock step, identical steps batched.

Legality. The replay must leave GM as the recorded execution order does. Local memories and data registers belong
to one core, so two cores' effects can only interact through GM. :func:`independent` checks the recorded launch's
GM footprint (every op and dma effect's GM accesses, in 32-B granules): when no granule one core writes is read or
written by another core, the cores' effects commute, and any order that keeps each core's own order gives the same
GM — position k of every core, then position k + 1, for instance. Otherwise the replay runs in the recorded order
(replay.py). A replay checks its register-computed GM addresses against the recorded ones (replay.py), so the
footprint it runs with is the one checked here.

Batching. At position k, the cores whose step is the same instruction with the same operands apart from the GM
address (the batch key, the instruction's ``batch_key()``) run as one numpy operation over the cores' stacked local
memories (one ``(cores, bytes)`` array per kind of core and scope; each core's LocalMemory is a row of it):
``batch_effect()`` gives a function of (the stack's rows, their GM addresses) with execute's effect on every row.
The hot instructions' batched forms are in replay_forms.py (reductions, vci, strided DMA, cube loads, mmad,
fixpipe); the others give their own. Every other step runs alone, as in replay.py.
"""
from __future__ import annotations

import numpy as np

from . import replay_forms
from .hazards import _arr, granules


def independent(per_core: list[list]) -> bool:
    """Whether no GM granule written by one core is accessed by another (``per_core``: each core's effect
    instructions, with the core they ran on as ``x.core``). Two passes over the accesses with a granule -> writing
    core table: no sort and no list of every granule (a 4096^3 GEMM's recording reads 50M granules)."""
    def gm_accesses():
        for ci, xs in enumerate(per_core):
            for x in xs:
                for acc in x.accesses(x.core):
                    if acc.scope == "GM":
                        yield ci, acc

    writes = [(ci, _arr(granules(np.asarray(acc.starts), acc.length))) for ci, acc in gm_accesses() if acc.write]
    writes = [(ci, g) for ci, g in writes if len(g)]
    if not writes:
        return True
    owner = np.full(max(int(g.max()) for _, g in writes) + 1, -1, np.int32)
    for ci, g in writes:
        prev = owner[g]
        if ((prev >= 0) & (prev != ci)).any():
            return False
        owner[g] = ci
    for ci, acc in gm_accesses():
        g = _arr(granules(np.asarray(acc.starts), acc.length))
        o = owner[g[g < len(owner)]]
        if ((o >= 0) & (o != ci)).any():
            return False
    return True


def plan(seqs: list[list], kinds: list[str], rows: list[int]) -> list:
    """The lock-step schedule: ``seqs[c]`` is core c's steps in its own order, each ``(function, instruction or
    None)``; ``kinds[c]``, ``rows[c]``: its kind and its row in that kind's stacks. Returns functions
    ``op(cores, stacks, gm)``."""
    out = []
    for k in range(max((len(s) for s in seqs), default=0)):
        groups: dict = {}
        for c, seq in enumerate(seqs):
            if k >= len(seq):
                continue
            f, x = seq[k]
            key = replay_forms.batch_key(x) if x is not None else None
            if key is None:
                out.append(_single(f, c))
                continue
            groups.setdefault((kinds[c], key), []).append((c, x))
        for (kind, _), members in groups.items():
            if len(members) == 1:
                c, x = members[0]
                out.append(_single(seqs[c][k][0], c))
            else:
                out.append(_batch(kind, members, rows))
    return out


def _single(f, c):
    def op(cores, stacks, gm):
        f(cores[c])
    return op


def _batch(kind, members, rows):
    x0 = members[0][1]
    scope, g = replay_forms.batch_effect(x0)
    r = np.array([rows[c] for c, _ in members])
    sel = slice(int(r[0]), int(r[-1]) + 1) if (np.diff(r) == 1).all() else r
    gm_addr = np.array([replay_forms.gm_address(x) for _, x in members], np.int64)

    if scope is None:  # a form over several scopes (replay_forms.py): every stack of the kind
        def op(cores, stacks, gm):
            g(stacks[kind], sel, gm, gm_addr)
    else:
        def op(cores, stacks, gm):
            g(stacks[kind][scope], sel, gm, gm_addr)
    return op

"""The launch's fast path (launch.py): cores whose instruction streams are identical up to GM addresses are
grouped in classes, and the hazard checker looks at the local accesses of one core per class.

Why that is exact. A core's local memories (UB, L1, L0A/B/C) are its own, and the order its accesses are checked
against (hazards.py: pipe order, set/wait flags matched k-th to k-th, the scalar unit's segments, ``pipe_barrier``) is
fixed by its stream, not by the times its pipes run at — as long as no cross-core flag joins another core's clock into
it. Two cores whose streams have the same instructions in the same queues, at the same segments, with the same sync
operands and the same local accesses (scope, direction, bytes, buffer tag) therefore reach the same verdict on every
local access and every buffer tag, whatever their GM addresses and whatever the GM model makes of their timing. GM
accesses, which the cores share, are still checked on every core, and every core is still timed and executed.

What cannot be shared: timing. The GM model serves DDR first come, first served in global start order
(gm_model.py), and a launch on more cores than ``ddr_bpc_chip / l2_read_bpc`` (7 on the 910B1) oversubscribes DDR,
so cores with identical streams finish at different times (the 48-core vector add: 20 distinct end times); L2 hits
depend on which core touched a line first (the GEMM's shared A and B panels). Timing one core per class would move
cycles.

Launches with cross-core flags (MIX kernels, ``cross_set``/``cross_wait``) or operands read from data registers
(``reads_dregs``, bound during timing) take the exact path: which set a cross-core wait matches depends on the order
the sets arrive in, and a bound operand's accesses are not known at issue.
"""
from __future__ import annotations

import os

import numpy as np

ENV_EXACT = "NPU_SIM_EXACT"  # "1": every launch takes the exact path (launch.py)


def exact_forced() -> bool:
    return os.environ.get(ENV_EXACT, "") not in ("", "0")


def representatives(cores) -> set | None:
    """The first core of each class (module docstring), or None when the launch takes the exact path (or has one
    core: nothing to share)."""
    if len(cores) < 2:
        return None
    for c in cores:
        if c.pending:
            return None
        for q in [c.s_items, *c.queues.values()]:
            for x in q:
                if x.KIND in ("xset", "xwait"):
                    return None
    return {cls[0] for cls in classes(cores)}


def classes(cores) -> list[list[int]]:
    """The cores (indices) grouped by stream signature (module docstring), each class in core order."""
    sigs: dict = {}
    memo: dict = {}
    for c in cores:
        sigs.setdefault(_signature(c, memo), []).append(c.index)
    return list(sigs.values())


def _signature(core, memo) -> tuple:
    parts = [core.kind]
    for pipe, q in sorted(core.queues.items()):
        parts.append(pipe)
        parts.extend(_item(x, core, memo) for x in q)
    parts.append("S")
    parts.extend(_item(x, core, memo) + (tuple(sorted(x.need.items())),) for x in core.s_items)
    return tuple(parts)


def _item(x, core, memo) -> tuple:
    """One instruction's part of the signature: its identity, position in the issue order, sync operands and local
    accesses (memoised by its static key: equal keys access the same bytes)."""
    key = x.skey
    local = memo.get(key) if key is not None else None
    if local is None:
        local = tuple((a.scope, a.write, np.asarray(a.starts, np.int64).tobytes(), a.length, a.tag)
                      for a in x.accesses(core) if a.scope != "GM")
        if key is not None:
            memo[key] = local
    sync = (x.src_pipe, x.dst_pipe, x.event) if x.KIND in ("set", "wait") else ()
    return (type(x), x.pc, x.KIND, x.seg) + sync + local

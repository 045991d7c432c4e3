"""Software pipelining of a one-pass row kernel across its work items (two stages).

A row kernel (softmax, a norm: rows reduced whole in UB, one pass) runs a long chain of dependent vector steps per
work item — cast, the reduction's fold levels, the broadcast, … — each paying the vector start-up after a
``pipe_barrier V``. Work items are independent, so the chain of one work item is cut in two *stages* and the
loop runs stage 0 of work item t beside stage 1 of work item t − 1 (codegen interleaves their steps, one barrier
per pair of steps: docs/codegen.md)::

    load tile t0; stage 0 (tile t0)                                  # values[:split]
    for t in range(t0 + block_dim, n_tiles, block_dim):
        load tile t; stage 0 (tile t); stage 1 (tile t − block_dim); store it   # stage 1: values[split:]
    stage 1 (the last tile); store it

The first iteration's stage 0 and the last one's stage 1 are peeled (graph_passes/conversion/pipelined_rows.py).
The values stage 0 writes and stage 1 reads (*carried*) get two copies, selected by the iteration number's parity
(stage 0 the new one, stage 1 the previous one), and so do the loaded and stored buffers (depth 2); the
kernel's scratch has one half per stage. The split balances the two stages' levels (cost.py) and leaves every
result in stage 1 (stores come last).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir.types import TensorType
from .buffers import BufferPlan
from .cost import Estimate, kernel_time, op_estimate
from .kernel_info import KernelInfo


@dataclass
class Stages:
    order: list  # values a work item computes, in the lowering's order
    split: int  # order[:split] is stage 0, order[split:] stage 1
    carried: set  # indices of buffers written in stage 0 and read in stage 1 (two copies)
    first: Estimate  # stage 0's estimate
    second: Estimate  # stage 1's

    @property
    def levels(self) -> int:
        """Levels of one loop iteration (both stages side by side, plus the barrier opening it)."""
        return max(self.first.levels, self.second.levels) + 1


def compute_order(info: KernelInfo, plan: BufferPlan) -> list:
    """The values a one-pass work item computes (not loads, hoisted values or inlined broadcasts), in the order
    convert-to-hivm emits them: depth-first from each result, operands first."""
    out, seen = [], {id(v) for v in plan.hoisted}

    def visit(v):
        if id(v) in seen or not isinstance(v.type, TensorType) or v in info.inputs or v in info.views:
            return
        if v in plan.inlined:  # read in place by its binary users: its source is what they need
            return visit(v.op.operands[0])
        seen.add(id(v))
        op = v.op
        for x in (op.operands[:1] if op.name == "hfusion.reduce" else op.operands):
            visit(x)
        out.append(v)

    for r in info.results:
        visit(r)
    return out


def carried_buffers(info: KernelInfo, plan: BufferPlan, order: list, split: int) -> set:
    """Buffers written in stage 0 (values ``order[:split]`` and the loads) that stage 1 reads."""
    first = {plan.of_value[v].index for v in order[:split]}
    first |= {plan.of_value[v].index for v in list(info.inputs) + list(info.views) if v in plan.of_value}
    read = set()
    for v in order[split:]:
        for x in map(plan.source, v.op.operands):
            if isinstance(x.type, TensorType) and x in plan.of_value:
                read.add(plan.of_value[x].index)
    hoisted = {plan.of_value[v].index for v in plan.hoisted}
    return (first & read) - hoisted


def split_stages(info: KernelInfo, plan: BufferPlan, tile, target, wide: bool = False) -> list[Stages]:
    """The ways to cut a work item in two stages, best first: the most even levels, then the fewest carried bytes.
    Every result is in stage 1, and no loaded or stored buffer is carried (the next load or this store would race
    the other stage). Empty when there is no such cut."""
    order = compute_order(info, plan)
    est = [op_estimate(v.op, plan, tile, target, wide) for v in order]
    first_result = min((order.index(r) for r in info.results if r in order), default=0)
    moved = {b.index for b in plan.buffers if b.loaded or b.stored}
    out = []
    for s in range(1, first_result + 1):
        a, b = sum(est[:s], Estimate()), sum(est[s:], Estimate())
        carried = carried_buffers(info, plan, order, s)
        if carried & moved:
            continue  # stage 0 would refill the copy the previous stage 1 still reads (or stores): a cross-stage flag
        size = sum(plan.buffers[i].nbytes(tile, target.ub_align) for i in carried)
        out.append(((max(a.levels, b.levels), size), Stages(order, s, carried, a, b)))
    return [st for _, st in sorted(out, key=lambda e: e[0])]


def pipelined_ub_bytes(plan: BufferPlan, stages: Stages, tile, ub_align: int, multi_buffer: int, whole,
                       wide: bool = False) -> int:
    """UB of the pipelined kernel: carried buffers twice, per-tile loaded/stored ones twice at multi-buffer depth
    >= 2, the rest once, and a scratch half per stage."""
    copies = {b.index: 2 if b.index in stages.carried else min(2, b.depth(multi_buffer, whole))
              for b in plan.buffers}
    return plan.ub_peak(tile, ub_align, copies, whole, 2 * plan.scratch_bytes(tile, ub_align, wide))


CANDIDATE_ROWS = 8  # row counts tried, from the lockstep tile's down, that fit UB


@dataclass
class Candidate:
    tile: list
    stages: Stages
    wide: bool  # wide row folds (idioms.folds.row_fold_shape)
    io_copies: int  # copies of the loaded and stored buffers
    ub_bytes: int
    time: float  # the estimate (cost.kernel_time)


def pipelined_candidates(info: KernelInfo, plan: BufferPlan, tile, target, multi_buffer: int, step: int, cap_elems,
                         whole_dims) -> list[Candidate]:
    """Pipelined schedules of a static row kernel whose lockstep tile is ``tile``: for row counts from it down (a
    multiple of ``step``, at most ``cap_elems`` elements), the copies of the loaded and stored buffers (two when
    the multi-buffer option asks for them, or one when that lets more rows fit) and the stage cut with the fewest
    levels that fits UB — wide folds first."""
    out, tried = [], 0
    for rows in range(tile[0] - tile[0] % step or step, 0, -step):
        cand = [rows, tile[1]]
        if cap_elems is not None and rows * tile[1] > cap_elems:
            continue
        whole = whole_dims(cand)
        cuts = [(st, wide) for wide in (True, False) for st in split_stages(info, plan, cand, target, wide)]
        found = []
        for io in sorted({min(multi_buffer, 2), 1}, reverse=True):
            fits = [(st, wide, ub) for st, wide in cuts
                    for ub in [pipelined_ub_bytes(plan, st, cand, target.ub_align, io, whole, wide)]
                    if ub <= target.ub_bytes]
            if fits:
                st, wide, ub = min(fits, key=lambda f: (f[0].levels, not f[1]))
                time = kernel_time(info, plan, cand, target, st.first + st.second, st, tail_steps={0: step})
                found.append(Candidate(cand, st, wide, io, ub, time))
        out += found
        tried += bool(found)
        if tried == CANDIDATE_ROWS:
            break
    return out

"""A chosen schedule as the kernel's typed ``schedule`` attribute, and the buffer plan read back from it.

``hfusion-auto-schedule`` records its decisions with :func:`vector_schedule`; ``convert-to-hivm`` rebuilds the
buffer plan it allocates from the attribute with :func:`plan_from_schedule` — the buffers, the values each holds,
their copies and the idioms chosen come from the attribute, never from a second planning run.
"""

from __future__ import annotations

from ..dialects.schedule_attrs import BufferDecl, VectorSchedule, resolve_ref, value_ref
from .buffers import Buffer, BufferPlan
from .kernel_info import KernelInfo, looked_through
from .software_pipeline import carried_buffers, compute_order
from .tiling import Schedule, passes_over_gm


class StaleSchedule(Exception):
    """The schedule names values the kernel's body no longer has (the body changed since it was scheduled)."""


def buffer_copies(info: KernelInfo, plan: BufferPlan, sched, multi_buffer: int, tiling: dict) -> dict:
    """Buffer index -> copies: the multi-buffer depth (or the schedule's own ``io_copies``) for a buffer a DMA fills
    or drains inside the work-item loop, one for the others. An input spanning only dims the tile covers (no
    ``tiles{d}`` parameter) is loaded once, before the loop (convert-to-hivm hoists it): one copy, whether it is
    stored from or not; rows gathered from GM are gathered in the loop, whatever they span. (The tile sizing,
    ``Buffer.depth``, differs in both: it keeps two copies of a stored input and one of whole gathered rows.) A
    software-pipelined kernel doubles the buffers its two stages share and, with a depth above one, its loaded and
    stored ones (pipelined_rows.py)."""
    depth = multi_buffer if sched.io_copies is None else sched.io_copies
    whole = {d for d in range(info.rank) if f"tiles{d}" not in tiling}
    if sched.stages is None:
        return {b.index: 1 if _hoisted_load(info, b, whole) else depth if b.loaded or b.stored else 1
                for b in plan.buffers}
    carried = carried_buffers(info, plan, compute_order(info, plan), sched.stages.split)
    invariant = {b.index for b in plan.buffers if b.loaded and set(b.mask) <= whole}
    io = {b.index for b in plan.buffers if (b.loaded or b.stored) and b.index not in invariant}
    doubled = carried | (io if depth > 1 else set())
    return {b.index: 2 if b.index in doubled else 1 for b in plan.buffers}


def _hoisted_load(info: KernelInfo, b, whole: set) -> bool:
    """Is ``b`` an input's (or an entry view's) buffer that convert-to-hivm loads once, before the work items?"""
    return b.loaded and bool(b.values) and (b.values[0] in info.inputs or b.values[0] in info.views) \
        and set(b.mask) <= whole


def vector_schedule(info: KernelInfo, sched: Schedule, multi_buffer: int, tiling: dict) -> VectorSchedule:
    """The typed attribute of schedule ``sched`` of kernel ``info`` (``tiling``: its host tiling function)."""
    func, plan = info.func, sched.plan
    ref = lambda v: value_ref(v, func)  # noqa: E731
    copies = buffer_copies(info, plan, sched, multi_buffer, tiling)
    partial_of = {id(p): op for op, p in plan.partial.items()}
    buffers = []
    for b in plan.buffers:
        of = partial_of.get(id(b))
        buffers.append(BufferDecl(
            dtype=b.dtype, dims=tuple(b.mask), values=tuple(ref(v) for v in b.values), copies=copies[b.index],
            role=b.role, of=ref(of.result) if of is not None else "", loaded=b.loaded, stored=b.stored,
            fixed=tuple(sorted((int(d), int(n)) for d, n in b.fixed.items())), whole_repeats=b.whole_repeats,
            lanes=tuple(b.lanes)))
    order = {id(op): i for i, op in enumerate(info.ops)}
    by_order = lambda ops: sorted(ops, key=lambda op: order[id(op)])  # noqa: E731
    return VectorSchedule(
        kind=func.attributes.get("fusion_kind", ""), tile=tuple(int(t) for t in sched.tile), ub_bytes=sched.ub_bytes,
        buffers=tuple(buffers), reduce_dims=tuple(info.reduce_dims), reduce_looped=sched.reduce_looped,
        passes=passes_over_gm(info) if sched.reduce_looped else 1, distribution=_distribution(sched, tiling),
        block_dim=sched.block_dim_override, serial_dims=tuple(sched.serial_dims or ()),
        split_dims=tuple(sched.split_dims or ()), scratch_bytes=sched.scratch_bytes,
        stage_split=sched.stages.split if sched.stages is not None else -1,
        # column operands may be read as per-row scalars (idioms.columns.scalar_column)
        scalar_columns=plan.scalar_columns and any(plan.columns(op) for op in info.ops),
        inlined=tuple(ref(v) for v in info_order(info, plan.inlined)),
        hoisted=tuple(ref(v) for v in plan.hoisted),
        in_place_folds=tuple(ref(op.result) for op in by_order(plan.in_place)),
        block_folds=tuple(ref(op.result) for op in by_order(plan.blocks)))


def _distribution(sched: Schedule, tiling: dict) -> str:
    """How work items go to cores: the last round spread over every core (tail.py), one core unless the launch's
    slabs are whole GM blocks (launch_alignment.py), or cyclic."""
    if "tail_full" in tiling:
        return "cyclic-balanced-tail"
    return "cyclic-if-aligned" if sched.launch_checks else "cyclic"


def info_order(info: KernelInfo, values) -> list:
    """``values`` (body values) in body order."""
    values = set(values)
    return [op.result for op in info.ops if op.results and op.result in values]


def plan_from_schedule(info: KernelInfo, schedule: VectorSchedule) -> BufferPlan:
    """The buffer plan ``schedule`` records, over the values of ``info``'s body."""
    func = info.func

    def value(ref: str):
        v = resolve_ref(ref, func)
        if v is None:
            raise StaleSchedule(f"the schedule names '{ref}', which @{func.sym_name}'s body does not have")
        return v

    buffers, of_value, partial = [], {}, {}
    for i, decl in enumerate(schedule.buffers):
        b = Buffer(i, decl.dtype, tuple(decl.dims), loaded=decl.loaded, stored=decl.stored,
                   values=[value(r) for r in decl.values], role=decl.role, fixed=dict(decl.fixed),
                   whole_repeats=decl.whole_repeats, lanes=tuple(decl.lanes))
        buffers.append(b)
        for v in b.values:
            of_value[v] = b
        if decl.role == "partial":
            partial[value(decl.of).op] = b
    inlined = {value(r) for r in schedule.inlined}
    ops = [op for op in info.ops
           if op.name != "arith.constant" and not looked_through(op) and op.result not in inlined]
    plan = BufferPlan(buffers, of_value, partial, ops, inlined, [value(r) for r in schedule.hoisted],
                      dict(info.row_gathers), {value(r).op for r in schedule.in_place_folds},
                      {value(r).op for r in schedule.block_folds})
    plan.scalar_columns = schedule.scalar_columns
    return plan

"""The loop body of a software-pipelined kernel (docs/schedule.md): its two stages' vector steps interleaved,
one ``pipe_barrier V`` per pair of steps.

The body holds stage 0 of work item t and stage 1 of work item t − block_dim (ops tagged ``stage``), which touch
different buffers (carried values have a copy per stage) and different halves of the scratch. Each stage is
emitted on its own, then cut into *levels* at its top-level vector barriers (inject-sync's between dependent ops,
and the ones inside an op's idiom); the program runs level i of both stages between two barriers::

    (the body's other ops: iteration number, copy selects)
    pipe_barrier V                           # orders this iteration after the previous one
    stage 1 level 0;  stage 0 level 0
    pipe_barrier V
    stage 1 level 1;  stage 0 level 1
    …

Every step of a stage still follows its predecessors' barrier, so each stage runs in its own order; the two
stages' steps share start-ups. Stage 1 goes first in a level: stage 0's first level waits for the tile load.
A sync op belongs to the stage of the op it orders: a ``set_flag`` to the op before it, a ``wait_flag`` or barrier
to the op after it.
"""

from __future__ import annotations

from simulator.isa.sync import PipeBarrier
from simulator.program import walk

from .errors import CodegenError

SYNC_BEFORE = ("hivm.wait_flag", "hivm.pipe_barrier")  # order the op after them


def is_pipelined(block) -> bool:
    return any("stage" in op.attributes for op in block.ops)


def _stages(block) -> list:
    """The stage (0, 1) of each op of the body, None for the ops emitted before both stages."""
    ops = block.ops
    out = [op.attributes.get("stage") for op in ops]
    for i, op in enumerate(ops):
        if out[i] is not None:
            continue
        if op.name == "hivm.set_flag":
            out[i] = next((out[j] for j in range(i - 1, -1, -1) if "stage" in ops[j].attributes), None)
        elif op.name in SYNC_BEFORE:
            out[i] = next((ops[j].attributes["stage"] for j in range(i + 1, len(ops)) if "stage" in ops[j].attributes),
                          None)
    return out


def _levels(items: list) -> tuple[list[list], list]:
    """Items cut at their top-level V (or ALL) barriers: the levels, and the barrier after each but the last. A
    level with no vector op (flags, DMAs, scalar moves: the barrier before it, or the one opening the loop body,
    already orders it) joins the next when a V barrier separates them: two barriers in a row — a reduction's
    closing one and inject-sync's before the next op, with a set_flag between — or a first level holding only the
    tile load's wait would otherwise pair the other stage's step with nothing and cost a level."""
    levels, seps = [[]], []
    for it in items:
        if isinstance(it, PipeBarrier) and it.barrier_pipe in ("V", "ALL"):
            seps.append(it)
            levels.append([])
        else:
            levels[-1].append(it)
    i = 0
    while i < len(seps):
        if seps[i].barrier_pipe == "V" and not any(ins.pipe == "V" and ins.KIND == "op" for ins in walk(levels[i])):
            levels[i:i + 2] = [levels[i] + levels[i + 1]]
            seps.pop(i)
        else:
            i += 1
    return levels, seps


def _flag_ids(ops) -> set:
    """(src pipe, dst pipe, event id) of every id the flag ops among ``ops`` may use."""
    return {(op.attributes["src_pipe"], op.attributes["dst_pipe"], i) for op in ops
            if op.name in ("hivm.set_flag", "hivm.wait_flag") for i in op.attributes["event_ids"]}


def emit_pipelined_body(state, loop, block) -> None:
    stage_of = _stages(block)
    shared = _flag_ids([op for op, s in zip(block.ops, stage_of) if s == 0]) & \
        _flag_ids([op for op, s in zip(block.ops, stage_of) if s == 1])
    if shared:
        raise CodegenError(loop, f"the two stages of a pipelined loop share flag ids {sorted(shared)}: interleaving "
                                 "their steps would reorder their sets and waits")
    for op, s in zip(block.ops, stage_of):
        if s is None and op.name in ("hivm.set_flag", "hivm.wait_flag", "hivm.pipe_barrier"):
            raise CodegenError(op, "a sync op of a pipelined loop body orders no op of either stage")
        if s is None:
            state.op(op)
    whole = state.scratch_region
    captured = []
    for s in (0, 1):
        if whole is not None:
            state.scratch_region = (whole[0] + s * whole[1], whole[1])
        state.b._stack.append([])
        state.b.scratch_dirty = True
        try:
            for op, st in zip(block.ops, stage_of):
                if st == s:
                    state.op(op)
        finally:
            captured.append(state.b._stack.pop())
    state.scratch_region = whole
    (lv0, sep0), (lv1, sep1) = _levels(captured[0]), _levels(captured[1])
    state.b.pipe_barrier("V")
    for i in range(max(len(lv0), len(lv1))):
        if i:
            seps = [sep[i - 1] for sep in (sep0, sep1) if i - 1 < len(sep)]
            state.b.pipe_barrier("ALL" if any(b.barrier_pipe == "ALL" for b in seps) else "V")
        for lv in (lv1, lv0):
            for it in lv[i] if i < len(lv) else ():
                state.b.emit(it)
    state.b.scratch_dirty = True


"""The work items of a software-pipelined row kernel (graph_passes/schedule/software_pipeline.py), prologue and epilogue
peeled so that every op of the loop runs in every iteration::

    stage 0 of work item bid                        (copies a: load into x_a, carried values into c_a)
    scf.for %t = %bid + %block_dim to %n_tiles step %block_dim {
      %k = (t - (bid + block_dim)) floordiv block_dim
      %c_new = hivm.multi_buffer_select %k, %c_b, %c_a   # stage 0 writes the copy the previous iteration did not
      %c_old = hivm.multi_buffer_select %k, %c_a, %c_b   # stage 1 reads the one it wrote
      stage 0 of work item t                           (ops tagged stage = 0)
      stage 1 of work item t - block_dim                (ops tagged stage = 1)
    }
    %m = (n_tiles - 1 - bid) floordiv block_dim        # iterations the loop ran
    stage 1 of work item bid + m * block_dim          (copies hivm.multi_buffer_select %m, a, b)

Buffers with two copies: the carried ones (written in stage 0, read in stage 1) and, at multi-buffer depth >= 2,
the loaded and stored ones (the next load and the previous store overlap the compute). hivm-inject-sync orders
everything as written; codegen interleaves the two stages' vector steps inside the loop (docs/codegen.md).
"""

from __future__ import annotations

from ..dialects import hivm
from ..ir.types import MemRefType
from ..schedule.software_pipeline import compute_order


class Pipelined:
    def __init__(self, lowering, copies: dict):
        self.lowering = lowering
        self.order = compute_order(lowering.info, lowering.plan)
        self.split = lowering.stage_split
        self.doubled = {i for i, n in copies.items() if n == 2}  # the schedule's two copies: rotated here
        self.copies: dict = {}  # buffer index -> (copy a, copy b)

    def alloc_copies(self, buf, shape) -> None:
        """The two copies of a buffer the schedule doubles (two allocs, so not multi-buffered again)."""
        pair = []
        for tag in ("a", "b"):
            alloc = self.lowering.op(hivm.AllocOp, [], [MemRefType(tuple(shape), buf.dtype)])
            alloc.result.name_hint = f"ub{buf.index}_{tag}"
            pair.append(alloc.result)
        self.copies[buf.index] = tuple(pair)

    def _selects(self, counter, first: int, hint: str) -> dict:
        """``multi_buffer_select counter`` over each pair, copy ``first`` at counter 0."""
        out = {}
        for i, pair in self.copies.items():
            sel = self.lowering.op(hivm.MultiBufferSelectOp, [counter, pair[first], pair[1 - first]], [pair[0].type])
            sel.result.name_hint = f"ub{i}_{hint}"
            out[i] = sel.result
        return out

    def _stage(self, s: int, tile, bufs: dict) -> None:
        """Stage ``s`` of work item ``tile`` with the copies ``bufs``."""
        lowering, info = self.lowering, self.lowering.info
        lowering.dims = {0: lowering.tile_of(0, tile), 1: (lowering.const(0), lowering.params["n1"])}
        lowering.stage_bufs = bufs
        if s == 0:
            lowering.ready = set(lowering.hoisted)
            lowering.load_stage(self.order[: self.split])  # stage 1 reads no per-tile load (none is carried)
            for v in self.order[: self.split]:
                lowering.emit(v)
            self.done = set(lowering.ready)
            return
        lowering.ready = self.done | lowering.hoisted
        for out, res in zip(info.outputs, info.results):
            lowering.emit(res)
            lowering.store(res, out)

    def _first_stage_reads_invariants(self) -> bool:
        """Whether stage 0 reads a loop-invariant load or a hoisted value (through an inlined broadcast too)."""
        lowering, info = self.lowering, self.lowering.info
        early = set(map(id, lowering.plan.hoisted)) | {id(v) for v in list(info.inputs) + list(info.views)
                                                       if v in info.masks and lowering.invariant(v)}
        for v in self.order[: self.split]:
            for x in map(lowering.plan.source, v.op.operands):
                if id(x) in early:
                    return True
        return False

    def loop(self, bid) -> None:
        lowering = self.lowering
        n_tiles, step = lowering.params["n_tiles"], lowering.params["block_dim"]
        first = {i: pair[0] for i, pair in self.copies.items()}
        # Note: the loop-invariant loads (a norm's weight) go after the first work item's stage 0 when it does not
        # read them: its load is then the core's first DMA and its compute does not wait for theirs.
        late = not self._first_stage_reads_invariants()
        if not late:
            lowering.hoist_invariant_loads()
        self._stage(0, bid, first)
        if late:
            saved = lowering.dims
            lowering.hoist_invariant_loads()
            lowering.dims = saved

        start = lowering.arith("addi", bid, step, "t_start")
        loop = lowering.open_loop(start, n_tiles, step, "t")
        t = loop.body.args[0]
        k = lowering.arith("floordivsi", lowering.arith("subi", t, start), step, "k")
        new, old = self._selects(k, 1, "new"), self._selects(k, 0, "old")
        lowering.stage_tag = 0
        self._stage(0, t, new)
        lowering.stage_tag = 1
        self._stage(1, lowering.arith("subi", t, step, "t_prev"), old)
        lowering.stage_tag = None
        lowering.close_loop(loop)

        last_tile = lowering.arith("subi", n_tiles, lowering.const(1))
        m = lowering.arith("floordivsi", lowering.arith("subi", last_tile, bid), step, "m")
        last = lowering.arith("addi", bid, lowering.arith("muli", m, step), "t_last")
        self._stage(1, last, self._selects(m, 0, "last"))
        lowering.stage_bufs = {}

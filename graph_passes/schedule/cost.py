"""Estimated cost of a vector kernel's work items, used to choose between schedules (graph_passes/schedule/tiling.py).

An estimate, not a simulation: per op, the vector repeats its instructions take (``codegen`` emits one repeat per
256 B of a row, ``lanes`` = 256 B / the widest element) times the cycles of its instruction class, and the number
of *levels* — dependent steps, each separated from the previous by a ``pipe_barrier V`` and paying the vector
start-up (head + tail) again. The figures are the target's (``TargetSpec.vector_repeat_cycles``,
``vector_startup_cycles``: the same cited numbers the simulator's presets use)::

    elementwise op       rows · ceil(cols / lanes) repeats × class cycles, 1 level
                         (+ 1 level and a vbrcb per 8 rows for a column operand read in place; a column read as
                         one scalar per row — idioms.columns.scalar_column — makes the op a vector-scalar one)
    last-dim reduction   rows of whole repeats fold block by block (idioms.folds.block_fold_lengths): one block repeat
                         per 256 B of each level, a level per step, then one reduce repeat per row (or the
                         pairwise fold of what is left); other rows of more than one repeat fold their chunks
                         into K partials (row_fold_shape), halve
                         them to one and reduce it: (chunks − 1) binary repeats + 1 reduce repeat per row,
                         1 + ceil((chunks − 2K) / K) + log2(K) + 1 levels; folded in the source's own
                         buffer (buffers.in_place_folds): ceil(log2(chunks)) + 1 levels
    math sequence        (erf, gelu_erf, sin, cos: codegen/math_ops.py) its instructions' repeats × class cycles,
                         its dependent steps (``SEQUENCES``; f16: a cast in and out more)

A work item of ``L`` levels and ``W`` repeat cycles takes about ``W + L × start-up`` on the vector pipe.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..idioms.columns import scalar_column
from ..idioms.folds import block_fold_levels, block_fold_lengths, block_fold_rows, in_place_fold_levels, row_fold_shape
from ..idioms.limits import REPEAT_BYTES
from ..intmath import ceil_div
from ..ir.sizes import as_expr
from ..ir.types import DTYPE_BYTES, TensorType
from .buffers import BufferPlan
from .tail import row_tail

TRANSCENDENTAL = ("exp", "log", "sqrt", "rsqrt", "reciprocal")
COMPOSITE_STEPS = {"sigmoid": 4, "tanh": 6, "silu": 5, "gelu_tanh": 15, "floor": 1, "ceil": 1,
                   "trunc": 1}
# codegen.math_ops' f32 sequences: instructions by class, dependent steps (f16 adds a cast in and out)
SEQUENCES = {"erf": ({"scalar": 15, "binary": 10, "div_f32": 1}, 16),
             "gelu_erf": ({"scalar": 19, "binary": 12, "div_f32": 1}, 20),
             "sin": ({"scalar": 14, "binary": 13, "cast": 2}, 29),
             "cos": ({"scalar": 17, "binary": 13, "cast": 2}, 32)}
# f16 sequences other than the f32 one plus the casts: gelu_erf without the x + x·0 that makes f32's gelu(+inf) NaN
F16_SEQUENCES = {"gelu_erf": ({"scalar": 18, "binary": 11, "div_f32": 1}, 20)}


@dataclass
class Estimate:
    cycles: float = 0.0  # vector repeat cycles
    levels: int = 0  # dependent steps (each pays the vector start-up)

    def __add__(self, other: "Estimate") -> "Estimate":
        return Estimate(self.cycles + other.cycles, self.levels + other.levels)

    def time(self, target) -> float:
        """Vector pipe cycles: the repeats plus one start-up per level."""
        return self.cycles + self.levels * target.vector_startup_cycles


def _rows_cols(shape) -> tuple[int, int]:
    return (math.prod(shape[:-1]), shape[-1]) if shape else (1, 1)  # a rank-0 value: one element


def op_estimate(op, plan: BufferPlan, tile, target, wide: bool = False) -> Estimate:
    """The vector cost of computing ``op`` over one work item of ``tile`` (see the module docstring)."""
    align = target.ub_align
    v = op.result
    buf = plan.of_value.get(v)
    if buf is None:
        return Estimate()
    tensors = [x for x in op.operands if isinstance(x.type, TensorType)] + [v]
    widest = max(DTYPE_BYTES[x.type.dtype] for x in tensors)
    lanes = REPEAT_BYTES // widest
    name, fun = op.name, op.attributes.get("fun")
    cyc = lambda cls: target.repeat_cycles(cls)  # noqa: E731
    if name == "hfusion.reduce":
        src = plan.of_value[op.operands[0]]
        rows, cols = _rows_cols(src.shape(tile, align))
        chunks = ceil_div(cols, REPEAT_BYTES // DTYPE_BYTES[src.dtype])
        dims = [src.mask[i] for i in op.attributes["dims"]]
        if dims != [len(tile) - 1] or chunks <= 1:
            return Estimate(rows * chunks * cyc("binary"), 2)
        lengths = block_fold_lengths(cols, DTYPE_BYTES[src.dtype]) if op in plan.blocks else []
        if lengths:
            return _block_fold_estimate(rows, lengths, DTYPE_BYTES[src.dtype], op in plan.in_place, cyc)
        work = rows * ((chunks - 1) * cyc("binary") + cyc("reduce"))
        if op in plan.in_place:
            return Estimate(work, in_place_fold_levels(rows, chunks))
        g, k = row_fold_shape(rows, chunks, wide)
        levels = 1 + ceil_div(max(0, chunks - 2 * k), k) + int(math.log2(k)) + 1
        return Estimate(work, levels * ceil_div(rows, g))
    rows, cols = _rows_cols(buf.shape(tile, align))
    reps = rows * ceil_div(cols, lanes)
    if name == "hfusion.elemwise_unary":
        if fun in TRANSCENDENTAL:
            return Estimate(reps * cyc("transcendental"), 1)
        if fun in SEQUENCES:
            f16 = 2 if v.type.dtype == "f16" else 0
            classes, levels = F16_SEQUENCES.get(fun, SEQUENCES[fun]) if f16 else SEQUENCES[fun]
            per = sum(n * cyc(c) for c, n in classes.items()) + f16 * cyc("cast")
            return Estimate(reps * per, levels + f16)
        steps = COMPOSITE_STEPS.get(fun, 1)
        return Estimate(reps * steps * cyc("binary"), steps)
    if name == "hfusion.elemwise_binary":
        scalar = any(not isinstance(x.type, TensorType) for x in op.operands)
        column = plan.columns(op)
        cls = ("div_f16" if v.type.dtype == "f16" else "div_f32") if fun == "div" else \
            ("scalar" if scalar else "binary")
        if column and plan.scalar_columns and scalar_column(fun, op.operands[0] is column[0], v.type.dtype, rows,
                                                            cols):
            return Estimate(reps * cyc("scalar"), 1)  # one scalar per row: the vector-scalar instruction
        if column:  # vbrcb the column into scratch (8 rows per repeat), then the op reads it in place
            return Estimate(reps * cyc(cls) + ceil_div(rows, 8) * cyc("scalar"), 2)
        return Estimate(reps * cyc(cls), 1)
    if name == "hfusion.elemwise_ternary":
        return Estimate(2 * reps * cyc("binary"), 2)
    if name == "hfusion.cast":
        return Estimate(reps * cyc("cast"), 1)
    if name in ("hfusion.broadcast", "hfusion.fill", "hfusion.arange"):
        return Estimate(reps * cyc("scalar"), 2 if name == "hfusion.broadcast" else 1)
    return Estimate(reps * cyc("binary"), 1)


def _block_fold_estimate(rows: int, lengths: list, es: int, in_place: bool, cyc) -> Estimate:
    """A block fold (idioms.folds.block_fold_lengths) of ``rows`` rows, block_fold_rows of them at a time: one block
    repeat per 256 B of every level, then a per-repeat reduction per row or the pairwise fold of what is left."""
    lanes = REPEAT_BYTES // es
    work = rows * sum(m // lanes for m in lengths[:-1]) * cyc("block_reduce")
    left = ceil_div(lengths[-1], lanes)
    work += rows * ((left - 1) * cyc("binary") + cyc("reduce"))
    groups = ceil_div(rows, max(1, block_fold_rows(rows, lengths, es, in_place)))
    return Estimate(work, block_fold_levels(lengths, es) * groups)


def values_estimate(values, plan: BufferPlan, tile, target, wide: bool = False) -> Estimate:
    """The summed estimate of computing ``values`` (tensor values of the body) in one work item."""
    total = Estimate()
    for v in values:
        total = total + op_estimate(v.op, plan, tile, target, wide)
    return total


def kernel_time(info, plan: BufferPlan, tile, target, work: Estimate, stages=None, first_in=None,
                tail_steps: dict | None = None) -> float:
    """Estimated cycles of a static-shape kernel on its busiest core: the first work item's load (the cores with
    the most work items load first, sharing DDR), the work items — their vector time, or their share of DDR when
    every core streams if that is longer — and the last store. ``stages`` (pipeline.Stages): the software-
    pipelined loop, whose iterations run one work item's stage 0 beside the previous one's stage 1. The
    loaded and stored buffers' copies do not change the estimate: with one copy, a work item's load still overlaps
    the previous one's compute after its first reader, its store the next one's before its last writer.
    ``first_in``: the loaded buffers the first vector op waits for (hivm-inject-sync's first flag: those it
    reads), when not all of them; the others land while it computes. ``tail_steps`` (the whole-GM-block step of
    each parallel dim): a row kernel's last round is spread over every core (tail.py), its last work items a
    share of a tile (their repeats and store); the cores with the largest one load first, the others after
    every core's first load, so the later of the two kinds of core."""
    n_tiles = 1
    for d in info.parallel_dims:
        n_tiles *= ceil_div(int(info.domain[d]), int(tile[d]))
    cores = min(target.vector_cores, n_tiles)
    whole = _whole(info, tile)
    align = target.ub_align
    bytes_in, bytes_out = _item_bytes(plan, tile, align, whole)
    ddr = target.ddr_bytes_per_cycle
    dma = (bytes_in + bytes_out) * cores / ddr
    waited = bytes_in if first_in is None else sum(b.nbytes(tile, align) for b in first_in if not set(b.mask) <= whole)

    def core_time(items: int, first_loads: int, last: float) -> float:
        """A core with ``items`` work items, the last ``last`` of a tile, whose first load is ``first_loads``-th."""
        fill, drain = first_loads * waited / ddr, last * bytes_out / target.ub_to_gm_bytes_per_cycle
        if stages is None:
            return fill + (items - 1) * max(work.time(target), dma) + \
                max(work.time(target) - (1 - last) * work.cycles, last * dma) + drain
        a, b = stages.first, stages.second
        body = a.cycles + b.cycles + stages.levels * target.vector_startup_cycles
        vector = a.time(target) + (items - 1) * body + b.time(target) - (1 - last) * (a.cycles + b.cycles)
        return fill + max(vector, (items - 1 + last) * dma) + drain

    tail = row_tail(info, tile, cores, tail_steps) if tail_steps is not None else None
    if tail is None:
        per_core = ceil_div(n_tiles, cores)
        return core_time(per_core, n_tiles - (per_core - 1) * cores, 1.0)
    rounds = tail.full_items // cores
    times = [core_time(rounds + 1, tail.heavy_cores, tail.heavy_rows / tail.tile)]
    if tail.extra:  # the other last-round work items: one unit less
        times.append(core_time(rounds + 1, cores, tail.unit * tail.per_item / tail.tile))
    if tail.tail_items < cores:  # cores without a last-round work item
        times.append(core_time(rounds, cores, 1.0))
    return max(times)


def _whole(info, tile) -> set:
    """The dims a tile covers whole (for sizes the schedule knows)."""
    return {d for d in range(info.rank) if as_expr(info.domain[d]).is_Integer and int(tile[d]) >= int(info.domain[d])}


def _item_bytes(plan: BufferPlan, tile, align: int, whole: set) -> tuple[int, int]:
    """Bytes a work item loads (buffers that vary with it: not those of dims covered whole) and stores."""
    bytes_in = sum(b.nbytes(tile, align) for b in plan.buffers if b.loaded and not set(b.mask) <= whole)
    return bytes_in, sum(b.nbytes(tile, align) for b in plan.buffers if b.stored)


def streams_ddr(info, plan: BufferPlan, tile, target, work: Estimate) -> bool:
    """Does a work item take longer to stream through DDR — its bytes at its core's share of the chip's DDR rate
    when every core streams (all vector cores unless the sizes give fewer work items) — than to compute
    (``work``: its vector estimate, or a pipelined iteration's)?"""
    n_tiles = 1
    for d in info.parallel_dims:
        n = as_expr(info.domain[d])
        n_tiles = n_tiles * ceil_div(int(n), int(tile[d])) if n.is_Integer and n_tiles else 0
    cores = min(target.vector_cores, n_tiles) if n_tiles else target.vector_cores
    bytes_in, bytes_out = _item_bytes(plan, tile, target.ub_align, _whole(info, tile))
    return (bytes_in + bytes_out) * cores / target.ddr_bytes_per_cycle > work.time(target)

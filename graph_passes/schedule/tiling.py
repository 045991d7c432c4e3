"""Tile sizes, work split and tiling parameters of a vector kernel (``hfusion-auto-schedule``'s decisions).

Tile sizes are static and capacity-driven: every live UB buffer × its multi-buffer depth fits the target's UB
(:mod:`.buffers` counts them). Trip counts, the block dim and the valid extents are size expressions over the
shape symbols, recorded in the kernel's ``tiling`` attribute, so one compiled kernel serves every size.

Choosing the tile (``choose_tile``), dims from the innermost outwards::

    for d in (last dim … dim 0):            # innermost first: GM rows stay contiguous
        t[d] = the largest size <= the dim's upper bound with ub_bytes(t) <= UB and prod(t) <= max-tile-elems
        (a last dim not covered whole is rounded down to whole 256 B vector repeats, else 32 B granules)

A *requested* tile (``tile-elems`` > 0) is honoured exactly: the same walk, but bounded only by the request (the
product of the tile's sizes <= tile-elems, the last dim rounded as above) and not by UB, and no balancing — when
its buffers × depth exceed UB, ``hivm-plan-memory`` overflows and the compile driver's retry ladder walks (fewer
multi-buffers, then halved requests; docs/memory-and-sync.md).

Otherwise, for static shapes, the parallel dims are shrunk (outermost first) until there are at least
``vector_cores`` work items, so that every core gets work (the last dim down to 32 B); kernels that reduce a
non-last dim cap the last dim at ``NON_LAST_REDUCE_INNER`` elements (one vector repeat when it is split per
launch), leaving room for many rows of the reduced dim
in one tile, and narrow it further (halving, down to 32 B) when that lets the reduced dims be covered whole (one
pass) instead of tiled (multi-pass).

Tiling parameters (``tiling`` attribute, name → size expression)::

    n{d}        size of domain dim d
    tiles{d}    ceiling(n{d} / tile[d])         (only for dims whose tile may not cover the dim)
    step{d}     a dim split per launch (symbolic columns of a non-last reduction or an elementwise kernel,
                symbolic rows: ``_split_dims``): the work items' step, Min(tile[d], granules spread over the
                cores) — 32 B of columns, or the rows whose bytes are whole blocks at the launch's sizes
                (``launch_gm_step``); tiles{d} = ceiling(n{d} / step{d})
    off{a}_{i}  symbolic offset of a slice of argument a along its dim i
    n_tiles     prod of tiles{d} over the parallel (non-reduced) dims: the work items
    tail_full, tail_unit, tail_units, tail_extra
                a row kernel's last round spread over every core (tail.py): n_tiles = tail_full + its work items
    block_dim   Min(vector_cores or the block-dim option, n_tiles); for a multi-pass kernel whose slabs only the
                launch sees, that when they are whole 32-B blocks and 1 otherwise (launch_alignment.py)
"""

from __future__ import annotations

from dataclasses import dataclass

import math

import sympy

from ..dialects.hivm import SCALAR_LOOP_DTYPES
from ..intmath import align_up, ceil_div, prod
from ..ir.sizes import SizeVars, as_expr
from ..ir.types import DTYPE_BYTES
from .balance import fastest_split
from .buffers import BufferPlan, plan_buffers
from .cost import kernel_time, streams_ddr, values_estimate
from .launch_alignment import launch_block_dim, launch_step, rows_for_whole_blocks
from .movement_split import with_size
from .kernel_info import KernelInfo
from .software_pipeline import Stages, compute_order, pipelined_candidates
from .tail import row_tail

NON_LAST_REDUCE_INNER = 512  # last-dim tile cap (elements) when a non-last dim is reduced


class ScheduleError(Exception):
    """No tile fits (too many buffers for UB even with one element each)."""


@dataclass
class Schedule:
    tile: list[int]
    reduce_looped: bool  # the reduced dims are tiled: multi-pass with partial reductions
    plan: BufferPlan
    ub_bytes: int
    tiling: dict  # name -> size expression
    block_dim_override: int = 0
    scratch_bytes: int = 0  # the kernel's scratch buffer (part of ub_bytes)
    serial_dims: list = None  # parallel dims whose tiles are looped inside a work item (not work items)
    stages: Stages | None = None  # software-pipelined work items (software_pipeline.py); the scratch has a part per stage
    wide: bool = False  # the scratch is sized for wide row folds (idioms.folds.row_fold_shape)
    io_copies: int | None = None  # copies of the loaded/stored buffers when not the multi-buffer option's
    split_dims: list = None  # symbolic parallel dims whose work-item step is chosen per launch (step{d} <= tile)
    # (bytes, dim) whose alignment to whole blocks only the launch knows: every core when they are whole blocks
    # or the dim has one tile, one core otherwise (:func:`_shared_blocks`, launch_alignment.py)
    launch_checks: list = None


def _granule(info: KernelInfo, ub_align: int) -> int:
    """Elements per 32 B for the narrowest dtype of the kernel: the last-dim tile is a multiple of it."""
    smallest = min((DTYPE_BYTES[v.type.dtype] for v in info.masks), default=4)
    return max(1, ub_align // smallest)


def choose_tile(info: KernelInfo, sizes: SizeVars, target, multi_buffer: int, max_tile_elems: int = 0,
                tile_elems: int = 0, row_pipeline: bool = True) -> Schedule:
    sched = _choose_tile(info, sizes, target, multi_buffer, max_tile_elems, tile_elems, row_pipeline)
    if any(sched.plan.columns(op) for op in info.ops):
        # Note: reading a column operand as per-row scalars holds the scalar unit — and the issue of the next
        # tile's load — until the vector pipe has computed the column: only where the vector pipe bounds the work.
        st = sched.stages
        work = st.first + st.second if st is not None else \
            values_estimate(compute_order(info, sched.plan), sched.plan, sched.tile, target, sched.wide)
        sched.plan.scalar_columns = not streams_ddr(info, sched.plan, sched.tile, target, work)
    return sched


@dataclass(frozen=True)
class _Walk:
    """The context of the tile walk of one kernel: the dims' upper bounds (None: unbounded), the last dim's rounding
    (``granule``: 32 B, ``repeat``: a vector repeat of the narrowest dtype), the cap on the tile's elements
    (``cap_elems``, None: none), whether a requested tile bounds it instead of UB, and the work-item steps of the
    split dims, strict (one-pass) and at the launch (multi-pass; ``launch_rows``: the rows the launch checks)."""

    info: KernelInfo
    target: object
    multi_buffer: int
    uppers: tuple
    granule: int
    repeat: int
    cap_elems: int | None
    requested: bool
    strict_steps: dict
    launch_steps: dict
    launch_rows: list

    def gm_steps(self, looped: bool) -> dict:
        return self.launch_steps if looped else self.strict_steps

    def fits(self, tile, looped: bool) -> bool:
        if self.cap_elems is not None and prod(tile) > self.cap_elems:
            return False
        if self.requested:
            return True
        plan = plan_buffers(self.info, looped)
        whole = _whole_dims(tile, self.uppers)
        return plan.ub_bytes(tile, self.target.ub_align, self.multi_buffer, whole) <= self.target.ub_bytes

    def grow(self, tile, d: int, limit: int, looped: bool) -> int:
        """Largest t in [1, limit] with fits(tile with t at d); binary search (fits is monotone in t)."""
        lo, hi = 1, limit
        # Note: covering the dim may make loads invariant (single copies)
        if self.fits(with_size(tile, d, limit), looped):
            return limit
        if not self.fits(with_size(tile, d, 1), looped):
            return 0
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.fits(with_size(tile, d, mid), looped):
                lo = mid
            else:
                hi = mid - 1
        return lo

    def walk(self, looped: bool, inner: int):
        """The tile, dims from the innermost outwards (the last dim at most ``inner`` elements when a non-last dim
        is reduced); None when a reduced dim must be covered whole (one pass) and is not."""
        info, rank = self.info, self.info.rank
        tile = [1] * rank
        for d in reversed(range(rank)):
            limit = self.uppers[d] if self.uppers[d] is not None else 2**31
            if info.reduce_dims and d == rank - 1 and d not in info.reduce_dims:
                limit = min(limit, inner)
            t = self.grow(tile, d, limit, looped)
            if t == 0:
                return None
            covers = self.uppers[d] is not None and t >= self.uppers[d]
            if d in info.reduce_dims and not looped and not covers:
                return None
            if not covers and d == rank - 1:
                t = self.round_last(t)
            elif not covers and self.gm_steps(looped).get(d, 1) > 1:
                t = self.step_rows(tile, d, t, looped)
                if t is None:
                    return None
            tile[d] = t
        return tile

    def round_last(self, t: int) -> int:
        """A last-dim tile not covering the dim: whole 256 B vector repeats when it can, else 32 B granules."""
        step = self.repeat if t >= self.repeat else self.granule
        return max(t // step * step, min(t, self.granule))

    def step_rows(self, tile, d: int, t: int, looped: bool) -> int | None:
        """tile[d] of a dim split in whole-GM-block steps (:func:`_whole_gm_blocks`); None when fewer than a step
        fit in a one-pass kernel reducing the last dim."""
        step = self.gm_steps(looped)[d]
        if t < step and not looped and self.info.rank - 1 in self.info.reduce_dims:
            # Note: fewer than a whole-block step of rows fit with the reduced last dim whole; shrinking it would
            # tile a reduced dim in a one-pass schedule (loads of whole rows into a narrower buffer): only the
            # multi-pass schedule may tile it.
            return None
        return _whole_gm_blocks(self, tile, d, t, step, looped)


def _choose_tile(info: KernelInfo, sizes: SizeVars, target, multi_buffer: int, max_tile_elems: int = 0,
                 tile_elems: int = 0, row_pipeline: bool = True) -> Schedule:
    w = _walk_context(info, sizes, target, multi_buffer, max_tile_elems, tile_elems)
    split = _split_dims(info, w.requested, target.ub_align)
    tile, looped = _first_fitting_tile(w, split)
    serial = _serial_dims(info, tile, w.uppers, target.ub_align, looped)
    plan = plan_buffers(info, looped)
    if not w.requested and all(as_expr(info.domain[d]).is_Integer for d in info.parallel_dims):
        tile, serial = _balance_static(w, plan, tile, looped, serial)
    sched = _finish_schedule(w, plan, tile, looped, serial, split)
    one_core = bool(sched.block_dim_override)
    if one_core and not w.requested and multi_buffer > 1:
        # Note: a whole-block step of rows does not fit with two copies of the loaded and stored buffers (a
        # gather's source rows, 32 rows for a bool result); with one copy the work items may still spread over
        # the cores, whose loads then overlap each other's compute instead of their own.
        single = choose_tile(info, sizes, target, 1, max_tile_elems, tile_elems, row_pipeline)
        if not single.block_dim_override:
            single.io_copies = 1
            return single
    if row_pipeline and not w.requested and not one_core and not serial and not looped and _static_rows(info) and \
            not _scalar_loop_work(info):
        return _consider_pipelining(info, sched, target, multi_buffer, w.cap_elems, w.gm_steps(looped).get(0, 1),
                                    w.uppers)
    return sched


def _walk_context(info: KernelInfo, sizes: SizeVars, target, multi_buffer: int, max_tile_elems: int,
                  tile_elems: int) -> _Walk:
    uppers = []
    for d in range(info.rank):
        ub = sizes.upper_bound(info.domain[d])
        uppers.append(ub if ub is not None and ub < 2**40 else None)
    strict_steps = _gm_steps(info, target.ub_align)
    # Note: a multi-pass kernel has no serial dims; rows of a size only the launch knows (f32 rows of T) are taken
    # as whole blocks, their tiles stepping freely, and the launch checks it (one core when they are not).
    launch_rows: list = []
    launch_steps = _gm_steps(info, target.ub_align, launch_rows)
    cap_elems = max_tile_elems if max_tile_elems > 0 else None
    requested = tile_elems > 0
    if requested:  # the request, not UB, bounds the tile (plan-memory checks capacity; the ladder retries)
        cap_elems = min(tile_elems, cap_elems) if cap_elems is not None else tile_elems
    return _Walk(info, target, multi_buffer, tuple(uppers), _granule(info, target.ub_align),
                 _granule(info, target.vector_bytes_per_repeat), cap_elems, requested, strict_steps, launch_steps,
                 launch_rows)


def _first_fitting_tile(w: _Walk, split: list) -> tuple[list, bool]:
    """(tile, looped): the first walk that fits, with the reduced dims whole (one pass), else tiled (multi-pass).

    When a non-last dim is reduced, the one-pass attempt narrows the (parallel) last dim down to 32 B before giving
    up: the reduced rows of narrower columns may fit UB whole, and a multi-pass kernel re-reads GM once per pass.
    Columns split per launch (``split``) are at most one vector repeat wide, so a pass holds more rows."""
    info, rank = w.info, w.info.rank
    narrowing = bool(info.reduce_dims) and rank - 1 not in info.reduce_dims and \
        all(w.uppers[d] is not None for d in info.reduce_dims)  # an unbounded reduced dim is never whole
    widest = w.repeat if split else NON_LAST_REDUCE_INNER
    for looped in ((False, True) if info.reduce_dims else (False,)):
        for inner in (_inner_limits(w.granule) if narrowing and not looped else (widest,)):
            tile = w.walk(looped, inner)
            if tile is not None:
                return tile, looped
    raise ScheduleError(f"no tile fits UB ({w.target.ub_bytes} B): {len(plan_buffers(info, True).buffers)} buffers")


def _balance_static(w: _Walk, plan: BufferPlan, tile: list, looped: bool, serial: list) -> tuple[list, list]:
    """(tile, serial dims) of static parallel dims: shrunk for every core to get work (:func:`_balance`); an
    elementwise kernel takes the split the estimate says is fastest (balance.py; it does not model gathers' DMAs)."""
    info = w.info
    gm_steps = w.gm_steps(looped)
    keep = serial + [d for d in info.parallel_dims if _slab_unaligned(info, d, w.target.ub_align)]
    cap = list(tile)
    _balance(info, tile, w.target.vector_cores, w.granule, gm_steps, keep)
    if not info.reduce_dims and not any(op.name == "hfusion.gather" for op in info.ops):
        steps = {d: gm_steps.get(d, 1) for d in info.parallel_dims}
        tile = fastest_split(info, plan, cap, tile, w.target, w.multi_buffer, steps, w.repeat,
                             keep, lambda t: _whole_dims(t, w.uppers))
    if looped and tile[-1] < cap[-1] and info.rank - 1 in info.parallel_dims and passes_over_gm(info) > 1:
        return _regrow_narrowed(w, tile, serial, keep)
    return tile, serial


def _regrow_narrowed(w: _Walk, tile: list, serial: list, keep: list) -> tuple[list, list]:
    """The balance narrowed the columns of a multi-pass kernel reducing a non-last dim; its reduced tile was sized
    for the wider ones: walk again at the narrower width, so each of its passes over GM takes more rows (fewer
    loads, fewer vector start-ups per pass). A kernel of one such pass (a column sum) keeps its short tiles: their
    loads overlap the previous tile's fold."""
    regrown = w.walk(True, tile[-1])
    if regrown is None:
        return tile, serial
    serial = _serial_dims(w.info, regrown, w.uppers, w.target.ub_align, True)
    _balance(w.info, regrown, w.target.vector_cores, w.granule, w.launch_steps, keep)
    return regrown, serial


def _finish_schedule(w: _Walk, plan: BufferPlan, tile: list, looped: bool, serial: list, split: list) -> Schedule:
    """The schedule of ``tile``: the dims split per launch, whether work items could share a GM block (then one
    core), the slabs the launch checks, and a larger scratch where UB has room for it (long rows fold in one step
    fewer)."""
    info, target, rank = w.info, w.target, w.info.rank
    split = [d for d in split if d not in serial and not (w.uppers[d] is not None and tile[d] >= w.uppers[d])
             and not (looped and d != rank - 1)]  # Note: a multi-pass row kernel's rows are checked at launch
    shared = _shared_blocks(info, tile, w.uppers, w.gm_steps(looped), serial, target.ub_align)
    one_core = shared is None or (bool(shared) and not looped)
    # the slabs, and the rows the tile steps over freely: whole blocks, checked at launch
    checks = shared + w.launch_rows if looped and not one_core else []
    whole = _whole_dims(tile, w.uppers)
    wide = not w.requested and plan.ub_bytes(tile, target.ub_align, w.multi_buffer, whole, True) <= target.ub_bytes
    return Schedule(tile, looped, plan, plan.ub_bytes(tile, target.ub_align, w.multi_buffer, whole, wide), {},
                    block_dim_override=1 if one_core else 0,
                    scratch_bytes=plan.scratch_bytes(tile, target.ub_align, wide), serial_dims=serial, wide=wide,
                    split_dims=split if not one_core else [], launch_checks=checks)


def _split_dims(info: KernelInfo, requested: bool, gm_block: int) -> list[int]:
    """The dims whose work-item step is chosen per launch (core balancing, which needs the sizes, does not run): a
    kernel's innermost symbolic parallel dim that is the last dim of a kernel reducing a non-last dim or of an
    elementwise kernel without gathers (a flattened ``[s0*s1*64]``), or a dim of rows of a kernel reducing nothing
    or only the last dim (an embedding's ``[s0*s1, 64]``, the rows ``[B, H, T, 16]`` of a rotary kernel, a
    log-softmax's ``[s0*s1, 256]``), and not serial (:func:`_slab_unaligned`). Its step is
    ``granule × ceiling(n / (granule × cores per other work item))``, at least one granule and at most the tile
    (:func:`tiling_params`; the granule is 32 B of the last dim, or the rows whose slabs are whole blocks): few
    columns or rows spread over the cores, many take whole tiles."""
    last = info.rank - 1
    if requested:
        return []
    for d in sorted(info.parallel_dims, reverse=True):
        if as_expr(info.domain[d]).is_Integer:
            continue
        if d == last:
            eligible = (last not in info.reduce_dims) if info.reduce_dims else \
                not any(op.name == "hfusion.gather" for op in info.ops) and not info.row_gathers
        else:
            eligible = not info.reduce_dims or last in info.reduce_dims
        if eligible and not _slab_unaligned(info, d, gm_block):
            return [d]
    return []


def passes_over_gm(info: KernelInfo) -> int:
    """Passes of a multi-pass kernel over the reduced tiles: one per reduction, one more for the results spanning
    the reduced dims (hfusion_to_hivm.KernelLowering.work_item)."""
    n_reduces = sum(1 for op in info.ops if op.name == "hfusion.reduce")
    return n_reduces + any(not info.is_small(r) for r in info.results)


def _inner_limits(granule: int) -> list[int]:
    """Caps on the last-dim tile of a kernel reducing a non-last dim, widest first: NON_LAST_REDUCE_INNER, halved
    down to one 32-B granule."""
    out, t = [], NON_LAST_REDUCE_INNER
    while t > granule:
        out.append(t)
        t //= 2
    return out + [granule]


def _static_rows(info: KernelInfo) -> bool:
    """A row kernel with static shapes: rank 2, the last dim reduced whole (one pass), the rows its work items."""
    return (info.rank == 2 and tuple(info.reduce_dims) == (1,) and info.parallel_dims == [0]
            and all(as_expr(n).is_Integer for n in info.domain))


def _scalar_loop_work(info: KernelInfo) -> bool:
    """Does the kernel compute i64 values other than by a cast (scalar loops on PIPE_S, synchronised with the
    vector pipe by flags: docs/codegen.md)? Its two pipeline stages would share those flags' ids, which codegen
    refuses (the kernel would fall back to the interpreter); the scalar loops, not the vector start-ups the
    pipeline pairs, bound such a kernel anyway."""
    return any(op.name != "hfusion.cast" and r.type.dtype in SCALAR_LOOP_DTYPES
               for op in info.ops for r in op.results if hasattr(r.type, "dtype"))


def _consider_pipelining(info: KernelInfo, sched: Schedule, target, multi_buffer: int, cap_elems, step: int,
                         uppers) -> Schedule:
    """The lockstep schedule ``sched`` or, when the estimate (cost.py) says it is faster, the best software-
    pipelined one (software_pipeline.py)."""
    plan, tile = sched.plan, sched.tile
    lockstep = kernel_time(info, plan, tile, target, values_estimate(compute_order(info, plan), plan, tile, target,
                                                                     sched.wide), tail_steps={0: step})
    cands = pipelined_candidates(info, plan, tile, target, multi_buffer, step, cap_elems,
                                 lambda t: _whole_dims(t, uppers))
    best = min(cands, key=lambda c: c.time, default=None)
    if best is None or best.time >= lockstep:
        return sched
    return Schedule(best.tile, False, plan, best.ub_bytes, {}, serial_dims=[], stages=best.stages, wide=best.wide,
                    scratch_bytes=2 * plan.scratch_bytes(best.tile, target.ub_align, best.wide),
                    io_copies=best.io_copies)


def _shared_blocks(info: KernelInfo, tile, uppers, gm_steps: dict, serial: list, gm_block: int) -> list | None:
    """Could two work items write one GM block? None when they could for sizes already known: a split dim whose
    tile is not a whole-block step (fewer rows fit UB than one step) or whose static slabs are not whole blocks —
    the kernel then runs on one core, its work items writing in order on that core's MTE3. Otherwise the
    ``(bytes, dim)`` of the symbolic slabs of split dims that are not serial (the multi-pass schedule has no serial
    dims), whole blocks for some sizes only: a multi-pass kernel over ``[B, H, T, T]`` f32 with ``T`` unbounded has
    slabs of ``4*T**2`` bytes (a head), whole blocks when 4 divides T; its tiles inside a slab are whole-block
    steps, so the launch checks the slabs (launch_alignment.py). Empty: never."""
    slabs = []
    for d in info.parallel_dims:
        if d in serial or (uppers[d] is not None and tile[d] >= uppers[d]):
            continue
        if d != info.rank - 1 and tile[d] % gm_steps.get(d, 1):
            return None
        sizes = _unaligned_slabs(info, d, gm_block)
        if any(size.is_Integer for size in sizes):
            return None
        slabs += [(size, d) for size in sizes]
    return slabs


def _whole_dims(tile, uppers) -> set:
    """Dims the tile covers for every binding (no ``tiles{d}`` parameter: never looped over)."""
    return {d for d, (t, u) in enumerate(zip(tile, uppers)) if u is not None and t >= u}


def _row_bytes(info: KernelInfo, v, d: int) -> sympy.Expr:
    """The bytes of ``v``'s GM row below domain dim ``d`` (its dims inside d)."""
    n = sympy.Integer(DTYPE_BYTES[v.type.dtype])
    for j in info.masks[v]:
        if j > d:
            n = n * as_expr(info.domain[j])
    return n


def _row_bytes_coeff(info: KernelInfo, v, d: int) -> int:
    """The integer factor of :func:`_row_bytes`: with a symbolic row length, the symbols may be anything (odd), so
    only this factor is known to divide the bytes."""
    return _coeff(_row_bytes(info, v, d))


def _coeff(n: sympy.Expr) -> int:
    """The integer factor of a product of sizes (``4*s0*s1``: 4)."""
    coeff, _ = sympy.expand(n).as_coeff_Mul() if not n.is_Integer else (n, None)
    return abs(int(coeff)) if sympy.Integer(coeff) == coeff else 1


def _gm_steps(info: KernelInfo, gm_block: int, at_launch: list | None = None) -> dict:
    """Parallel dim d (not the last) → the multiple of tile[d] that makes every work item's GM footprint in every
    result whole ``gm_block`` (32 B) blocks: the rows below d times the tile cover whole blocks, so neighbouring
    cores never write the same block (the last tile ends at the tensor's end). Also, when d is the innermost dim a
    loaded or stored value spans (its buffer's last dim is 1) and it spans another: its UB rows are tile[d]
    elements apart and a DMA burst's UB address is 32-B aligned, so tile[d] is whole 32-B granules (or the
    whole dim: one contiguous burst).

    With ``at_launch`` (a list), a result row of symbolic bytes not known to be whole blocks asks no step outside
    the innermost such dim (whose step is a few rows: 8 f32 rows of any length are whole blocks): its size is
    appended, for the launch to check (:func:`tiling_params`). Steps multiplied over several dims (8 x 8 x 8 rows
    of ``[B, H, T, T]``) would leave a tile of few columns; the slabs checked instead (``4*T**2`` bytes a head)
    are whole blocks for most lengths."""
    steps = {}
    innermost = max((d for d in info.parallel_dims if d != info.rank - 1), default=None)
    for d in info.parallel_dims:
        if d == info.rank - 1:
            continue
        step = 1
        for row in _result_rows(info, d):
            coeff = _coeff(row)
            if at_launch is not None and d != innermost and coeff % gm_block and not row.is_Integer:
                at_launch.append((row, d))
                continue
            step = _lcm(step, gm_block // math.gcd(coeff, gm_block))
        for es in _moved_row_dtypes(info, d):
            step = _lcm(step, gm_block // math.gcd(es, gm_block))
        steps[d] = step
    return steps


def launch_gm_step(info: KernelInfo, d: int, gm_block: int) -> sympy.Expr:
    """:func:`_gm_steps`' step of dim ``d`` at the launch's sizes: the fewest rows whose bytes are whole blocks in
    every result (``rows_for_whole_blocks``: bool rows of ``T`` bytes take 2 at T = 16, 32 at T odd), never
    more than the compile-time step, which every launch's divides (both are powers of two)."""
    rows = _result_rows(info, d) + [sympy.Integer(es) for es in _moved_row_dtypes(info, d)]
    return sympy.Max(1, *[rows_for_whole_blocks(row, gm_block) for row in rows])


def _result_rows(info: KernelInfo, d: int) -> list:
    """The GM row bytes below dim ``d`` of each result spanning it."""
    return [_row_bytes(info, r, d) for r in info.results if d in info.masks[r]]


def _moved_row_dtypes(info: KernelInfo, d: int) -> list[int]:
    """Element bytes of each loaded or stored value whose innermost spanned dim (of more than one) is ``d``: its UB
    rows are tile[d] elements apart and a DMA burst's UB address is 32-B aligned."""
    out = []
    for v in _moved_values(info):
        m = [j for j in info.masks[v] if not (as_expr(info.domain[j]).is_Integer and int(info.domain[j]) == 1)]
        if m and m[-1] == d and len(m) > 1:
            out.append(DTYPE_BYTES[v.type.dtype])
    return out


def _moved_values(info: KernelInfo) -> list:
    """The values a DMA loads or stores: inputs, entry views, results."""
    return [a for a in info.inputs if a in info.masks] + list(info.views) + list(info.results)


def _whole_gm_blocks(w: _Walk, tile, d: int, t: int, step: int, looped: bool) -> int:
    """tile[d] rounded down to a multiple of ``step``; when fewer than ``step`` rows fit, shrink the last dim so that
    ``step`` rows do (kept when even that does not fit)."""
    if t >= step:
        return t // step * step
    trial = with_size(tile, d, step)
    last = len(tile) - 1
    t_last = w.grow(with_size(trial, last, 1), last, tile[last], looped)
    if t_last == 0:
        return t
    tile[last] = w.round_last(t_last)
    return step if w.fits(with_size(tile, d, step), looped) else t


def _serial_dims(info: KernelInfo, tile, uppers, gm_block: int, looped: bool) -> list[int]:
    """The parallel dims whose tiles must stay on one core: the dim is split and :func:`_slab_unaligned` — a slab's
    last tile and the next slab's first would share a block. Their tiles are then looped inside the work item (one
    core writes whole slabs)."""
    if looped:
        return []
    return [d for d in info.parallel_dims
            if not (uppers[d] is not None and tile[d] >= uppers[d]) and _slab_unaligned(info, d, gm_block)]


def _slab_unaligned(info: KernelInfo, d: int, gm_block: int) -> bool:
    """Does a result span dim ``d`` and a non-unit dim outside it, with ``d``'s slabs (the bytes of one index of
    the dims outside d) not known to be whole ``gm_block`` blocks? Then two cores holding tiles of d in
    neighbouring slabs would write one block."""
    return bool(_unaligned_slabs(info, d, gm_block))


def _unaligned_slabs(info: KernelInfo, d: int, gm_block: int) -> list:
    """The sizes (bytes) of the slabs of ``d`` in each result that :func:`_slab_unaligned` is about."""
    sizes = []
    for r in info.results:
        mask = info.masks[r]
        outer = any(j < d and not (as_expr(info.domain[j]).is_Integer and int(info.domain[j]) == 1) for j in mask)
        if d in mask and outer and _row_bytes_coeff(info, r, d - 1) % gm_block:
            sizes.append(_row_bytes(info, r, d - 1))
    return sizes


def _balance(info: KernelInfo, tile: list[int], cores: int, granule: int, gm_steps: dict, keep: list) -> None:
    """Shrink parallel tiles (outermost dim first, not the dims in ``keep``) until there are >= ``cores`` work
    items, when possible.

    The last dim is not cut below ``granule`` elements (32 B: one GM block, so no two cores write one; a kernel
    reducing a non-last dim may take columns of 32 B, whose rows are contiguous in UB: codegen folds them in whole
    256-B repeats).

    In a kernel gathering rows from GM (``embedding``: one DMA per row of the tile, each paying the transfer's fixed
    latency, PTO's 30.6 KiB / peak), cutting a dim across the rows multiplies the row copies and the index loads
    while the bytes stay the same: such a dim is cut only as far as no core gets a second work item (256 rows of
    128 on 48 cores: 43 tiles of 6 whole rows, not 86 half rows — 7 DMAs on the busiest core instead of 14)."""
    dims = {d: int(info.domain[d]) for d in info.parallel_dims if d not in keep}
    # an element gather (along the last dim) is one DMA a row anyway; row and slab gathers (a dim but the last)
    rows_gathered = any(d < info.rank - 1 for d in info.row_gathers.values())
    across_rows = {d for d in dims if rows_gathered and d not in info.row_gathers.values()}
    for d in dims:
        count = {p: ceil_div(dims[p], tile[p]) for p in dims}
        n_work = prod(count.values())
        if n_work >= cores:
            return
        others = n_work // count[d]
        want = cores // others if d in across_rows else ceil_div(cores, others)  # tiles needed along d
        if want <= 1:
            continue
        step = granule if d == info.rank - 1 else gm_steps.get(d, 1)
        t = ceil_div(dims[d], want)
        t = max(step, align_up(t, step))
        tile[d] = min(tile[d], t)


def tiling_params(info: KernelInfo, schedule: Schedule, sizes: SizeVars, vector_cores: int, block_dim: int = 0,
                  ub_align: int = 32) -> dict:
    """The ``tiling`` attribute: name → size expression (ints for static values)."""
    tiling: dict = {}
    counts = {}
    cores = schedule.block_dim_override or (block_dim if block_dim > 0 else vector_cores)
    split = schedule.split_dims or []
    for d, n in enumerate(info.domain):
        tiling[f"n{d}"] = _norm(n)
        count = sympy.ceiling(as_expr(n) / schedule.tile[d])
        counts[d] = count
        upper = sizes.upper_bound(n)  # the tile covers the dim for every binding: one tile, no parameter
        if upper is None or upper > schedule.tile[d]:
            tiling[f"tiles{d}"] = _norm(count)
    for d in split:  # per launch: the cores left per work item of the other dims, then 32-B steps over them
        others = sympy.Integer(1)
        for p in info.parallel_dims:
            if p != d and p not in (schedule.serial_dims or ()):
                others = others * counts[p]
        n = as_expr(info.domain[d])
        granule = _granule(info, ub_align) if d == info.rank - 1 else launch_gm_step(info, d, ub_align)
        step = launch_step(n, schedule.tile[d], granule, cores, others)
        tiling[f"step{d}"] = _norm(step)
        counts[d] = sympy.ceiling(n / step)
        tiling[f"tiles{d}"] = _norm(counts[d])
    arg_pos = {a: i for i, a in enumerate(info.func.body.args)}
    for src, offsets in info.views.values():
        for i, o in enumerate(offsets or ()):
            if not as_expr(o).is_Integer:
                tiling[f"off{arg_pos[src]}_{i}"] = _norm(o)
    n_tiles = sympy.Integer(1)
    for d in info.parallel_dims:
        if d not in (schedule.serial_dims or ()):  # serial dims are looped inside a work item
            n_tiles = n_tiles * counts[d]
    tail = None
    if not (schedule.block_dim_override or schedule.serial_dims or split or schedule.launch_checks):
        tail = row_tail(info, schedule.tile, cores, _gm_steps(info, ub_align))
    if tail is not None:  # the last round spread over every core (tail.py)
        n_tiles = sympy.Integer(tail.n_tiles)
        tiling[f"tiles{tail.dim}"] = tail.n_tiles
        tiling.update(tail.tiling())
    tiling["n_tiles"] = _norm(n_tiles)
    tiling["block_dim"] = _norm(sympy.Min(cores, n_tiles))
    if schedule.launch_checks:  # every core when the launch's slabs are whole blocks (launch_alignment.py)
        checks = [(size, counts[d]) for size, d in schedule.launch_checks]
        tiling["block_dim"] = _norm(launch_block_dim(sympy.Min(cores, n_tiles), checks, ub_align))
    return tiling


def _norm(e):
    e = as_expr(e)  # ceiling/Min already fold what they can; sympy.simplify is too slow per kernel
    return int(e) if e.is_Integer else e


def _lcm(a: int, b: int) -> int:
    return a * b // math.gcd(a, b)


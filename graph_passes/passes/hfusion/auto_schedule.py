"""``hfusion-auto-schedule``: choose the tiling of every vector kernel and record it as attributes.

After AscendNPU-IR's ``hfusion-auto-schedule`` (PureElemwiseSchedule, AnyPBRSchedule): tile sizes are static and
capacity-driven (every UB buffer × its multi-buffer depth fits UB), the work is split over the vector cores, and the
sizes that depend on the shape symbols — dim sizes, trip counts, the block dim — are size expressions in the
kernel's ``tiling`` attribute, evaluated by the host at each launch. The body is not changed:
``convert-to-hivm`` builds the loops from the attributes (docs/schedule.md)::

    func.func @main_fused_0(...) attributes {fusion_kind = "PURE_ELEMWISE", kernel, output_args = [3],
        schedule = #hfusion.schedule<{kind = "PURE_ELEMWISE", tile = [8192], ub_bytes = 131072, buffers = [
            {dtype = "f16", dims = [0], values = ["a0"], copies = 2, loaded = true}, ...]}>,
        tiling = {block_dim = (Min(48,ceiling(s0/64))), n0 = (128*s0), n_tiles = (ceiling(s0/64)),
                  tiles0 = (ceiling(s0/64))}}

The ``schedule`` is a typed attribute (graph_passes/dialects/schedule_attrs.py): the tile, the work split and
distribution, the buffer plan with each buffer's copies (the multi-buffer depth is decided here, once), the
scratch, pipelining and the idioms chosen. ``convert-to-hivm`` and ``hivm-mark-multi-buffer`` read it.

A SINGLE_CUBE kernel gets the cube schedule (``#hfusion.cube_schedule``: its tile by estimated time and wave
count, its K steps and ping-pong buffers; graph_passes/schedule/cube.py). Kernels of other fusion kinds are left
alone; a vector kernel without a vector lowering (an
embedding-row gather, concat …) is left unscheduled and counted (``kernels-unschedulable``); ``convert-to-hivm`` marks it.
Option ``tile-elems=N`` (N > 0) requests tiles of N elements (rounded to the alignment) and honours the request
even when the buffers × multi-buffer depth exceed UB: ``hivm-plan-memory`` then overflows and the compile driver's
retry ladder takes over (fewer multi-buffers, then halved requests).
A kernel that only moves data (transposes, strided slices, concats of its arguments) gets the movement schedule
(``#hfusion.movement_schedule``, one tile per result; graph_passes/schedule/movement.py).
A MIX_CV kernel (a matmul and its elementwise epilogue) gets the cube schedule of its matmul as ``schedule`` and
the epilogue's vector schedule over half-tile row chunks as ``epilogue_schedule`` (graph_passes/schedule/mix_cv.py).
Counters: ``kernels-scheduled``, ``kernels-cube``, ``kernels-mix``, ``kernels-unschedulable``, ``kernels-movement``,
``reductions-multipass``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from ...ir.core import Operation
from ...schedule.cube import analyze_cube_kernel, choose_cube_tile, cube_schedule, cube_tiling, is_static_kernel
from ...schedule.kernel_info import VECTOR_KINDS, Unsupported, analyze_kernel
from ...schedule.mix_cv import epilogue_schedule, pipelined_schedule, split_mix_kernel, use_ring_workspace
from ...dialects.schedule_attrs import MovementSchedule
from ...schedule.movement import analyze_movement, choose_tiles
from ...schedule.movement import tiling_params as movement_tiling, ub_bytes as movement_ub_bytes
from ...schedule.record import vector_schedule
from ...schedule.tiling import ScheduleError, choose_tile, tiling_params
from ...target import module_target
from .. import ModulePass, PassContext, PassError, register_pass


@register_pass
@dataclass(frozen=True)
class AutoSchedule(ModulePass):
    """Choose tile sizes, block dim and tiling parameters of vector kernels (schedule/tiling attributes)."""

    name: ClassVar[str] = "hfusion-auto-schedule"
    multi_buffer: int = 2  # copies of every buffer fed by a load or drained by a store
    max_tile_elems: int = 0  # cap on the elements of one tile (0: UB capacity only); the plan-memory retry ladder
    tile_elems: int = 0  # requested elements per tile, honoured even past UB (0: automatic, capacity-driven)
    block_dim: int = 0  # cores to use (0: all vector cores of the target)
    row_pipeline: bool = True  # software-pipeline row kernels across work items when the estimate favours it
    cv_pipelining: bool = True  # MIX_CV: drain the tile in pieces of whole K loops, A resident (schedule/mix_cv.py)

    def run(self, module: Operation, ctx: PassContext) -> None:
        if self.multi_buffer < 1:
            raise PassError(f"{self.name}: multi-buffer must be >= 1, got {self.multi_buffer}")
        if self.tile_elems < 0:
            raise PassError(f"{self.name}: tile-elems must be >= 0, got {self.tile_elems}")
        target = module_target(module)
        sizes = module.size_vars()
        ctx.count("kernels-scheduled", 0)
        ctx.count("kernels-cube", 0)
        ctx.count("kernels-mix", 0)
        ctx.count("mix-ring-workspaces", 0)
        for func in module.functions:
            if not func.attributes.get("kernel"):
                continue
            if func.attributes.get("fusion_kind") == "SINGLE_CUBE":
                schedule_cube_kernel(func, sizes, target, self, ctx)
            elif func.attributes.get("fusion_kind") == "MIX_CV":
                schedule_mix_kernel(module, func, sizes, target, self, ctx)
            elif func.attributes.get("fusion_kind") in VECTOR_KINDS:
                schedule_kernel(func, sizes, target, self, ctx)


def schedule_cube_kernel(func: Operation, sizes, target, options: AutoSchedule, ctx: PassContext) -> bool:
    """A SINGLE_CUBE kernel: its tile by wave count and estimated time (graph_passes/schedule/cube.py)."""
    try:
        ck = analyze_cube_kernel(func)
        tile = choose_cube_tile(ck, sizes, target)
    except Unsupported as e:
        return _unschedulable(func, ctx, e.op_name, e.reason)
    cores = options.block_dim if options.block_dim > 0 else target.aic_cores
    func.attributes.pop("schedule_unsupported", None)
    func.attributes.pop("schedule_unsupported_reason", None)
    func.attributes["schedule"] = cube_schedule(ck, tile, is_static_kernel(ck))
    func.attributes["tiling"] = cube_tiling(ck, func.attributes["schedule"], cores)
    ctx.count("kernels-scheduled")
    ctx.count("kernels-cube")
    return True


def schedule_mix_kernel(module: Operation, func: Operation, sizes, target, options: AutoSchedule,
                        ctx: PassContext) -> bool:
    """A MIX_CV kernel: the cube schedule of its matmul and the epilogue's over half-tile row chunks
    (graph_passes/schedule/mix_cv.py); the tiling is the cube's (one work item per tile, groups as the block dim)."""
    try:
        cube, epi, _ = split_mix_kernel(func)
        ck = analyze_cube_kernel(cube)
        tile = choose_cube_tile(ck, sizes, target)
        if tile.work_item != "tile":
            raise Unsupported(ck.op.name, f"a MIX_CV kernel's work items are tiles, this one's are {tile.work_item}s")
        schedule = replace(cube_schedule(ck, tile, is_static_kernel(ck)), kind="MIX_CV")
        if options.cv_pipelining:
            schedule = pipelined_schedule(ck, schedule, target, epi, sizes)
        width = schedule.base_n // schedule.acc_parts  # the vector cores take each accumulator part as it is drained
        _, epilogue = epilogue_schedule(epi, sizes, target, schedule.base_m, width, options.multi_buffer)
    except Unsupported as e:
        return _unschedulable(func, ctx, e.op_name, e.reason)
    cores = options.block_dim if options.block_dim > 0 else target.aic_cores
    func.attributes.pop("schedule_unsupported", None)
    func.attributes.pop("schedule_unsupported_reason", None)
    func.attributes["schedule"] = schedule
    func.attributes["epilogue_schedule"] = epilogue
    func.attributes["tiling"] = cube_tiling(ck, schedule, cores)
    if schedule.ws_slots:
        use_ring_workspace(module, func, schedule, int(func.attributes["tiling"]["block_dim"]))
        ctx.count("mix-ring-workspaces")
    ctx.count("kernels-scheduled")
    ctx.count("kernels-mix")
    return True


def schedule_kernel(func: Operation, sizes, target, options: AutoSchedule, ctx: PassContext) -> bool:
    try:
        info = analyze_kernel(func, sizes, target)
    except Unsupported as e:
        if schedule_movement_kernel(func, sizes, target, options, ctx):
            return True
        return _unschedulable(func, ctx, e.op_name, e.reason)
    try:
        sched = choose_tile(info, sizes, target, options.multi_buffer, options.max_tile_elems,
                            options.tile_elems, options.row_pipeline)
    except Unsupported as e:  # an op no idiom lowers at the kernel's layout (its scratch cannot be sized)
        return _unschedulable(func, ctx, e.op_name, e.reason)
    except ScheduleError as e:
        if not info.gather_sources:
            raise PassError(f"{options.name}: kernel @{func.sym_name}: {e}") from None
        # vgather reads its source rows whole from UB: rows too long for UB have no vector schedule (a cross-entropy
        # target gather over a vocabulary of 65536 f32); the kernel stays at tensor level, its reason in the profile
        rows = ", ".join(f"{v.type} along dim {d}" for v, (d, _) in info.gather_sources.items())
        return _unschedulable(func, ctx, "hfusion.gather", f"gathers from rows loaded whole into UB ({rows}): {e}")
    func.attributes.pop("schedule_unsupported", None)
    func.attributes.pop("schedule_unsupported_reason", None)
    tiling = tiling_params(info, sched, sizes, target.vector_cores, options.block_dim, target.ub_align)
    func.attributes["schedule"] = vector_schedule(info, sched, options.multi_buffer, tiling)
    func.attributes["tiling"] = tiling
    ctx.count("kernels-scheduled")
    if sched.reduce_looped:
        ctx.count("reductions-multipass")
    return True


def _unschedulable(func: Operation, ctx: PassContext, op_name: str, reason: str) -> bool:
    """Leave ``func`` without a schedule (it stays at tensor level), blaming ``op_name`` for ``reason``
    (convert-to-hivm marks it unsupported with both)."""
    ctx.count("kernels-unschedulable")
    func.attributes.pop("schedule", None)
    func.attributes.pop("tiling", None)
    func.attributes["schedule_unsupported"] = op_name
    func.attributes["schedule_unsupported_reason"] = reason
    return False


def schedule_movement_kernel(func: Operation, sizes, target, options: AutoSchedule, ctx: PassContext) -> bool:
    """A data-movement kernel (transposes, strided slices, concats): pieces copied tile by tile
    (graph_passes/schedule/movement.py). False when ``func`` is not one."""
    cores = options.block_dim if options.block_dim > 0 else target.vector_cores
    try:
        info = analyze_movement(func, sizes)
        tiles = choose_tiles(info, sizes, target.ub_bytes, cores, options.multi_buffer,
                             options.max_tile_elems or options.tile_elems)
    except Unsupported:
        return False
    func.attributes.pop("schedule_unsupported", None)
    func.attributes.pop("schedule_unsupported_reason", None)
    func.attributes["schedule"] = MovementSchedule(tiles=tuple(tuple(t) for t in tiles),
                                                   ub_bytes=movement_ub_bytes(info, tiles, options.multi_buffer),
                                                   multi_buffer=options.multi_buffer)
    func.attributes["tiling"] = movement_tiling(info, tiles, cores, sizes)
    ctx.count("kernels-scheduled")
    ctx.count("kernels-movement")
    return True

"""``convert-to-hivm``: scheduled vector kernels become HIVM functions; the host launches them with ``hivm.launch``.

After AscendNPU-IR's ``convert-hfusion-to-hivm``. Each device kernel carrying a ``schedule`` (the typed attribute
``hfusion-auto-schedule`` records: dialects/schedule_attrs.py) is rebuilt from it, never re-planned, as docs/hivm.md
shows: ``memref<…, gm>`` arguments, trailing ``index``
tiling parameters (one per ``tiling`` entry, sorted by name), ``hivm.get_block_idx``, a loop over the work items
cyclic over the cores, ``hivm.alloc`` buffers without scope (each tagged with its ``buffer`` index in the schedule), loads/stores and vector ops over valid extents
(:mod:`graph_passes.conversion.hfusion_to_hivm`; a data-movement kernel — a ``#hfusion.movement_schedule`` — by
:mod:`graph_passes.conversion.movement_to_hivm`; a cube kernel — a ``#hfusion.cube_schedule`` — by
:mod:`graph_passes.conversion.cube_to_hivm`; a MIX_CV kernel — a matmul and its epilogue — becomes two functions,
its AIC part ``@k`` and AIV part ``@k_aiv`` marked ``mix_part``, by :mod:`graph_passes.conversion.mix_cv_to_hivm`).
The host's ``func.call`` of a converted kernel becomes ``hivm.launch`` on the same tensors, whose results are the
out-parameters.

A kernel with no vector lowering (gathers along a dim that is not the last, concat, transpose, matmul …; see
docs/schedule.md) stays at tensor level with ``hivm.unsupported = "<op name>"`` and ``hivm.unsupported_reason``
(``hfusion-auto-schedule``'s reason, for vector kinds) and stays called by ``func.call``: the runtime runs it with the reference
interpreter and reports both. Nothing is skipped silently: counter ``kernels-unsupported``.

Counters: ``kernels-converted``, ``kernels-unsupported``, ``loads``, ``stores``, ``vector-ops``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...conversion.cube_to_hivm import CubeLowering
from ...conversion.hfusion_to_hivm import KernelLowering, LoweringError
from ...conversion.mix_cv_to_hivm import MixCubeLowering, MixVectorLowering
from ...conversion.movement_to_hivm import MovementLowering
from ...dialects.hivm import LaunchOp
from ...dialects.schedule_attrs import CubeSchedule, MovementSchedule
from ...ir.core import Cube, Operation
from ...schedule.cube import analyze_cube_kernel
from ...schedule.kernel_info import VECTOR_KINDS, Unsupported, analyze_kernel
from ...schedule.mix_cv import split_mix_kernel, workspace_index
from ...schedule.movement import analyze_movement
from ...schedule.record import StaleSchedule, plan_from_schedule
from ...target import module_target
from .. import ModulePass, PassContext, PassError, register_pass


@register_pass
@dataclass(frozen=True)
class ConvertToHIVM(ModulePass):
    """Lower scheduled vector kernels to HIVM buffers, loops, loads/stores and vector ops; calls become launches."""

    name: ClassVar[str] = "convert-to-hivm"

    def run(self, module: Operation, ctx: PassContext) -> None:
        target = module_target(module)
        sizes = module.size_vars()
        for counter in ("kernels-converted", "kernels-unsupported", "loads", "stores", "vector-ops", "cube-ops",
                        "fixpipes"):
            ctx.count(counter, 0)
        converted = set()
        for func in list(module.functions):
            if not func.attributes.get("kernel") or _is_hivm(func):
                continue
            blame = _unsupported_op(func)
            if blame is not None:
                func.attributes["hivm.unsupported"], detail = blame
                if detail:
                    func.attributes["hivm.unsupported_reason"] = detail
                ctx.count("kernels-unsupported")
                continue
            if "schedule" not in func.attributes or "tiling" not in func.attributes:
                raise PassError(f"{self.name}: kernel @{func.sym_name} has no schedule (run hfusion-auto-schedule)")
            schedule, tiling = func.attributes["schedule"], func.attributes["tiling"]
            if func.attributes.get("fusion_kind") == "MIX_CV":
                try:
                    parts, counts = _lower_mix(func, sizes, target)
                except (LoweringError, StaleSchedule, Unsupported) as e:
                    raise PassError(f"{self.name}: kernel @{func.sym_name}: {e}") from None
                for part in parts:
                    module.body.insert_before(func, part)
                func.erase()
                converted.add(parts[0].sym_name)
                ctx.count("kernels-converted")
                for k, n in counts.items():
                    ctx.count(k, n)
                continue
            try:
                if isinstance(schedule, CubeSchedule):
                    lowering = CubeLowering(analyze_cube_kernel(func), schedule, tiling)
                elif isinstance(schedule, MovementSchedule):
                    lowering = MovementLowering(analyze_movement(func, sizes), schedule, tiling)
                else:
                    info = analyze_kernel(func, sizes, target)
                    lowering = KernelLowering(info, schedule, plan_from_schedule(info, schedule), tiling,
                                              target.ub_align)
                new = lowering.build()
            except (LoweringError, StaleSchedule, Unsupported) as e:
                raise PassError(f"{self.name}: kernel @{func.sym_name}: {e}") from None
            block = module.body
            block.insert_before(func, new)
            func.erase()
            converted.add(new.sym_name)
            ctx.count("kernels-converted")
            for k, n in lowering.counts.items():
                ctx.count(k, n)
        for func in module.functions:
            for op in list(func.walk()):
                if op.name == "func.call" and op.attributes["callee"] in converted:
                    _call_to_launch(op, module.lookup(op.attributes["callee"]))


def _lower_mix(func: Operation, sizes, target) -> tuple[list, dict]:
    """A MIX_CV kernel's AIC part (named as the kernel: the host launches it) and AIV part (``<name>_aiv``), each
    marked with ``mix_part`` and naming the other; the counters of both lowerings."""
    schedule, tiling = func.attributes["schedule"], func.attributes["tiling"]
    epilogue = func.attributes.get("epilogue_schedule")
    if not isinstance(schedule, CubeSchedule) or epilogue is None:
        raise LoweringError("a MIX_CV kernel needs a cube schedule and an epilogue_schedule (hfusion-auto-schedule)")
    cube, epi, positions = split_mix_kernel(func)
    ws = func.body.args[workspace_index(func)]
    aic_lowering = MixCubeLowering(analyze_cube_kernel(cube), schedule, tiling, ws.type)
    info = analyze_kernel(epi, sizes, target)
    aiv_lowering = MixVectorLowering(info, epilogue, plan_from_schedule(info, epilogue), tiling, target.ub_align,
                                     schedule, list(func.body.args), positions, workspace_index(func))
    aic, aiv = aic_lowering.build(), aiv_lowering.build()
    name = func.sym_name
    common = {k: func.attributes[k] for k in ("fusion_kind", "output_args", "workspace_args", "tiling")}
    aic.attributes.update(common, sym_name=name, schedule=schedule, mix_part="aic", mix_peer=f"{name}_aiv")
    aiv.attributes.update(common, sym_name=f"{name}_aiv", schedule=epilogue, mix_part="aiv", mix_peer=name)
    counts = dict(aic_lowering.counts)
    for k, n in aiv_lowering.counts.items():
        counts[k] = counts.get(k, 0) + n
    return [aic, aiv], counts


def _is_hivm(func: Operation) -> bool:
    return any(op.dialect == "hivm" for op in func.walk())


def _unsupported_op(func: Operation) -> tuple[str, str] | None:
    """The op that keeps ``func`` at tensor level and why (empty when the op says it all: a cube op), or None when
    it has a schedule to lower."""
    if "schedule_unsupported" in func.attributes:  # hfusion-auto-schedule found no schedule
        return func.attributes["schedule_unsupported"], func.attributes.get("schedule_unsupported_reason", "")
    if func.attributes.get("fusion_kind") in ("SINGLE_CUBE", "MIX_CV") and isinstance(
            func.attributes.get("schedule"), CubeSchedule):
        return None
    if func.attributes.get("fusion_kind") not in VECTOR_KINDS:
        for op in func.walk():
            if op.has_trait(Cube):
                return op.name, ""
        return f"fusion_kind {func.attributes.get('fusion_kind')}", ""
    return None


def _call_to_launch(call: Operation, kernel: Operation) -> None:
    output_args = list(kernel.attributes.get("output_args") or [])
    outs = [call.operands[i] for i in output_args]
    launch = LaunchOp(list(call.operands), [v.type for v in outs], {"callee": call.attributes["callee"]}, [], call.loc)
    call.parent.insert_before(call, launch)
    for old, new in zip(call.results, launch.results):
        new.name_hint = old.name_hint
    call.replace_with(launch.results)

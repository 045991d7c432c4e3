"""``hivm-mark-multi-buffer``: give each local buffer the rotating copies its kernel's schedule decided, so that
the next tile's load overlaps this tile's compute (after AscendNPU-IR's MarkMultiBuffer).

The depth is decided once, by ``hfusion-auto-schedule``, and read here:

- in a kernel with a vector or cube schedule (``#hfusion.schedule``, ``#hfusion.cube_schedule``), a ``hivm.alloc {buffer = i}`` gets ``multi_buffer
  = copies`` of the schedule's buffer i when that is more than one (``convert-to-hivm`` tags each alloc with the
  buffer it allocates; a software-pipelined kernel's doubled buffers are already two allocs, untagged);
- in a kernel with a movement schedule (``#hfusion.movement_schedule``), or in hand-written HIVM given ``depth``, a
  ``hivm.alloc`` outside an ``scf.for`` whose buffer is the destination of a ``hivm.load`` (or of the row DMAs of a
  ``hivm.embedding_gather``) or the source of a ``hivm.store`` inside that loop gets the schedule's
  ``multi_buffer`` (or ``depth``). Buffers only vector ops touch are left single: the pipes that overlap across
  iterations are the DMA ones.

``depth`` (default 0: the schedule's) applies only to functions without a schedule; ``enable = false`` turns the
pass off. A kernel with neither a schedule nor a depth is an error naming it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...analysis.loops import buffer_users, multi_buffer_loop
from ...dialects.schedule_attrs import CubeSchedule, MovementSchedule, VectorSchedule
from .. import ModulePass, PassContext, PassError, register_pass


def _is_dma_end(alloc, user) -> bool:
    """``user`` loads into or stores from ``alloc``'s buffer (directly or through a view)."""
    if user.name in ("hivm.load", "hivm.embedding_gather"):
        return user.operand("dst") in _values_of(alloc)
    if user.name == "hivm.store":
        return user.operand("src") in _values_of(alloc)
    return False


def _values_of(alloc) -> list:
    vals = [alloc.result]
    vals += [r for u in buffer_users(alloc.result) if u.name == "hivm.multi_buffer_select" for r in u.results]
    return vals


def dma_fed_in_loop(alloc) -> bool:
    """Is ``alloc``'s buffer filled or drained by a DMA inside a loop that does not hold the alloc?"""
    return multi_buffer_loop(alloc) is not None and any(_is_dma_end(alloc, u) for u in buffer_users(alloc.result))


@register_pass
@dataclass(frozen=True)
class MarkMultiBuffer(ModulePass):
    """Give local buffers the copies their kernel's schedule decided (multi_buffer = n)."""

    name: ClassVar[str] = "hivm-mark-multi-buffer"
    depth: int = 0  # copies for functions without a schedule (hand-written HIVM); 0: take the schedule's
    enable: bool = True

    def run(self, module, ctx: PassContext) -> None:
        ctx.count("buffers-marked", 0)
        if not self.enable:
            return
        if self.depth < 0:
            raise PassError(f"{self.name}: depth must be >= 0, got {self.depth}")
        for func in module.functions:
            allocs = [op for op in func.walk() if op.name == "hivm.alloc" and "multi_buffer" not in op.attributes
                      and "offsets" not in op.attributes]
            if allocs:
                self._mark(func, allocs, ctx)

    def _mark(self, func, allocs: list, ctx: PassContext) -> None:
        schedule = func.attributes.get("schedule")
        for alloc in allocs:
            if isinstance(schedule, (VectorSchedule, CubeSchedule)):
                i = alloc.attributes.get("buffer")
                n = schedule.buffers[i].copies if i is not None and i < len(schedule.buffers) else 1
            elif not dma_fed_in_loop(alloc):
                continue
            elif isinstance(schedule, MovementSchedule):
                n = schedule.multi_buffer
            elif self.depth > 0:
                n = self.depth
            else:
                raise PassError(f"{self.name}: @{func.sym_name} has no schedule to take the multi-buffer depth "
                                f"from: give the pass a depth (hivm-mark-multi-buffer{{depth=2}})")
            if n > 1:
                alloc.attributes["multi_buffer"] = n
                ctx.count("buffers-marked")

"""``hivm-plan-memory``: give every local buffer a byte offset in its scope (after AscendNPU-IR's PlanMemory).

1. In-place reuse: an elementwise vector op may write its result into an input buffer whose last use it is
   (same scope, shape and element type, both plain single-copy buffers whose values live only in this block;
   not a unary fun of ``NOT_IN_PLACE_FUNS``, whose sequence reads the source after writing dst);
   the op's ``dst`` becomes that input and the dead alloc is dropped.
2. Lifetimes (:mod:`graph_passes.analysis.liveness`): first to last use; a use inside a loop keeps the buffer live
   across the whole loop; the copies of a multi-buffered buffer are live together. A ``scratch = true`` alloc (the
   code generator's temporary UB, no op names it) is live for the whole kernel.
3. Allocation per scope, largest buffers first, first fit: each copy gets the lowest offset (aligned to the scope's
   alignment from the target) that overlaps no placed buffer with an overlapping lifetime.
4. ``offsets = [byte offset per copy]`` on every alloc; the peak must fit the scope's capacity, else
   :class:`MemoryPlanOverflow` (the compile driver's retry ladder catches it, see docs/memory-and-sync.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...analysis.liveness import ProgramOrder, buffer_lifetime
from ...dialects.hfusion import NOT_IN_PLACE_FUNS
from ...intmath import align_up
from ...ir.core import Operation
from ...ir.types import MemRefType
from ...target import module_target
from .. import ModulePass, PassContext, PassError, register_pass

# Ops whose dst[i] depends only on the inputs' element i (an input of the same element size may be overwritten).
INPLACE_OPS = ("hivm.vunary", "hivm.vbinary", "hivm.vcast", "hivm.copy", "hivm.vsel")


@dataclass(frozen=True)
class BufferUse:
    """One buffer in an overflow report: its name, bytes per copy and number of copies."""

    name: str
    nbytes: int
    copies: int

    def __str__(self) -> str:
        return f"%{self.name} ({self.nbytes} B ×{self.copies})" if self.copies > 1 else f"%{self.name} ({self.nbytes} B)"


class MemoryPlanOverflow(PassError):
    """A kernel's live buffers do not fit a local memory; carries what the compile driver's retry ladder needs."""

    def __init__(self, kernel: str, scope: str, needed: int, available: int, largest: list[BufferUse],
                 multi_buffered: int = 0):  # fmt: skip
        self.kernel = kernel
        self.scope = scope
        self.needed = needed
        self.available = available
        self.largest = list(largest)
        self.multi_buffered = multi_buffered  # buffers with more than one copy (the ladder's first lever)
        names = ", ".join(str(b) for b in self.largest[:3])
        super().__init__(f"hivm-plan-memory: {scope.upper()} overflow in kernel {kernel}: needs {needed} B, "
                         f"{available} B available; largest buffers: {names}")  # fmt: skip


@dataclass
class _Slot:
    alloc: Operation
    copy: int
    size: int
    live: tuple[int, int]
    offset: int = -1


def _name(alloc: Operation, i: int) -> str:
    return alloc.result.name_hint or f"alloc{i}"


# ---------------------------------------------------------------------------------------------------------------
# In-place reuse


def _plain_buffer(v) -> Operation | None:
    """The alloc behind ``v`` when it is a single-copy local buffer used directly (no views, no plan yet)."""
    op = getattr(v, "op", None)
    if op is None or op.name != "hivm.alloc" or op.attributes.get("multi_buffer", 1) != 1:
        return None
    if "offsets" in op.attributes or any(u.name == "hivm.multi_buffer_select" for u in v.users):
        return None
    return op


def _block_local(alloc: Operation, block, first_writer: Operation | None) -> bool:
    """Every use of the buffer is in ``block`` (not nested deeper), and the first one writes it entirely, so its
    value does not flow around a loop's back edge or in from outside."""
    users = alloc.result.users
    if any(u.parent is not block for u in users):
        return False
    first = min(users, key=block.ops.index)
    if first_writer is not None and first is not first_writer:
        return False
    return first.name in ("hivm.load", *INPLACE_OPS, "hivm.vfill", "hivm.vbrc") and alloc.result in first.writes()


def _try_inplace(op: Operation) -> bool:
    dst_v = op.writes()[0] if op.writes() else None
    if dst_v is None:
        return False
    if op.name == "hivm.vunary" and op.attributes["fun"] in NOT_IN_PLACE_FUNS:
        return False  # its sequence reads the source after writing dst
    dst = _plain_buffer(dst_v)
    if dst is None or dst_v in op.reads() or not _block_local(dst, op.parent, op):
        return False
    block = op.parent
    here = block.ops.index(op)
    for src_v in op.reads():
        src = _plain_buffer(src_v)
        if src is None or src is dst:
            continue
        ts, td = src_v.type, dst_v.type
        if ts.scope != td.scope or ts.shape != td.shape or ts.dtype != td.dtype:
            continue  # one element type: later readers of the shared buffer see its type (an f32 -> i32 cast stays apart)
        if not _block_local(src, block, None):
            continue
        if any(block.ops.index(u) > here for u in src_v.users):
            continue  # not its last use
        for i, v in enumerate(op.operands):
            if v is dst_v:
                op.set_operand(i, src_v)
        dst_v.replace_all_uses_with(src_v)
        dst.erase()
        return True
    return False


# ---------------------------------------------------------------------------------------------------------------
# Allocation


def _first_fit(slots: list[_Slot], align: int) -> int:
    placed: list[_Slot] = []
    for s in sorted(slots, key=lambda s: (-s.size, s.live[0], s.copy)):
        busy = sorted((p.offset, p.offset + p.size) for p in placed
                      if p.live[0] <= s.live[1] and s.live[0] <= p.live[1])  # fmt: skip
        off = 0
        for lo, hi in busy:
            if off + s.size <= lo:
                break
            off = max(off, align_up(hi, align))
        s.offset = off
        placed.append(s)
    return max((s.offset + s.size for s in slots), default=0)


@register_pass
@dataclass(frozen=True)
class PlanMemory(ModulePass):
    """Assign byte offsets to local buffers by lifetime, with in-place reuse and per-scope capacity checks."""

    name: ClassVar[str] = "hivm-plan-memory"
    inplace: bool = True

    def run(self, module, ctx: PassContext) -> None:
        target = module_target(module)
        peaks: dict[str, int] = {}
        for c in ("buffers-planned", "inplace-reuses", "bytes-planned-ub"):
            ctx.count(c, 0)
        for func in [op for op in module.walk() if op.name == "func.func"]:
            if self.inplace:
                for op in [o for o in func.walk() if o.name in INPLACE_OPS]:
                    if _try_inplace(op):
                        ctx.count("inplace-reuses")
            for scope, peak in self._plan(func, target, ctx).items():
                peaks[scope] = max(peaks.get(scope, 0), peak)
        for scope, peak in peaks.items():
            ctx.count(f"bytes-planned-{scope}", peak)

    def _plan(self, func: Operation, target, ctx: PassContext) -> dict[str, int]:
        order = ProgramOrder(func)
        by_scope: dict[str, list[_Slot]] = {}
        allocs = [op for op in func.walk() if op.name == "hivm.alloc"]
        for i, alloc in enumerate(allocs):
            t: MemRefType = alloc.result.type
            if t.scope is None:
                raise PassError(f"{self.name}: {alloc.loc}: buffer %{_name(alloc, i)} has no memory scope "
                                f"(run hivm-infer-mem-scope first)")  # fmt: skip
            live = buffer_lifetime(alloc, order)  # scratch (the code generator's temporary UB): the whole kernel
            size = align_up(int(t.nbytes), target.alignment(t.scope))
            n = alloc.attributes.get("multi_buffer", 1)
            by_scope.setdefault(t.scope, []).extend(_Slot(alloc, c, size, live) for c in range(n))
        peaks = {}
        for scope, slots in by_scope.items():
            peak = _first_fit(slots, target.alignment(scope))
            if peak > target.capacity(scope):
                raise self._overflow(func, scope, peak, target.capacity(scope), slots, allocs)
            for alloc in dict.fromkeys(s.alloc for s in slots):
                alloc.attributes["offsets"] = [s.offset for s in sorted(slots, key=lambda s: s.copy)
                                               if s.alloc is alloc]  # fmt: skip
                ctx.count("buffers-planned")
            peaks[scope] = peak
        return peaks

    def _overflow(self, func, scope, needed, available, slots, allocs) -> MemoryPlanOverflow:
        uses = {}
        for s in slots:
            b = uses.get(id(s.alloc))
            name = _name(s.alloc, allocs.index(s.alloc))
            uses[id(s.alloc)] = BufferUse(name, int(s.alloc.result.type.nbytes), (b.copies + 1) if b else 1)
        largest = sorted(uses.values(), key=lambda b: (-b.nbytes * b.copies, b.name))
        multi = sum(1 for b in largest if b.copies > 1)
        return MemoryPlanOverflow(func.attributes.get("sym_name", "?"), scope, needed, available, largest, multi)


__all__ = ["PlanMemory", "MemoryPlanOverflow", "BufferUse"]

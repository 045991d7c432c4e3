"""Checks a memory plan: no two buffers live at the same time share a byte of a local memory (for
hivm-verify-memory-plan).

Every local ``hivm.alloc`` of a function must carry ``offsets`` (one byte offset per copy: n for a
``multi_buffer = n`` alloc, one for each copy enable-multi-buffer split off). Copy ``i`` occupies bytes
``[offsets[i], offsets[i] + nbytes)`` of its scope over the buffer's lifetime
(:func:`~graph_passes.analysis.liveness.buffer_lifetime`, the one hivm-plan-memory places by). The copies of one
alloc are live together, so they must not overlap each other either; an in-place reuse is one alloc, so it needs no
declaration. A copy must also end within its scope's capacity.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir.core import Operation
from .liveness import ProgramOrder, buffer_lifetime


@dataclass(frozen=True)
class PlacedCopy:
    """One copy of a local buffer as the plan placed it."""

    name: str
    copy: int
    copies: int
    scope: str
    start: int  # byte offset in the scope
    nbytes: int
    live: tuple[int, int]  # program positions, inclusive

    @property
    def end(self) -> int:
        return self.start + self.nbytes

    def describe(self) -> str:
        which = f"%{self.name}" + (f" (copy {self.copy} of {self.copies})" if self.copies > 1 else "")
        return f"{which} bytes [{self.start}, {self.end}) live [{self.live[0]}, {self.live[1]}]"


@dataclass(frozen=True)
class PlanViolation:
    """Why a plan is wrong: two live copies sharing bytes, a copy past its scope's capacity, or an unplanned buffer."""

    kernel: str
    message: str

    def __str__(self) -> str:
        return f"kernel {self.kernel}: {self.message}"


def _buffer_name(alloc: Operation, i: int) -> str:
    return alloc.result.name_hint or f"alloc{i}"


def placed_copies(func: Operation) -> tuple[list[PlacedCopy], list[str]]:
    """The placed copies of ``func``'s local buffers, and the names of local buffers without a plan."""
    order = ProgramOrder(func)
    copies, unplanned = [], []
    for i, alloc in enumerate(op for op in func.walk() if op.name == "hivm.alloc"):
        t = alloc.result.type
        if t.scope in (None, "gm"):
            continue
        offsets = alloc.attributes.get("offsets")
        n = alloc.attributes.get("multi_buffer", 1)
        name = _buffer_name(alloc, i)
        if offsets is None or len(offsets) != n:
            got = "no offsets" if offsets is None else f"{len(offsets)} offsets for {n} copies"
            unplanned.append(f"%{name} has {got}")
            continue
        live = buffer_lifetime(alloc, order)
        copies.extend(PlacedCopy(name, c, n, t.scope, int(off), int(t.nbytes), live) for c, off in enumerate(offsets))
    return copies, unplanned


def plan_violations(func: Operation, target) -> list[PlanViolation]:
    """Every violation of ``func``'s memory plan (empty when the plan is sound)."""
    kernel = func.attributes.get("sym_name", "?")
    copies, unplanned = placed_copies(func)
    out = [PlanViolation(kernel, f"local buffer {u} (run hivm-plan-memory)") for u in unplanned]
    by_scope: dict[str, list[PlacedCopy]] = {}
    for c in copies:
        by_scope.setdefault(c.scope, []).append(c)
    for scope, group in by_scope.items():
        cap = target.capacity(scope)
        for c in group:
            if c.start < 0 or c.end > cap:
                out.append(PlanViolation(kernel, f"{scope.upper()} buffer {c.describe()} lies outside "
                                                 f"[0, {cap})"))  # fmt: skip
        group = sorted(group, key=lambda c: (c.start, c.end))
        for i, a in enumerate(group):
            for b in group[i + 1:]:
                if b.start >= a.end:
                    break  # sorted by start: no later copy overlaps a's bytes
                if a.live[0] <= b.live[1] and b.live[0] <= a.live[1] and a.nbytes and b.nbytes:
                    out.append(PlanViolation(kernel, f"{scope.upper()} buffers {a.describe()} and {b.describe()} "
                                                     f"share bytes while both live"))  # fmt: skip
    return out

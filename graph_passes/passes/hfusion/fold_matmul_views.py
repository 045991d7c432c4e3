"""``hfusion-fold-matmul-views``: transposes and batch broadcasts around a matmul become the matmul's own reading.

The cube reads an operand in either orientation (``transpose_a``/``transpose_b``: the MTE1 load transposes the L1
tile) and a ``batch_matmul`` reads a rank-2 operand for every batch (docs/cube.md), so these views need no kernel:

================================================  ==============================================================
matched                                           becomes
================================================  ==============================================================
``mm(transpose(x), b)`` (the last two dims        ``mm(x, b) {transpose_a = !transpose_a}``, the same for ``b``;
swapped, the others kept)                         ``x @ w.t()``, ``grad_out.t() @ x``
``bmm(reshape(transpose(x)), b)``, the reshape    ``bmm(reshape(x), b) {transpose_a = !transpose_a}``: the
only regrouping the leading (batch) dims          attention's ``q @ k.transpose(-2, -1)`` over [B, H, T, D]
``bmm(a, broadcast(x))`` (optionally through a    ``bmm(a, x)``: ``x`` is rank 2, one matrix for every batch
reshape of the batch dims), ``x`` rank 2 and      (``a @ w`` with ``w`` expanded over the batch); only while the
every leading dim broadcast                       other operand keeps its batch dim
``transpose(mm(a, b))`` (the last two dims        ``mm(b, a) {transpose_a = !tb, transpose_b = !ta}``:
swapped), optionally through a batch-regrouping   (A·B)ᵀ = Bᵀ·Aᵀ, the product written in the orientation its
reshape; the product read by nothing else         user wants (a weight gradient returned as ``w``'s layout)
================================================  ==============================================================

A transpose, reshape or broadcast with other users stays for them (it is erased when the matmul was its last
user). Runs in ``HFUSION_PREPARE`` after the first ``canonicalize``/``cse``, so a transpose CSE merged is seen with
all its users. Counters: ``transposes-folded``, ``broadcasts-folded``, ``results-transposed``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...ir.core import Operation, Value
from ...rewrite import Pattern, Rewriter, apply_patterns_greedily
from ..canonicalize import erase_dead_pure
from .. import ModulePass, PassContext, register_pass

MATMULS = ("hfusion.matmul", "hfusion.batch_matmul")
FLAGS = ("transpose_a", "transpose_b")


def _defining(v: Value, name: str) -> Operation | None:
    op = getattr(v, "op", None)
    return op if op is not None and op.name == name else None


def swaps_last_two(op: Operation) -> bool:
    """A transpose that swaps the last two dims and keeps every other in place."""
    perm = list(op.attributes["perm"])
    n = len(perm)
    return n >= 2 and perm == list(range(n - 2)) + [n - 1, n - 2]


def regroups_batch(op: Operation) -> bool:
    """A reshape that keeps the last two dims: it only regroups the leading ones (row-major, so every matrix keeps
    its elements in place)."""
    src, dst = op.operand("input").type.shape, op.result.type.shape
    return len(src) >= 2 and len(dst) >= 2 and list(src[-2:]) == list(dst[-2:])


def _swapped(shape) -> list:
    return list(shape[:-2]) + [shape[-1], shape[-2]]


def _flip(mm: Operation, i: int, rw: Rewriter, operand: Value) -> None:
    ops = list(mm.operands)
    ops[i] = operand
    rw.set_operands(mm, ops)
    mm.attributes[FLAGS[i]] = not mm.attributes[FLAGS[i]]
    rw.modified(mm)


def fold_operand_transpose(mm: Operation, rw: Rewriter) -> bool:
    """mm(transpose(x)) -> mm(x) with the flag flipped; through a batch-regrouping reshape for batch_matmul."""
    if len(mm.operands) != 2:  # an accumulating matmul: hivm-normalize-matmul runs first
        return False
    for i, v in enumerate(mm.operands):
        t = _defining(v, "hfusion.transpose")
        if t is not None and swaps_last_two(t):
            _flip(mm, i, rw, t.operand("input"))
            return True
        r = _defining(v, "hfusion.reshape")
        t = _defining(r.operand("input"), "hfusion.transpose") if r is not None and regroups_batch(r) else None
        if t is not None and swaps_last_two(t):
            x = t.operand("input")
            new = rw.create("hfusion.reshape", [x], [v.type.with_shape(tuple(_swapped(v.type.shape)))],
                            before=mm, loc=r.loc)
            _flip(mm, i, rw, new.result)
            return True
    return False


def _broadcast_matrix(v: Value) -> Value | None:
    """The rank-2 matrix ``v`` broadcasts over every leading dim (through a batch-regrouping reshape), or None."""
    r = _defining(v, "hfusion.reshape")
    if r is not None and regroups_batch(r):
        v = r.operand("input")
    b = _defining(v, "hfusion.broadcast")
    if b is None:
        return None
    x = b.operand("input")
    rank = b.result.type.rank
    if x.type.rank != 2 or list(b.attributes["dims"]) != list(range(rank - 2)):
        return None
    return x


def fold_operand_broadcast(mm: Operation, rw: Rewriter) -> bool:
    """batch_matmul(a, broadcast(x)) -> batch_matmul(a, x), x rank 2, while the other operand keeps its batch."""
    if mm.name != "hfusion.batch_matmul" or len(mm.operands) != 2:
        return False
    for i, v in enumerate(mm.operands):
        other = mm.operands[1 - i]
        x = _broadcast_matrix(v) if v.type.rank == 3 and other.type.rank == 3 else None
        if x is not None:
            ops = list(mm.operands)
            ops[i] = x
            rw.set_operands(mm, ops)
            return True
    return False


def fold_result_transpose(t: Operation, rw: Rewriter) -> bool:
    """transpose(mm(a, b)) -> mm(b, a) with both flags flipped (through a batch-regrouping reshape)."""
    if not swaps_last_two(t):
        return False
    v = t.operand("input")
    r = _defining(v, "hfusion.reshape")
    if r is not None and regroups_batch(r) and len(v.uses) == 1:
        v = r.operand("input")
    mm = getattr(v, "op", None)
    if mm is None or mm.name not in MATMULS or len(v.uses) != 1 or len(mm.operands) != 2:
        return False
    a, b = mm.operands
    ta, tb = (bool(mm.attributes[f]) for f in FLAGS)
    out = mm.result.type
    new = rw.create(mm.name, [b, a], [out.with_shape(tuple(_swapped(out.shape)))],
                    {"transpose_a": not tb, "transpose_b": not ta}, before=t, loc=mm.loc)
    result = new.result
    if result.type.shape != t.result.type.shape:  # the batch dims regrouped as the reshape did
        result = rw.create("hfusion.reshape", [result], [t.result.type], before=t, loc=r.loc).result
    rw.replace_op(t, [result])
    return True


PATTERNS = [
    *(Pattern(name, fold_operand_transpose, "fold_operand_transpose", "transposes-folded") for name in MATMULS),
    Pattern("hfusion.batch_matmul", fold_operand_broadcast, "fold_operand_broadcast", "broadcasts-folded"),
    Pattern("hfusion.transpose", fold_result_transpose, "fold_result_transpose", "results-transposed"),
    Pattern(None, erase_dead_pure, "erase_dead_pure", "ops-erased"),
]
COUNTERS = ("transposes-folded", "broadcasts-folded", "results-transposed")


@register_pass
@dataclass(frozen=True)
class FoldMatmulViews(ModulePass):
    """Fold last-two-dims transposes and batch broadcasts around matmuls into their flags and operands."""

    name: ClassVar[str] = "hfusion-fold-matmul-views"

    def run(self, module: Operation, ctx: PassContext) -> None:
        stats = apply_patterns_greedily(module, PATTERNS)
        for counter in COUNTERS:
            ctx.count(counter, stats.by_counter.get(counter, 0))

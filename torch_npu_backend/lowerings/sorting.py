"""sort (argsort and msort reach it through their CompositeImplicitAutograd kernels) and topk on the vector unit.

Both work on rows ``[R, n]``: the dim sorted is the last one, or another dim moved last by a transpose (and moved
back after; a single row is sorted as two copies). Values compare as f32 (floats:
f16/bf16 widen exactly) or as i64 (integers: exact; the vector unit reduces no i32); positions are f32 (exact).
The values returned are a gather of the input at the positions found, so they are the input's own bits.

**sort** of rows of at most :data:`MAX_SORT` elements is a rank sort, the all-pairs form of a sorting network's
compare-exchanges (``n`` columns of compare/select vector ops over ``[R, n]`` instead of
``⌈log2 n⌉·(⌈log2 n⌉+1)/2`` dependent network levels, whose interleaving of pairs has no vector lowering inside a
kernel)::

    before_j[r, i] = x_j precedes x_i:  x_j < x_i  (x_j <= x_i for i > j: ties in position order; > / >= descending)
    rank[r, i]     = Σ_j before_j[r, i]                                     (x_i's place in the result)
    index[r, p]    = Σ_i (rank[r, i] == p ? i : 0)                          (the position that lands at p; [R, n, n])
    values         = gather(x, index)

NaN sorts after every number (before them, descending) and ties with another NaN, as eager. Ties come out in
position order: the result is eager's ``stable=True`` sort, and one valid answer of ``stable=False`` (whose order
of ties is unspecified).

**topk** keeps ``k`` (at most :data:`MAX_TOPK`) rounds of an argmax (``lowerings/arg_reductions.py``) over the
positions not yet taken, each a reduction and a first-position select over ``[R, n]``: the largest (smallest)
value left, NaN counting as the largest, its first position among ties. Rows of any length up to 2^23 (symbolic
too); ``sorted`` is always honoured (eager's order for ``sorted=False`` is unspecified).

Larger rows or ``k`` fall back to the host (``fallback="auto"``) with a reason naming the op and the numbers.
"""

from __future__ import annotations

import sympy
import torch

from graph_passes.dialects.hfusion import (ArangeOp, BroadcastOp, ConcatOp, ElemwiseUnaryOp, FillOp, GatherOp, SliceOp,
                                           TransposeOp)
from graph_passes.ir.types import INT_LIMITS, TensorType, is_float_dtype

from . import register_lowering
from .common import binary, compare, normalize_dim, reduce, select

aten = torch.ops.aten

MAX_SORT = 16
"""Longest row sorted on the vector unit: its ``[n, n]`` compares per row grow as n²."""
MAX_TOPK = 16
"""Most rounds of topk unrolled on the vector unit (one reduction pair each)."""
SECOND = 2**23
"""topk: added to the positions of the class picked second; rows are at most this long (f32 is exact to 2^24)."""


def _rows(ctx, x, dim, what):
    """``(rows [R, n] in the compare dtype, rows in x's dtype, restore)``: ``restore(v)`` turns a ``[R, m]`` result
    back into x's layout with ``m`` along ``dim``."""
    v = ctx.tensor(x)
    rank = v.type.rank
    d = normalize_dim(ctx, dim, rank)
    n = v.type.shape[d]
    if d == rank - 1:
        lead = list(v.type.shape[:-1])
        rows = ctx.reshape(v, [sympy.Mul(*lead) if lead else 1, n])

        def restore(r):
            return ctx.reshape(r, lead + [r.type.shape[1]])
    elif rank == 2:  # dim 0 of a matrix: its columns are the rows
        c = v.type.shape[1]
        rows = ctx.emit(TransposeOp, [v], TensorType((c, n), v.type.dtype), perm=[1, 0])

        def restore(r):
            return ctx.emit(TransposeOp, [r], TensorType((r.type.shape[1], c), r.type.dtype), perm=[1, 0])
    else:  # another dim of a higher rank: moved last by a transpose, the others in order as the rows
        perm = [i for i in range(rank) if i != d] + [d]
        lead = [v.type.shape[i] for i in perm[:-1]]
        moved = ctx.emit(TransposeOp, [v], TensorType(tuple(lead + [n]), v.type.dtype), perm=perm)
        rows = ctx.reshape(moved, [sympy.Mul(*lead), n])
        inverse = [perm.index(i) for i in range(rank)]

        def restore(r):
            m = r.type.shape[1]
            back = [(lead + [m])[i] for i in inverse]
            return ctx.emit(TransposeOp, [ctx.reshape(r, lead + [m])], TensorType(tuple(back), r.type.dtype),
                            perm=inverse)
    if rows.type.shape[0] == 1:  # one row: sorted as two copies (a one-row plane's ops fold into reshapes that
        one, row = restore, rows  # have no vector lowering inside a kernel), the first one kept
        rows = ctx.broadcast_to(row, [2, n])

        def restore(r):
            return one(ctx.emit(SliceOp, [r], r.type.with_shape((1, r.type.shape[1])), offsets=[0, 0],
                                sizes=[1, r.type.shape[1]], strides=[1, 1]))
    keys = ctx.cast(rows, "f32" if is_float_dtype(v.type.dtype) else "i64")  # exact; the unit has no i32 vreduce
    return keys, rows, restore


def _empty(v) -> bool:
    """``v`` has a dim of static size 0 (no element to sort or pick)."""
    return any(d.is_Integer and int(d) == 0 for d in v.type.shape)


def _positions(ctx, n, shape):
    """``arange(n)`` in f32 reshaped to ``shape`` (one dim of ``n``, the others 1)."""
    return ctx.reshape(ctx.emit(ArangeOp, [], TensorType((n,), "f32"), start=0, step=1), shape)


def _either(ctx, a, b):
    return binary(ctx, "logical_or", a, b)


def _both(ctx, a, b):
    return binary(ctx, "logical_and", a, b)


def _rank(ctx, keys, descending):
    """``rank[r, i]`` (f32): how many elements of row r come before element i in the sorted row — per column j,
    the compares of ``x_j`` (spread along the row) with the whole row, summed."""
    rows, n = keys.type.shape
    plane = TensorType((rows, n), "f32")
    floats = is_float_dtype(keys.type.dtype)
    whole = _view(ctx, keys, 0, n)  # the row as a view too: a kernel argument that is viewed is only viewed
    nan = compare(ctx, "ne", whole, whole) if floats else None
    one, zero = ctx.scalar(1.0, "f32"), ctx.scalar(0.0, "f32")
    arange = ctx.emit(ArangeOp, [], TensorType((n,), "f32"), start=0, step=1)
    strict, loose = ("gt", "ge") if descending else ("lt", "le")
    rank = None
    for j in range(n):
        xj = _spread(ctx, _column(ctx, whole, arange, j), plane, [1])
        after = _spread(ctx, compare(ctx, "gt", arange, ctx.scalar(float(j), "f32")), plane, [0])  # i > j
        before = select(ctx, after, compare(ctx, loose, xj, whole), compare(ctx, strict, xj, whole))  # numbers
        if floats:  # NaN: after every number ascending, before them descending; NaNs in position order
            nan_j = compare(ctx, "ne", xj, xj)
            nans_tie = _both(ctx, nan_j, after)
            if descending:
                before = select(ctx, nan, nans_tie, _either(ctx, before, nan_j))
            else:
                before = select(ctx, nan, _either(ctx, nans_tie, _negate(ctx, nan_j)), before)
        count = select(ctx, before, one, zero)
        rank = count if rank is None else binary(ctx, "add", rank, count)
    return rank


def _view(ctx, v, j, width):
    """``v[:, j:j+width]`` as an ``hfusion.slice`` (kept when it is all of ``v``: a kernel argument that is viewed
    is only viewed)."""
    rows = v.type.shape[0]
    return ctx.emit(SliceOp, [v], TensorType((rows, width), v.type.dtype), offsets=[0, j], sizes=[rows, width],
                    strides=[1, 1])


def _column(ctx, whole, arange, j):
    """``whole[:, j]`` as a vector ``[R]``: the row's elements other than j selected to 0 and summed (exact: one
    term; NaN and infinities kept). A slice of one column would be a reduction or reshape of a unit dim, which
    canonicalizes into a reshape with no vector lowering inside a kernel."""
    rows, n = whole.type.shape
    at = _spread(ctx, compare(ctx, "eq", arange, ctx.scalar(float(j), "f32")), TensorType((rows, n), "i1"), [0])
    return reduce(ctx, "sum", select(ctx, at, whole, ctx.scalar(0, whole.type.dtype)), [1], False)


def _negate(ctx, mask):
    return ctx.emit(ElemwiseUnaryOp, [mask], mask.type, fun="logical_not")


def _sort_rows(ctx, keys, descending):
    """The f32 positions ``[R, n]`` of the sorted rows: the rank sort of the module docstring."""
    rows, n = keys.type.shape
    rank = _rank(ctx, keys, descending)  # [R, n]: each row a permutation of 0..n-1
    cube = TensorType((rows, n, n), "f32")  # [R, p, i]
    arange = ctx.emit(ArangeOp, [], TensorType((n,), "f32"), start=0, step=1)
    lands = compare(ctx, "eq", _spread(ctx, rank, cube, [1]), _spread(ctx, arange, cube, [0, 2]))
    picked = select(ctx, lands, _spread(ctx, arange, cube, [0, 1]), ctx.scalar(0.0, "f32"))
    return reduce(ctx, "sum", picked, [2], False)


def _spread(ctx, v, out_type, dims):
    """``v`` broadcast into ``out_type``'s shape along the new ``dims`` (no reshape inside the kernel)."""
    return ctx.emit(BroadcastOp, [v], out_type.with_dtype(v.type.dtype), dims=dims)


def _gathered(ctx, rows, positions, restore, out_values, out_indices):
    index = ctx.cast(positions, "i32")
    values = ctx.emit(GatherOp, [rows, index], TensorType(tuple(positions.type.shape), rows.type.dtype), dim=1)
    values = ctx.reshape(restore(values), out_values.shape)
    return values, ctx.reshape(restore(ctx.cast(positions, "i64")), out_indices.shape)


def _sort(ctx, x, dim, descending):
    out_values, out_indices = ctx.out_type(0), ctx.out_type(1)
    if ctx.tensor(x).type.rank == 0 or _empty(ctx.tensor(x)):
        return ctx.tensor(x), ctx.emit(FillOp, [], out_indices, value=0)
    keys, rows, restore = _rows(ctx, x, dim, "sort")
    n = keys.type.shape[1]
    if not n.is_Integer:
        raise ctx.error(f"sort of rows of symbolic length {n}: the vector unit sorts rows of a static length")
    if int(n) > MAX_SORT:
        raise ctx.error(f"sort of rows of {n} elements: the vector unit sorts rows of at most {MAX_SORT}")
    return _gathered(ctx, rows, _sort_rows(ctx, keys, descending), restore, out_values, out_indices)


@register_lowering(aten.sort.default)
def sort(ctx, x, dim=-1, descending=False):
    return _sort(ctx, x, dim, descending)


@register_lowering(aten.sort.stable)
def sort_stable(ctx, x, *, stable=None, dim=-1, descending=False):
    return _sort(ctx, x, dim, descending)


@register_lowering(aten.topk.default)
def topk(ctx, x, k, dim=-1, largest=True, sorted=True):
    out_values, out_indices = ctx.out_type(0), ctx.out_type(1)
    if not isinstance(k, int):
        raise ctx.error(f"k={k}: a symbolic k")
    if ctx.tensor(x).type.rank == 0:
        return ctx.tensor(x), ctx.emit(FillOp, [], out_indices, value=0)
    if _empty(ctx.tensor(x)) or k == 0:  # nothing to pick: empty results
        return ctx.emit(FillOp, [], out_values, value=0), ctx.emit(FillOp, [], out_indices, value=0)
    keys, rows, restore = _rows(ctx, x, dim, "topk")
    r, n = keys.type.shape
    if k > MAX_TOPK:
        raise ctx.error(f"topk with k={k} of rows of {n}: the vector unit unrolls at most {MAX_TOPK} rounds")
    index = _top_positions(ctx, keys, k, largest)
    return _gathered(ctx, rows, index, restore, out_values, out_indices)


def _top_positions(ctx, keys, k, largest):
    """The f32 positions ``[R, k]`` of a row's ``k`` largest (smallest) keys, best first, ties by position.

    Per round: ``m`` = the extreme of the numbers not yet taken; a candidate's rank ``c`` is its position, plus
    :data:`SECOND` for the class picked second (numbers when ``largest``: a NaN is larger; NaNs otherwise),
    ``2·SECOND`` when taken or not at ``m``; the round picks ``min(c)`` (less ``SECOND`` when it is that or more)."""
    r, n = keys.type.shape
    if n.is_Integer and int(n) > SECOND:
        raise ctx.error(f"topk of rows of {n}: positions are f32, exact up to 2^24 with {SECOND} added")
    if not n.is_Integer:
        ctx.assert_predicate(sympy.Le(n, SECOND), ctx.node_name(), "topk's positions are f32, exact below 2^24")
    floats = is_float_dtype(keys.type.dtype)
    positions = ctx.broadcast_to(_positions(ctx, n, [1, n]), [r, n])
    later = binary(ctx, "add", positions, ctx.scalar(float(SECOND), "f32"))
    number_pos, nan_pos = (later, positions) if largest else (positions, later)
    past, shift = ctx.scalar(float(2 * SECOND), "f32"), ctx.scalar(float(SECOND), "f32")
    nan = compare(ctx, "ne", keys, keys) if floats else None
    worst = _worst(ctx, keys.type.dtype, largest)
    taken, picks = None, []
    for _ in range(k):
        out = taken if nan is None else (nan if taken is None else _either(ctx, taken, nan))
        left = keys if out is None else select(ctx, out, worst, keys)
        extreme = reduce(ctx, "max" if largest else "min", left, [1], True)
        at = compare(ctx, "eq", left, extreme)
        if nan is not None:
            at = _both(ctx, at, _negate(ctx, nan))
        c = select(ctx, at, number_pos if floats else positions, past)
        if nan is not None:
            c = select(ctx, nan, nan_pos, c)
        if taken is not None:
            c = select(ctx, taken, past, c)
        first = reduce(ctx, "min", c, [1], True)  # [R, 1]
        if floats:
            first = select(ctx, compare(ctx, "ge", first, shift), binary(ctx, "sub", first, shift), first)
        picks.append(first)
        hit = compare(ctx, "eq", positions, first)
        taken = hit if taken is None else _either(ctx, taken, hit)
    return picks[0] if k == 1 else ctx.emit(ConcatOp, picks, TensorType((r, k), "f32"), dim=1)


def _worst(ctx, dtype, largest):
    """The key a taken position (or a NaN) reads as in the reduction: never more extreme than an untaken number."""
    if is_float_dtype(dtype):
        return ctx.scalar(float("-inf") if largest else float("inf"), dtype)
    lo, hi = INT_LIMITS[dtype]
    return ctx.scalar(lo if largest else hi, dtype)

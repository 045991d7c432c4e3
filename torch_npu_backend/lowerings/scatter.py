"""scatter_add and scatter_reduce (sum, prod, mean, amax, amin; ``include_self`` either way) on the vector unit,
in eager's order so that float results are bit for bit eager's.

``out = x; out[.., index[.., j, ..], ..] ⊕= src[.., j, ..]`` along ``dim``: eager's CPU kernel visits the index
elements in order, so each output element accumulates its sources in increasing ``j``. The lowering unrolls the
``K = index.shape[dim]`` steps in that order, each a one-hot compare and a select over the region of ``x`` the index
covers (its extents, with ``x``'s full extent along ``dim``)::

    hot_j = index[.., j:j+1, ..] == positions-along-dim                 (i32 compares, an index narrowed to i32)
    acc   = where(hot_j, acc ⊕ src_j, acc)                              (include_self)
    acc   = where(hot_j, where(seen, acc ⊕ src_j, src_j), acc);  seen |= hot_j      (not include_self)

``⊕`` is add (sum, mean), mul (prod), or eager's max/min (a NaN source or accumulator wins). f16/bf16 accumulate
in f32 and round once, as eager's CPU kernel. ``mean`` divides the sum (rounded to the dtype) by the count of
sources (plus one with ``include_self``; a count of 0 reads 1, as eager) in the dtype, floor division for integers.
The region is put back into ``x`` by concats. Indices outside the dim match no position (eager raises).

More than :data:`MAX_STEPS` steps fall back to the host with a reason naming the op and K.
"""

from __future__ import annotations

import sympy
import torch

from graph_passes.dialects.hfusion import ConcatOp, SliceOp
from graph_passes.ir.types import TensorType, is_float_dtype

from ..dtypes import opmath
from . import register_lowering
from .common import binary, compare, normalize_dim, select
from .indexing import _as_position, _positions

aten = torch.ops.aten

MAX_STEPS = 32
"""Most index elements along ``dim`` unrolled as steps (each a compare and a few selects over the region)."""

COMBINE = {"sum": "add", "mean": "add", "prod": "mul", "amax": "max", "amin": "min"}


@register_lowering(aten.scatter_add.default)
def scatter_add(ctx, x, dim, index, src):
    return _scatter_reduce(ctx, x, dim, index, src, "sum", True)


@register_lowering(aten.scatter_reduce.two)
def scatter_reduce(ctx, x, dim, index, src, reduce, *, include_self=True):
    if reduce not in COMBINE:
        raise ctx.error(f"reduce={reduce!r} ({', '.join(COMBINE)})")
    return _scatter_reduce(ctx, x, dim, index, src, reduce, include_self)


def _scatter_reduce(ctx, x, dim, index, src, reduce, include_self):
    out = ctx.out_type()
    v, idx, s = ctx.tensor(x), ctx.tensor(index), ctx.tensor(src)
    if v.type.rank == 0:  # torch treats 0-d operands as 1-element vectors
        v, idx, s = (ctx.reshape(t, [1]) if t.type.rank == 0 else t for t in (v, idx, s))
    rank = v.type.rank
    d = normalize_dim(ctx, dim, rank)
    if idx.type.rank != rank or s.type.rank != rank:
        raise ctx.error(f"index {idx.type} and src {s.type} must have the rank of the input {v.type}")
    ishape = idx.type.shape
    if not all(e.is_Integer for e in ishape):
        raise ctx.error(f"an index of symbolic shape {tuple(map(str, ishape))}")
    k = int(ishape[d])
    if k > MAX_STEPS:
        raise ctx.error(f"{k} index elements along dim {d}: at most {MAX_STEPS} steps are unrolled on the vector unit")
    if out.dtype == "i1":
        raise ctx.error(f"{reduce} of bools")
    if idx.type.numel() == 0:
        return ctx.cast(v, out.dtype)
    n = v.type.shape[d]
    region = tuple(n if i == d else ishape[i] for i in range(rank))
    compute = opmath(out.dtype)  # eager accumulates f16/bf16 in f32 and rounds once
    acc = _corner(ctx, ctx.cast(v, compute), region)
    s = _corner(ctx, ctx.cast(s, compute), tuple(ishape))
    along = ctx.reshape(_positions(ctx, n), [n if i == d else 1 for i in range(rank)])
    step_shape = tuple(1 if i == d else e for i, e in enumerate(ishape))
    seen = None
    count = ctx.scalar(1 if include_self else 0, out.dtype) if reduce == "mean" else None
    for j in range(k):
        idx_j = _step(ctx, idx, d, j, step_shape)
        hot = ctx.broadcast_to(compare(ctx, "eq", _as_position(ctx, idx_j), along), region)
        s_j = ctx.broadcast_to(_step(ctx, s, d, j, step_shape), region)
        combined = _combine(ctx, reduce, acc, s_j)
        if not include_self:
            combined = s_j if seen is None else select(ctx, seen, combined, s_j)
            seen = hot if seen is None else binary(ctx, "logical_or", seen, hot)
        acc = select(ctx, hot, combined, acc)
        if count is not None:
            count = binary(ctx, "add", count, select(ctx, hot, ctx.scalar(1, out.dtype), ctx.scalar(0, out.dtype)))
    acc = ctx.cast(acc, out.dtype)
    if count is not None:  # eager: the sum rounded to the dtype, divided by the count in the dtype
        count = binary(ctx, "max", count, ctx.scalar(1, out.dtype))  # no source and no self: divide by 1
        acc = binary(ctx, "div" if is_float_dtype(out.dtype) else "floordiv", acc, count)
    return _put_back(ctx, ctx.cast(v, out.dtype), acc)


def _combine(ctx, reduce, acc, s):
    fun = COMBINE[reduce]
    res = binary(ctx, fun, acc, s)
    if fun in ("max", "min") and is_float_dtype(acc.type.dtype):  # eager: a NaN source wins, then a NaN accumulator
        res = select(ctx, compare(ctx, "ne", acc, acc), acc, res)
        res = select(ctx, compare(ctx, "ne", s, s), s, res)
    return res


def _step(ctx, v, d, j, shape):
    """``v[.., j:j+1, ..]`` along ``d``."""
    if v.type.shape[d] == 1:
        return v
    offsets = [j if i == d else 0 for i in range(v.type.rank)]
    return ctx.emit(SliceOp, [v], TensorType(shape, v.type.dtype), offsets=offsets, sizes=list(shape),
                    strides=[1] * v.type.rank)


def _corner(ctx, v, shape):
    """``v[:shape[0], :shape[1], ..]`` (``v`` itself when that is all of it)."""
    if tuple(v.type.shape) == tuple(shape):
        return v
    for i, (have, want) in enumerate(zip(v.type.shape, shape)):
        if sympy.simplify(have - want) != 0 and not (have.is_Integer and want.is_Integer and int(have) > int(want)):
            raise ctx.error(f"index extent {want} of dim {i} exceeds the extent {have} it scatters into or from")
    return ctx.emit(SliceOp, [v], TensorType(tuple(shape), v.type.dtype), offsets=[0] * v.type.rank,
                    sizes=list(shape), strides=[1] * v.type.rank)


def _put_back(ctx, v, region):
    """``v`` with its corner ``v[:r0, :r1, ..]`` replaced by ``region``: from the last dim up, a concat of what is
    built so far and the rest of ``v`` along that dim (whole along the dims after it)."""
    shape = list(v.type.shape)
    out = region
    for i in reversed(range(v.type.rank)):
        have = out.type.shape[i]
        if sympy.simplify(shape[i] - have) == 0:
            continue
        rest_shape = [*region.type.shape[:i], shape[i] - have, *shape[i + 1:]]
        offsets = [have if a == i else 0 for a in range(v.type.rank)]
        rest = ctx.emit(SliceOp, [v], TensorType(tuple(rest_shape), v.type.dtype), offsets=offsets,
                        sizes=rest_shape, strides=[1] * v.type.rank)
        joined = [*region.type.shape[:i], shape[i], *shape[i + 1:]]
        out = ctx.emit(ConcatOp, [out, rest], TensorType(tuple(joined), v.type.dtype), dim=i)
    return ctx.reshape(out, ctx.out_type().shape)

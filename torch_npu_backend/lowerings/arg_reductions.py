"""argmax / argmin over a dim (or over every element), max.dim / min.dim (the values too): the first index of the
extreme value, as eager.

    m = amax(x, dim)                       (amin for argmin; NaN when the row holds one)
    c = where(x == m, i, 2^24)             (i: the position along the dim; 2^24: past every position)
    c = where(x != x, i, c)                (NaN counts as the extreme, as eager's argmax/argmin)
    out = min(c, dim)                      (the first of the tied positions)

Note: the values compare as f32 (floats) or i64 (integers: exact), the positions are f32 (exact below 2^24
elements along the dim: the vector unit selects and reduces f16/f32 lanes, not i64 ones); the result is cast to
i64 once. torch has no decomposition of these ops.
"""

from __future__ import annotations

import torch
from graph_passes.dialects.hfusion import ArangeOp, FillOp
from graph_passes.ir.types import TensorType, is_float_dtype

from . import register_lowering
from .common import compare, normalize_dim, reduce, select

aten = torch.ops.aten

EXACT_POSITIONS = 2**24  # f32 holds every integer up to here


def _arg(ctx, kind, x, dim, keepdim, out=None):
    """(the extreme values as ``x``'s dtype, their first indices as ``out``) over ``dim``."""
    out = out or ctx.out_type()
    v = ctx.tensor(x)
    dtype = v.type.dtype
    if v.type.rank == 0:
        return v, ctx.emit(FillOp, [], out, value=0)  # the one element and its index
    v = ctx.cast(v, "f32" if is_float_dtype(dtype) else "i64")  # exact; the f16 compare's column broadcast
    # would need f16 staging room codegen lacks for 16-row tiles, the i32 max a vreduce the unit lacks
    if dim is None:
        v = ctx.reshape(v, [_numel(v.type.shape)])
        dim = 0
    rank = v.type.rank
    d = normalize_dim(ctx, dim, rank)
    n = v.type.shape[d]
    if n.is_Integer and int(n) > EXACT_POSITIONS:
        raise ctx.error(f"a dim of {n} elements: positions are f32, exact up to {EXACT_POSITIONS}")
    extreme = reduce(ctx, kind, v, [d], True)
    positions = ctx.emit(ArangeOp, [], TensorType((n,), "f32"), start=0, step=1)
    positions = ctx.reshape(positions, [n] + [1] * (rank - d - 1))
    past = ctx.scalar(float(EXACT_POSITIONS), "f32")  # past every position: each row has a match (or a NaN)
    c = select(ctx, compare(ctx, "eq", v, extreme), positions, past)
    if is_float_dtype(v.type.dtype):
        c = select(ctx, compare(ctx, "ne", v, v), positions, c)
    first = reduce(ctx, "min", c, [d], keepdim)
    values = extreme if keepdim else ctx.reshape(extreme, first.type.shape)
    return ctx.cast(values, dtype), ctx.reshape(ctx.cast(first, out.dtype), out.shape)


def _numel(shape):
    n = 1
    for s in shape:
        n = n * s
    return n


@register_lowering(aten.argmax.default)
def argmax(ctx, x, dim=None, keepdim=False):
    return _arg(ctx, "max", x, dim, keepdim)[1]


@register_lowering(aten.argmin.default)
def argmin(ctx, x, dim=None, keepdim=False):
    return _arg(ctx, "min", x, dim, keepdim)[1]


@register_lowering(aten.max.dim)
def max_dim(ctx, x, dim, keepdim=False):
    """``x.max(dim)``: (amax, argmax) — the same extreme and positions."""
    values, indices = _arg(ctx, "max", x, dim, keepdim, ctx.out_type(1))
    return ctx.reshape(values, ctx.out_type(0).shape), indices


@register_lowering(aten.min.dim)
def min_dim(ctx, x, dim, keepdim=False):
    values, indices = _arg(ctx, "min", x, dim, keepdim, ctx.out_type(1))
    return ctx.reshape(values, ctx.out_type(0).shape), indices

"""Reductions → ``hfusion.reduce`` (+ ``hfusion.reshape`` for keepdim). mean/var compute in f32 for f16/bf16."""

from __future__ import annotations

import sympy
import torch

from graph_passes.dialects.hfusion import ArangeOp, ElemwiseBinaryOp, MatmulOp
from graph_passes.ir.types import TensorType, is_float_dtype

from ..dtypes import opmath
from . import register_lowering
from .common import binary, compare, normalize_dim, normalize_dims, numel, reduce, select
from .scans import scan

aten = torch.ops.aten


def _reduce(ctx, kind, x, dims, keepdim, dtype):
    out = ctx.out_type()
    v = ctx.cast(ctx.tensor(x), dtype or out.dtype)
    dims = normalize_dims(ctx, dims, v.type.rank)
    r = reduce(ctx, kind, v, dims, keepdim)
    return ctx.reshape(r, out.shape)


@register_lowering(aten.sum.dim_IntList)
def sum_dim(ctx, x, dim, keepdim=False, *, dtype=None):
    return _reduce(ctx, "sum", x, dim, keepdim, None)


@register_lowering(aten.sum.default)
def sum_all(ctx, x, *, dtype=None):
    return _reduce(ctx, "sum", x, None, False, None)


@register_lowering(aten.prod.dim_int)
def prod_dim(ctx, x, dim, keepdim=False, *, dtype=None):
    return _reduce(ctx, "prod", x, [dim], keepdim, None)


@register_lowering(aten.prod.default)
def prod_all(ctx, x, *, dtype=None):
    return _reduce(ctx, "prod", x, None, False, None)


@register_lowering(aten.amax.default)
def amax(ctx, x, dim=(), keepdim=False):
    return _reduce(ctx, "max", x, dim, keepdim, None)


@register_lowering(aten.amin.default)
def amin(ctx, x, dim=(), keepdim=False):
    return _reduce(ctx, "min", x, dim, keepdim, None)


@register_lowering(aten.any.dim, aten.any.dims, aten.any.default)
def any_(ctx, x, dim=None, keepdim=False):
    return _reduce(ctx, "any", x, dim, keepdim, "i1")


def mean_value(ctx, v, dims, keepdim):
    """sum(v, dims) / numel(dims) in v's dtype (the divisor is a constant, or computed from the sizes)."""
    s = reduce(ctx, "sum", v, dims, keepdim)
    n = ctx.scalar(int(n), v.type.dtype) if (n := numel(v.type.shape, dims)).is_Integer else ctx.size_value(n)
    return ctx.emit(ElemwiseBinaryOp, [s, n], s.type, fun="div")


@register_lowering(aten.mean.dim)
def mean_dim(ctx, x, dim, keepdim=False, *, dtype=None):
    out = ctx.out_type()
    v = ctx.cast(ctx.tensor(x), opmath(out.dtype))
    m = mean_value(ctx, v, normalize_dims(ctx, dim, v.type.rank), keepdim)
    return ctx.reshape(ctx.cast(m, out.dtype), out.shape)


@register_lowering(aten.mean.default)
def mean_all(ctx, x, *, dtype=None):
    return mean_dim(ctx, x, None, False)


def _var_and_mean(ctx, v, dims, correction, keepdim):
    """(sum((v - mean)^2) / max(N - correction, 0), mean with the reduced dims kept) in v's dtype."""
    mean = mean_value(ctx, v, dims, True)
    centered = binary(ctx, "sub", v, mean)
    sq = reduce(ctx, "sum", binary(ctx, "mul", centered, centered), dims, keepdim)
    denom = numel(v.type.shape, dims) - (1 if correction is None else correction)
    if denom.is_Number:
        denom = sympy.Max(denom, 0)  # eager divides by max(N - correction, 0): 0/0 is nan (an empty or short dim)
    d = ctx.scalar(float(denom), sq.type.dtype) if denom.is_Number else ctx.size_value(denom)
    return ctx.emit(ElemwiseBinaryOp, [sq, d], sq.type, fun="div"), mean


@register_lowering(aten.var.correction)
def var(ctx, x, dim=None, *, correction=None, keepdim=False):
    """var = sum((x - mean)^2) / (N - correction)."""
    out = ctx.out_type()
    v = ctx.cast(ctx.tensor(x), opmath(out.dtype))
    res, _ = _var_and_mean(ctx, v, normalize_dims(ctx, dim, v.type.rank), correction, keepdim)
    return ctx.reshape(ctx.cast(res, out.dtype), out.shape)


@register_lowering(aten.var_mean.correction)
def var_mean(ctx, x, dim=None, *, correction=None, keepdim=False):
    """(var, mean) as ``var`` computes them (a batch norm's statistics)."""
    var_t, mean_t = ctx.out_type(0), ctx.out_type(1)
    v = ctx.cast(ctx.tensor(x), opmath(var_t.dtype))
    res, mean = _var_and_mean(ctx, v, normalize_dims(ctx, dim, v.type.rank), correction, keepdim)
    return (ctx.reshape(ctx.cast(res, var_t.dtype), var_t.shape),
            ctx.reshape(ctx.cast(mean, mean_t.dtype), mean_t.shape))


@register_lowering(aten.cumsum.default)
def cumsum(ctx, x, dim, *, dtype=None):
    """A prefix sum as ⌈log2 n⌉ steps ``v = v + v shifted by 2^k along dim`` (zeros shifted in; Hillis and Steele's
    scan): elementwise adds and shifts (a slice and a concatenated fill) the vector kernels run (position ids computed
    as the attention mask's cumsum, for one). Integer sums are exact; a float sum adds in another order than eager's
    left to right, in f32 for f16/bf16 (eager's accumulation type), rounded once. Over a symbolic length (the step count
    would be symbolic) along the last dim: prefix sums by a triangle of ones, :func:`_cumsum_symbolic`."""
    out = ctx.out_type()
    v = ctx.cast(ctx.tensor(x), opmath(out.dtype))
    if v.type.rank == 0:  # a 0-d tensor's cumsum (dim 0 or -1) is the value itself
        return ctx.cast(v, out.dtype)
    d = normalize_dim(ctx, dim, v.type.rank)
    n = v.type.shape[d]
    if not n.is_Integer:
        if d != v.type.rank - 1:
            raise ctx.error(f"cumsum over dim {d} of symbolic length {n}: the scan's step count must be static, and "
                            f"only a last dim of symbolic length is summed by a triangle of ones (dim {d} of rank "
                            f"{v.type.rank})")
        return ctx.cast(_cumsum_symbolic(ctx, v, n), out.dtype)
    (v,) = scan(ctx, [v], d, lambda earlier, later: [binary(ctx, "add", later[0], earlier[0])], [0])
    return ctx.cast(v, out.dtype)


def _cumsum_symbolic(ctx, v, n):
    """The prefix sums over the last dim of symbolic length ``n`` (with ``dynamic=True``: position ids as the
    attention mask's cumsum over the sequence): ``out[.., j] = sum over i <= j of v[.., i]``, with the triangle
    ``i <= j`` from an arange compared with itself (a vector kernel, like a causal mask).

    A float sum (f32: f16/bf16 are summed in f32) is the product ``v @ U`` with ``U[i, j] = (i <= j)``, a cube
    kernel; it adds in the product's order. An integer sum cannot be a product: the cube multiplies f16, bf16 and f32
    only, and f32 sums are exact only below 2^24 — neither the values nor ``n`` are bounded. It is the masked rows
    ``select(i <= j, v[.., i], 0)`` summed over ``i`` in the integer type: exact, O(n^2) per row on the vector
    unit (i64: scalar loops, docs/codegen.md)."""
    dtype = v.type.dtype
    rows = numel(v.type.shape, range(v.type.rank - 1))
    idx = ctx.emit(ArangeOp, [], TensorType((n,), "i64"), start=0, step=1)
    if is_float_dtype(dtype):
        upper = compare(ctx, "le", ctx.reshape(idx, (n, 1)), ctx.reshape(idx, (1, n)))
        ones = select(ctx, upper, ctx.scalar(1, dtype), ctx.scalar(0, dtype))
        prod = ctx.emit(MatmulOp, [ctx.reshape(v, (rows, n)), ones], TensorType((rows, n), dtype))
        return ctx.reshape(prod, v.type.shape)
    lower = compare(ctx, "le", ctx.reshape(idx, (1, n)), ctx.reshape(idx, (n, 1)))  # [j, i] = i <= j
    terms = select(ctx, lower, ctx.reshape(v, (rows, 1, n)), ctx.scalar(0, dtype))  # [row, j, i]
    return ctx.reshape(reduce(ctx, "sum", terms, [2], False), v.type.shape)

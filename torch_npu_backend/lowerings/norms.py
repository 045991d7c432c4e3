"""Normalisations lowered directly (not decomposed) so each becomes one readable hfusion sequence, computed in
f32 for f16/bf16 inputs (as eager's CPU kernels do): softmax, log_softmax, their backward ops, layer norm.
"""

from __future__ import annotations

import torch

from graph_passes.dialects.hfusion import BroadcastOp
from graph_passes.ir.types import TensorType

from ..dtypes import opmath
from . import register_lowering
from .common import binary, normalize_dims, reduce, unary
from .reductions import mean_value

aten = torch.ops.aten


def _shifted(ctx, x, dim, dtype):
    """(x - max(x, dim), sum(exp(x - max), dim)) computed in ``dtype``."""
    v = ctx.cast(ctx.tensor(x), dtype)
    dims = normalize_dims(ctx, dim, v.type.rank)  # none for a 0-d tensor: it is its own row
    shifted = binary(ctx, "sub", v, reduce(ctx, "max", v, dims, True))
    e = unary(ctx, "exp", shifted)
    return shifted, e, reduce(ctx, "sum", e, dims, True)


@register_lowering(aten._softmax.default)
def softmax(ctx, x, dim, half_to_float):
    """softmax = exp(x - max) * (1 / sum(exp(x - max))).

    One reciprocal per row and a multiply per element, as ATen's vectorised CPU kernel (``_vec_softmax_lastdim``)
    computes it: the vector unit's f32 divide costs twice a multiply per repeat."""
    out = ctx.out_type()
    _, e, s = _shifted(ctx, x, dim, opmath(out.dtype))
    return ctx.cast(binary(ctx, "mul", e, unary(ctx, "reciprocal", s)), out.dtype)


@register_lowering(aten._log_softmax.default)
def log_softmax(ctx, x, dim, half_to_float):
    """log_softmax = (x - max) - log(sum(exp(x - max))).

    Over the last dim of an f16/bf16 input, ATen's ``_vec_log_softmax_lastdim`` keeps each row's sum and then its
    log in ``scalar_t`` buffers: both are rounded to the dtype before ``x - max - log_sum`` is computed in f32 and
    rounded once. Its other kernel (a dim with an inner stride) keeps them in f32, as here for every other dim."""
    out = ctx.out_type()
    dtype = opmath(out.dtype)
    shifted, _, s = _shifted(ctx, x, dim, dtype)
    rank = shifted.type.rank
    last = rank > 0 and normalize_dims(ctx, dim, rank) == [rank - 1]
    if last and out.dtype != dtype:
        s = ctx.cast(ctx.cast(s, out.dtype), dtype)
    log_sum = unary(ctx, "log", s)
    if last and out.dtype != dtype:
        log_sum = ctx.cast(ctx.cast(log_sum, out.dtype), dtype)
    return ctx.cast(binary(ctx, "sub", shifted, log_sum), out.dtype)


@register_lowering(aten._softmax_backward_data.default)
def softmax_backward(ctx, grad_output, output, dim, input_dtype):
    """grad_in = y * (g - sum(g * y, dim))."""
    out = ctx.out_type()
    dtype = opmath(out.dtype)
    g, y = ctx.cast(ctx.tensor(grad_output), dtype), ctx.cast(ctx.tensor(output), dtype)
    s = reduce(ctx, "sum", binary(ctx, "mul", g, y), normalize_dims(ctx, dim, y.type.rank), True)
    return ctx.cast(binary(ctx, "mul", y, binary(ctx, "sub", g, s)), out.dtype)


@register_lowering(aten._log_softmax_backward_data.default)
def log_softmax_backward(ctx, grad_output, output, dim, input_dtype):
    """grad_in = g - exp(y) * sum(g, dim)."""
    out = ctx.out_type()
    dtype = opmath(out.dtype)
    g, y = ctx.cast(ctx.tensor(grad_output), dtype), ctx.cast(ctx.tensor(output), dtype)
    s = reduce(ctx, "sum", g, normalize_dims(ctx, dim, y.type.rank), True)
    return ctx.cast(binary(ctx, "sub", g, binary(ctx, "mul", unary(ctx, "exp", y), s)), out.dtype)


def _spread(ctx, r, like: TensorType, dims: list[int]):
    """A reduction result over ``dims`` broadcast back to the shape of ``like``."""
    return ctx.emit(BroadcastOp, [r], TensorType(like.shape, r.type.dtype), dims=list(dims))


@register_lowering(aten.native_layer_norm.default)
def native_layer_norm(ctx, x, normalized_shape, weight, bias, eps):
    """(out, mean, rstd): mean and var over the trailing ``normalized_shape`` dims; out = (x-mean)*rstd*w + b."""
    out = ctx.out_type(0)
    dtype = opmath(out.dtype)
    v = ctx.cast(ctx.tensor(x), dtype)
    rank = v.type.rank
    dims = list(range(rank - len(normalized_shape), rank))
    # Note: mean and rstd stay rank-reduced and are broadcast back explicitly; keepdim reshapes between the
    # reductions and their elementwise users would be reshapes inside the fused kernel, which is not lowered to HIVM.
    mean = mean_value(ctx, v, dims, False)
    centered = binary(ctx, "sub", v, _spread(ctx, mean, v.type, dims))
    var = mean_value(ctx, binary(ctx, "mul", centered, centered), dims, False)
    rstd = unary(ctx, "rsqrt", binary(ctx, "add", var, ctx.scalar(eps, dtype)))
    y = binary(ctx, "mul", centered, _spread(ctx, rstd, v.type, dims))
    if weight is not None:
        y = binary(ctx, "mul", y, ctx.cast(ctx.tensor(weight), dtype))
    if bias is not None:
        y = binary(ctx, "add", y, ctx.cast(ctx.tensor(bias), dtype))
    mean_t, rstd_t = ctx.out_type(1), ctx.out_type(2)
    return (
        ctx.cast(y, out.dtype),
        ctx.reshape(ctx.cast(mean, mean_t.dtype), mean_t.shape),
        ctx.reshape(ctx.cast(rstd, rstd_t.dtype), rstd_t.shape),
    )

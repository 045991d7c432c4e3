"""Matrix products → ``hfusion.matmul`` / ``hfusion.batch_matmul`` (Cube ops).

``mm``/``bmm`` are one op each. ``addmm``/``baddbmm`` are ``beta * input + alpha * product``: with ``alpha = 1`` an
accumulating matmul (its third operand ``init`` = ``beta * input`` broadcast to the product's shape), which
``hivm-normalize-matmul`` splits into the product and an add; otherwise the product, then elementwise ops. For
f16/bf16 the product is taken with an f32 result (the cube accumulates in f32 and its fixpipe writes f32) and the
sum is rounded once at the end, as eager's CPU kernels do. The ``.dtype`` overloads
(``torch.mm(a, b, out_dtype=torch.float32)``) give the f32 result of f16/bf16 operands the same way; any other
``out_dtype`` than the operands' own is an error naming the op, and so are operands of two dtypes. (``baddbmm.dtype``
has no lowering: torch 2.13's fake-tensor rule for it fails while dynamo traces, so no graph holds it.)
"""

from __future__ import annotations

import torch

from graph_passes.dialects.hfusion import BatchMatmulOp, MatmulOp

from ..dtypes import LOW_PRECISION, ir_dtype
from . import register_lowering
from .common import binary

aten = torch.ops.aten

WIDE_RESULT = "f32"  # the one result dtype a product of f16/bf16 operands may have besides their own


def _operands(ctx, a, b, out_dtype: str | None = None):
    """The two operands and the product's result type; ``out_dtype`` (default: the node's) is checked against the
    operands' dtype."""
    out = ctx.out_type()
    va, vb = ctx.tensor(a), ctx.tensor(b)
    da, db = va.type.dtype, vb.type.dtype
    if da != db:
        raise ctx.error(f"operands of two dtypes: {da} @ {db} (the cube multiplies operands of one dtype)")
    dtype = out_dtype or out.dtype
    if dtype != da and not (da in LOW_PRECISION and dtype == WIDE_RESULT):
        raise ctx.error(f"a product of {da} operands gives {da}"
                        f"{f' or {WIDE_RESULT}' if da in LOW_PRECISION else ''}, not {dtype}")
    return va, vb, out.with_dtype(dtype)


def _product(ctx, op_cls, a, b, out_dtype=None):
    va, vb, out = _operands(ctx, a, b, out_dtype)
    return ctx.emit(op_cls, [va, vb], out)


@register_lowering(aten.mm.default)
def mm(ctx, a, b):
    return _product(ctx, MatmulOp, a, b)


@register_lowering(aten.bmm.default)
def bmm(ctx, a, b):
    return _product(ctx, BatchMatmulOp, a, b)


@register_lowering(aten.mm.dtype)
def mm_dtype(ctx, a, b, out_dtype):
    return _product(ctx, MatmulOp, a, b, ir_dtype(out_dtype, ctx.node.name))


@register_lowering(aten.bmm.dtype)
def bmm_dtype(ctx, a, b, out_dtype):
    return _product(ctx, BatchMatmulOp, a, b, ir_dtype(out_dtype, ctx.node.name))


def _scaled_sum(ctx, op_cls, bias, a, b, beta, alpha, out_dtype=None):
    """``beta * bias + alpha * (a @ b)`` in the product's accumulator dtype, cast to the result's dtype once."""
    out = ctx.out_type()
    result = out_dtype or out.dtype
    acc = WIDE_RESULT if ctx.tensor(a).type.dtype in LOW_PRECISION else result
    _operands(ctx, a, b, result)  # the checks, against the result's dtype
    if alpha == 1 and beta != 0:  # init + a @ b: an accumulating matmul (hivm-normalize-matmul splits it)
        va, vb, out = _operands(ctx, a, b, acc)
        c = ctx.cast(ctx.tensor(bias), acc)
        if beta != 1:
            c = binary(ctx, "mul", c, ctx.scalar(beta, acc))
        init = ctx.broadcast_to(c, out.shape)
        return ctx.cast(ctx.emit(op_cls, [va, vb, init], out), result)
    prod = _product(ctx, op_cls, a, b, acc)
    if alpha != 1:
        prod = binary(ctx, "mul", prod, ctx.scalar(alpha, acc))
    if beta != 0:
        c = ctx.cast(ctx.tensor(bias), acc)
        if beta != 1:
            c = binary(ctx, "mul", c, ctx.scalar(beta, acc))
        prod = binary(ctx, "add", c, prod)
    return ctx.cast(prod, result)


@register_lowering(aten.addmm.default)
def addmm(ctx, bias, a, b, *, beta=1, alpha=1):
    return _scaled_sum(ctx, MatmulOp, bias, a, b, beta, alpha)


@register_lowering(aten.baddbmm.default)
def baddbmm(ctx, bias, a, b, *, beta=1, alpha=1):
    return _scaled_sum(ctx, BatchMatmulOp, bias, a, b, beta, alpha)


@register_lowering(aten.addmm.dtype)
def addmm_dtype(ctx, bias, a, b, out_dtype, *, beta=1, alpha=1):
    return _scaled_sum(ctx, MatmulOp, bias, a, b, beta, alpha, ir_dtype(out_dtype, ctx.node.name))


"""Matrix products → ``hfusion.matmul`` / ``hfusion.batch_matmul`` (Cube ops); addmm adds its bias explicitly."""

from __future__ import annotations

import torch

from graph_passes.dialects.hfusion import BatchMatmulOp, ElemwiseBinaryOp, MatmulOp

from . import register_lowering
from .common import binary

aten = torch.ops.aten


def _operands(ctx, a, b):
    out = ctx.out_type()
    va, vb = ctx.tensor(a), ctx.tensor(b)
    if va.type.dtype != vb.type.dtype or va.type.dtype != out.dtype:
        raise ctx.error(f"mixed dtypes {va.type.dtype} @ {vb.type.dtype} -> {out.dtype}")
    return va, vb, out


@register_lowering(aten.mm.default)
def mm(ctx, a, b):
    va, vb, out = _operands(ctx, a, b)
    return ctx.emit(MatmulOp, [va, vb], out)


@register_lowering(aten.bmm.default)
def bmm(ctx, a, b):
    va, vb, out = _operands(ctx, a, b)
    return ctx.emit(BatchMatmulOp, [va, vb], out)


@register_lowering(aten.addmm.default)
def addmm(ctx, bias, a, b, *, beta=1, alpha=1):
    """out = beta * bias + alpha * (a @ b)."""
    va, vb, out = _operands(ctx, a, b)
    prod = ctx.emit(MatmulOp, [va, vb], out)
    if alpha != 1:
        prod = ctx.emit(ElemwiseBinaryOp, [prod, ctx.scalar(alpha, out.dtype)], out, fun="mul")
    c = ctx.cast(ctx.tensor(bias), out.dtype)
    if beta == 0:
        return prod
    if beta != 1:
        c = binary(ctx, "mul", c, ctx.scalar(beta, out.dtype))
    return ctx.emit(ElemwiseBinaryOp, [ctx.broadcast_to(c, out.shape), prod], out, fun="add")

"""Tensor creation: full/full_like/scalar_tensor → ``hfusion.fill``; arange → ``hfusion.arange``.

Shapes come from the node's ``meta["val"]`` (they may be symbolic); the fill value must be a number.
"""

from __future__ import annotations

import torch

from graph_passes.dialects.hfusion import ArangeOp, FillOp

from ..symbolic import is_symbolic
from . import register_lowering
from .common import check_device, fill_value

aten = torch.ops.aten


def _fill(ctx, value, device):
    check_device(ctx, device)
    out = ctx.out_type()
    return ctx.emit(FillOp, [], out, value=fill_value(ctx, value, out.dtype))


@register_lowering(aten.full.default)
def full(ctx, size, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _fill(ctx, fill_value, device)


@register_lowering(aten.full_like.default)
def full_like(ctx, x, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return _fill(ctx, fill_value, device)


@register_lowering(aten.scalar_tensor.default)
def scalar_tensor(ctx, s, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _fill(ctx, s, device)


@register_lowering(aten.arange.start_step)
def arange(ctx, start, end, step=1, *, dtype=None, layout=None, device=None, pin_memory=None):
    check_device(ctx, device)
    if any(is_symbolic(v) for v in (start, step)):
        raise ctx.error("symbolic start or step")
    return ctx.emit(ArangeOp, [], ctx.out_type(), start=start, step=step)


@register_lowering(aten.new_empty_strided.default, aten.empty_strided.default, aten.new_empty.default,
                   aten.empty.memory_format, aten.empty_permuted.default)
def empty(ctx, *args, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None, requires_grad=False):
    """An uninitialised tensor (a slice assignment's backward allocates one and then writes every element): zeros,
    one valid choice of its unspecified values — value semantics have no uninitialised memory."""
    return _fill(ctx, 0, device)

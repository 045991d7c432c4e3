"""Building blocks shared by lowerings: they work on IR values (not FX arguments) of one import context."""

from __future__ import annotations

import sympy
import torch
from torch._prims_common import ELEMENTWISE_TYPE_PROMOTION_KIND, elementwise_dtypes

from graph_passes.dialects.hfusion import CompareOp, ElemwiseBinaryOp, ElemwiseUnaryOp, ReduceOp, SelectOp
from graph_passes.ir.core import Value
from graph_passes.ir.types import TensorType, is_float_dtype

from ..dtypes import ir_dtype
from ..symbolic import is_symbolic


def promote(ctx, *args) -> str:
    """torch's default type promotion over FX arguments (tensors and Python/symbolic scalars), as an IR dtype."""
    metas = [ctx.meta(a) for a in args if a is not None]
    _, result = elementwise_dtypes(*metas, type_promotion_kind=ELEMENTWISE_TYPE_PROMOTION_KIND.DEFAULT)
    return ir_dtype(result, ctx.node_name())


def normalize_dim(ctx, dim: int, rank: int) -> int:
    r = max(rank, 1)
    if not -r <= dim < r:
        raise ctx.error(f"dim {dim} out of range for rank {rank}")
    return dim % r


def normalize_dims(ctx, dims, rank: int) -> list[int]:
    """The dims a reduction runs over, sorted; none of a 0-d value (torch accepts dim 0 or -1 there: the value
    itself is the one element reduced)."""
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        return list(range(rank))
    if isinstance(dims, int):
        dims = [dims]
    out = sorted({normalize_dim(ctx, d, rank) for d in dims})
    return out if rank else []


def unary(ctx, fun: str, v: Value) -> Value:
    return ctx.emit(ElemwiseUnaryOp, [v], v.type, fun=fun)


def binary(ctx, fun: str, a: Value, b: Value) -> Value:
    """``fun(a, b)`` on values of one dtype; tensors are broadcast to their common shape."""
    shape = broadcast_shape(ctx, a, b)
    dtype = (a.type if isinstance(a.type, TensorType) else b.type).dtype
    a, b = ctx.broadcast_to(a, shape), ctx.broadcast_to(b, shape)
    return ctx.emit(ElemwiseBinaryOp, [a, b], TensorType(shape, dtype), fun=fun)


def compare(ctx, predicate: str, a: Value, b: Value) -> Value:
    shape = broadcast_shape(ctx, a, b)
    a, b = ctx.broadcast_to(a, shape), ctx.broadcast_to(b, shape)
    return ctx.emit(CompareOp, [a, b], TensorType(shape, "i1"), predicate=predicate)


def select(ctx, cond: Value, a: Value, b: Value) -> Value:
    shape = broadcast_shape(ctx, cond, a, b)
    dtype = (a.type if isinstance(a.type, TensorType) else b.type).dtype
    ops = [ctx.broadcast_to(v, shape) for v in (cond, a, b)]
    return ctx.emit(SelectOp, ops, TensorType(shape, dtype))


def broadcast_shape(ctx, *values: Value) -> tuple:
    shapes = [v.type.shape for v in values if isinstance(v.type, TensorType)]
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(rank):
        dims = {s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0} - {sympy.Integer(1)}
        if len(dims) > 1:
            raise ctx.error(f"shapes {[tuple(map(str, s)) for s in shapes]} do not broadcast")
        out.append(dims.pop() if dims else sympy.Integer(1))
    return tuple(out)


def reduce(ctx, kind: str, v: Value, dims: list[int], keepdim: bool) -> Value:
    """``kind`` over ``dims`` of ``v``; with ``keepdim`` the reduced dims stay as size 1 (via reshape)."""
    shape = v.type.shape
    if not dims:
        return v
    kept = tuple(d for i, d in enumerate(shape) if i not in dims)
    out = ctx.emit(ReduceOp, [v], TensorType(kept, v.type.dtype), kind=kind, dims=list(dims))
    if keepdim:
        out = ctx.reshape(out, [1 if i in dims else d for i, d in enumerate(shape)])
    return out


def numel(shape, dims) -> sympy.Expr:
    n = sympy.Integer(1)
    for i in dims:
        n = n * shape[i]
    return n


def fill_value(ctx, value, dtype: str):
    """A fill's number as the attribute of an ``hfusion.fill`` of ``dtype`` (float, bool for i1, else int)."""
    if is_symbolic(value) or not isinstance(value, (int, float, bool)):
        raise ctx.error(f"fill value {value!r} is not a number")
    return float(value) if is_float_dtype(dtype) else (bool(value) if dtype == "i1" else int(value))


def check_device(ctx, device) -> None:
    if device is not None and torch.device(device).type not in ("cpu", "meta"):
        raise ctx.error(f"device {device}")

"""Elementwise lowerings: arithmetic with torch's type promotion, unary math, comparisons, logic, casts.

Promotion is explicit: each tensor operand is cast (``hfusion.cast``) to the computation dtype and broadcast
(``hfusion.broadcast``) to the result shape; scalar operands become ``arith.constant`` of that dtype. The result
dtype is the node's ``meta["val"].dtype``.
"""

from __future__ import annotations

import torch

from graph_passes.dialects.hfusion import CompareOp, ElemwiseBinaryOp, ElemwiseTernaryOp, ElemwiseUnaryOp, SelectOp

from ..dtypes import torch_dtype
from ..eager_loops import all_scalar
from . import register_lowering
from .common import check_device, numel, promote

aten = torch.ops.aten
prims = torch.ops.prims


def _arith(ctx, fun: str, a, b, alpha=1):
    out = ctx.out_type()
    if not (ctx.is_tensor(a) or ctx.is_tensor(b)):
        raise ctx.error("both operands are scalars")
    lhs = ctx.operand(a, out.dtype, out.shape)
    ratio = ctx.symbolic_ratio(b)
    if ratio is not None and fun in ("mul", "div") and alpha == 1:
        # x * (n/d) -> (x * n) / d and x / (n/d) -> (x / n) * d: sizes stay integer values
        first, second = ("mul", "div") if fun == "mul" else ("div", "mul")
        v = ctx.emit(ElemwiseBinaryOp, [lhs, ctx.scalar(ratio[0], out.dtype)], out, fun=first)
        return ctx.emit(ElemwiseBinaryOp, [v, ctx.scalar(ratio[1], out.dtype)], out, fun=second)
    if alpha != 1 and not ctx.is_tensor(b):
        b, alpha = ctx.meta(b) * alpha, 1
    if fun in ("mul", "div") and out.dtype in ("f16", "bf16") and _divides_by_scalar(ctx, b, out):
        # eager's mul and true division of a half/bf16 tensor by a CPU scalar (a number or a 0-d tensor, also of
        # f32) compute in f32 with the scalar's f32 value and round once (mul_kernel / div_true_kernel, the
        # reduced-float is_scalar(2) path); add and sub round the scalar to the dtype first, as the op itself does.
        lhs, rhs = ctx.operand(a, "f32", out.shape), ctx.operand(b, "f32", out.shape)
        return ctx.cast(ctx.emit(ElemwiseBinaryOp, [lhs, rhs], out.with_dtype("f32"), fun=fun), out.dtype)
    rhs = ctx.operand(b, out.dtype, out.shape)
    if alpha != 1 and out.dtype in ("f16", "bf16") and ctx.is_tensor(a):
        # eager rounds alpha to the dtype; its vectorized loop computes a half/bf16 a + alpha * b in f32 and rounds
        # once, its scalar function (a tensor of fewer elements than one step: eager_loops) rounds alpha * b first.
        # A larger tensor's n mod step last elements take the scalar function too: not modelled (docs/opinfo.md)
        wide = out.with_dtype("f32")
        alpha = float(torch.tensor(alpha, dtype=torch_dtype(out.dtype)).item())
        scaled = ctx.emit(ElemwiseBinaryOp, [ctx.cast(rhs, "f32"), ctx.scalar(alpha, "f32")], wide, fun="mul")
        n = numel(out.shape, range(len(out.shape)))
        if n.is_Integer and all_scalar(int(n), 2):
            scaled = ctx.cast(ctx.cast(scaled, out.dtype), "f32")
        return ctx.cast(ctx.emit(ElemwiseBinaryOp, [ctx.cast(lhs, "f32"), scaled], wide, fun=fun), out.dtype)
    if alpha != 1:
        rhs = ctx.emit(ElemwiseBinaryOp, [rhs, ctx.scalar(alpha, out.dtype)], out, fun="mul")
    return ctx.emit(ElemwiseBinaryOp, [lhs, rhs], out, fun=fun)


@register_lowering(aten.add.Tensor, aten.add.Scalar)
def add(ctx, a, b, alpha=1):
    return _arith(ctx, "add", a, b, alpha)


@register_lowering(aten.sub.Tensor, aten.sub.Scalar)
def sub(ctx, a, b, alpha=1):
    return _arith(ctx, "sub", a, b, alpha)


@register_lowering(aten.mul.Tensor, aten.mul.Scalar)
def mul(ctx, a, b):
    return _arith(ctx, "mul", a, b)


@register_lowering(aten.div.Tensor, aten.div.Scalar)
def div(ctx, a, b):
    return _arith(ctx, "div", a, b)  # true division: the result dtype (meta) is floating, operands are cast to it


# -- rounding division ------------------------------------------------------------------------------------------

ROUNDING_MODES = {"floor": "floordiv", "trunc": "truncdiv"}


def _divides_by_scalar(ctx, b, out) -> bool:
    """TensorIterator's ``is_scalar(2)``: the divisor is a number, or a tensor whose every dim is 1 or has stride 0
    (one element, expanded or not), or the result has one element (every operand is then a scalar)."""
    if not ctx.is_tensor(b) or all(d == 1 for d in out.shape):
        return True
    strides = ctx.meta(b).stride()
    return all(d == 1 or (isinstance(s, int) and s == 0) for d, s in zip(ctx.tensor(b).type.shape, strides))


def _rounding_division(ctx, fun: str, a, b):
    """``fun`` (hfusion DIVMOD_FUNS) in the result dtype, as eager computes it (see the note below)."""
    out = ctx.out_type()
    if not (ctx.is_tensor(a) or ctx.is_tensor(b)):
        raise ctx.error("both operands are scalars")
    # Note: eager's floor and trunc division of a half/bf16 tensor by a scalar computes in f32 with the divisor's
    # f32 value and rounds once (div_floor_kernel / div_trunc_kernel, the reduced-float is_scalar(2) path); with a
    # tensor divisor every step rounds to the dtype (Vectorized<Half>), the meaning of the f16/bf16 op itself.
    # remainder and fmod have no such path: eager converts a scalar to the dtype.
    compute = out.dtype
    if out.dtype in ("f16", "bf16") and fun in ROUNDING_MODES.values() and _divides_by_scalar(ctx, b, out):
        compute = "f32"
    lhs, rhs = ctx.operand(a, compute, out.shape), ctx.operand(b, compute, out.shape)
    return ctx.cast(ctx.emit(ElemwiseBinaryOp, [lhs, rhs], out.with_dtype(compute), fun=fun), out.dtype)


@register_lowering(aten.div.Tensor_mode, aten.div.Scalar_mode)  # floor_divide reaches us as div.Tensor_mode (core-aten
def div_mode(ctx, a, b, *, rounding_mode=None):                 # decomposition; it has no derivative of its own)
    if rounding_mode is None:
        return div(ctx, a, b)
    if rounding_mode not in ROUNDING_MODES:
        raise ctx.error(f"rounding_mode={rounding_mode!r} (floor, trunc or None)")
    return _rounding_division(ctx, ROUNDING_MODES[rounding_mode], a, b)


@register_lowering(aten.remainder.Tensor, aten.remainder.Scalar, aten.remainder.Scalar_Tensor)
def remainder(ctx, a, b):
    return _rounding_division(ctx, "remainder", a, b)


@register_lowering(aten.fmod.Tensor, aten.fmod.Scalar)
def fmod(ctx, a, b):
    return _rounding_division(ctx, "fmod", a, b)


@register_lowering(aten.maximum.default)
def maximum(ctx, a, b):
    return _arith(ctx, "max", a, b)


@register_lowering(aten.minimum.default)
def minimum(ctx, a, b):
    return _arith(ctx, "min", a, b)


@register_lowering(aten.pow.Tensor_Scalar, aten.pow.Tensor_Tensor, aten.pow.Scalar)
def pow_(ctx, a, b):
    out = ctx.out_type()
    e = None if ctx.is_tensor(b) else ctx.meta(b)
    if out.dtype == "bf16" and ctx.is_tensor(a) and e in (3, -2):
        # torch's CPU pow for bf16 (PowKernel.cpp, pow_tensor_scalar_optimized_kernel) is x*x*x and 1/(x*x), each
        # product rounded to bf16; a pow computed in f32 and rounded once differs from it in ~1/4 of the elements.
        # (x*x is one rounding either way; f16 uses std::pow in f32, one rounding; f32 is already x*x*x.)
        x = ctx.operand(a, out.dtype, out.shape)
        square = ctx.emit(ElemwiseBinaryOp, [x, x], out, fun="mul")
        if e == 3:
            return ctx.emit(ElemwiseBinaryOp, [square, x], out, fun="mul")
        return ctx.emit(ElemwiseUnaryOp, [square], out, fun="reciprocal")
    return _arith(ctx, "pow", a, b)


def _bitwise(fun):
    def lower(ctx, a, b):
        return _arith(ctx, fun, a, b)

    lower.__name__ = fun
    return lower


for _fun in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    register_lowering(getattr(aten, _fun).Tensor, getattr(aten, _fun).Scalar)(_bitwise(_fun))


def _logical(fun):
    def lower(ctx, a, b):
        out = ctx.out_type()
        lhs, rhs = ctx.operand(a, "i1", out.shape), ctx.operand(b, "i1", out.shape)
        return ctx.cast(ctx.emit(ElemwiseBinaryOp, [lhs, rhs], out.with_dtype("i1"), fun=fun), out.dtype)

    lower.__name__ = fun
    return lower


for _fun in ("logical_and", "logical_or", "logical_xor"):
    register_lowering(getattr(aten, _fun).default)(_logical(_fun))


@register_lowering(aten.logical_not.default)
def logical_not(ctx, x):
    out = ctx.out_type()
    v = ctx.cast(ctx.tensor(x), "i1")
    return ctx.cast(ctx.emit(ElemwiseUnaryOp, [v], out.with_dtype("i1"), fun="logical_not"), out.dtype)


# -- comparisons -------------------------------------------------------------------------------------------------

def _compare(predicate):
    def lower(ctx, a, b):
        out = ctx.out_type()
        dtype = promote(ctx, a, b)
        lhs, rhs = ctx.operand(a, dtype, out.shape), ctx.operand(b, dtype, out.shape)
        return ctx.emit(CompareOp, [lhs, rhs], out, predicate=predicate)

    lower.__name__ = predicate
    return lower


for _pred in ("eq", "ne", "lt", "le", "gt", "ge"):
    register_lowering(getattr(aten, _pred).Tensor, getattr(aten, _pred).Scalar)(_compare(_pred))


@register_lowering(aten.where.self)
def where(ctx, cond, a, b):
    out = ctx.out_type()
    c = ctx.operand(cond, "i1", out.shape)
    return ctx.emit(SelectOp, [c, ctx.operand(a, out.dtype, out.shape), ctx.operand(b, out.dtype, out.shape)], out)


@register_lowering(aten.clamp.default)
def clamp(ctx, x, min=None, max=None):
    out = ctx.out_type()
    v = ctx.operand(x, out.dtype, out.shape)
    if min is not None and max is not None:
        lo, hi = ctx.scalar(min, out.dtype), ctx.scalar(max, out.dtype)
        return ctx.emit(ElemwiseTernaryOp, [v, lo, hi], out, fun="clamp")
    if min is not None:
        return ctx.emit(ElemwiseBinaryOp, [v, ctx.scalar(min, out.dtype)], out, fun="max")
    if max is not None:
        return ctx.emit(ElemwiseBinaryOp, [v, ctx.scalar(max, out.dtype)], out, fun="min")
    raise ctx.error("clamp without min and max")


@register_lowering(aten.clamp.Tensor)
def clamp_tensor(ctx, x, min=None, max=None):
    """clamp with tensor bounds: max with ``min``, then min with ``max`` (NaN-propagating, as eager)."""
    out = ctx.out_type()
    v = ctx.operand(x, out.dtype, out.shape)
    for bound, fun in ((min, "max"), (max, "min")):
        if bound is not None:
            v = ctx.emit(ElemwiseBinaryOp, [v, ctx.operand(bound, out.dtype, out.shape)], out, fun=fun)
    return v


# -- unary -------------------------------------------------------------------------------------------------------

def _unary(fun):
    def lower(ctx, x):
        out = ctx.out_type()
        return ctx.emit(ElemwiseUnaryOp, [ctx.cast(ctx.tensor(x), out.dtype)], out, fun=fun)

    lower.__name__ = fun
    return lower


UNARY_ATEN = {
    "neg": aten.neg.default, "abs": aten.abs.default, "exp": aten.exp.default, "log": aten.log.default,
    "sqrt": aten.sqrt.default, "reciprocal": aten.reciprocal.default,
    "tanh": aten.tanh.default, "sigmoid": aten.sigmoid.default, "relu": aten.relu.default, "erf": aten.erf.default,
    "sin": aten.sin.default, "cos": aten.cos.default, "floor": aten.floor.default, "ceil": aten.ceil.default,
    "trunc": aten.trunc.default, "silu": aten.silu.default, "bitwise_not": aten.bitwise_not.default, "sign": aten.sign.default,
}  # fmt: skip
"""hfusion unary ``fun`` → the aten op it lowers (one op each)."""

for _fun, _op in UNARY_ATEN.items():
    register_lowering(_op)(_unary(_fun))


@register_lowering(aten.rsqrt.default)
def rsqrt(ctx, x):
    """rsqrt in the result dtype. f16/bf16 as eager's ``rsqrt_kernel``: its vectorized function is 1/sqrt(x) in f32,
    rounded once (the vector unit's ``vrsqrt``); its scalar function, ``1 / std::sqrt(x)`` on the dtype, rounds
    sqrt(x) to the dtype and then the quotient. A tensor too short for one step of eager's vectorized loop (an RMS
    norm's per-row statistic of a few rows) is all scalar-function results (``eager_loops``)."""
    out = ctx.out_type()
    v = ctx.cast(ctx.tensor(x), out.dtype)
    n = numel(out.shape, range(len(out.shape)))
    if out.dtype in ("f16", "bf16") and n.is_Integer and all_scalar(int(n), 2):
        root = ctx.emit(ElemwiseUnaryOp, [v], out, fun="sqrt")
        return ctx.emit(ElemwiseUnaryOp, [root], out, fun="reciprocal")
    return ctx.emit(ElemwiseUnaryOp, [v], out, fun="rsqrt")


@register_lowering(aten.gelu.default)
def gelu(ctx, x, approximate="none"):
    funs = {"none": "gelu_erf", "tanh": "gelu_tanh"}
    if approximate not in funs:
        raise ctx.error(f"approximate={approximate!r}")
    return _unary(funs[approximate])(ctx, x)


# -- casts -------------------------------------------------------------------------------------------------------

@register_lowering(aten._to_copy.default)
def to_copy(ctx, x, *, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False,
            memory_format=None):  # fmt: skip
    check_device(ctx, device)
    if layout not in (None, torch.strided):
        raise ctx.error(f"layout={layout}")
    return ctx.cast(ctx.tensor(x), ctx.out_type().dtype)


@register_lowering(prims.convert_element_type.default)
def convert_element_type(ctx, x, dtype):
    return ctx.cast(ctx.tensor(x), ctx.out_type().dtype)

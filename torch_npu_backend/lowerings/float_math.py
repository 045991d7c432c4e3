"""More float functions with no vector instruction, composed like ``transcendental.py``'s (in f32, out of compares,
selects, ``min``/``max``, the four arithmetic ops and the unary funs): the sign ops ``signbit`` and ``copysign``,
NaN-ignoring ``fmax``/``fmin``, ``hypot``, ``round(decimals=d)``, ``tan``, ``exp2`` and ``erfc``.

Each computes in f32 (f16/bf16 widen exactly and round once, as torch's CPU kernels compute them in float; an
integer input is converted first, as torch promotes it) and keeps IEEE's edge values where torch's do:
``signbit(-0) = True``, ``copysign(x, -0) = -|x|``, ``fmax(NaN, y) = y``, ``hypot(±inf, NaN) = inf``.

- ``round(x, decimals=d)``: eager's formula (``RoundDecimalsKernel``): ``rint(x·10^d) / 10^d`` for d ≥ 0,
  ``rint(x / 10^-d) · 10^-d`` for d < 0, with ``10^|d|`` as an f32 and ``rint`` half to even: bit for bit.
- ``tan = sin / cos``: each correctly rounded, the quotient within 2 ulp.
- ``exp2(x) = pow(2, x)``: the vector ``pow`` with its exact ``y·ln x`` (``hfusion-decompose-pow``).
- ``erfc``: ``1 - erf(x)`` below 0.5 (no cancellation: erfc > 0.47 there); above, Numerical Recipes' ``erfcc``,
  ``t·exp(-x² + P(t))`` with ``t = 1/(1 + x/2)`` (fractional error under 1.2e-7), and ``2 - erfc(-x)`` for x ≤ -0.5.
  The product ``x²`` is split (``x = h + l``, ``h`` of 12 bits: ``h²`` exact) so that ``exp``'s argument, up to
  about 100, is not rounded to 2^-17.
"""

from __future__ import annotations

import math

import torch

from graph_passes.ir.types import is_float_dtype

from . import register_lowering
from .common import binary
from .transcendental import F32, f32_lowering

aten = torch.ops.aten

ERFCC = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807, -1.13520398, 1.48851587,
         -0.82215223, 0.17087277)  # fmt: skip
"""Numerical Recipes' erfcc: erfc(x) = t·exp(-x² + Σ c_i t^i), t = 1/(1 + x/2), x ≥ 0."""
ERFC_ZERO = 10.1  # erfc(10.1) ≈ 6.5e-46: under half the least f32 subnormal (1.4e-45), rounds to 0
SPLIT_12 = 4097.0  # Veltkamp: (x·4097) - ((x·4097) - x) keeps x's top 12 bits (its square is exact in f32)


class FloatMath(F32):
    def tan(self, x):
        return self.div(self.un("sin", x), self.un("cos", x))

    def exp2(self, x):
        return self.bin("pow", self.ctx.scalar(2.0, "f32"), x)

    def hypot(self, a, b):
        """m·sqrt(1 + (n/m)²), m = max(|a|, |b|), n the other (no overflow of a² + b²); 0 where m is, inf where
        either is infinite (NaN or not)."""
        a, b = self.abs(a), self.abs(b)
        m, n = self.max(a, b), self.min(a, b)
        r = self.div(n, self.where(self.cmp("eq", m, 0.0), 1.0, m))
        h = self.mul(m, self.sqrt(self.add(self.mul(r, r), 1.0)))
        inf = self.cmp("eq", self.max(self.where(self.cmp("ne", a, a), 0.0, a),
                                      self.where(self.cmp("ne", b, b), 0.0, b)), math.inf)
        return self.where(inf, math.inf, h)

    def fmax(self, a, b, fun="max"):
        """max(a, b), or the other where one is NaN (NaN where both are)."""
        r = self.bin(fun, a, b)
        r = self.where(self.cmp("ne", a, a), b, r)
        return self.where(self.cmp("ne", b, b), a, r)

    def _neg_square(self, x):
        """-x² as -(h² + (x - h)(x + h)) with h² exact (h = x's top 12 bits): exp(-x²) to f32 accuracy."""
        c = self.mul(x, SPLIT_12)
        h = self.sub(c, self.sub(c, x))
        return self.neg(self.add(self.mul(h, h), self.mul(self.sub(x, h), self.add(x, h))))

    def erfc(self, x):
        """(Above ERFC_ZERO, erfc rounds to 0 in f32: |x| is clamped there, inf included, and the tail set to 0.)"""
        big = self.cmp("gt", self.abs(x), ERFC_ZERO)
        a = self.min(self.abs(x), ERFC_ZERO)
        t = self.rec(self.add(self.mul(a, 0.5), 1.0))
        p = self.ctx.scalar(ERFCC[-1], "f32")
        for c in reversed(ERFCC[:-1]):
            p = self.add(self.mul(p, t), c)
        tail = self.mul(t, self.exp(self.add(self._neg_square(a), p)))  # erfc(|x|), |x| ≥ 0.5
        tail = self.where(big, 0.0, tail)
        tail = self.where(self.signbit(x), self.rsub(2.0, tail), tail)
        near = self.rsub(1.0, self.un("erf", x))
        return self.where(self.cmp("lt", a, 0.5), near, tail)


for _op, _name in {aten.tan.default: "tan", aten.exp2.default: "exp2", aten.erfc.default: "erfc"}.items():
    register_lowering(_op)(f32_lowering(FloatMath, _name))


def _binary(name, **kwargs):
    def lower(ctx, a, b):
        out = ctx.out_type()
        if not is_float_dtype(out.dtype):  # fmax/fmin of integers: max/min (no NaN)
            return binary(ctx, kwargs.get("fun", "max"), ctx.operand(a, out.dtype, out.shape),
                          ctx.operand(b, out.dtype, out.shape))
        m = FloatMath(ctx)
        r = getattr(m, name)(ctx.operand(a, "f32", out.shape), ctx.operand(b, "f32", out.shape), **kwargs)
        return ctx.cast(r, out.dtype)

    lower.__name__ = name
    return lower


register_lowering(aten.hypot.default)(_binary("hypot"))
register_lowering(aten.fmax.default)(_binary("fmax"))
register_lowering(aten.fmin.default)(_binary("fmax", fun="min"))


@register_lowering(aten.signbit.default)
def signbit(ctx, x):
    v = ctx.tensor(x)
    m = F32(ctx)
    if not is_float_dtype(v.type.dtype):  # an integer's sign; a bool is never negative
        return m.cmp("lt", ctx.cast(v, "i64"), ctx.scalar(0, "i64"))
    return m.signbit(ctx.cast(v, "f32"))


@register_lowering(aten.copysign.Tensor, aten.copysign.Scalar)
def copysign(ctx, a, b):
    out = ctx.out_type()
    m = F32(ctx)
    mag = m.abs(ctx.operand(a, "f32", out.shape))
    if ctx.is_tensor(b):
        return ctx.cast(m.copysign(mag, ctx.operand(b, "f32", out.shape)), out.dtype)
    return ctx.cast(m.neg(mag) if math.copysign(1.0, float(ctx.meta(b))) < 0 else mag, out.dtype)


@register_lowering(aten.round.decimals)
def round_decimals(ctx, x, *, decimals=0):
    out = ctx.out_type()
    v = ctx.tensor(x)
    if not is_float_dtype(out.dtype):
        return v
    m = F32(ctx)
    v = ctx.cast(v, "f32")
    scale = float(torch.tensor(10.0 ** abs(decimals), dtype=torch.float32))
    if decimals == 0:
        return ctx.cast(m.round(v), out.dtype)
    if decimals > 0:
        return ctx.cast(m.div(m.round(m.mul(v, scale)), scale), out.dtype)
    return ctx.cast(m.mul(m.round(m.div(v, scale)), scale), out.dtype)


"""Elementwise math with no vector instruction, composed from ones that have one: log1p, expm1, atan, atan2,
asin, acos, sinh, cosh, asinh, acosh, atanh, log2, log10, round; the activations hardtanh, leaky_relu, elu;
and the float class tests isnan, isinf.

Every formula runs in f32 (an f16/bf16 op computes in f32 and rounds once, as torch's CPU kernels do; an integer
input is converted to f32 first) out of ``exp``, ``log``, ``sqrt``, ``reciprocal``, ``abs``, the four arithmetic
ops, ``min``/``max``, compares and selects, which the fusion pass puts in one vector kernel. The formulas are the
classic ones that keep a correctly rounded ``exp``/``log`` accurate to a few f32 ulp (Goldberg's log1p, Kahan's
expm1, Cephes' ``atanf`` range reduction and polynomial) and give IEEE's values at the edges: ``log1p(-1) = -inf``,
``expm1(-inf) = -1``, ``acos(-1) = π``, ``atan2(±0, -0) = ±π``, ``atan2(±inf, ±inf) = ±π/4, ±3π/4``, NaN in,
NaN out (``min``/``max`` propagate NaN). A signed zero keeps its sign where torch keeps it.

Note: a lowering, not torch's decompositions: torch decomposes none of these ops (they are core aten), and a vector
sequence in ``codegen/math_ops.py`` would be one op per function with its own scratch, cost and interpreter rule for
what the compositions below already give at f32 accuracy (their instruction counts are what such a sequence would
emit: each step below is one vector instruction over the tile).
"""

from __future__ import annotations

import math

import torch

from graph_passes.dialects.hfusion import FillOp
from graph_passes.ir.types import is_float_dtype

from . import register_lowering
from .common import binary, compare, select, unary

aten = torch.ops.aten

F32_MAX = 3.4028234663852886e38
LN2 = math.log(2.0)
LN10 = math.log(10.0)
TAN_PI_8 = 0.4142135623730950  # Cephes atanf's reduction threshold: above it, atan t = π/4 + atan((t-1)/(t+1))
# Cephes atanf's polynomial in z = t², highest power first
ATAN_P = (8.05374449538e-2, -1.38776856032e-1, 1.99777106478e-1, -3.33329491539e-1)
LARGE_ARG = 4096.0  # asinh/acosh(a) = ln(2a) + O(1/a²) within f32 rounding above this (1/(4·4096²) < 2^-26·ln 8192)
SINH_COSH_SPLIT = 88.0  # below: exp(a) is finite; above: (½·e^(a/2))·e^(a/2) stays finite up to cosh's f32 limit


class F32:
    """f32 value arithmetic in one import context: each method emits one hfusion op (scalars become constants)."""

    def __init__(self, ctx):
        self.ctx = ctx

    def _v(self, x):
        return x if not isinstance(x, (int, float)) else self.ctx.scalar(float(x), "f32")

    def bin(self, fun, a, b):
        return binary(self.ctx, fun, self._v(a), self._v(b))

    def add(self, a, b):
        return self.bin("add", a, b)

    def sub(self, a, b):
        return self.bin("sub", a, b)

    def mul(self, a, b):
        return self.bin("mul", a, b)

    def div(self, a, b):
        return self.bin("div", a, b)

    def min(self, a, b):
        return self.bin("min", a, b)

    def max(self, a, b):
        return self.bin("max", a, b)

    def rsub(self, c: float, a):
        """c - a as a·(-1) + c (the negation is exact: one rounding, as c - a; no scalar left operand)."""
        return self.add(self.neg(a), c)

    def un(self, fun, a):
        return unary(self.ctx, fun, a)

    def neg(self, a):
        return self.un("neg", a)

    def abs(self, a):
        return self.un("abs", a)

    def exp(self, a):
        return self.un("exp", a)

    def log(self, a):
        return self.un("log", a)

    def sqrt(self, a):
        return self.un("sqrt", a)

    def rec(self, a):
        return self.un("reciprocal", a)

    def cmp(self, pred, a, b):
        return compare(self.ctx, pred, a, self._v(b))

    def where(self, c, a, b):
        return select(self.ctx, c, self._v(a), self._v(b))

    def signbit(self, a):
        """a's sign bit (true for -0 and -inf too): min(a, 1/a) < 0 (1/-0 = -inf; NaN: false)."""
        return self.cmp("lt", self.min(a, self.rec(a)), 0.0)

    def copysign(self, r, a):
        """r (≥ 0, or NaN) with the sign of a."""
        return self.where(self.signbit(a), self.neg(r), r)

    # -- the functions -----------------------------------------------------------------------------------------------

    def log1p(self, x):
        """Goldberg: u = 1 + x; log1p x = log(u)·x/(u - 1), or x where u rounds to 1. (u - 1 is exact; the ratio
        corrects log's argument for the rounding of u.) u is clamped to the largest f32 in the ratio so that
        log1p(inf) = inf·(inf/max) = inf rather than inf/inf."""
        u = self.add(x, 1.0)
        r = self.mul(self.log(u), self.div(x, self.sub(self.min(u, F32_MAX), 1.0)))
        return self.where(self.cmp("eq", u, 1.0), x, r)

    def expm1(self, x):
        """Kahan: u = exp(x); expm1 x = (u - 1)·x/log(u), or x where u rounds to 1. x is clamped below at -20
        (expm1 = -1 in f32 there: exp(-20) < 2^-25), log's argument above at the largest f32 (expm1(inf) = inf)."""
        xc = self.max(x, -20.0)
        u = self.exp(xc)
        r = self.mul(self.sub(u, 1.0), self.div(xc, self.log(self.min(u, F32_MAX))))
        return self.where(self.cmp("eq", u, 1.0), xc, r)

    def atan01(self, t):
        """atan t for t in [0, 1] (or NaN): Cephes atanf, t > tan(π/8) reduced to (t - 1)/(t + 1) plus π/4."""
        mid = self.cmp("gt", t, TAN_PI_8)
        t = self.where(mid, self.div(self.sub(t, 1.0), self.add(t, 1.0)), t)
        z = self.mul(t, t)
        p = self.mul(z, ATAN_P[0])
        for c in ATAN_P[1:]:
            p = self.mul(self.add(p, c), z)
        y = self.add(self.mul(p, t), t)  # t + t·z·P(z)
        return self.add(y, self.where(mid, math.pi / 4, 0.0))

    def atan(self, x):
        """atan |x| = π/2 - atan(1/|x|) above 1, with x's sign."""
        a = self.abs(x)
        big = self.cmp("gt", a, 1.0)
        r = self.atan01(self.where(big, self.rec(a), a))
        return self.copysign(self.where(big, self.rsub(math.pi / 2, r), r), x)

    def atan2(self, y, x):
        """atan(min/max) of the magnitudes, then the octant: π/2 - r where |y| > |x|, π - r where x's sign is set,
        y's sign. Both zero: r = 0; both infinite: r = π/4."""
        ax, ay = self.abs(x), self.abs(y)
        lo, hi = self.min(ax, ay), self.max(ax, ay)
        q = self.where(self.cmp("eq", lo, hi), 1.0, self.div(lo, hi))
        q = self.where(self.cmp("eq", hi, 0.0), 0.0, q)
        r = self.atan01(q)
        r = self.where(self.cmp("gt", ay, ax), self.rsub(math.pi / 2, r), r)
        r = self.where(self.signbit(x), self.rsub(math.pi, r), r)
        return self.copysign(r, y)

    def asin(self, x):
        """atan(x / sqrt((1 - x)(1 + x))): ±1 → atan(±inf) = ±π/2; |x| > 1 → sqrt of a negative, NaN."""
        return self.atan(self.div(x, self.sqrt(self.mul(self.rsub(1.0, x), self.add(x, 1.0)))))

    def acos(self, x):
        """2·atan(sqrt((1 - x)/(1 + x))): 1 → 0, -1 → 2·atan(inf) = π; |x| > 1 → NaN."""
        return self.mul(self.atan(self.sqrt(self.div(self.rsub(1.0, x), self.add(x, 1.0)))), 2.0)

    def _half_exp_squared(self, a):
        """½·e^a as (½·e^(a/2))·e^(a/2): finite for a up to ln(2·f32 max) ≈ 89.4, where e^a is not."""
        h = self.exp(self.mul(a, 0.5))
        return self.mul(self.mul(h, 0.5), h)

    def sinh(self, x):
        """sinh |x| = ½(u + u/(u + 1)), u = expm1|x| (no cancellation near 0); ½e^|x| above 88; x's sign."""
        a = self.abs(x)
        u = self.expm1(a)
        small = self.mul(self.add(u, self.div(u, self.add(u, 1.0))), 0.5)
        return self.copysign(self.where(self.cmp("gt", a, SINH_COSH_SPLIT), self._half_exp_squared(a), small), x)

    def cosh(self, x):
        """½(e + 1/e), e = exp|x|; ½e^|x| above 88."""
        a = self.abs(x)
        e = self.exp(a)
        small = self.mul(self.add(e, self.rec(e)), 0.5)
        return self.where(self.cmp("gt", a, SINH_COSH_SPLIT), self._half_exp_squared(a), small)

    def asinh(self, x):
        """asinh |x| = log1p(a + a²/(1 + sqrt(1 + a²))); ln a + ln 2 above 4096 (a² would overflow); x's sign."""
        a = self.abs(x)
        a2 = self.mul(a, a)
        small = self.log1p(self.add(a, self.div(a2, self.add(self.sqrt(self.add(a2, 1.0)), 1.0))))
        big = self.add(self.log(a), LN2)
        return self.copysign(self.where(self.cmp("gt", a, LARGE_ARG), big, small), x)

    def acosh(self, x):
        """log1p(t + sqrt(t)·sqrt(t + 2)), t = x - 1 (NaN below 1: sqrt(t)); ln x + ln 2 above 4096."""
        t = self.sub(x, 1.0)
        small = self.log1p(self.add(t, self.mul(self.sqrt(t), self.sqrt(self.add(t, 2.0)))))
        big = self.add(self.log(x), LN2)
        return self.where(self.cmp("gt", x, LARGE_ARG), big, small)

    def atanh(self, x):
        """atanh |x| = ½·log1p(2a/(1 - a)) ((1 + a)/(1 - a) = 1 + 2a/(1 - a)), x's sign: 1 → inf, > 1 → NaN. (Of
        |x|: for x near -1 the argument would be near -1, where log1p magnifies its rounding a thousandfold.)"""
        a = self.abs(x)
        return self.copysign(self.mul(self.log1p(self.div(self.mul(a, 2.0), self.rsub(1.0, a))), 0.5), x)


    def log2(self, x):
        """ln x / ln 2 (a division: log2(2) = 1 exactly)."""
        return self.div(self.log(x), LN2)

    def log10(self, x):
        return self.div(self.log(x), LN10)

    def round(self, x):
        """Half to even: (|x| + 2^23) - 2^23 rounds |x| < 2^23 to an integer in f32 (larger floats are integers);
        x's sign (round(-0.4) = -0)."""
        a = self.abs(x)
        r = self.where(self.cmp("lt", a, 2.0**23), self.sub(self.add(a, 2.0**23), 2.0**23), a)
        return self.copysign(r, x)


def f32_lowering(cls, name):
    """A lowering of a one-tensor op: ``cls(ctx).<name>`` of the input in f32, rounded once to the result dtype."""

    def lower(ctx, x):
        out = ctx.out_type()
        return ctx.cast(getattr(cls(ctx), name)(ctx.cast(ctx.tensor(x), "f32")), out.dtype)

    lower.__name__, lower.__module__ = name, cls.__module__  # the file of the formula (docs/ops.md names it)
    return lower


FUNCTIONS = {
    aten.log1p.default: "log1p", aten.expm1.default: "expm1", aten.atan.default: "atan", aten.asin.default: "asin",
    aten.acos.default: "acos", aten.sinh.default: "sinh", aten.cosh.default: "cosh", aten.asinh.default: "asinh",
    aten.acosh.default: "acosh", aten.atanh.default: "atanh", aten.log2.default: "log2", aten.log10.default: "log10",
    aten.round.default: "round",
}  # fmt: skip
"""aten op → the :class:`F32` method that computes it."""


def _math(name):
    def lower(ctx, x):
        out = ctx.out_type()
        if not is_float_dtype(out.dtype):  # round of an integer tensor: itself
            return ctx.tensor(x)
        v = ctx.cast(ctx.tensor(x), "f32")
        return ctx.cast(getattr(F32(ctx), name)(v), out.dtype)

    lower.__name__ = name
    return lower


for _op, _name in FUNCTIONS.items():
    register_lowering(_op)(_math(_name))


@register_lowering(aten.atan2.default)
def atan2(ctx, y, x):
    out = ctx.out_type()
    return ctx.cast(F32(ctx).atan2(ctx.operand(y, "f32", out.shape), ctx.operand(x, "f32", out.shape)), out.dtype)


# -- activations ------------------------------------------------------------------------------------------------------


@register_lowering(aten.hardtanh.default)
def hardtanh(ctx, x, min_val=-1.0, max_val=1.0):
    """x below min_val → min_val, above max_val → max_val, else x (ReLU6 is hardtanh(0, 6)): selects, not max/min,
    so that -0 stays -0 at a bound of 0 and NaN stays NaN, as eager's compare-and-select."""
    out = ctx.out_type()
    m = F32(ctx)
    v = ctx.cast(ctx.tensor(x), "f32")
    v = m.where(m.cmp("lt", v, float(min_val)), float(min_val), v)
    return ctx.cast(m.where(m.cmp("gt", v, float(max_val)), float(max_val), v), out.dtype)


@register_lowering(aten.leaky_relu.default)
def leaky_relu(ctx, x, negative_slope=0.01):
    out = ctx.out_type()
    m = F32(ctx)
    v = ctx.cast(ctx.tensor(x), "f32")
    return ctx.cast(m.where(m.cmp("gt", v, 0.0), v, m.mul(v, float(negative_slope))), out.dtype)


@register_lowering(aten.elu.default)
def elu(ctx, x, alpha=1.0, scale=1.0, input_scale=1.0):
    """scale·x above 0, else scale·alpha·expm1(input_scale·x) (eager's form)."""
    out = ctx.out_type()
    m = F32(ctx)
    v = ctx.cast(ctx.tensor(x), "f32")
    neg = m.mul(m.expm1(m.mul(v, float(input_scale))), float(alpha) * float(scale))
    return ctx.cast(m.where(m.cmp("gt", v, 0.0), m.mul(v, float(scale)), neg), out.dtype)


# -- float class tests ---------------------------------------------------------------------------------------------


def _float_test(name, test):
    """``test(m, v)`` on a float tensor (f16 as is: its compares are exact; bf16 in f32); false for an integer or
    bool tensor (never NaN or infinite)."""

    def lower(ctx, x):
        v = ctx.tensor(x)
        if not is_float_dtype(v.type.dtype):
            return ctx.emit(FillOp, [], ctx.out_type(), value=False)
        v = ctx.cast(v, "f32" if v.type.dtype == "bf16" else v.type.dtype)
        return test(F32Like(ctx, v.type.dtype), v)

    lower.__name__ = name
    return lower


class F32Like(F32):
    """:class:`F32` whose scalar constants have the dtype of the value tested (f16 compares in f16)."""

    def __init__(self, ctx, dtype):
        super().__init__(ctx)
        self.dtype = dtype

    def _v(self, x):
        return x if not isinstance(x, (int, float)) else self.ctx.scalar(float(x), self.dtype)


register_lowering(aten.isnan.default)(_float_test("isnan", lambda m, v: m.cmp("ne", v, v)))  # only NaN ≠ itself
register_lowering(aten.isinf.default)(_float_test("isinf", lambda m, v: m.cmp("eq", m.abs(v), math.inf)))
# isfinite never reaches a backend: it is CompositeImplicitAutograd, decomposed while tracing (into x == x and
# |x| != inf, which lower here and in elementwise.py)

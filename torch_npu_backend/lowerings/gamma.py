"""The gamma family on the vector unit: ``lgamma`` (``mvlgamma`` reaches it through its decomposition), ``digamma``
and ``polygamma`` (order 0: digamma; 1: eager's trigamma; 2 to :data:`MAX_POLYGAMMA`: Hurwitz's zeta,
``Gamma.polygamma``),
composed in f32 like ``transcendental.py``'s functions.

Both shift the argument up to at least :data:`ASYMPTOTIC` by their recurrences, unrolled :data:`SHIFTS` times with
selects (every x > 0 reaches it: ``x + SHIFTS ≥ SHIFTS``), then take the asymptotic series there::

    lgamma(x) = lgamma(x + m) - log(x (x + 1) … (x + m - 1))
    lgamma(y) ≈ (y - ½) log y - y + ½ log 2π + 1/(12y) - 1/(360y³) + 1/(1260y⁵)           (y ≥ 10)
    digamma(x) = digamma(x + m) - Σ 1/(x + k)                                           (eager's own loop)
    digamma(y) ≈ log y - 1/(2y) - 1/(12y²) + 1/(120y⁴) - 1/(252y⁶) + 1/(240y⁸) - 1/(132y¹⁰)     (y ≥ 10)
                                                            (eager's terms, truncated where they fall below f32)

Negative x by reflection, with ``r = x - round(x)`` (exact) so that ``sin(πx)`` and ``tan(πx)`` see |r| ≤ ½:
``lgamma(x) = log(π / |sin πr|) - lgamma(1 - x)`` (+inf at the poles, as eager); ``digamma(x) = digamma(1 - x) -
π / tan(πr)``, NaN at the negative integers and ``-inf·sign`` at ±0 (eager's ``calc_digamma``). The series
truncation is below f32 rounding at y ≥ 10; the results are within a few f32 ulp of eager's (absolute: near
lgamma's zeros at 1 and 2 and digamma's at 1.4616, where the value itself vanishes).
"""

from __future__ import annotations

import math

import torch

from . import register_lowering
from .transcendental import F32, f32_lowering

aten = torch.ops.aten

SHIFTS = 10
MAX_POLYGAMMA = 8
PI_F32 = float(torch.tensor(math.pi, dtype=torch.float32))  # eager's float π in calc_trigamma
BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30)  # B_2, B_4, B_6, B_8
ASYMPTOTIC = 10.0
HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
LGAMMA_SERIES = (1 / 12, -1 / 360, 1 / 1260)  # Stirling: 1/y times these in 1/y²
DIGAMMA_SERIES = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132)  # B_2k / 2k in 1/y² (eager's polevl A, low first)


class Gamma(F32):
    def _horner(self, z, coeffs):
        """Σ coeffs[i]·z^i."""
        p = self.ctx.scalar(coeffs[-1], "f32")
        for c in reversed(coeffs[:-1]):
            p = self.add(self.mul(p, z), c)
        return p

    def _shift(self, x, step):
        """x raised to at least ASYMPTOTIC: ``step(acc, x_k, taken)`` folds each x_k the recurrence passes."""
        acc = None
        for _ in range(SHIFTS):
            low = self.cmp("lt", x, ASYMPTOTIC)
            acc = step(acc, x, low)
            x = self.where(low, self.add(x, 1.0), x)
        return x, acc

    def _reduced(self, x):
        """x - round(x): in [-½, ½], exact; sin/tan of π times it have x's period."""
        return self.sub(x, self.round(x))

    def lgamma_positive(self, x):
        def step(prod, xk, low):
            f = self.where(low, xk, 1.0)
            return f if prod is None else self.mul(prod, f)

        y, prod = self._shift(x, step)
        iy = self.rec(y)
        s = self.add(self.sub(self.mul(self.sub(y, 0.5), self.log(y)), y), HALF_LOG_2PI)
        s = self.add(s, self.mul(iy, self._horner(self.mul(iy, iy), LGAMMA_SERIES)))
        return self.sub(s, self.log(prod))

    def lgamma(self, x):
        neg = self.cmp("lt", x, 0.0)
        pos = self.lgamma_positive(self.where(neg, self.rsub(1.0, x), x))
        sin = self.abs(self.un("sin", self.mul(self._reduced(x), math.pi)))
        reflected = self.sub(self.log(self.div(math.pi, sin)), pos)
        inf = self.cmp("eq", self.abs(x), math.inf)  # lgamma(±inf) = inf
        return self.where(inf, math.inf, self.where(neg, reflected, pos))

    def digamma_positive(self, x):
        def step(acc, xk, low):
            t = self.where(low, self.rec(xk), 0.0)
            return self.neg(t) if acc is None else self.sub(acc, t)

        y, acc = self._shift(x, step)  # then eager's order: acc + log y - 0.5/y - z·P(z), z = 1/y²
        iy = self.rec(y)
        z = self.mul(iy, iy)
        out = self.sub(self.add(acc, self.log(y)), self.mul(iy, 0.5))
        return self.sub(out, self.mul(z, self._horner(z, DIGAMMA_SERIES)))

    def digamma(self, x):
        neg = self.cmp("lt", x, 0.0)
        pos = self.digamma_positive(self.where(neg, self.rsub(1.0, x), x))
        r = self._reduced(x)
        pr = self.mul(r, math.pi)
        cot = self.div(self.un("cos", pr), self.un("sin", pr))
        reflected = self.sub(pos, self.mul(cot, math.pi))
        out = self.where(neg, reflected, pos)
        out = self.where(self.bin("logical_and", neg, self.cmp("eq", r, 0.0)), math.nan, out)  # negative integers
        zero = self.cmp("eq", x, 0.0)
        out = self.where(zero, self.where(self.signbit(x), math.inf, -math.inf), out)
        return self.where(self.cmp("eq", x, math.inf), math.inf, out)


    def hurwitz_positive(self, s, x):
        """ζ(s, x) = Σ_k (x + k)^-s for x > 0 and an integer s ≥ 2: the terms below ASYMPTOTIC summed, then
        Euler-Maclaurin at y: y^(1-s)/(s-1) + y^-s/2 + Σ_j B_2j/(2j)!·s(s+1)…(s+2j-2)·y^(-s-2j+1)."""

        def power(v, k):  # v^k, k ≥ 1, by repeated products
            r = v
            for _ in range(k - 1):
                r = self.mul(r, v)
            return r

        def step(acc, xk, low):
            t = self.where(low, power(self.rec(xk), s), 0.0)
            return t if acc is None else self.add(acc, t)

        y, acc = self._shift(x, step)
        iy = self.rec(y)
        tail = self.add(self.mul(power(iy, s - 1), 1.0 / (s - 1)), self.mul(power(iy, s), 0.5))
        rising, fact = 1.0, 1.0
        for j, b in enumerate(BERNOULLI, start=1):
            rising *= (s + 2 * j - 2) * ((s + 2 * j - 3) if j > 1 else 1)
            fact *= (2 * j) * (2 * j - 1)
            tail = self.add(tail, self.mul(power(iy, s + 2 * j - 1), b / fact * rising))
        return self.add(acc, tail)

    def polygamma(self, n, x):
        """ψ⁽ⁿ⁾(x) = (-1)^(n+1)·n!·ζ(n + 1, x) for x > 0; for x < 0 the reflection
        ψ⁽ⁿ⁾(x) = (-1)^n·ψ⁽ⁿ⁾(1 - x) - π·dⁿ/dxⁿ cot(πx), the derivative a polynomial in c = cot(πx)
        (d/dx c = -π(1 + c²)); ±inf at 0 and the negative integers (eager: ζ(s, q) = inf there; its trigamma
        reflects with an f32 sin(πx) that is not 0 there: a large finite value, not modelled)."""
        sign_n = -1.0 if n % 2 == 0 else 1.0  # (-1)^(n+1)
        scale = sign_n * math.factorial(n)
        neg = self.cmp("lt", x, 0.0)
        pos = self.mul(self.hurwitz_positive(n + 1, self.where(neg, self.rsub(1.0, x), x)), scale)
        r = self._reduced(x)
        pr = self.mul(r, math.pi)
        c = self.div(self.un("cos", pr), self.un("sin", pr))
        coeffs = [0.0, 1.0]  # cot's derivatives as polynomials in c, low power first
        for _ in range(n):
            deriv = [k * a for k, a in enumerate(coeffs)][1:]
            coeffs = [0.0] * (len(deriv) + 2)
            for k, a in enumerate(deriv):  # times -π(1 + c²)
                coeffs[k] -= math.pi * a
                coeffs[k + 2] -= math.pi * a
        d = self._horner(c, coeffs)
        reflected = self.sub(self.mul(pos, -sign_n), self.mul(d, math.pi))
        out = self.where(neg, reflected, pos)
        pole = self.bin("logical_and", self.cmp("le", x, 0.0), self.cmp("eq", r, 0.0))
        out = self.where(pole, sign_n * math.inf, out)
        out = self.where(self.cmp("eq", x, math.inf), math.nan, out)  # eager's zeta series at ±inf
        return self.where(self.cmp("eq", x, -math.inf), sign_n * math.inf, out)

    def trigamma(self, x):
        """ψ⁽¹⁾ as eager's own ``calc_trigamma`` computes it, step for step in f32: below ½ the reflection
        -π²/sin²(πx) with x → 1 - x (sin of the f32 product π·x, unreduced: near a pole its rounding is
        eager's), six terms 1/x², then (1 + 1/(2x) + (1/6 - (1/30 - 1/(42x²))/x²)/x²)/x."""
        low = self.cmp("lt", x, 0.5)
        sin = self.un("sin", self.mul(x, PI_F32))
        result = self.where(low, self.neg(self.div(PI_F32 * PI_F32, self.mul(sin, sin))), 0.0)
        x = self.where(low, self.rsub(1.0, x), x)
        for _ in range(6):
            result = self.add(result, self.rec(self.mul(x, x)))
            x = self.add(x, 1.0)
        ixx = self.rec(self.mul(x, x))
        inner = self.mul(ixx, self.rsub(1 / 6, self.mul(ixx, self.rsub(1 / 30, self.mul(ixx, 1 / 42)))))
        result = self.add(result, self.div(self.add(self.add(self.div(0.5, x), 1.0), inner), x))
        return self.where(low, self.neg(result), result)


register_lowering(aten.lgamma.default)(f32_lowering(Gamma, "lgamma"))
register_lowering(aten.digamma.default)(f32_lowering(Gamma, "digamma"))


@register_lowering(aten.polygamma.default)
def polygamma(ctx, n, x):
    if n in (0, 1):
        return f32_lowering(Gamma, "digamma" if n == 0 else "trigamma")(ctx, x)
    if not 1 <= n <= MAX_POLYGAMMA:
        raise ctx.error(f"polygamma of order {n}: orders 0 to {MAX_POLYGAMMA} are lowered (the asymptotic series "
                        f"at y ≥ {ASYMPTOTIC:g} loses f32 accuracy above)")
    out = ctx.out_type()
    return ctx.cast(Gamma(ctx).polygamma(n, ctx.cast(ctx.tensor(x), "f32")), out.dtype)

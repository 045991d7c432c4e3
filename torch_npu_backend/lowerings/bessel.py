"""Modified Bessel functions of the first kind on the vector unit: ``i0``, ``special_i0e``, ``special_i1e``,
``special_modified_bessel_i0`` / ``_i1`` (I0 and I1), composed in f32 like ``transcendental.py``'s functions.

Not ``special_i1``: its OpInfo asks for an absolute 1e-4 at f32 (no relative part), about 3 ulp of I1(8.5) ≈ 500,
and the series below is within 7 ulp there (x² rounded once moves I1 by ~x/2 of its ulp): it stays on the host.

Below :data:`SERIES_LIMIT` the power series, nested so that no coefficient underflows (``z = x²/4``)::

    I0(x) = 1 + z/1²·(1 + z/2²·(1 + z/3²·(…)))           :data:`SERIES_TERMS` levels (the last term < 2^-30)
    I1(x) = x/2·(1 + z/(1·2)·(1 + z/(2·3)·(…)))

(all terms positive: no cancellation). Above, Hankel's asymptotic expansion
``Iν(x) ≈ e^x / sqrt(2πx) · Σ_k (-1)^k Π_{i≤k} (μ - (2i - 1)²) / (k! (8x)^k)``, ``μ = 4ν²``, to
:data:`ASYMPTOTIC_TERMS` terms (the last below 2^-28 at x ≥ 15); ``e^x`` overflows above 88.7, where eager's
Cephes form (``e^x·chbevl(…)/sqrt(x)``) gives inf too. The scaled ``i0e``/``i1e`` leave out ``e^|x|`` there (and
multiply the series by ``e^-|x|``). I0 is even, I1 odd.
"""

from __future__ import annotations

import math

import torch

from . import register_lowering
from .transcendental import F32, f32_lowering

aten = torch.ops.aten

SERIES_LIMIT = 15.0
SERIES_TERMS = 26  # z = 56.25 at 15: z^26/(26!)² ≈ 1e-8 of the sum's first term, 1e-13 of I0(15)
ASYMPTOTIC_TERMS = 9


class Bessel(F32):
    def _series(self, x, order):
        z = self.mul(self.mul(x, x), 0.25)
        p = self.ctx.scalar(1.0, "f32")
        for k in range(SERIES_TERMS, 0, -1):
            p = self.add(self.div(self.mul(p, z), float(k * (k + order))), 1.0)  # k(k+ν) exact: one rounding less
        return p if order == 0 else self.mul(p, self.mul(x, 0.5))

    def _hankel(self, a, order):
        """Σ_k (-1)^k Π (μ - (2i-1)²) / (k! (8a)^k), a ≥ SERIES_LIMIT, by Horner in 1/(8a)."""
        mu = 4 * order * order
        coeffs, c = [1.0], 1.0
        for k in range(1, ASYMPTOTIC_TERMS):
            c *= -(mu - (2 * k - 1) ** 2) / k
            coeffs.append(c)
        t = self.rec(self.mul(a, 8.0))
        p = self.ctx.scalar(coeffs[-1], "f32")
        for c in reversed(coeffs[:-1]):
            p = self.add(self.mul(p, t), c)
        return self.div(p, self.sqrt(self.mul(a, 2 * math.pi)))

    def _bessel(self, x, order, scaled):
        a = self.abs(x)
        big = self.cmp("gt", a, SERIES_LIMIT)
        small = self._series(self.where(big, 0.0, x), order)  # x itself: I1's sign comes with it
        tail = self._hankel(self.max(a, SERIES_LIMIT), order)  # for |x|: I1's sign set below
        if order == 1:
            tail = self.copysign(tail, x)
        if scaled:
            small = self.mul(small, self.exp(self.neg(a)))
        else:
            tail = self.mul(tail, self.exp(a))  # inf above 88.7 (e^x overflows), NaN at ±inf (0·inf): as eager's
        return self.where(big, tail, small)

    def i0(self, x):
        return self._bessel(x, 0, scaled=False)

    def i0e(self, x):
        return self._bessel(x, 0, scaled=True)

    def i1(self, x):
        return self._bessel(x, 1, scaled=False)

    def i1e(self, x):
        return self._bessel(x, 1, scaled=True)


for _ops, _name in [((aten.i0.default, aten.special_modified_bessel_i0.default), "i0"),
                    ((aten.special_i0e.default,), "i0e"),
                    ((aten.special_modified_bessel_i1.default,), "i1"),
                    ((aten.special_i1e.default,), "i1e")]:
    register_lowering(*_ops)(f32_lowering(Bessel, _name))

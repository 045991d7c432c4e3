"""``hfusion-decompose-divmod``: ``floordiv``, ``truncdiv``, ``remainder`` and ``fmod`` become ops the vector unit has.

After AscendNPU-IR's ``NormalizeModOp`` / ``NormalizeDivSIandDivUIOp`` (``HFusion/Transforms/Normalize.cpp``), which
divide in f32 and convert back (its integer division truncates an f32 quotient: inexact once the operands pass
2^24). Here the f32 quotient is only an estimate that exact integer steps correct. The vector unit has no integer
division and no fmod (``vdiv`` is f16/f32 only, CANN-INI); i64 has no vector arithmetic at all, so the i64 steps
below run as scalar loops (codegen/scalar_loops.py) and their casts as ``vconv``.

**Integers** (i32, i64): exact, for every pair of operands. ``safe`` = b, or 1 where b = 0::

    r = a, t = 0
    K times:  z = f32(r) / f32(safe), clamped to ±L;  q = trunc(z) (floor in the last round);  t += q;  r -= q·safe
    below = r/b < 0  (r ≠ 0, sign(r) ≠ sign(b))      above = r/b ≥ 1  (b > 0: r ≥ b; b < 0: r ≤ b)
    floor quotient  F = t − below + above,   remainder R = r + below·b − above·b
    truncdiv / fmod: one more step toward zero where R ≠ 0 and sign(R) ≠ sign(a)
    b = 0: quotient 0, remainder a (eager raises ZeroDivisionError; docs/frontend.md)

``L`` (2^31 − 2^7, 2^63 − 2^39: the largest f32 below 2^31, 2^63) keeps each conversion in range, so it never
saturates. K = 2 rounds for i32, 3 for i64. Why (x = a/b, u = 2^-24; the f32 conversions and the division each
round once, so z is within 3.0001·u·|y| of y = r/safe): after round 1, |r1| < |b| + 3.0001·u·|a| (≤ |b| + 384 for
i32, |b| + 1.65e12 for i64) — r1 fits the dtype: past 2^(w−2) a divisor leaves |x| < 2 and the rounding is
monotone, so the estimate cannot cross the integer 1 and |r1| < |b| — and each further round leaves
|r_k| < |b|(1 + 3.0001·u) + 3.0001·u·|r_(k−1)|. Before the last round |y| ≤ 385 (i32 after one round) or
≤ 2.95e5 + 1 (i64 after two), so the last estimate is within δ = 3.0001·u·|y| < 0.06 of y; a floor within δ of y
leaves y − floor(z) ∈ (−δ, 1 + δ): floor(x) − t is −1, 0 or 1, which ``below``/``above`` decide exactly with integer
compares. ``tests/passes/hfusion/test_decompose_divmod.py`` runs this on the simulator's arithmetic over the edges
of each dtype, and one round fewer fails it.

**Floats** (f32, and f16/bf16 through f32): ``fmod`` first, exactly, from a truncated f32 quotient::

    q = a / b, t = trunc(q)                        t is trunc(a/b) or one past it (RN(a/b) rounded up to an integer)
    t·b = p + e exactly                            Dekker's product: Veltkamp splits of t and b (12 + 12 bits;
                                                   b scaled by 2^-32 when |b| > 2^100, so 4097·b cannot overflow)
    r = (a − p) − e                                exact: a − p by Sterbenz, and r itself is representable
    r past zero (sign(r) ≠ sign(a), r ≠ 0): r += ±|b|, the sign of a   (t was one too far; exact again)
    then torch's special cases: |a| < |b| (b = ±inf): a; r = 0: ±0 with the sign of a; b = 0: NaN

Exact (bit for bit with eager) while |a/b| < 2^24. Past it the quotient's trunc is no longer exact in f32: fmod and
remainder give ±0 there (eager: the exact remainder, |r| < |b|), and floor division (``(a − fmod)/b`` …) gives
RN(a/b), an integer, within one ulp of eager's (relative error ≤ 2^-23 ≈ 1.2e-7). ``remainder`` = fmod + b where
their signs differ (one rounding to the dtype), ``floordiv`` = ATen's ``div_floor_floating_vec`` on that fmod, each
step in the op's dtype (per-op rounding for f16/bf16, as eager; ``hfusion-legalize-bf16`` then widens the bf16
steps one by one), ``truncdiv`` = trunc(a / b) in the dtype.

A constant divisor folds here: the compares and selects on it disappear, its splits are numbers.

Counters: ``divisions-decomposed``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...dialects.hfusion import DIVMOD_FUNS
from ...ir.core import OP_REGISTRY, Constant, Operation
from ...ir.types import IndexType, ScalarType, TensorType
from .. import ModulePass, PassContext, register_pass
from ..folding import NUMPY_BINARY, NUMPY_COMPARE, NUMPY_DTYPES, NUMPY_UNARY

ESTIMATE_ROUNDS = {"i32": 2, "i64": 3}  # f32 quotient estimates before the ±1 correction (module docstring)
CONVERSION_LIMIT = {"i32": 2.0**31 - 2.0**7, "i64": 2.0**63 - 2.0**39}  # the largest f32 below 2^31 / 2^63
EXACT_QUOTIENT = 2.0**24  # below it the float algorithm is exact
BIG_DIVISOR, DIVISOR_SCALE = 2.0**100, 2.0**-32  # Veltkamp's 4097·b overflows f32 above ~2^116
SPLIT = 4097.0  # 2^12 + 1: Veltkamp's splitter for 24-bit significands
QUOTIENTS = ("floordiv", "truncdiv")
INTEGER_DTYPES = ("i32", "i64")
FLOAT_DTYPES = ("f32", "f16", "bf16")


@dataclass(frozen=True)
class K:
    """A number known when compiling (a constant operand, a constant of the algorithm), exact in ``dtype``."""

    value: float | int | bool
    dtype: str


def _bf16(x) -> float:
    """``x`` (an f32 value) rounded to the nearest bf16, ties to even (torch's f32 -> bf16 conversion)."""
    f = np.float32(x)
    if np.isnan(f):
        return float(f)
    bits = int(f.view(np.uint32))
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return float(np.uint32(bits).view(np.float32))


def _exact(value, dtype: str) -> K:
    """``value`` rounded to ``dtype`` (as the hardware register holding it would)."""
    if dtype == "bf16":
        return K(_bf16(value), dtype)
    v = NUMPY_DTYPES[dtype](value)
    return K(bool(v) if dtype == "i1" else int(v) if dtype.startswith("i") else float(v), dtype)


def _num(k: K):
    return np.float32(k.value) if k.dtype == "bf16" else NUMPY_DTYPES[k.dtype](k.value)  # bf16 values are exact in f32


class _Emit:
    """Ops of ``anchor``'s shape, created before it; an op whose operands are all ``K`` is computed here instead."""

    def __init__(self, anchor: Operation):
        self.anchor = anchor
        self.type: TensorType = anchor.result.type

    def _create(self, name, operands, types, attrs):
        new = OP_REGISTRY[name](list(operands), list(types), attrs, [], self.anchor.loc)
        self.anchor.parent.insert_before(self.anchor, new)
        return new.result

    def ir(self, v):
        if not isinstance(v, K):
            return v
        return self._create("arith.constant", [], [ScalarType(v.dtype)], {"value": v.value})

    def _op(self, name, operands, dtype, attrs):
        return self._create(name, [self.ir(v) for v in operands], [self.type.with_dtype(dtype)], attrs)

    def operand(self, v):
        """An operand of the op: a scalar constant becomes a ``K``; a scalar computed at run time (a size) becomes
        a tensor (0 + s), so that every step can convert it."""
        if isinstance(v.type, TensorType):
            return v
        src = getattr(v, "op", None)
        dtype = self.type.dtype
        if src is not None and src.has_trait(Constant) and isinstance(v.type, (ScalarType, IndexType)):
            return _exact(src.attributes["value"], dtype)
        zeros = self._create("hfusion.fill", [], [self.type], {"value": 0 if dtype.startswith("i") else 0.0})
        return self._op("hfusion.elemwise_binary", [zeros, v], dtype, {"fun": "add"})

    def bin(self, fun, a, b, dtype):
        if isinstance(a, K) and isinstance(b, K):
            with np.errstate(all="ignore"):
                return _exact(NUMPY_BINARY[fun](_num(a), _num(b)), dtype)
        return self._op("hfusion.elemwise_binary", [a, b], dtype, {"fun": fun})

    def un(self, fun, x, dtype):
        if isinstance(x, K):
            return _exact(NUMPY_UNARY[fun](_num(x)), dtype)
        return self._op("hfusion.elemwise_unary", [x], dtype, {"fun": fun})

    def cmp(self, pred, a, b):
        if isinstance(a, K) and isinstance(b, K):
            return K(bool(NUMPY_COMPARE[pred](_num(a), _num(b))), "i1")
        return self._op("hfusion.compare", [a, b], "i1", {"predicate": pred})

    def sel(self, c, a, b, dtype):
        if isinstance(c, K):
            return a if c.value else b
        if isinstance(a, K) and isinstance(b, K) and a == b:
            return a
        if dtype == "i1" and (isinstance(a, K) or isinstance(b, K)):
            raise AssertionError("decompose-divmod selects masks only between computed masks")
        return self._op("hfusion.select", [c, a, b], dtype, {})

    def cast(self, x, dtype, mode="rint"):
        src = x.dtype if isinstance(x, K) else x.type.dtype
        if src == dtype:
            return x
        if isinstance(x, K):
            v = _num(x)
            if dtype.startswith("i") and not src.startswith("i"):
                v = {"trunc": np.trunc, "floor": np.floor}[mode](v)
            return _exact(v, dtype)
        return self._op("hfusion.cast", [x], dtype, {"round_mode": mode})


# -- integers ----------------------------------------------------------------------------------------------------------


def integer_division(e: _Emit, fun: str, a, b, dtype: str):
    """``fun`` on i32/i64 operands, exactly (module docstring)."""
    nonzero = e.cmp("ne", b, K(0, dtype))
    safe = e.sel(nonzero, b, K(1, dtype), dtype)
    fb = e.cast(safe, "f32")
    limit = CONVERSION_LIMIT[dtype]
    t, r = K(0, dtype), a
    rounds = ESTIMATE_ROUNDS[dtype]
    for k in range(rounds):
        z = e.bin("div", e.cast(r, "f32"), fb, "f32")
        z = e.bin("min", e.bin("max", z, K(-limit, "f32"), "f32"), K(limit, "f32"), "f32")
        q = e.cast(z, dtype, "floor" if k == rounds - 1 else "trunc")
        t = e.bin("add", t, q, dtype) if k else q
        r = e.bin("sub", r, e.bin("mul", q, safe, dtype), dtype)
    positive = e.cmp("gt", safe, K(0, dtype))
    below = e.sel(positive, e.cmp("lt", r, K(0, dtype)), e.cmp("gt", r, K(0, dtype)), "i1")  # r/b < 0
    above = e.sel(positive, e.cmp("ge", r, safe), e.cmp("le", r, safe), "i1")  # r/b >= 1
    one = K(1, dtype)
    q = e.sel(below, e.bin("sub", t, one, dtype), e.sel(above, e.bin("add", t, one, dtype), t, dtype), dtype)
    r = e.sel(below, e.bin("add", r, safe, dtype), e.sel(above, e.bin("sub", r, safe, dtype), r, dtype), dtype)
    if fun in ("truncdiv", "fmod"):  # the floor quotient is one below the trunc one where a and b differ in sign
        toward_zero = e.sel(e.cmp("lt", a, K(0, dtype)), e.cmp("gt", r, K(0, dtype)), e.cmp("lt", r, K(0, dtype)), "i1")
        q = e.sel(toward_zero, e.bin("add", q, one, dtype), q, dtype)
        r = e.sel(toward_zero, e.bin("sub", r, safe, dtype), r, dtype)
    if fun in QUOTIENTS:
        return e.sel(nonzero, q, K(0, dtype), dtype)
    return e.sel(nonzero, r, a, dtype)


# -- floats ------------------------------------------------------------------------------------------------------------


def _split(e: _Emit, x):
    """Veltkamp: x = hi + lo exactly, each with at most 12 significant bits (f32)."""
    c = e.bin("mul", x, K(SPLIT, "f32"), "f32")
    hi = e.bin("sub", c, e.bin("sub", c, x, "f32"), "f32")
    return hi, e.bin("sub", x, hi, "f32")


def exact_fmod(e: _Emit, a, b, nan_at_zero: bool = True):
    """fmod(a, b) of f32 values: exact while |a/b| < 2^24 (module docstring). Without ``nan_at_zero`` the value
    where b = 0 is left unspecified (floor division selects a/b there)."""
    f = "f32"
    q = e.bin("div", a, b, f)
    t = e.un("trunc", q, f)
    abs_b = e.un("abs", b, f)
    big = e.cmp("gt", abs_b, K(BIG_DIVISOR, f))
    scaled = e.bin("mul", b, e.sel(big, K(DIVISOR_SCALE, f), K(1.0, f), f), f)
    unscale = e.sel(big, K(1 / DIVISOR_SCALE, f), K(1.0, f), f)
    b_hi, b_lo = _split(e, scaled)
    t_hi, t_lo = _split(e, t)
    p = e.bin("mul", t, scaled, f)
    err = e.bin("sub", e.bin("sub", e.bin("sub", p, e.bin("mul", t_hi, b_hi, f), f), e.bin("mul", t_lo, b_hi, f), f),
                e.bin("mul", t_hi, b_lo, f), f)
    err = e.bin("sub", e.bin("mul", t_lo, b_lo, f), err, f)  # t·scaled − p, exactly (Dekker)
    p, err = e.bin("mul", p, unscale, f), e.bin("mul", err, unscale, f)
    r = e.bin("sub", e.bin("sub", a, p, f), err, f)
    negative = e.cmp("lt", a, K(0.0, f))
    past = e.sel(negative, e.cmp("gt", r, K(0.0, f)), e.cmp("lt", r, K(0.0, f)), "i1")
    r = e.sel(past, e.bin("add", r, e.sel(negative, e.un("neg", abs_b, f), abs_b, f), f), r, f)
    signed_zero = e.bin("mul", a, K(0.0, f), f)
    r = e.sel(e.cmp("ge", e.un("abs", q, f), K(EXACT_QUOTIENT, f)), signed_zero, r, f)  # out of range (docstring)
    r = e.sel(e.cmp("lt", e.un("abs", a, f), abs_b), a, r, f)  # fmod(a, ±inf) = a
    r = e.sel(e.cmp("eq", r, K(0.0, f)), signed_zero, r, f)
    return e.sel(e.cmp("eq", b, K(0.0, f)), K(float("nan"), f), r, f) if nan_at_zero else r


def remainder_from_fmod(e: _Emit, mod, b):
    """torch.remainder: fmod + b where fmod ≠ 0 and their signs differ (f32)."""
    f = "f32"
    differ = e.sel(e.cmp("lt", b, K(0.0, f)), e.cmp("gt", mod, K(0.0, f)), e.cmp("lt", mod, K(0.0, f)), "i1")
    return e.sel(differ, e.bin("add", mod, b, f), mod, f)


def float_floordiv(e: _Emit, a, b, mod, dtype: str):
    """ATen's div_floor_floating_vec, every step in ``dtype``, from the exact fmod ``mod``."""
    zero, one = K(0.0, dtype), K(1.0, dtype)
    div = e.bin("div", e.bin("sub", a, mod, dtype), b, dtype)
    differ = e.sel(e.cmp("lt", b, zero), e.cmp("gt", mod, zero), e.cmp("lt", mod, zero), "i1")
    div = e.sel(differ, e.bin("sub", div, one, dtype), div, dtype)
    floor = e.un("floor", div, dtype)
    up = e.cmp("gt", e.bin("sub", div, floor, dtype), K(0.5, dtype))
    floor = e.sel(up, e.bin("add", floor, one, dtype), floor, dtype)
    basic = e.bin("div", a, b, dtype)
    floor = e.sel(e.cmp("eq", div, zero), e.bin("mul", basic, zero, dtype), floor, dtype)  # copysign(0, a/b)
    return e.sel(e.cmp("eq", b, zero), basic, floor, dtype)


def float_division(e: _Emit, fun: str, a, b, dtype: str):
    if fun == "truncdiv":
        return e.un("trunc", e.bin("div", a, b, dtype), dtype)
    wide_b = e.cast(b, "f32")
    mod = exact_fmod(e, e.cast(a, "f32"), wide_b, nan_at_zero=fun != "floordiv")
    if fun == "fmod":
        return e.cast(mod, dtype)
    if fun == "remainder":
        return e.cast(remainder_from_fmod(e, mod, wide_b), dtype)
    return float_floordiv(e, a, b, e.cast(mod, dtype), dtype)


def _is_division(op: Operation) -> bool:
    return op.name == "hfusion.elemwise_binary" and op.attributes["fun"] in DIVMOD_FUNS


@register_pass
@dataclass(frozen=True)
class DecomposeDivmod(ModulePass):
    """Rewrite floordiv/truncdiv/remainder/fmod into f32 estimates, exact integer corrections and Dekker products."""

    name: ClassVar[str] = "hfusion-decompose-divmod"

    def run(self, module: Operation, ctx: PassContext) -> None:
        ctx.count("divisions-decomposed", 0)
        for op in [o for o in module.walk() if _is_division(o)]:
            dtype, fun = op.result.type.dtype, op.attributes["fun"]
            if dtype not in INTEGER_DTYPES + FLOAT_DTYPES:
                raise op.error(f"'{fun}' on {dtype}: decomposed for {', '.join(INTEGER_DTYPES + FLOAT_DTYPES)}")
            e = _Emit(op)
            a, b = (e.operand(v) for v in op.operands)
            divide = integer_division if dtype in INTEGER_DTYPES else float_division
            out = e.ir(divide(e, fun, a, b, dtype))
            if not isinstance(out.type, TensorType):  # both operands constant: the importer never builds that
                raise op.error(f"'{fun}' of two constants")
            out.name_hint = op.result.name_hint
            op.result.replace_all_uses_with(out)
            op.erase()
            ctx.count("divisions-decomposed")

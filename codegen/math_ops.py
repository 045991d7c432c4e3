"""Math funs with no vector instruction, as sequences of the simulator's vector instructions (docs/codegen.md).

Every sequence below uses only PIPE_V instructions the simulator costs (vadds/vmuls/vmaxs/vmins, vadd/vsub/vmul/
vdiv, vexp/vln/vsqrt/vrsqrt/vrec, vconv), each over the op's whole region (``codegen.vector.region``), separated by
``pipe_barrier V`` (independent instructions may share a step: :meth:`Seq.also`). Temporaries are f32 buffers
shaped like the op's destination (same element strides, 4-B elements), carved out of the kernel's planned scratch
buffer (``hivm.alloc {scratch = true}``); the schedule sizes the scratch for them with
``graph_passes.idioms.math_funs.math_temps``, the count used here too).

f16 ops compute in f32 (as torch does for half): the source is ``vconv``-ed into a temporary, the sequence runs in
f32 and the result is ``vconv``-ed (rint) into the destination. For f32 the sequence reads the source directly and
only its last instruction writes the destination, so in-place ops (dst is src) are fine.

Approximations (their errors, measured on the simulator against float64 torch, are in docs/codegen.md's table):

- ``erf``: the rational approximation of XLA's ``ErfImpl32`` / Eigen's ``generic_fast_erf_float``: x clamped to
  [-4, 4], erf(x) = x·P(x²)/Q(x²), P of degree 6 and Q of degree 4 in x²; erf(±inf) = ±1 exactly (clamped to
  ±4, where the ratio rounds to ±1); NaN propagates (vmins/vmaxs are NaN-propagating).
- ``gelu_erf``: 0.5·((1 + erf(x·√½))·x), erf as above; in f32 (bf16) the last x is x + x·0, NaN at +inf as
  eager's f32/bf16 GELU (f16: +inf, as eager's).
- ``sin``/``cos``: Cody–Waite range reduction as in Cephes ``sinf``/``cosf`` with π split in three parts
  (4× Cephes' DP1/DP2/DP3 for π/4; k·DP1 and k·DP2 are exact for |k| < 2^12): sin: k = rint(x/π),
  r = x − kπ ∈ [−π/2, π/2], sin x = (−1)^k·sin r; cos: m = rint(x/π − ½), r = x − (m + ½)π, cos x = (−1)^(m+1)·sin r.
  sin r = r + r·r²·S(r²) with the Taylor coefficients up to r¹³ (truncation < 6.7e-10 on [−π/2, π/2]);
  (−1)^k = 2·(2·floor(k/2) − k) + 1 with ``vconv f32→f32 floor``. The error grows like |x|·2^-24 with the
  rounding of x itself; accurate to |x| ≈ 2^12·π (where k·DP1 stops being exact).
- ``pow`` with a constant exponent e: 2 → x·x, 0.5 → vsqrt, −0.5 → vrsqrt, −1 → vrec (one rounding each, in the
  op's dtype); 0 → 1; other integers → binary exponentiation (square-and-multiply, then vrec for e < 0) in f32,
  which is exact in sign for negative bases (torch's semantics); other exponents → exp(e·ln x) in f32 (NaN for
  x < 0 as torch; relative error ≈ (|e·ln x| + 2)·2^-24). A constant positive base with a tensor exponent:
  exp(x·ln s).
- ``sign``: min(max(x·2^k·2^k, −1), 1) (2^100 in f32, 2^15 in f16, so that the smallest subnormal reaches ±1;
  ±inf → ±1, ±0 → ±0, NaN → NaN where torch gives 0: the cheap NaN-propagating form); integers:
  min(max(x, −1), 1). Exact otherwise.
"""

from __future__ import annotations

import math

from graph_passes.intmath import prod
from simulator.expr import Imm

from .errors import CodegenError
from .vector import SCRATCH, Operand, region, vector_instr

from graph_passes.idioms.math_funs import ONE_INSTRUCTION_POW, math_temps

SEQ_UNARY = ("erf", "gelu_erf", "sin", "cos", "sign")

# XLA ErfImpl32 / Eigen generic_fast_erf_float coefficients (highest power of x² first)
ERF_ALPHA = (-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06, -5.69250639462346e-05,
             -7.34990630326855e-04, -2.95459980854025e-03, -1.60960333262415e-02)
ERF_BETA = (-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03, -7.37332916720468e-03,
            -1.42647390514189e-02)
# Cephes sinf DP1/DP2/DP3 (π/4 in three parts), times 4: π = PI_A + PI_B + PI_C
PI_A, PI_B, PI_C = 4 * 0.78515625, 4 * 2.4187564849853515625e-4, 4 * 3.77489497744594108e-8
# sin r = r + r·z·(S0 + z·(S1 + …)), z = r²: Taylor −1/3!, 1/5!, …, −1/13!; highest power first
SIN_S = tuple((-1) ** k / math.factorial(2 * k + 1) for k in range(6, 0, -1))


class Seq:
    """Emit a sequence over one op's region: ``x`` is the input (f32), ``o`` the output (f32), ``t`` temporaries."""

    def __init__(self, state, op, what: str, dtype: str, src: Operand, dst: Operand, ext, caps, total: int, shape,
                 in_f32: bool = True):
        """``total`` f32 temporaries (``math_temps``); with ``in_f32`` an f16 op computes in the last two."""
        self.state, self.op, self.ext, self.caps, self.dtype = state, op, ext, caps, dtype
        self.dst = dst
        self.f16 = dtype == "f16" and in_f32
        per = state.scratch_size(prod(shape) * 4)
        self.t = []
        self.first = True
        if total:
            base = state.scratch(total * per, f"'{what}' ({total} f32 temporaries of {per} B)")
            self.t = [Operand(Imm(base + i * per), 4, dst.strides, SCRATCH) for i in range(total)]
        self.x, self.o = src, dst
        self.joined = False  # the next instruction joins the previous one's step (no barrier: independent of it)
        if self.f16:
            self.x, self.o = self.t[-2], self.t[-1]
            self.conv("f16", "f32", src, self.x)

    def _barrier(self):
        if self.joined:
            self.joined = False
            return
        self.state.b.pipe_barrier("V")  # dependent steps (and the first write of scratch) are ordered on PIPE_V

    def also(self) -> "Seq":
        """The next instruction runs in the same dependent step as the previous one (no ``pipe_barrier V`` before
        it, one start-up for both): it must neither read what that step writes nor write what it reads."""
        self.joined = True
        return self

    def _step(self, mnemonic: str, dtype, operands: tuple, ops: list, **fields) -> None:
        """One instruction over the op's region (after a barrier unless joined)."""
        self._barrier()
        region(self.state, vector_instr(self.state, mnemonic, dtype, operands, **fields), ops, self.ext, self.caps)

    def sc(self, form: str, a: Operand, value: float, d: Operand, dtype: str = "f32") -> None:
        self._step("v" + form, dtype, ("src", "dst"), [a, d], scalar=Imm(value))

    def un(self, mnem: str, a: Operand, d: Operand, dtype: str = "f32") -> None:
        self._step(mnem, dtype, ("src", "dst"), [a, d])

    def bin(self, mnem: str, a: Operand, b: Operand, d: Operand, dtype: str = "f32") -> None:
        self._step(mnem, dtype, ("src0", "src1", "dst"), [a, b, d])

    def conv(self, sd: str, dd: str, a: Operand, d: Operand, mode: str = "rint") -> None:
        self._step("vconv", (sd, dd), ("src", "dst"), [a, d], round_mode=mode)

    def dup(self, value: float, d: Operand, dtype: str) -> None:
        self._step("vdup", dtype, ("dst",), [d], scalar=Imm(value))

    def horner(self, coeffs, z: Operand, acc: Operand) -> None:
        """acc = c0·z^(n-1) + … + c_{n-1} (Horner: acc = z·c0; acc += c1; acc *= z; …)."""
        for step in self._horner_steps(coeffs, z, acc):
            step()

    def horner2(self, a_coeffs, b_coeffs, z: Operand, a_acc: Operand, b_acc: Operand) -> None:
        """Two independent Horner chains in z (:meth:`horner`) side by side: step i of one beside step i of the
        other, one barrier for both — max(len) steps instead of the sum. Each chain's rounding is Horner's."""
        steps = [self._horner_steps(c, z, acc) for c, acc in ((a_coeffs, a_acc), (b_coeffs, b_acc))]
        for i in range(max(len(s) for s in steps)):
            for j, chain in enumerate(x for x in steps if i < len(x)):
                if j:
                    self.also()
                chain[i]()

    def _horner_steps(self, coeffs, z: Operand, acc: Operand) -> list:
        """The instructions of :meth:`horner`, each a thunk (one dependent step each)."""
        out = [lambda: self.sc("muls", z, coeffs[0], acc)]
        for i, c in enumerate(coeffs[1:]):
            out.append(lambda c=c: self.sc("adds", acc, c, acc))
            if i < len(coeffs) - 2:
                out.append(lambda: self.bin("vmul", acc, z, acc))
        return out

    def finish(self) -> None:
        if self.f16:
            self.conv("f32", "f16", self.o, self.dst)
        self._barrier()


# -- the sequences (x: input, o: output; o is written last, x may be o's buffer in place) ------------------------------


def _erf_core(s: Seq, a: Operand, out: Operand, beside_quotient=None) -> None:
    """out = erf(a) (a: x or a temp other than t0, t1, t3; clobbers t0 … t3, reads a in the first step only).

    16 dependent steps: c = clamp(a, ±4) and z = min(a·a, 16) (= c·c, the same rounding) side by side, then P(z)
    and Q(z) side by side (12 steps, P's), then c·P, then the quotient. ``beside_quotient`` emits one instruction
    into the quotient's step (t0 and t1 are free by then: it must not touch t2, t3 or ``out``)."""
    c, z, p, q = s.t[0], s.t[1], s.t[2], s.t[3]
    s.sc("mins", a, 4.0, c)
    s.also().bin("vmul", a, a, z)
    s.sc("maxs", c, -4.0, c)
    s.also().sc("mins", z, 16.0, z)
    s.horner2(ERF_ALPHA, ERF_BETA, z, p, q)
    s.bin("vmul", p, c, p)
    s.bin("vdiv", p, q, out)
    if beside_quotient is not None:
        beside_quotient()


def seq_erf(s: Seq) -> None:
    _erf_core(s, s.x, s.o)


def seq_gelu_erf(s: Seq) -> None:
    """0.5·((1 + erf(x·√½))·x). In f32 (and bf16, computed in f32) the last factor is x + x·0: x itself for every
    finite x (x·0 is a zero of x's sign), NaN at ±inf, so gelu(+inf) is NaN as eager's vectorized f32 GELU gives
    (gelu(−inf) is NaN either way, (1 + erf) being 0 there). Its two instructions join steps the sequence already
    has (the quotient's and the ``+ 1``'s): no dependent step, temporary or mask more. f16 keeps +inf, as eager's
    f16 GELU does."""
    p, x = s.t[2], s.x
    nan_at_inf = not s.f16
    s.sc("muls", s.x, 0.7071067811865476, p)
    _erf_core(s, p, p, beside_quotient=(lambda: s.also().sc("muls", s.x, 0.0, s.t[0])) if nan_at_inf else None)
    s.sc("adds", p, 1.0, p)
    if nan_at_inf:
        x = s.t[0]
        s.also().bin("vadd", s.x, x, x)
    s.bin("vmul", p, x, p)
    s.sc("muls", p, 0.5, s.o)


def _sin_reduced(s: Seq, shift: float) -> None:
    """o = (−1)^k · sin(x − n·π) for n in t0 and k = n + shift (clobbers t0 … t3)."""
    n, g, r, z = s.t[:4]
    s.sc("muls", n, -PI_A, r)
    s.bin("vadd", r, s.x, r)
    s.sc("muls", n, -PI_B, z)
    s.bin("vadd", r, z, r)
    s.sc("muls", n, -PI_C, z)
    s.bin("vadd", r, z, r)  # r = x − n·π ∈ [−π/2, π/2] (Cody–Waite: n·PI_A, n·PI_B exact)
    # g = (−1)^k = 2·(2·floor(k/2) − k) + 1
    s.sc("muls", n, 0.5, g)
    if shift:
        s.sc("adds", g, shift * 0.5, g)
    s.conv("f32", "f32", g, g, mode="floor")
    s.sc("muls", g, 2.0, g)
    s.bin("vsub", g, n, g)
    s.sc("muls", g, 2.0, g)
    s.sc("adds", g, 1.0 - 2.0 * shift, g)
    s.bin("vmul", r, r, z)
    s.horner(SIN_S, z, n)  # n is dead: S(z)
    s.bin("vmul", n, z, n)
    s.bin("vmul", n, r, n)
    s.bin("vadd", n, r, n)  # sin r = r + r·z·S(z)
    s.bin("vmul", n, g, s.o)


def seq_sin(s: Seq) -> None:
    n = s.t[0]
    s.sc("muls", s.x, 1 / math.pi, n)
    s.conv("f32", "f32", n, n, mode="rint")  # k
    _sin_reduced(s, 0.0)


def seq_cos(s: Seq) -> None:
    n = s.t[0]
    s.sc("muls", s.x, 1 / math.pi, n)
    s.sc("adds", n, -0.5, n)
    s.conv("f32", "f32", n, n, mode="rint")  # m
    s.sc("adds", n, 0.5, n)  # cos x = (−1)^(m+1)·sin(x − (m + ½)·π)
    _sin_reduced(s, 0.5)


SEQUENCES = {"erf": seq_erf, "gelu_erf": seq_gelu_erf, "sin": seq_sin, "cos": seq_cos}


def emit_unary_seq(state, op, fun: str, dtype: str, src: Operand, dst: Operand, ext, caps, shape) -> None:
    if fun == "sign":
        return _sign(state, op, dtype, src, dst, ext, caps, shape)
    if dtype not in ("f16", "f32"):
        raise CodegenError(op, f"unary fun '{fun}' on {dtype} has no vector instruction sequence (f16, f32)")
    s = Seq(state, op, fun, dtype, src, dst, ext, caps, math_temps(fun, dtype), shape)
    SEQUENCES[fun](s)
    s.finish()


def _sign(state, op, dtype, src, dst, ext, caps, shape) -> None:
    s = Seq(state, op, "sign", dtype, src, dst, ext, caps, 0, shape, in_f32=False)
    if dtype in ("f16", "f32"):
        big = 2.0**100 if dtype == "f32" else 2.0**15
        s.sc("muls", src, big, dst, dtype)
        s.sc("muls", dst, big, dst, dtype)
        s.sc("maxs", dst, -1.0, dst, dtype)
    elif dtype in ("i16", "i32"):
        s.sc("maxs", src, -1, dst, dtype)
    else:
        raise CodegenError(op, f"sign on {dtype}")
    s.sc("mins", dst, 1 if dtype.startswith("i") else 1.0, dst, dtype)
    s._barrier()


# -- pow ---------------------------------------------------------------------------------------------------------------


def emit_pow(state, op, dtype: str, a, b, dst: Operand, ext, caps, shape) -> None:
    """dst = a ** b with one scalar operand known at compile time (see the module docstring)."""
    if dtype not in ("f16", "f32"):
        raise CodegenError(op, f"pow on {dtype} (f16, f32)")
    if isinstance(a, Operand) and isinstance(b, Operand):
        raise CodegenError(op, "pow with a tensor exponent has no vector sequence (torch's result for a negative "
                               "base depends on whether each exponent is an integer)")
    if isinstance(b, Operand):  # s ** x: exp(x·ln s) for a constant s > 0
        if not isinstance(a, Imm) or not (a.value > 0 and math.isfinite(a.value)):
            raise CodegenError(op, f"pow with a scalar base {a}: only a constant positive finite base is emitted")
        s = Seq(state, op, "pow", dtype, b, dst, ext, caps, math_temps("pow", dtype), shape)
        s.sc("muls", s.x, math.log(a.value), s.o)
        s.un("vexp", s.o, s.o)
        return s.finish()
    if not isinstance(b, Imm):
        raise CodegenError(op, "pow with a run-time exponent: the sequence depends on the exponent's value (a "
                               "constant is emitted)")
    e = float(b.value)
    if e in ONE_INSTRUCTION_POW:  # one correctly rounded instruction in the op's dtype
        s = Seq(state, op, "pow", dtype, a, dst, ext, caps, 0, shape, in_f32=False)
        if e == 0.0:  # torch: x ** 0 = 1 for every x (NaN included)
            s.dup(1.0, dst, dtype)
        elif e == 2.0:
            s.bin("vmul", a, a, dst, dtype)
        else:
            s.un({1.0: "vcopy", 0.5: "vsqrt", -0.5: "vrsqrt", -1.0: "vrec"}[e], a, dst, dtype)
        return s.finish()
    s = Seq(state, op, "pow", dtype, a, dst, ext, caps, math_temps("pow", dtype, e), shape)
    if e.is_integer():
        _int_power(s, int(abs(e)), negative=e < 0)
    else:  # exp(e·ln x): NaN for x < 0 (torch), 0 ** e = 0 (e > 0) or inf (e < 0)
        s.un("vln", s.x, s.o)
        s.sc("muls", s.o, e, s.o)
        s.un("vexp", s.o, s.o)
    s.finish()


def _int_power(s: Seq, n: int, negative: bool) -> None:
    """o = x ** n by square-and-multiply in f32 (n ≥ 3, or n ≥ 2 when negative), then o = 1 / o when negative.
    Temps: t0 the running square x^(2^i), t1 the product; x itself is never written."""
    sq, prod = s.t[0], s.t[1]
    base, acc = s.x, None
    bits = bin(n)[2:][::-1]  # least significant first
    top = len(bits) - 1
    for i, bit in enumerate(bits):
        if bit == "1":
            if acc is None and i < top:
                if base is s.x:
                    acc = base  # x is read-only: no copy
                else:
                    s.sc("muls", base, 1.0, prod)  # the square is overwritten by the next squaring
                    acc = prod
            elif acc is None:  # n is a power of two: the result is this square
                s.un("vrec", base, s.o) if negative else s.sc("muls", base, 1.0, s.o)
                return
            else:
                target = s.o if i == top and not negative else prod
                s.bin("vmul", acc, base, target)
                acc = target
        if i < top:
            s.bin("vmul", base, base, sq)
            base = sq
    if negative:
        s.un("vrec", acc, s.o)

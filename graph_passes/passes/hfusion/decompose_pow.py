"""``hfusion-decompose-pow``: ``pow`` with a tensor exponent becomes elementwise ops the vector unit has.

After AscendNPU-IR's ``NormalizePowfOp`` (``HFusion/Transforms/Normalize.cpp``): ``x ** y = exp(y·ln|x|)``, with the
sign and the special cases of torch's (C's) ``pow`` made explicit by selects::

    l  = log(|x|)
    p  = y·l, except 0 where l = 0 (|x| = 1: 1 ** NaN = (−1) ** ±inf = 1) or y = 0 (x ** 0 = 1, x NaN or ±inf too)
    e  = y·l − p exactly (Dekker's two-product), 0 where p is
    r  = exp(p)·(1 + e)                            0 ** y = 0 (y > 0) or inf (y < 0) through ln 0 = −inf
    x < 0:  r if y is even, −r if y is odd (floor(y/2) ≠ y/2), NaN if y is not an integer (floor(y) ≠ y)

The NaN is ``sqrt(−|y − floor(y)|)`` (no scalar select operand is needed). No logical op on masks: the x < 0
cases are nested selects. An f16 pow computes in f32 between casts (as torch's half pow does, one rounding);
bf16 was already widened by ``hfusion-legalize-bf16``. A constant exponent (or base) stays a binary op: codegen
has cheaper sequences for those (docs/codegen.md).

Counters: ``pows-decomposed``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...ir.core import OP_REGISTRY, Operation
from ...ir.types import ScalarType, TensorType
from .. import ModulePass, PassContext, register_pass


class _Emit:
    """Builds f32 (or i1) tensor ops of ``anchor``'s shape before it."""

    def __init__(self, anchor: Operation):
        self.anchor = anchor
        self.type = anchor.result.type

    def _create(self, name, operands, types, attrs):
        new = OP_REGISTRY[name](list(operands), list(types), attrs, [], self.anchor.loc)
        self.anchor.parent.insert_before(self.anchor, new)
        return new.result

    def _op(self, name, operands, dtype, attrs):
        return self._create(name, operands, [self.type.with_dtype(dtype)], attrs)

    def const(self, value: float):
        return self._create("arith.constant", [], [ScalarType("f32")], {"value": value})

    def un(self, fun, x):
        return self._op("hfusion.elemwise_unary", [x], "f32", {"fun": fun})

    def bin(self, fun, a, b):
        return self._op("hfusion.elemwise_binary", [a, b], "f32", {"fun": fun})

    def cmp(self, pred, a, b):
        return self._op("hfusion.compare", [a, b], "i1", {"predicate": pred})

    def sel(self, c, a, b):
        return self._op("hfusion.select", [c, a, b], "f32", {})

    def cast(self, v, dtype):
        return self._op("hfusion.cast", [v], dtype, {"round_mode": "rint"})


def pow_f32(e: _Emit, x, y):
    """x ** y for f32 tensors x, y (torch's special cases; see the module docstring)."""
    zero = e.const(0.0)
    l = e.un("log", e.un("abs", x))
    p, err = _two_product(e, y, l)
    for special in (e.cmp("eq", l, zero), e.cmp("eq", y, zero)):  # |x| = 1 or y = 0: p = 0 (l or y is the 0)
        p, err = e.sel(special, zero, p), e.sel(special, zero, err)
    r = e.un("exp", p)
    fix = e.bin("mul", r, err)  # exp(p + err) = r·(1 + err) to f32 precision (|err| ≤ ulp(p)/2)
    r = e.sel(e.cmp("eq", fix, fix), e.bin("add", r, fix), r)  # NaN (r = inf, or an overflowed split): r as is
    half = e.bin("mul", y, e.const(0.5))
    odd = e.cmp("ne", e.un("floor", half), half)
    fy = e.un("floor", y)
    nan = e.un("sqrt", e.un("neg", e.un("abs", e.bin("sub", y, fy))))  # NaN unless y is an integer
    negative = e.sel(e.cmp("ne", fy, y), nan, e.sel(odd, e.un("neg", r), r))
    return e.sel(e.cmp("lt", x, zero), negative, r)


def _two_product(e: _Emit, a, b):
    """a·b = p + err exactly (Dekker, with Veltkamp splits into 12-bit halves; no fused multiply-add): the rounding of
    y·ln|x| is amplified by exp into a relative error of |y·ln|x||·2^-24 (60 at 4.4e7), which ``err`` removes."""
    p = e.bin("mul", a, b)
    (a_hi, a_lo), (b_hi, b_lo) = _split(e, a), _split(e, b)
    err = e.bin("sub", e.bin("mul", a_hi, b_hi), p)
    err = e.bin("add", err, e.bin("mul", a_hi, b_lo))
    err = e.bin("add", err, e.bin("mul", a_lo, b_hi))
    return p, e.bin("add", err, e.bin("mul", a_lo, b_lo))


def _split(e: _Emit, x):
    """Veltkamp: x = hi + lo exactly, each with at most 12 significant bits (f32; 4097 = 2^12 + 1)."""
    c = e.bin("mul", x, e.const(4097.0))
    hi = e.bin("sub", c, e.bin("sub", c, x))
    return hi, e.bin("sub", x, hi)


def _is_tensor_pow(op: Operation) -> bool:
    return (op.name == "hfusion.elemwise_binary" and op.attributes["fun"] == "pow"
            and all(isinstance(v.type, TensorType) for v in op.operands)
            and op.result.type.dtype in ("f32", "f16"))


@register_pass
@dataclass(frozen=True)
class DecomposePow(ModulePass):
    """Rewrite pow with a tensor exponent into log/exp/floor/compare/select ops (torch's pow semantics)."""

    name: ClassVar[str] = "hfusion-decompose-pow"

    def run(self, module: Operation, ctx: PassContext) -> None:
        ctx.count("pows-decomposed", 0)
        for op in [o for o in module.walk() if _is_tensor_pow(o)]:
            e = _Emit(op)
            x, y = op.operands
            f16 = op.result.type.dtype == "f16"
            x, y = (v if v.type.dtype == "f32" else e.cast(v, "f32") for v in (x, y))
            out = pow_f32(e, x, y)
            if f16:
                out = e.cast(out, "f16")
            out.name_hint = op.result.name_hint
            op.result.replace_all_uses_with(out)
            op.erase()
            ctx.count("pows-decomposed")

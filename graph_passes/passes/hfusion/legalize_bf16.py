"""``hfusion-legalize-bf16``: bf16 compute ops compute in f32, with ``hfusion.cast`` in and out.

After AscendNPU-IR's ``LegalizeBF16`` (``HFusion/Transforms/LegalizeBF16.cpp``), which ``HFusionPipelines.cpp``
runs in its pre-processing, before fusion: the vector unit has no bf16 arithmetic (CANN-INI), so every op that
*computes* on bf16 is rewritten to compute on f32::

    %r = hfusion.elemwise_unary %x {fun = "exp"} : (tensor<Nxbf16>) -> tensor<Nxbf16>
 -> %0 = hfusion.cast %x : (tensor<Nxbf16>) -> tensor<Nxf32>
    %1 = hfusion.elemwise_unary %0 {fun = "exp"} : (tensor<Nxf32>) -> tensor<Nxf32>
    %r = hfusion.cast %1 {round_mode = "rint"} : (tensor<Nxf32>) -> tensor<Nxbf16>

Rewritten: ``elemwise_unary``, ``elemwise_binary``, ``elemwise_ternary``, ``compare`` (its i1 result stays),
``reduce``, ``arange`` (CreateVecIndex has no bf16 either: an f32 arange rounded once to bf16, as eager rounds its
f32 values). Some f16 ops widen the same way, where torch's CPU kernel computes in f32 and rounds once while the
vector unit would round every step in f16:

- ``reduce`` of kind ``sum``: torch accumulates a half sum in float (``at::opmath_type<Half>``) and rounds the
  total once; the vector unit's f16 ``vadd`` tree rounds at every level, an error that grows with the
  number of terms (docs/numerics.md);
- ``reduce`` of kind ``prod``: the vector unit's product is a tree of ``vmul``s rounding at each level (torch's CPU
  kernel reduces half in half; the f32 product rounded once is the closer of the two to the exact product);
- ``elemwise_unary`` ``sigmoid``, ``tanh``, ``silu``, ``gelu_tanh``: torch converts half to float, evaluates the
  formula and rounds once; the composite vector sequences (codegen ``COMPOSITE``) in f16 round every step, each
  step adding an f16 rounding error (docs/numerics.md);
- ``elemwise_unary`` ``floor``, ``ceil``, ``trunc``: the vconv that rounds to an integral float exists only f32 -> f32
  (CANN-INI); widening f16 to f32 and narrowing the integral result back are both exact.

Left alone (pure data movement, exact on bf16 bits, or not vector
compute): ``cast``, ``fill``, ``select``, ``broadcast``, ``transpose``, ``slice``, ``reshape``, ``concat``,
``gather``, the cube ops.
A bf16 (f16) scalar constant operand becomes an f32 constant of its bf16 (f16) value (:func:`narrow_value`).

The casts are ordinary elementwise ops: fusion pulls them into the kernels and the buffer plan counts them.
Between two consecutive bf16 ops this leaves ``cast(cast(y: f32 -> bf16) -> f32)``: a narrowing then a widening,
which is *not* an identity — it is the per-op rounding to bf16 torch eager does (bf16 ops compute in f32 and
round each result). ``canonicalize`` folds only the exact direction, ``cast(cast(x: bf16 -> f32) -> bf16) -> x``
(``LOSSLESS_WIDENING``), which the rewrite of an op whose operand was itself widened from bf16 creates.

Counters: ``ops-legalized``, ``casts-inserted``.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import ClassVar

from ...ir.core import OP_REGISTRY, Constant, Operation
from ...ir.types import ScalarType, TensorType
from .. import ModulePass, PassContext, register_pass

COMPUTE_OPS = ("hfusion.elemwise_unary", "hfusion.elemwise_binary", "hfusion.elemwise_ternary", "hfusion.compare",
               "hfusion.reduce", "hfusion.arange")  # fmt: skip


def _dtype(v) -> str | None:
    return v.type.dtype if isinstance(v.type, (TensorType, ScalarType)) else None


F16_IN_F32_REDUCE = ("sum", "prod")
F16_IN_F32_UNARY = ("sigmoid", "tanh", "silu", "gelu_tanh", "floor", "ceil", "trunc")


def _narrow_dtype(op: Operation) -> str | None:
    """The dtype ``op`` computes in that must widen to f32: bf16 compute; an f16 op that torch's CPU kernel computes
    in f32 and rounds once where the vector unit would round each step in f16 (``F16_IN_F32_REDUCE``,
    ``F16_IN_F32_UNARY``)."""
    dtypes = {_dtype(v) for v in [*op.operands, *op.results]}
    if op.name in COMPUTE_OPS and "bf16" in dtypes:
        return "bf16"
    if "f16" not in dtypes:
        return None
    if op.name == "hfusion.reduce" and op.attributes["kind"] in F16_IN_F32_REDUCE:
        return "f16"
    if op.name == "hfusion.elemwise_unary" and op.attributes["fun"] in F16_IN_F32_UNARY:
        return "f16"
    return None


def _create(name: str, operands, types, attrs, before: Operation) -> Operation:
    new = OP_REGISTRY[name](list(operands), list(types), dict(attrs), [], before.loc)
    before.parent.insert_before(before, new)
    return new


def _to_f32(v, anchor: Operation, ctx: PassContext):
    """``v`` widened to f32: a cast of a bf16 tensor, an f32 copy of a bf16 scalar constant."""
    t = v.type
    if isinstance(t, TensorType):
        ctx.count("casts-inserted")
        r = _create("hfusion.cast", [v], [t.with_dtype("f32")], {}, anchor).result
        r.name_hint = f"{v.name_hint}_f32" if v.name_hint else None
        return r
    src = getattr(v, "op", None)
    if src is None or not src.has_trait(Constant):
        return None  # a bf16 scalar argument: no tensor cast for it
    value = narrow_value(float(src.attributes["value"]), t.dtype)
    return _create("arith.constant", [], [ScalarType("f32")], {"value": value}, anchor).result


def narrow_value(x: float, dtype: str) -> float:
    """``x`` as a ``dtype`` (bf16, f16) value, rounded as torch converts a Python number: to f32, then to nearest
    even (a constant written as 0.3 on a bf16 op is the bf16 0.30078125 the op computes with)."""
    f32 = struct.unpack("<f", struct.pack("<f", x))[0] if math.isfinite(x) and abs(x) < 3.5e38 else x
    if dtype == "f16":
        try:
            return struct.unpack("<e", struct.pack("<e", f32))[0]
        except OverflowError:
            return math.copysign(math.inf, f32)
    if dtype != "bf16" or not math.isfinite(f32):
        return f32
    bits = struct.unpack("<I", struct.pack("<f", f32))[0]
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def legalize(op: Operation, ctx: PassContext, narrow: str = "bf16") -> bool:
    operands = []
    for v in op.operands:
        if _dtype(v) != narrow:
            operands.append(v)
            continue
        w = _to_f32(v, op, ctx)
        if w is None:
            return False
        operands.append(w)
    types = [r.type.with_dtype("f32") if _dtype(r) == narrow else r.type for r in op.results]
    new = _create(op.name, operands, types, op.attributes, op)
    for old, r in zip(op.results, new.results):
        r.name_hint = old.name_hint
        if _dtype(old) != narrow:
            old.replace_all_uses_with(r)
            continue
        ctx.count("casts-inserted")
        back = OP_REGISTRY["hfusion.cast"]([r], [old.type], {"round_mode": "rint"}, [], op.loc)
        op.parent.insert_before(op, back)  # after ``new``
        old.replace_all_uses_with(back.result)
    op.erase()
    ctx.count("ops-legalized")
    return True


@register_pass
@dataclass(frozen=True)
class LegalizeBF16(ModulePass):
    """Rewrite bf16 compute ops to compute in f32 between hfusion.cast ops (the vector unit has no bf16 math)."""

    name: ClassVar[str] = "hfusion-legalize-bf16"

    def run(self, module: Operation, ctx: PassContext) -> None:
        ctx.count("ops-legalized", 0)
        ctx.count("casts-inserted", 0)
        for op in [o for o in module.walk() if _narrow_dtype(o)]:
            legalize(op, ctx, _narrow_dtype(op))

"""``hfusion-legalize-casts``: casts with no ``vconv`` become exact sequences of casts that have one.

After the compound casts of AscendNPU-IR's ``NormalizeCastLoweringOp`` (``HFusion/Transforms/Normalize.cpp``),
which go through f32 (or f16) when the vector unit has no direct conversion — but only where that is exact: two
roundings are not one rounding in general, so a composition is used only where the first step is exact or can
never change the second step's result.

==================  ==========================================================================================
cast                rewritten to (every step one ``vconv``; docs/codegen.md)
==================  ==========================================================================================
f16 -> bf16,        through f32: the widening is exact, the narrowing rounds once
bf16 -> f16
f16/bf16 -> i64     through f32 (exact), then f32 -> i64 with the cast's round mode
i64 -> f16          through f32: exact below 2^24; at or above it both ways overflow f16 (max 65504) to inf
int -> bf16         i32/i64: directed modes (floor, ceil, trunc) compose exactly through f32 with the same mode,
                    and so does ``round`` (half away) through f32 trunc (see below); ``rint`` selects between
                    two roundings of ``t = trunc_f32(x)``: ``inexact ? round_bf16(t) : rint_bf16(t)``
==================  ==========================================================================================

Note: why int -> bf16 is exact. ``t = trunc_f32(x)`` (vconv s32/s64 -> f32, mode z) differs from ``x`` only when
``|x| > 2^24``; then ``x`` lies strictly between ``t`` and the next f32 away from zero, and no bf16 value or
bf16 midpoint (both f32-representable) lies strictly between them. So ``x`` rounds to bf16 like ``t`` except
when ``t`` is itself a midpoint: then ``x`` is beyond it and rounds away from zero — ``round`` (half away) of
``t``. ``x`` is inexact in f32 exactly when ``floor_f32(x) != ceil_f32(x)``. The plain ``x -> f32 -> bf16``
(what AscendNPU-IR emits) double-rounds, e.g. 2^24 + 2^16 + 1 -> 2^24 + 2^16 (a tie) -> 2^24 instead of
2^24 + 2^17.

Other casts are left alone; one still without a ``vconv`` is a codegen error naming the pair.

Counters: ``casts-legalized``, ``ops-inserted``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...ir.core import OP_REGISTRY, Operation
from ...ir.types import TensorType
from .. import ModulePass, PassContext, register_pass


class _Builder:
    """Creates ops before ``anchor``, counting them."""

    def __init__(self, anchor: Operation, ctx: PassContext):
        self.anchor, self.ctx = anchor, ctx

    def op(self, name: str, operands, dtype: str, attrs: dict):
        t = self.anchor.result.type
        new = OP_REGISTRY[name](list(operands), [t.with_dtype(dtype)], attrs, [], self.anchor.loc)
        self.anchor.parent.insert_before(self.anchor, new)
        self.ctx.count("ops-inserted")
        return new.result

    def cast(self, v, dtype: str, mode: str = "rint"):
        return self.op("hfusion.cast", [v], dtype, {"round_mode": mode})


def _through_f32(b: _Builder, x, dst: str, mode: str):
    return b.cast(b.cast(x, "f32", "rint"), dst, mode)


def _int_to_bf16(b: _Builder, x, dst: str, mode: str):
    if mode in ("floor", "ceil", "trunc"):
        return b.cast(b.cast(x, "f32", mode), "bf16", mode)
    t = b.cast(x, "f32", "trunc")
    if mode == "round":
        return b.cast(t, "bf16", "round")
    inexact = b.op("hfusion.compare", [b.cast(x, "f32", "floor"), b.cast(x, "f32", "ceil")], "i1",
                   {"predicate": "ne"})
    away = b.cast(b.cast(t, "bf16", "round"), "f32")  # exact widenings: the select runs on f32 (no bf16 vsel)
    even = b.cast(b.cast(t, "bf16", "rint"), "f32")
    return b.cast(b.op("hfusion.select", [inexact, away, even], "f32", {}), "bf16", "rint")


RULES = {  # (src, dst) -> the exact sequence
    ("f16", "bf16"): _through_f32, ("bf16", "f16"): _through_f32,
    ("f16", "i64"): _through_f32, ("bf16", "i64"): _through_f32, ("i64", "f16"): _through_f32,
    ("i32", "bf16"): _int_to_bf16, ("i64", "bf16"): _int_to_bf16,
}


def _pair(op: Operation):
    src, dst = op.operands[0].type, op.result.type
    if not isinstance(src, TensorType) or not isinstance(dst, TensorType):
        return None
    return src.dtype, dst.dtype


@register_pass
@dataclass(frozen=True)
class LegalizeCasts(ModulePass):
    """Rewrite casts with no vconv into exact sequences of vconv-able casts (through f32, or a select of two)."""

    name: ClassVar[str] = "hfusion-legalize-casts"

    def run(self, module: Operation, ctx: PassContext) -> None:
        ctx.count("casts-legalized", 0)
        ctx.count("ops-inserted", 0)
        for op in [o for o in module.walk() if o.name == "hfusion.cast" and _pair(o) in RULES]:
            src_dtype, dst_dtype = _pair(op)
            mode = op.attributes.get("round_mode", "rint")
            out = RULES[(src_dtype, dst_dtype)](_Builder(op, ctx), op.operands[0], dst_dtype, mode)
            out.name_hint = op.result.name_hint
            op.result.replace_all_uses_with(out)
            op.erase()
            ctx.count("casts-legalized")

"""``hfusion-legalize-casts``: casts with no ``vconv`` become sequences of casts that have one, with the same result.

After the compound casts of AscendNPU-IR's ``NormalizeCastLoweringOp`` (``HFusion/Transforms/Normalize.cpp``),
which go through f32 when the vector unit has no direct conversion. Two roundings are not one rounding in
general, so each composition below is checked against the cast's meaning (the reference interpreter's, torch's):

==================  ==========================================================================================
cast                rewritten to (every step one ``vconv``; docs/codegen.md)
==================  ==========================================================================================
f16 -> bf16,        through f32: the widening is exact, the narrowing rounds once
bf16 -> f16
f16/bf16 -> i64     through f32 (exact), then f32 -> i64 with the cast's round mode
i64 -> f16          through f32: torch converts through float (``c10::Half`` is built from a float), and it is
                    one rounding anyway: exact below 2^24, at or above it both ways overflow f16 to inf
i32/i64 -> bf16     ``rint``: through f32 with ``rint`` twice — bit for bit what torch does (``c10::BFloat16`` is
                    built from a float), *not* one rounding: 2^24 + 2^16 + 1 -> 2^24 + 2^16 (an f32 value, a
                    bf16 tie) -> 2^24, where one rounding gives 2^24 + 2^17. ``floor``/``ceil``/``trunc``: through
                    f32 with the same mode (directed roundings compose exactly); ``round`` (half away): through
                    f32 ``trunc`` (an inexact ``x`` lies strictly beyond ``trunc_f32(x)``, so a tie there rounds
                    away, as ``x`` does)
==================  ==========================================================================================

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

    def cast(self, v, dtype: str, mode: str = "rint"):
        t = self.anchor.result.type
        new = OP_REGISTRY["hfusion.cast"]([v], [t.with_dtype(dtype)], {"round_mode": mode}, [], self.anchor.loc)
        self.anchor.parent.insert_before(self.anchor, new)
        self.ctx.count("ops-inserted")
        return new.result


def _through_f32(b: _Builder, x, src: str, dst: str, mode: str):
    """A float source widens exactly; an integer one rounds with the cast's mode (half-away: trunc, see above)."""
    first = "rint" if src in ("f16", "bf16") else {"round": "trunc"}.get(mode, mode)
    return b.cast(b.cast(x, "f32", first), dst, mode)


THROUGH_F32 = {("f16", "bf16"), ("bf16", "f16"), ("f16", "i64"), ("bf16", "i64"), ("i64", "f16"), ("i32", "bf16"),
               ("i64", "bf16")}


def _pair(op: Operation):
    src, dst = op.operand("input").type, op.result.type
    if not isinstance(src, TensorType) or not isinstance(dst, TensorType):
        return None
    return src.dtype, dst.dtype


@register_pass
@dataclass(frozen=True)
class LegalizeCasts(ModulePass):
    """Rewrite casts with no vconv into sequences of vconv-able casts through f32 (the same result)."""

    name: ClassVar[str] = "hfusion-legalize-casts"

    def run(self, module: Operation, ctx: PassContext) -> None:
        ctx.count("casts-legalized", 0)
        ctx.count("ops-inserted", 0)
        for op in [o for o in module.walk() if o.name == "hfusion.cast" and _pair(o) in THROUGH_F32]:
            src_dtype, dst_dtype = _pair(op)
            mode = op.attributes.get("round_mode", "rint")
            out = _through_f32(_Builder(op, ctx), op.operand("input"), src_dtype, dst_dtype, mode)
            out.name_hint = op.result.name_hint
            op.result.replace_all_uses_with(out)
            op.erase()
            ctx.count("casts-legalized")

"""``hfusion-legalize-int-sums``: an integer sum of small integers (a count of bools) runs as an exact f32 sum.

The vector unit reduces f16 and f32 only (CANN-INI: ``vcadd``); an i32 or i64 sum runs as a scalar loop over UB,
a few cycles per element on one core (docs/codegen.md, scalar loops). torch's ``mask.sum()`` is such a sum: the
count of ``F.cross_entropy``'s rows that are not ``ignore_index`` reduces a bool cast to i64 over every row.

When the summed value is a cast of a value of magnitude at most ``M`` (i1: 1, i8: 128, ui8: 255, i16: 32768) and
the reduced element count ``K``, at the symbols' upper bounds, has ``K · M <= 2^24``, every partial sum is an
integer of magnitude at most 2^24: exact in f32, in any order of summation. So::

    %c = hfusion.cast %b : (tensor<Nxi1>) -> tensor<Nxi64>            %f = hfusion.cast %b : (...) -> tensor<Nxf32>
    %s = hfusion.reduce %c {dims = [0], kind = "sum"}          →      %t = hfusion.reduce %f {dims = [0], kind = "sum"}
                                                                      %s = hfusion.cast %t : (tensor<f32>) -> tensor<i64>

The result is bit-equal to the integer sum. A dynamic count without a small enough upper bound keeps the integer sum.
Note: AscendNPU-IR has no such rewrite (its ``NormalizeReduceBoolToLogical`` turns bool max/min into or/and); we
add it because the count sits in the one-core kernel of every mean-reduced loss, where the scalar loop dominated.
Runs before ``hfusion-legalize-casts``, which composes the bool → f32 cast from casts the vector unit has.

Counters: ``sums-legalized``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...dialects.hfusion import CastOp, ReduceOp
from ...ir.core import Operation
from ...ir.sizes import SizeVars
from ...ir.types import TensorType
from .. import ModulePass, PassContext, register_pass

EXACT_F32 = 2**24  # integers up to this magnitude are exact in f32 (24-bit significand)
MAGNITUDE = {"i1": 1, "i8": 128, "ui8": 255, "i16": 32768}
INT_RESULTS = ("i32", "i64")


def _exact_in_f32(op: Operation, sizes: SizeVars) -> bool:
    """Is ``op`` an integer sum of a cast from a small integer type whose every partial sum is exact in f32?"""
    if op.name != "hfusion.reduce" or op.attributes["kind"] != "sum" or op.result.type.dtype not in INT_RESULTS:
        return False
    cast = getattr(op.operand("input"), "op", None)
    if cast is None or cast.name != "hfusion.cast" or not isinstance(cast.operand("input").type, TensorType):
        return False
    magnitude = MAGNITUDE.get(cast.operand("input").type.dtype)
    if magnitude is None:
        return False
    count = 1
    for d in op.attributes["dims"]:
        upper = sizes.upper_bound(op.operand("input").type.shape[d])
        if upper is None:
            return False
        count *= upper
    return count * magnitude <= EXACT_F32


@register_pass
@dataclass(frozen=True)
class LegalizeIntSums(ModulePass):
    """Sum small integers (casts of bool/i8/ui8/i16) in f32 when every partial sum is exact, then cast once."""

    name: ClassVar[str] = "hfusion-legalize-int-sums"

    def run(self, module: Operation, ctx: PassContext) -> None:
        ctx.count("sums-legalized", 0)
        sizes = module.size_vars()
        for op in [o for o in module.walk() if _exact_in_f32(o, sizes)]:
            src = op.operand("input").op.operand("input")
            as_f32 = CastOp([src], [src.type.with_dtype("f32")], {"round_mode": "rint"}, [], op.loc)
            total = ReduceOp([as_f32.result], [op.result.type.with_dtype("f32")], dict(op.attributes), [], op.loc)
            back = CastOp([total.result], [op.result.type], {"round_mode": "rint"}, [], op.loc)
            for new in (as_f32, total, back):
                op.parent.insert_before(op, new)
            back.result.name_hint = op.result.name_hint
            op.result.replace_all_uses_with(back.result)
            op.erase()
            ctx.count("sums-legalized")

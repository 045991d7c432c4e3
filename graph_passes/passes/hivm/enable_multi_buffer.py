"""``hivm-enable-multi-buffer``: split each ``multi_buffer = n`` alloc into n copies and select the copy of the
current iteration at the top of the loop (after AscendNPU-IR's EnableMultiBuffer)::

    %ubx = hivm.alloc {multi_buffer = 2}          %ubx_0 = hivm.alloc
    scf.for %lb, %ub, %step ({                     %ubx_1 = hivm.alloc
    ^bb0(%t: index):                  →            scf.for %lb, %ub, %step ({
      hivm.load %x, %ubx, …                        ^bb0(%t: index):
                                                     %0 = arith.subi %t, %lb
                                                     %k = arith.floordivsi %0, %step          // iteration number
                                                     %ubx = hivm.multi_buffer_select %k, %ubx_0, %ubx_1
                                                     hivm.load %x, %ubx, …

The loop is the innermost one holding every use of the buffer; copies are placed right before it (hoisted out of
any loop body they were in). If hivm-plan-memory ran first, copy ``i`` keeps ``offsets[i]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...dialects.hivm import AllocOp, MultiBufferSelectOp
from ...analysis.loops import iteration_number, multi_buffer_loop
from .. import ModulePass, PassContext, PassError, register_pass


def _loop_anchor(alloc, loop):
    """The op in the alloc's block that holds ``loop`` (copies go right before it)."""
    anchor = loop
    while anchor.parent is not alloc.parent and anchor.parent_op() is not None:
        anchor = anchor.parent_op()
    return anchor if anchor.parent is alloc.parent else loop


@register_pass
@dataclass(frozen=True)
class EnableMultiBuffer(ModulePass):
    """Split multi_buffer = n allocs into n copies rotated by the loop's iteration number."""

    name: ClassVar[str] = "hivm-enable-multi-buffer"

    def run(self, module, ctx: PassContext) -> None:
        ctx.count("buffers-multiplied", 0)
        allocs = [op for op in module.walk() if op.name == "hivm.alloc" and op.attributes.get("multi_buffer", 1) > 1]
        for alloc in allocs:
            loop = multi_buffer_loop(alloc)
            if loop is None:
                raise PassError(f"{self.name}: {alloc.loc}: buffer marked multi_buffer = "
                                f"{alloc.attributes['multi_buffer']} is not used inside a loop")  # fmt: skip
            self._split(alloc, loop)
            ctx.count("buffers-multiplied")

    def _split(self, alloc, loop) -> None:
        n = alloc.attributes["multi_buffer"]
        offsets = alloc.attributes.get("offsets")
        name = alloc.result.name_hint or "buf"
        anchor = _loop_anchor(alloc, loop)
        copies = []
        for i in range(n):
            attrs = {"offsets": [offsets[i]]} if offsets is not None else {}
            if "layout" in alloc.attributes:  # each copy holds the buffer's data layout (hivm-infer-data-layout)
                attrs["layout"] = alloc.attributes["layout"]
            c = AllocOp([], [alloc.result.type], attrs, [], alloc.loc)
            c.result.name_hint = f"{name}_{i}"
            anchor.parent.insert_before(anchor, c)
            copies.append(c.result)
        k = iteration_number(loop)
        body = loop.body
        at = body.ops.index(k.op) + 1 if getattr(k, "op", None) is not None and k.op.parent is body else 0
        while at < len(body.ops) and body.ops[at].name == "hivm.multi_buffer_select":
            at += 1  # keep the selects in alloc order
        sel = MultiBufferSelectOp([k, *copies], [alloc.result.type], {}, [], alloc.loc)
        sel.result.name_hint = name
        body.insert(at, sel)
        alloc.result.replace_all_uses_with(sel.result)
        alloc.erase()


"""``hivm-normalize-matmul``: an accumulating matmul becomes the product into zero and a vector add (after
AscendNPU-IR's ``NormalizeMatmul``, whose non-zero initial value becomes an ``mmad`` with ``init`` set and an add)::

    %c = hfusion.matmul %x, %w, %b {transpose_b = true} : (tensor<16x32xf32>, tensor<24x32xf32>, tensor<16x24xf32>) -> tensor<16x24xf32>
  →
    %p = hfusion.matmul %x, %w {transpose_b = true} : (tensor<16x32xf32>, tensor<24x32xf32>) -> tensor<16x24xf32>
    %c = hfusion.elemwise_binary %b, %p {fun = "add"} : (tensor<16x24xf32>, tensor<16x24xf32>) -> tensor<16x24xf32>

The importer gives ``addmm``/``baddbmm`` with ``alpha = 1`` this form (``init`` = ``beta · input``, broadcast to
the product's shape, in the accumulator's dtype). The cube kernel computes one product whose first K step writes
the accumulator (``mmad`` ``init = 1``: the product into zero), so the initial value is added by a vector kernel,
where fusion puts it beside the rest of the epilogue (the cast, a GELU). AscendNPU-IR's tensor-level
``hivm.hir.matmul`` is our ``hfusion.matmul``: the pass runs first in the pipeline, before any pass that rewrites
products (``canonicalize``, ``hfusion-fold-matmul-views``, ``hfusion-split-k`` leave accumulating matmuls alone).

Not built: folding a per-channel bias into the kernel. AscendNPU-IR adds it in the mmad from a bias table buffer
next to L0C; HARDWARE.md cites no such buffer for the simulated chip, so a bias stays an add.

Counters: ``matmuls-normalized``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...dialects.hfusion import ElemwiseBinaryOp
from ...ir.core import OP_REGISTRY, Operation
from .. import ModulePass, PassContext, register_pass

MATMULS = ("hfusion.matmul", "hfusion.batch_matmul")


@register_pass
@dataclass(frozen=True)
class NormalizeMatmul(ModulePass):
    """Split ``init + a @ b`` into the product into zero and an elementwise add."""

    name: ClassVar[str] = "hivm-normalize-matmul"

    def run(self, module: Operation, ctx: PassContext) -> None:
        ctx.count("matmuls-normalized", 0)
        for func in module.functions:
            for op in [o for o in func.walk() if o.name in MATMULS and len(o.operands) == 3]:
                a, b, init = op.operands
                product = OP_REGISTRY[op.name]([a, b], [op.result.type], dict(op.attributes), [], op.loc)
                total = ElemwiseBinaryOp([init, product.result], [op.result.type], {"fun": "add"}, [], op.loc)
                op.parent.insert_before(op, product)
                op.parent.insert_before(op, total)
                product.result.name_hint = f"{op.result.name_hint or 'mm'}_product"
                total.result.name_hint = op.result.name_hint
                op.result.replace_all_uses_with(total.result)
                op.erase()
                ctx.count("matmuls-normalized")

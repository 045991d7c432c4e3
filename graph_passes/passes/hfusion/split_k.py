"""``hfusion-split-k``: a matmul with too few output tiles for the cube cores becomes partial products over chunks of
K and a sum (docs/cube.md, *Split-K*)::

    %c = hfusion.matmul %a, %b : (tensor<64x16384xf16>, tensor<16384x64xf16>) -> tensor<64x64xf16>
  →
    %p = hfusion.batch_matmul %a, %b {k_chunk = 2048} : (tensor<64x16384xf16>, tensor<16384x64xf16>) -> tensor<8x64x64xf32>
    %s = hfusion.reduce %p {dims = [0], kind = "sum"} : (tensor<8x64x64xf32>) -> tensor<64x64xf32>
    %c = hfusion.cast %s : (tensor<64x64xf32>) -> tensor<64x64xf16>

The partial products are one SINGLE_CUBE kernel whose work items are (chunk, tile) pairs: batch ``s`` reads the
operands at K offset ``s·k_chunk`` in place (no copy of either operand; transposed operands too), its accumulator
drains f32 partials. The sum (and the cast to the product's dtype) is a vector kernel, a column reduction over the
chunks; the simulator has no atomic-add store (HARDWARE.md cites none), so the partials go through GM. The chunk
count comes from the estimate (graph_passes/schedule/split_k.py), which counts the reduction kernel's bytes, fixed
costs and launch. Static ``hfusion.matmul`` only: a symbolic size has no chunk count the estimate could weigh at
compile time, and a ``batch_matmul`` has its batches to spread already. ``chunks=S`` forces ``S`` chunks wherever K
holds two of at least ``MIN_CHUNK`` (tests, measurements).

Counters: ``matmuls-split``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...dialects.hfusion import BatchMatmulOp, CastOp, ReduceOp
from ...intmath import align_up, ceil_div
from ...ir.core import Operation
from ...ir.types import TensorType
from ...schedule.split_k import CHUNK_ALIGN, MIN_CHUNK, choose_split_k
from ...target import module_target
from .. import ModulePass, PassContext, register_pass

PARTIAL_DTYPE = "f32"  # the accumulator's dtype: partials are summed before the one rounding to the product's dtype


def _static_dims(op: Operation) -> tuple[int, int, int] | None:
    a, b = (v.type for v in op.operands)
    if not all(isinstance(t, TensorType) and t.is_static for t in (a, b, op.result.type)):
        return None
    m, k = (a.shape[1], a.shape[0]) if op.attributes.get("transpose_a") else (a.shape[0], a.shape[1])
    n = b.shape[0] if op.attributes.get("transpose_b") else b.shape[1]
    return int(m), int(n), int(k)


@register_pass
@dataclass(frozen=True)
class SplitK(ModulePass):
    """Split the K of matmuls that leave cube cores idle into partial products and a vector sum."""

    name: ClassVar[str] = "hfusion-split-k"
    chunks: int = 0  # 0: the estimate decides; S: force S chunks (where K holds at least two of MIN_CHUNK)

    def run(self, module: Operation, ctx: PassContext) -> None:
        ctx.count("matmuls-split", 0)
        target = module_target(module)
        for host in [f for f in module.functions if not f.attributes.get("kernel")]:
            for op in [o for o in host.body.ops if o.name == "hfusion.matmul"]:
                dims = _static_dims(op) if len(op.operands) == 2 else None
                if dims is None:
                    continue
                chunk = self._chunk(*dims, op.operands[0].type.dtype, op.result.type.dtype, target,
                                    bool(op.attributes.get("transpose_a")), bool(op.attributes.get("transpose_b")))
                if chunk is not None:
                    _split(op, chunk)
                    ctx.count("matmuls-split")

    def _chunk(self, m: int, n: int, k: int, dtype: str, out_dtype: str, target, ta: bool, tb: bool) -> int | None:
        if self.chunks:
            chunk = max(MIN_CHUNK, align_up(ceil_div(k, self.chunks), CHUNK_ALIGN))
            return chunk if ceil_div(k, chunk) >= 2 else None
        split = choose_split_k(m, n, k, dtype, out_dtype, target, ta, tb)
        return split.k_chunk if split is not None else None


def _split(op: Operation, chunk: int) -> None:
    """Replace the matmul ``op`` by its partial products over chunks of ``chunk`` of K, their sum and the cast."""
    m, n, k = _static_dims(op)
    out = op.result.type
    attrs = {"transpose_a": bool(op.attributes.get("transpose_a")),
             "transpose_b": bool(op.attributes.get("transpose_b")), "k_chunk": chunk}
    partial_t = TensorType((ceil_div(k, chunk), m, n), PARTIAL_DTYPE)
    partial = BatchMatmulOp(list(op.operands), [partial_t], attrs, [], op.loc)
    total = ReduceOp([partial.result], [TensorType((m, n), PARTIAL_DTYPE)], {"kind": "sum", "dims": [0]}, [], op.loc)
    new = [partial, total]
    if out.dtype != PARTIAL_DTYPE:
        new.append(CastOp([total.result], [out], {"round_mode": "rint"}, [], op.loc))
    for x in new:
        op.parent.insert_before(op, x)
    hint = op.result.name_hint or "mm"
    partial.result.name_hint, total.result.name_hint = f"{hint}_partial", f"{hint}_sum"
    new[-1].result.name_hint = op.result.name_hint
    op.result.replace_all_uses_with(new[-1].result)
    op.erase()

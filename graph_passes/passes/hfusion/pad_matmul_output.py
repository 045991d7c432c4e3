"""``hfusion-pad-matmul-output``: a matmul whose result rows are not whole 32-B blocks computes a product with rows
that are, and a slice drops the extra columns (docs/cube.md, *Padded products*)::

    %c = hfusion.matmul %x, %w {transpose_b = true} : (tensor<128x768xf16>, tensor<50257x768xf16>) -> tensor<128x50257xf16>
  →
    %p = hfusion.matmul %x, %w {transpose_b = true, pad_n = 15} : (...) -> tensor<128x50272xf16>
    %c = hfusion.slice %p {offsets = [0, 0], sizes = [128, 50257], strides = [1, 1]} : ... -> tensor<128x50257xf16>

Two cores may not write one 32-B block of GM (the hazard checker's unit, the DMA's), so a cube kernel whose result
rows are not whole blocks splits its work by bands of 16 rows (schedule/cube.py, ``work_item``): an LM head of 128
rows runs on 8 of 24 cube cores, each reading all of the weight. ``pad_n`` makes ``op(b)`` read as if it had that many
more columns of zeros (they fall in its last 16-column fractal, which the MTE1 load fills with zeros), so the padded
result's rows are whole blocks and its column tiles are work items of their own; the slice is a data-movement kernel.
Made when the cube estimate of the padded product plus the slice kernel (its bytes, its launch) is under ``MARGIN``
of the unpadded product's estimate. Static, rank-2 products of two operands only (``hfusion.batch_matmul`` spreads
its batches already).

Counters: ``matmuls-padded``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...dialects.hfusion import MatmulOp, SliceOp
from ...intmath import align_up, ceil_div
from ...ir.core import Operation
from ...ir.types import TensorType
from ...schedule.cube import FRACTAL, ITEMSIZE, estimate_product
from ...target import module_target
from .. import ModulePass, PassContext, register_pass
from .split_k import _static_dims

BLOCK = 32  # bytes of the GM block two cores may not both write (the DMA unit)
MARGIN = 0.85  # the padded product and the slice must be under this fraction of the unpadded estimate


def slice_cycles(m: int, n: int, n_pad: int, es: int, target) -> float:
    """Estimated cycles of the slice kernel: its launch, then its bytes (``m × n_pad`` read, ``m × n`` written) over the
    chip's DDR or, for its stores, the UB → GM ports of the vector cores it runs on — one per 16 rows when its rows are
    not whole blocks either (bands, as the cube kernel would split them)."""
    cores = min(target.vector_cores, ceil_div(m, FRACTAL)) if n * es % BLOCK else target.vector_cores
    read, write = m * n_pad * es, m * n * es
    return target.launch_cycles + max((read + write) / target.ddr_bytes_per_cycle,
                                      write / cores / target.ub_to_gm_bytes_per_cycle)


def padded_columns(m: int, n: int, k: int, dtype: str, out_dtype: str, target, ta: bool, tb: bool) -> int:
    """The zero columns to add (0: none): enough for whole-block rows, within the last 16-column fractal, when the
    estimate says the padded product and its slice win."""
    es = ITEMSIZE[out_dtype]
    if n * es % BLOCK == 0:
        return 0
    n_pad = align_up(n, BLOCK // es)
    if n_pad > align_up(n, FRACTAL):
        return 0
    unpadded = estimate_product(1, m, n, k, dtype, out_dtype, target, transpose_a=ta, transpose_b=tb)
    padded = estimate_product(1, m, n_pad, k, dtype, out_dtype, target, transpose_a=ta, transpose_b=tb)
    if unpadded is None or padded is None:
        return 0
    total = padded.cycles + slice_cycles(m, n, n_pad, es, target)
    return n_pad - n if total < MARGIN * unpadded.cycles else 0


@register_pass
@dataclass(frozen=True)
class PadMatmulOutput(ModulePass):
    """Give matmuls whose result rows are not whole 32-B blocks zero columns that make them so, and a slice."""

    name: ClassVar[str] = "hfusion-pad-matmul-output"

    def run(self, module: Operation, ctx: PassContext) -> None:
        ctx.count("matmuls-padded", 0)
        target = module_target(module)
        for host in [f for f in module.functions if not f.attributes.get("kernel")]:
            for op in [o for o in host.body.ops if o.name == "hfusion.matmul"]:
                dims = _static_dims(op) if len(op.operands) == 2 and not op.attributes.get("pad_n") else None
                if dims is None:
                    continue
                ta, tb = bool(op.attributes.get("transpose_a")), bool(op.attributes.get("transpose_b"))
                pad = padded_columns(*dims, op.operands[0].type.dtype, op.result.type.dtype, target, ta, tb)
                if pad:
                    _pad(op, pad)
                    ctx.count("matmuls-padded")


def _pad(op: Operation, pad: int) -> None:
    """Replace ``op`` by its product with ``pad`` zero columns and the slice of its own columns."""
    m, n, _ = _static_dims(op)
    out = op.result.type
    attrs = {"transpose_a": bool(op.attributes.get("transpose_a")),
             "transpose_b": bool(op.attributes.get("transpose_b")), "pad_n": pad}
    padded = MatmulOp(list(op.operands), [TensorType((m, n + pad), out.dtype)], attrs, [], op.loc)
    cut = SliceOp([padded.result], [out], {"offsets": [0, 0], "sizes": [m, n], "strides": [1, 1]}, [], op.loc)
    op.parent.insert_before(op, padded)
    op.parent.insert_before(op, cut)
    hint = op.result.name_hint or "mm"
    padded.result.name_hint, cut.result.name_hint = f"{hint}_padded", op.result.name_hint
    op.result.replace_all_uses_with(cut.result)
    op.erase()

"""Lowering of index-producing hfusion ops inside a scheduled vector kernel (called by ``hfusion_to_hivm``).

``hfusion.arange {start, step}`` spans one domain dim ``d``; in a tile at offset ``off[d]`` its buffer holds
``start + step·(off[d] + i)``: ``hivm.varange %buf, %off_d, %e… {start, step}`` (AscendNPU-IR's
``HFusionToHIVMArangeOp`` → ``hivm.hir.varange``).

``hfusion.gather`` along the last domain dim of a kernel input (its rows loaded whole, ``n`` elements):
``hivm.vgather_offsets %index, %n {es}`` then ``hivm.vgather %src, %index, %dst, %n, %e… {converted}``
(AscendNPU-IR's ``HFusionToHIVMGatherOp`` → ``hivm.hir.vgather``, which on A2 also requires the last axis): the
index's conversion to byte offsets is an op of its own, before the wait for the loaded rows. An index broadcast
only for this gather (``index_select``) is read un-broadcast.

``hfusion.gather`` of whole rows along dim 0 (``embedding``; the index spans dim 0 only, read un-broadcast):
``hivm.embedding_gather %src, %index, %dst, %off…, %e…`` — the table stays in GM and each row of the tile is one DMA
at the row its index names (AscendNPU-IR's ``hivm.embedding_gather``), at the tile's offsets in the other dims.
One element of each row along the last dim (the result has extent 1 there): the same op with ``dim`` = the last,
one DMA of one element per row of the tile, at the tile's offset in dim 0.
"""

from __future__ import annotations

from ..dialects import hivm
from ..ir.types import DTYPE_BYTES
from ..idioms.gathers import gather_index


def lower_arange(kl, v) -> None:
    """``v = hfusion.arange`` → ``hivm.varange`` into its buffer, counting from the tile's offset along its dim."""
    (d,) = kl.info.masks[v]
    a = v.op.attributes
    kl.vec(hivm.VArangeOp, [kl.buffer(v), kl.dims[d][0], *kl.extents(v)], start=a["start"], step=a["step"])


def lower_gather(kl, v) -> None:
    """``v = hfusion.gather %src, %index`` → ``hivm.vgather`` of the source's whole rows by the index buffer, or
    ``hivm.embedding_gather`` of rows from GM (a row gather, ``KernelInfo.row_gathers``)."""
    op = v.op
    src, index = op.operand("input"), gather_index(op)
    if src in kl.info.row_gathers:
        kl.emit(index)
        kl.counts["loads"] += 1
        dim = kl.info.row_gathers[src]
        offsets = [kl.dims[d][0] for d in range(kl.info.rank) if d != dim]
        kl.create(hivm.EmbeddingGatherOp, [kl.args[src], kl.buffer(index), kl.buffer(v), *offsets, *kl.extents(v)],
                  **({"dim": dim} if dim else {}))
        return
    kl.emit(src)
    kl.emit(index)
    n = kl.const(kl.info.gather_sources[src][1])
    kl.vec(hivm.VGatherOffsetsOp, [kl.buffer(index), n], es=DTYPE_BYTES[v.type.dtype])
    kl.vec(hivm.VGatherOp, [kl.buffer(src), kl.buffer(index), kl.buffer(v), n, *kl.extents(v)], converted=True)

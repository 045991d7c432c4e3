"""Lowering of index-producing hfusion ops inside a scheduled vector kernel (called by ``hfusion_to_hivm``).

``hfusion.arange {start, step}`` spans one domain dim ``d``; in a tile at offset ``off[d]`` its buffer holds
``start + step·(off[d] + i)``: ``hivm.varange %buf, %off_d, %e… {start, step}`` (AscendNPU-IR's
``HFusionToHIVMArangeOp`` → ``hivm.hir.varange``).
"""

from __future__ import annotations

from ..dialects import hivm


def lower_arange(kl, v) -> None:
    """``v = hfusion.arange`` → ``hivm.varange`` into its buffer, counting from the tile's offset along its dim."""
    (d,) = kl.info.masks[v]
    a = v.op.attributes
    kl.vec(hivm.VArangeOp, [kl.buffer(v), kl.dims[d][0], *kl.extents(v)], start=a["start"], step=a["step"])

"""The decomposition table handed to AOTAutograd: torch's core-aten decompositions, minus every op that has a
lowering of its own (a direct lowering gives better IR: softmax stays one max/exp/sum/div sequence, silu one op),
plus torch's decompositions of the batch norms, which core aten keeps whole (into var_mean, the normalisation and,
in training, the running statistics' update; their backward is core-aten's ``native_batch_norm_backward``), and of
``repeat`` (an expand of the tensor with a unit dim before each repeated dim, then a reshape: alibi slopes
repeated over the batch, a rotary table). Random ops stay whole (``fallback.RANDOM_OPS``): they run on the host
with eager's own kernels, which draw differently from their core-aten decompositions.
"""

from __future__ import annotations

import torch
from torch._decomp import core_aten_decompositions, get_decompositions

from .fallback import RANDOM_OPS
from .lowerings import LOWERINGS


aten = torch.ops.aten
BATCH_NORMS = [aten._native_batch_norm_legit, aten._native_batch_norm_legit_functional,
               aten._native_batch_norm_legit_no_training, aten.native_batch_norm]
EXTRA = BATCH_NORMS + [aten.repeat]


def decomposition_table() -> dict:
    table = dict(core_aten_decompositions())
    table.update(get_decompositions(EXTRA))
    for op in [*LOWERINGS, *RANDOM_OPS]:
        table.pop(op, None)
    return table

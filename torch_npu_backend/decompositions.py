"""The decomposition table handed to AOTAutograd: torch's core-aten decompositions, minus every op that has a
lowering of its own (a direct lowering gives better IR: softmax stays one max/exp/sum/div sequence, silu one op).
"""

from __future__ import annotations

from torch._decomp import core_aten_decompositions

from .lowerings import LOWERINGS


def decomposition_table() -> dict:
    table = dict(core_aten_decompositions())
    for op in LOWERINGS:
        table.pop(op, None)
    return table

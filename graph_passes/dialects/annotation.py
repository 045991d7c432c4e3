"""``annotation.mark``: attach attributes to a value for later passes (e.g. tiling hints); no runtime effect."""

from __future__ import annotations

from ..ir.core import MemoryEffect, Operation, register_op


@register_op
class MarkOp(Operation):
    name = "annotation.mark"
    operand_names = ("value",)
    traits = (MemoryEffect,)  # never erased as dead: its point is the attributes it carries

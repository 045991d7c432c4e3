"""``hivm-mark-multi-buffer``: ask for ``depth`` rotating copies of the local buffers that a loop loads into or
stores from, so that the next tile's load overlaps this tile's compute (after AscendNPU-IR's MarkMultiBuffer).

A ``hivm.alloc`` outside an ``scf.for`` whose buffer is the destination of a ``hivm.load`` (or of the row DMAs of a
``hivm.embedding_gather``) or the source of a ``hivm.store`` inside that loop gets ``multi_buffer = depth``. Buffers only vector ops touch are left single:
the pipes that overlap across iterations are the DMA ones. ``depth = 1`` (or ``enable = false``) turns it off.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...analysis.loops import buffer_users, multi_buffer_loop
from .. import ModulePass, PassContext, register_pass


def _is_dma_end(alloc, user) -> bool:
    """``user`` loads into or stores from ``alloc``'s buffer (directly or through a view)."""
    if user.name == "hivm.load":
        return user.operands[1] in _values_of(alloc)
    if user.name == "hivm.embedding_gather":
        return user.operands[2] in _values_of(alloc)
    if user.name == "hivm.store":
        return user.operands[0] in _values_of(alloc)
    return False


def _values_of(alloc) -> list:
    vals = [alloc.result]
    vals += [r for u in buffer_users(alloc.result) if u.name == "hivm.multi_buffer_select" for r in u.results]
    return vals


@register_pass
@dataclass(frozen=True)
class MarkMultiBuffer(ModulePass):
    """Mark local buffers fed by loads or drained by stores inside loops with multi_buffer = depth."""

    name: ClassVar[str] = "hivm-mark-multi-buffer"
    depth: int = 2
    enable: bool = True

    def run(self, module, ctx: PassContext) -> None:
        ctx.count("buffers-marked", 0)
        if not self.enable or self.depth <= 1:
            return
        for op in module.walk():
            if op.name != "hivm.alloc" or "multi_buffer" in op.attributes or "offsets" in op.attributes:
                continue
            if multi_buffer_loop(op) is None:
                continue
            if any(_is_dma_end(op, u) for u in buffer_users(op.result)):
                op.attributes["multi_buffer"] = self.depth
                ctx.count("buffers-marked")

"""Which local buffers a buffer value may denote (alias analysis for HIVM).

A buffer value is a kernel argument (global memory), an ``hivm.alloc`` result, or a ``hivm.multi_buffer_select``
result, which aliases each of its copies (the copy of iteration ``k`` is ``copies[k % n]``). An alloc still marked
``multi_buffer = n`` (enable-multi-buffer has not run) stands for ``n`` copies rotating over the iterations of
:func:`~graph_passes.analysis.loops.multi_buffer_loop`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir.core import Operation, Value
from .loops import is_iteration_number, enclosing_loops, multi_buffer_loop

SELECT = "hivm.multi_buffer_select"


@dataclass(frozen=True)
class Copy:
    """One concrete buffer: an alloc's copy ``index`` (0 unless the alloc is marked multi_buffer), or a kernel
    argument (``alloc`` None, ``arg`` set)."""

    alloc: Operation | None
    index: int = 0
    arg: Value | None = None

    def __hash__(self):
        return hash((id(self.alloc), self.index, id(self.arg)))

    def __eq__(self, other):
        return (isinstance(other, Copy) and self.alloc is other.alloc and self.index == other.index
                and self.arg is other.arg)  # fmt: skip


@dataclass(frozen=True)
class BufferRef:
    """What a buffer operand denotes: ``copies`` rotating over ``loop``'s iterations (copy ``k % n``), or, when
    ``loop`` is None, any one of ``copies`` (usually exactly one)."""

    copies: tuple[Copy, ...]
    loop: Operation | None = None


def alloc_copies(alloc: Operation) -> tuple[Copy, ...]:
    n = alloc.attributes.get("multi_buffer", 1)
    return tuple(Copy(alloc, i) for i in range(n))


def resolve(value: Value) -> BufferRef:
    """The buffers ``value`` may denote, with the loop they rotate over."""
    op = getattr(value, "op", None)
    if op is None:
        return BufferRef((Copy(None, 0, value),))
    if op.name == "hivm.alloc":
        copies = alloc_copies(op)
        return BufferRef(copies, multi_buffer_loop(op) if len(copies) > 1 else None)
    if op.name == SELECT:
        copies = tuple(c for v in op.operands[1:] for c in resolve(v).copies)
        counter = op.operand("counter")
        loop = next((lp for lp in reversed(enclosing_loops(op)) if is_iteration_number(counter, lp)), None)
        if loop is None or len(copies) != len(op.operands) - 1:
            return BufferRef(copies)  # unknown rotation: any copy
        return BufferRef(copies, loop)
    return BufferRef((Copy(op, 0),))  # an unknown producer: itself

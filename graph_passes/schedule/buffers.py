"""The local buffers a vector kernel's lowering allocates, shared by ``hfusion-auto-schedule`` (to size tiles so
they fit UB) and ``convert-to-hivm`` (to allocate exactly those buffers).

One buffer per tensor value of the body, except that an elementwise op writes in place into an operand that
is an intermediate value with a single use (its only reader is this op), of the same dtype and domain dims.
Reductions whose reduced dims are tiled (looped) also get a *partial* buffer per reduction: each reduced tile is
reduced into it and combined into the accumulator (the reduction's result buffer).

Buffers fed by a load (kernel inputs) or drained by a store (kernel results) get the multi-buffer depth;
the others get one copy. A buffer's shape has the domain's rank: the tile size in the dims its values span and 1
elsewhere; its last dim is padded to the UB alignment (32 B) so that every row starts aligned.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..ir.core import OpResult, Value
from ..ir.types import DTYPE_BYTES
from .kernel_info import ELEMENTWISE_OPS, KernelInfo


@dataclass(eq=False)
class Buffer:
    index: int
    dtype: str
    mask: tuple  # domain dims spanned
    loaded: bool = False
    stored: bool = False
    values: list = field(default_factory=list)
    role: str = "value"  # "value" | "partial"

    def depth(self, multi_buffer: int) -> int:
        return multi_buffer if (self.loaded or self.stored) else 1

    def shape(self, tile, ub_align: int) -> list[int]:
        rank = len(tile)
        shape = [int(tile[d]) if d in self.mask else 1 for d in range(rank)]
        if rank and (rank - 1) in self.mask:
            granule = max(1, ub_align // DTYPE_BYTES[self.dtype])
            shape[-1] = -(-shape[-1] // granule) * granule
        return shape

    def nbytes(self, tile, ub_align: int) -> int:
        n = DTYPE_BYTES[self.dtype]
        for s in self.shape(tile, ub_align):
            n *= s
        return -(-n // ub_align) * ub_align


@dataclass
class BufferPlan:
    buffers: list[Buffer]
    of_value: dict  # Value -> Buffer
    partial: dict  # reduce op -> Buffer (only when the reduced dims are looped)

    def ub_bytes(self, tile, ub_align: int, multi_buffer: int) -> int:
        return sum(b.nbytes(tile, ub_align) * b.depth(multi_buffer) for b in self.buffers)


def _reuse_candidates(op) -> list[Value]:
    if op.name == "hfusion.elemwise_ternary":
        return list(op.operands[:2])  # the third operand is read after the first instruction writes dst
    if op.name == "hfusion.select":
        return list(op.operands[1:])
    return list(op.operands)


def plan_buffers(info: KernelInfo, reduce_looped: bool) -> BufferPlan:
    buffers: list[Buffer] = []
    of_value: dict = {}

    def new(v: Value, **kw) -> Buffer:
        b = Buffer(len(buffers), v.type.dtype, info.masks[v], values=[v], **kw)
        buffers.append(b)
        of_value[v] = b
        return b

    for a in info.inputs:
        if a in info.masks:
            new(a, loaded=True)
    for res in info.views:
        new(res, loaded=True)
    partial = {}
    for op in info.ops:
        if op.name == "arith.constant":
            continue
        v = op.result
        if op.name in ELEMENTWISE_OPS and op.name != "hfusion.cast":
            for c in _reuse_candidates(op):
                b = of_value.get(c)
                if (
                    isinstance(c, OpResult)
                    and b is not None
                    and not b.loaded
                    and len(c.uses) == 1
                    and c.type.dtype == v.type.dtype
                    and info.masks[c] == info.masks[v]
                ):
                    b.values.append(v)
                    of_value[v] = b
                    break
        if v not in of_value:
            new(v)
        if op.name == "hfusion.reduce" and reduce_looped:
            p = Buffer(len(buffers), v.type.dtype, info.masks[v], values=[], role="partial")
            buffers.append(p)
            partial[op] = p
    for res in info.results:
        of_value[res].stored = True
    return BufferPlan(buffers, of_value, partial)

"""A vector gather's index conversion: the byte offsets it reads, in scratch."""

from __future__ import annotations

from ..intmath import align_up
from ..ir.core import Operation, Value
from .limits import REPEAT_BYTES

def gather_scratch(index_shape, index_dtype: str, ub_align: int, es: int = 4) -> int:
    """Scratch of a ``hivm.vgather``'s index conversion, its index buffer of ``index_shape`` and ``index_dtype``: the
    byte offsets, one i32 per index
    element in rows padded to 8 (32 B), plus for i64 indices the low and high words of each; for 8-byte data
    (``es``, the gathered element's size: i64, moved as pairs of b32 words) the offsets of each word, the table
    that duplicates each element's offset and the words' parities — 7 tables where 1 serves 4-byte data; and one
    repeat's offsets past the last row, since a ``vgather`` reads a whole repeat of offsets (64 words) whatever its
    mask — without it the last row's read runs into the next buffer, which the next work item's index load may be
    writing at the same time (a race)."""
    shape = index_shape
    rows = 1
    for s in shape[:-1]:
        rows *= s
    words = rows * align_up(shape[-1], 8)
    tables = 7 if es == 8 else 3 if index_dtype == "i64" else 1
    return tables * align_up(words * 4, ub_align) + REPEAT_BYTES - ub_align


def gather_index(op: Operation) -> Value:
    """The index a gather's lowering reads: through a broadcast used only by this gather (``index_select``'s
    index row), which is then not computed — ``hivm.vgather`` reads an index buffer with extent 1 in those dims."""
    idx = op.operands[1]
    src = getattr(idx, "op", None)
    if src is not None and src.name == "hfusion.broadcast" and len(idx.uses) == 1:
        return src.operands[0]
    return idx

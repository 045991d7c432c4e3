"""Broadcast forms: a column read in place by a binary (block stride 0), an element broadcast staged through one
32-B block, and a broadcast along the last dim written row by row."""

from __future__ import annotations

INLINE_BROADCAST_FUNS = ("add", "sub", "mul", "div", "max", "min")  # vector-vector binaries a column operand feeds
INLINE_BROADCAST_DTYPES = ("f16", "f32", "i16", "i32")  # the vector unit's arithmetic types


def element_broadcast(dst_shape, src_shape) -> bool:
    """A broadcast of one element into a buffer that does not span the last dim (a column ``[R, 1]``, or ``[A, B, 1]``):
    dst's rows are one element, not padded to 32 B, so no vcopy row pitch reaches them. Codegen ``vbrcb``s the element
    into a 32-B block of scratch and copies that block (block stride 0) over dst's elements, which are contiguous."""
    return dst_shape[-1] == 1 and all(n == 1 for n in src_shape) and any(n > 1 for n in dst_shape)


def column_broadcast_rows(dst_shape, src_shape) -> tuple[int, int]:
    """(rows, pitch in elements) of a broadcast along the last dim: the source's elements (contiguous, its last dim
    1) go to the first element of each of ``rows`` rows of dst, ``pitch`` apart, that lie at index 0 of every other
    broadcast dim (codegen then copies that slab along those dims). The source's dims above the last must be one
    uniform run of rows in dst: a ValueError otherwise."""
    strides, acc = [], 1
    for n in reversed(dst_shape):
        strides.append(acc)
        acc *= n
    strides = strides[::-1]
    spanned = [d for d in range(len(dst_shape) - 1) if src_shape[d] > 1]
    if not spanned:
        return 1, dst_shape[-1]
    for a, b in zip(spanned, spanned[1:]):
        if strides[a] != strides[b] * dst_shape[b]:
            raise ValueError(f"the source's dims {spanned} are not one run of rows in the destination {dst_shape}")
    rows = 1
    for d in spanned:
        rows *= dst_shape[d]
    return rows, strides[spanned[-1]]

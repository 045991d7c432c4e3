"""Block transposes: ``vtranspose`` turns one 16×16 block of 2-byte elements, groups of blocks at a time through
scratch."""

from __future__ import annotations

TRANSPOSE_BLOCK = 16  # vtranspose: one 16×16 block of 2-byte elements (simulator/isa/vector.py, CANN-INI)
TRANSPOSE_GROUP = 16  # blocks transposed into scratch between two pipe_barrier V


def transpose_scratch_bytes(cols: int) -> int:
    """Scratch of a block transpose of rows of ``cols`` elements (a multiple of TRANSPOSE_BLOCK): one group of
    blocks, at most TRANSPOSE_GROUP of them."""
    n = TRANSPOSE_BLOCK
    return min(cols // n, TRANSPOSE_GROUP) * n * n * 2

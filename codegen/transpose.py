"""``hivm.vtranspose`` (last two dims swapped, 2-byte elements) → ``vtranspose`` + ``vcopy`` (PIPE_V).

The simulator's ``vtranspose`` turns one contiguous 16×16 block of 2-byte elements (512 B; CANN-INI: u16, i16,
f16). The source buffer is ``[…, C, 16]`` (rows of 16 elements: its 16-row blocks are contiguous), the destination
``[…, 16, C]`` (rows of C elements). Groups of up to ``TRANSPOSE_GROUP`` blocks are transposed into the kernel's
scratch, then two ``vcopy`` instructions (rows 0-7 and 8-15 of every block of the group, one repeat per block)
spread the blocks' rows into the destination's rows::

    for g0 in range(0, ceil(cols / 16), G):                      # cols = the destination's valid columns
        pipe_barrier V
        for b in range(k = min(G, nb - g0)):  vtranspose scratch[b·512], src[(g0 + b)·512]
        pipe_barrier V
        vcopy dst[g0·32 + h·8·pitch], scratch[h·256], repeat=k, dst_blk=pitch/32, dst_rep=1, src_rep=16   (h = 0, 1)

Rows and columns beyond the valid extents are transposed too (whole blocks) and never stored.
"""

from __future__ import annotations

from graph_passes.idioms.transpose import TRANSPOSE_BLOCK, TRANSPOSE_GROUP
from graph_passes.intmath import ceil_div
from simulator.expr import Imm, emin

from .errors import CodegenError
from .vector import SCRATCH, buffer_tags, counted, fold, static_int

BLOCK_BYTES = TRANSPOSE_BLOCK * TRANSPOSE_BLOCK * 2


def emit_vtranspose(state, op) -> None:
    src, dst = state.buf(op.operand("src")), state.buf(op.operand("dst"))
    rank, perm = dst.type.rank, list(op.attributes["perm"])
    if src.es != 2 or src.dtype != dst.dtype:
        raise CodegenError(op, f"vtranspose moves 16x16 blocks of 2-byte elements (CANN-INI); got {src.dtype} -> "
                               f"{dst.dtype}")
    if perm != list(range(rank - 2)) + [rank - 1, rank - 2]:
        raise CodegenError(op, f"perm {perm}: only the last two dims swapped is emitted")
    ss, ds = src.type.static_shape(), dst.type.static_shape()
    n = TRANSPOSE_BLOCK
    if ss[-1] != n or ds[-2] != n or ss[-2] != ds[-1] or ss[-2] % n or list(ss[:-2]) != list(ds[:-2]):
        raise CodegenError(op, f"source {ss} must be [..., C, 16] and destination {ds} [..., 16, C], C a multiple "
                               f"of 16")
    extents = [state.index(v) for v in op.indices]  # of the destination
    scratch = state.scratch(min(ss[-2] // n, TRANSPOSE_GROUP) * BLOCK_BYTES, "vtranspose")
    s_strides, d_strides = src.static_strides(), dst.static_strides()
    pitch = ds[-1] * 2

    def blocks(s_addr, d_addr):
        cols = extents[-1]
        static_cols = static_int(cols)
        nb = Imm(ceil_div(static_cols, n)) if static_cols is not None else state.mov("nblocks", (cols + (n - 1)) // n)
        with state.b.loop(state.fresh("g0"), 0, nb, TRANSPOSE_GROUP) as g0:
            k = state.mov("k", emin(TRANSPOSE_GROUP, nb - g0))
            state.b.pipe_barrier("V")  # scratch is free again (the previous group's copies read it)
            with state.b.loop(state.fresh("b"), 0, k, 1) as b:
                state.b.vtranspose(dst.dtype, fold(scratch + b * BLOCK_BYTES), fold(s_addr + (g0 + b) * BLOCK_BYTES),
                                   tags=buffer_tags(src=src, dst=SCRATCH))
            state.b.pipe_barrier("V")  # the copies read what the transposes wrote
            for h in range(2):
                state.b.vcopy(dst.dtype, fold(d_addr + g0 * 32 + h * 8 * pitch), scratch + h * 256, repeat=k,
                              dst_blk=pitch // 32, src_blk=1, dst_rep=1, src_rep=BLOCK_BYTES // 32,
                              tags=buffer_tags(src=SCRATCH, dst=dst))

    def lead(d, s_addr, d_addr):
        if d == rank - 2:
            return blocks(s_addr, d_addr)
        counted(state, "d", extents[d], lambda i: lead(d + 1, fold(s_addr + i * s_strides[d] * 2),
                                                    fold(d_addr + i * d_strides[d] * 2)), max_unroll=1)

    lead(0, src.addr, dst.addr)

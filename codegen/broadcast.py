"""``hivm.vbrc`` → row broadcast (vcopy with a 0 stride along the broadcast dims) or column broadcast (vbrcb + vcopy
with block stride 0); see docs/codegen.md."""

from __future__ import annotations

from graph_passes.idioms.broadcasts import column_broadcast_rows, element_broadcast
from graph_passes.intmath import ceil_div, prod
from graph_passes.ir.types import MemRefType
from simulator.expr import Imm, emin

from .errors import CodegenError
from .lowering import Buf
from .operands import barrier, op_region, operand_of, ub_buf, vector_dtype
from .vector import (SCRATCH, MAX_REPEAT, Operand, buffer_tags, chunk_mask, counted, flat, fold, region, static_int,
                     valid_rows, vector_instr)


def emit_vbrc(state, op) -> None:
    """Along dims that exclude the last: a row broadcast. Along the last dim (and maybe others): a column broadcast
    into the slab of dst at index 0 of the other broadcast dims, then a row broadcast of that slab along them."""
    src, dst = ub_buf(state, op, op.operand("src")), ub_buf(state, op, op.operand("dst"))
    ext, caps = op_region(state, op)
    _broadcast(state, op, src, dst, sorted(op.attributes["dims"]), ext, caps)


def _without_unit_last(buf: Buf) -> Buf:
    """``buf`` (a packed column buffer ``[..., n, 1]``) viewed without its last dim: the same bytes."""
    t = buf.type
    return Buf(buf.scope, buf.addr, MemRefType(tuple(t.static_shape()[:-1]), t.dtype, t.scope), buf.tag)


def _broadcast(state, op, src: Buf, dst: Buf, dims: list, ext, caps) -> None:
    rank = dst.type.rank
    if (rank > 2 and rank - 1 not in dims and dst.type.static_shape()[-1] == 1 and src.type.static_shape()[-1] == 1
            and any(d < rank - 1 and caps[d] > 1 for d in dims)):
        # a broadcast of packed columns ([R, 1, 1] -> [R, C, 1]): without the unit last dim the same bytes are
        # the broadcast [R, 1] -> [R, C] (a column broadcast when C is its innermost dim)
        return _broadcast(state, op, _without_unit_last(src), _without_unit_last(dst), dims, ext[:-1], caps[:-1])
    dtype = vector_dtype(op, dst.type, ("f16", "f32", "i16", "i32", "bf16"))
    if element_broadcast(dst.type.static_shape(), src.type.static_shape()):
        return _element_broadcast(state, src, dst, dtype, ext, caps)
    if rank - 1 not in dims:  # row broadcast: the source's rows are re-read (stride 0 along dims)
        if _one_block_rows(dst, src):
            return _block_broadcast(state, src, dst, dtype, ext, caps)
        copy = vector_instr(state, "vcopy", dtype, ("src", "dst"))
        return region(state, copy, [operand_of(src), operand_of(dst)], ext, caps)
    shape, src_shape = dst.type.static_shape(), src.type.static_shape()
    spanned = [d for d in range(rank - 1) if src_shape[d] > 1]
    padded = [d for d in spanned if src_shape[d] != shape[d]]
    try:
        rows_cap, pitch = column_broadcast_rows(shape, [shape[d] if d in padded else n for d, n in
                                                        enumerate(src_shape)])
    except ValueError as e:
        raise CodegenError(op, f"broadcast along dims {dims} of a rank-{rank} buffer: {e}") from None
    if padded:  # a column padded to whole repeats (Buffer.whole_repeats): its rows are contiguous per slab only
        _padded_column_broadcast(state, op, src, dst, dtype, ext, caps, spanned, padded, pitch)
    else:
        _column_broadcast(state, op, src, dst, dtype, valid_rows(ext, caps, spanned), ext[-1], rows_cap, pitch)
    others = [d for d in dims if d != rank - 1 and caps[d] > 1]
    if not others:
        return
    barrier(state)  # the slab along the other broadcast dims: a row broadcast reading index 0 of them
    slab = operand_of(dst)
    slab = Operand(dst.addr, dst.es, [0 if d in others else s for d, s in enumerate(slab.strides)], dst.tag)
    region(state, vector_instr(state, "vcopy", dtype, ("src", "dst")), [slab, operand_of(dst)], ext, caps)


def _padded_column_broadcast(state, op, src: Buf, dst: Buf, dtype: str, ext, caps, spanned, padded, pitch) -> None:
    """A column broadcast from a source whose innermost spanned dim p is padded (``src_shape[p]`` elements apart
    per index of the dims outside it, ``shape[p]`` rows of dst): one column broadcast per slab of dst's rows."""
    p = spanned[-1]
    if padded != [p]:
        raise CodegenError(op, f"broadcast from {src.type} into {dst.type}: only the innermost row dim of the column "
                               f"may be padded")
    inner, src_inner = caps[p], src.type.static_shape()[p]

    def slab(i):
        s_buf = Buf(src.scope, fold(src.addr + i * (src_inner * src.es)), src.type, src.tag)
        d_buf = Buf(dst.scope, fold(dst.addr + i * (inner * pitch * dst.es)), dst.type, dst.tag)
        _column_broadcast(state, op, s_buf, d_buf, dtype, ext[p], ext[-1], inner, pitch)

    counted(state, "slab", valid_rows(ext, caps, spanned[:-1]), slab)


def _one_block_rows(dst: Buf, src: Buf) -> bool:
    """dst's rows are one 32-B block each (the last dim of a 32-B column tile) and src is one such row."""
    shape, src_shape = dst.type.static_shape(), src.type.static_shape()
    return shape[-1] * dst.es == 32 and all(n == 1 for n in src_shape[:-1]) and len(shape) > 1


def _block_broadcast(state, src: Buf, dst: Buf, dtype: str, ext, caps) -> None:
    """dst[..., c] = src[c] into rows of one 32-B block (:func:`_one_block_rows`): one vcopy over dst's contiguous
    blocks reading src's block for every one (block and repeat stride 0) — 8 rows per repeat, not one. The rows'
    padding (past a partial tile's last column) gets src's padding, which nothing reads."""
    shape = dst.type.static_shape()
    n = valid_rows(list(ext[:-1]) + [Imm(shape[-1])], caps,
                   [d for d, k in enumerate(shape) if k > 1])
    emit = vector_instr(state, "vcopy", dtype, (None, "dst"), src=src.addr, src_blk=0, src_rep=0,
                        tags=buffer_tags(src=src))
    flat(state, emit, [Operand(src.addr, dst.es, None, src.tag), Operand(dst.addr, dst.es, [1], dst.tag)], n,
         prod(shape))


def _element_broadcast(state, src: Buf, dst: Buf, dtype: str, ext, caps) -> None:
    """dst[...] = src[0] into a buffer of one-element rows (``element_broadcast``)::

        vbrcb  S <- src[0..7]               block 0 of scratch S = src[0] in every lane of its 32 B
        vcopy  dst[0 : n] <- block 0 of S   block stride 0, repeat stride 0: one block read for every lane group

    n: dst's elements up to its last valid one (its elements are contiguous; those between valid ones are written
    too, harmlessly)."""
    S = state.scratch(256, f"a broadcast of one element into {dst.type}")
    barrier(state)
    state.b.vbrcb(dtype, S, src.addr, repeat=1, dst_blk=1, dst_rep=8, tags=buffer_tags(src=src, dst=SCRATCH))
    barrier(state)
    shape = dst.type.static_shape()
    n = valid_rows(ext, caps, [d for d, k in enumerate(shape) if k > 1])
    emit = vector_instr(state, "vcopy", dtype, (None, "dst"), src=Imm(S), src_blk=0, src_rep=0, tags={"src": SCRATCH})
    flat(state, emit, [Operand(Imm(S), dst.es, None, SCRATCH), Operand(dst.addr, dst.es, [1], dst.tag)], n, prod(shape))


def _column_broadcast(state, op, src: Buf, dst: Buf, dtype: str, e0, e1, rows_cap: int, pitch: int) -> None:
    """dst[r, c] = src[r]: vbrcb puts src[r] in row r's first block, vcopy (block stride 0) spreads it::

        rows [0, T0) (T0 = rows rounded down to 8):  vbrcb 8 rows per repeat into their own first blocks; spread
        rows [T0, e0) when the tile's rows are not a multiple of 8 (vbrcb would write past the buffer): vbrcb
            their values (from the aligned row Ts) as contiguous blocks into rows [B, T0) of dst, spread each
            block over its row, then the main part overwrites rows [B, T0)
    """
    es = dst.es
    pb = pitch * es  # row pitch in bytes
    lanes = 256 // es
    if pb % 32:
        raise CodegenError(op, f"rows of {pb} B are not 32-B aligned")
    T0 = rows_cap - rows_cap % 8
    if T0 == 0:
        return _small_column_broadcast(state, op, src, dst, dtype, e0, e1, rows_cap, pitch, pb, lanes)
    if T0 != rows_cap:
        align = max(8, 32 // es)  # vbrcb's source must start 32-B aligned
        Ts = T0 - T0 % align
        blocks = 256 * ceil_div(rows_cap - Ts, 8)
        B = T0 - ceil_div(blocks, pb)
        if B < 0:
            raise CodegenError(op, f"column broadcast into {rows_cap} rows of {pb} B: no room to stage the last "
                                   f"{rows_cap - T0} rows' blocks")
        with state.b.if_(e0 > T0):
            state.b.vbrcb(dtype, fold(dst.addr + B * pb), fold(src.addr + Ts * es), repeat=fold((e0 - Ts + 7) // 8),
                          dst_blk=1, dst_rep=8, tags=buffer_tags(src=src, dst=dst))
            barrier(state)
            _spread(state, dtype, fold(dst.addr + T0 * pb), fold(dst.addr + (B * pb + 32 * (T0 - Ts))), 1, e0 - T0, e1,
                    rows_cap - T0, pitch, lanes, dst_rep=pb // 32, tags=buffer_tags(src=dst, dst=dst))
            barrier(state)
    groups = T0 // 8
    step = 252  # vbrcb repeats per instruction: 8 source elements each, keeps the source 32-B aligned
    n_rep = (e0 + 7) // 8 if T0 == rows_cap else emin((e0 + 7) // 8, groups)

    def brcb(g):
        rep = emin(step, n_rep - g * step) if groups > step else n_rep
        state.b.vbrcb(dtype, fold(dst.addr + g * (step * 8 * pb)), fold(src.addr + g * (step * 8 * es)),
                      repeat=fold(rep), dst_blk=pb // 32, dst_rep=8 * pb // 32, tags=buffer_tags(src=src, dst=dst))

    if groups > step:
        counted(state, "g", (n_rep + step - 1) // step, brcb, max_unroll=0)
    else:
        brcb(Imm(0))
    barrier(state)
    if pb == 32:  # rows of one block: vbrcb wrote them whole
        return
    rows_main = e0 if T0 == rows_cap else fold(emin(e0, T0))
    _spread(state, dtype, dst.addr, dst.addr, pb // 32, rows_main, e1, T0, pitch, lanes,
            tags=buffer_tags(src=dst, dst=dst))


def _small_column_broadcast(state, op, src, dst, dtype, e0, e1, rows_cap, pitch, pb, lanes) -> None:
    """Fewer than 8 rows: row 0's first 8 blocks get src[0..7]; rows 1.. spread their block from row 0, then row 0
    spreads its own (block 0, rewritten with the same values)."""
    if pb < 256:  # row 0 cannot hold vbrcb's 8 blocks: stage them in the kernel's scratch, spread each row's
        S = state.scratch(256, f"a column broadcast into {rows_cap} rows of {pb} B")
        barrier(state)
        state.b.vbrcb(dtype, S, src.addr, repeat=1, dst_blk=1, dst_rep=8, tags=buffer_tags(src=src, dst=SCRATCH))
        barrier(state)
        _spread(state, dtype, dst.addr, Imm(S), 1, e0, e1, rows_cap, pitch, lanes, dst_rep=pb // 32,
                tags=buffer_tags(src=SCRATCH, dst=dst))
        return
    state.b.vbrcb(dtype, dst.addr, src.addr, repeat=1, dst_blk=1, dst_rep=8, tags=buffer_tags(src=src, dst=dst))
    barrier(state)
    if rows_cap > 1:
        def rest():
            _spread(state, dtype, fold(dst.addr + pb), fold(dst.addr + 32), 1, fold(e0 - 1), e1, rows_cap - 1, pitch,
                    lanes, dst_rep=pb // 32, tags=buffer_tags(src=dst, dst=dst))

        if static_int(e0) is None:
            with state.b.if_(e0 > 1):
                rest()
        elif static_int(e0) > 1:
            rest()
        barrier(state)
    _spread(state, dtype, dst.addr, dst.addr, 0, Imm(1), e1, 1, pitch, lanes, dst_rep=pb // 32,
            tags=buffer_tags(src=dst, dst=dst))


def _spread(state, dtype, dst, src, src_rep, e0, e1, cap0, cap1, lanes, dst_rep=None, tags=None):
    """vcopy the 32-B block at src (+ src_rep blocks per row) over e1 elements of each of e0 rows of dst (``tags``:
    the copies' buffer tags)."""
    dst_rep = src_rep if dst_rep is None else dst_rep
    e1s = static_int(e1)

    def chunk(c):
        mask = fold(chunk_mask(c, e1, e1s, cap1, lanes))

        def group(g):
            rep = e0 if cap0 <= MAX_REPEAT else emin(MAX_REPEAT, e0 - g * MAX_REPEAT)
            state.b.vcopy(dtype, fold(dst + c * 256 + g * (MAX_REPEAT * dst_rep * 32)),
                          fold(src + g * (MAX_REPEAT * src_rep * 32)), repeat=fold(rep), mask=mask, src_blk=0,
                          src_rep=src_rep, dst_rep=dst_rep, tags=tags)

        if cap0 <= MAX_REPEAT:
            group(Imm(0))
        else:
            counted(state, "g", (e0 + MAX_REPEAT - 1) // MAX_REPEAT, group, max_unroll=0)

    if cap1 <= lanes:
        chunk(Imm(0))
    else:
        counted(state, "c", Imm(ceil_div(e1s, lanes)) if e1s is not None else (e1 + lanes - 1) // lanes, chunk)



"""``hivm.embedding_gather`` → a scalar loop over the index tile issuing one MTE2 copy per row.

What Ascend C gather kernels do on A2 (no SIMT): ``GetValue`` the index from UB, compute the row's GM address on the
scalar unit, ``DataCopy`` the row (AscendNPU-IR's ``hivm.embedding_gather`` is the same op, lowered to SIMT on A5)::

    dmov lo, -1;  dmov hi, V;  dmov row, row_bytes           # V = the table's rows, from its GM shape
    for r in range(e[0]):
        ld_ub  i64/i32 i, index + r·es_index                # GetValue (PIPE_S)
        smax   i, i, lo;  smin i, i, hi                       # clamp to [-1, V]: no wrap in the multiply below
        smul   i, i, row                                      # byte offset of the row, in [-row, V·row]
        copy_gm_to_ub dst + r·pitch, table + Σ off·stride·es, e[1:]·es  gm_reg=i gm_bound=V·row

The copy reads the register when the scalar unit issues it; an index outside ``[0, V)`` lands outside ``[0, V·row)``
(the clamp keeps even ±2⁶³ from wrapping into range) and stops the kernel with an error naming the copy and the
numbers (docs/simulator.md). Each row pays a normal DMA (the GM model's per-transfer cost) and four scalar
instructions plus the issue. Rows of a multi-dim box (dims 1.. of the tile) move like a ``hivm.load`` box
(:func:`codegen.dma.bursts`), every copy at the same register offset.

Along the last dim (``dim`` attribute; one element of each row, a loss's target logit): the register is the
element's byte offset in its row (``i · es``, bound ``C · es``) and copy ``r`` starts at source row ``off + r``: one
DMA of ``es`` bytes per row into the row's 32-B UB slot, whatever the row's length.

Along a middle dim ``d`` (``0 < d < rank - 1``; ``flip``, ``roll``, ``index_select`` or a pad's edge index along
dim 1 of ``[A, B, C]``): the loop walks the index tile along ``d``, the register is ``i · slab`` (the source's stride
of dim ``d`` in bytes, bound ``B · slab``) and each copy moves the tile's box of the other dims (the dims before ``d``
as rows of the box) at that slab.
"""

from __future__ import annotations

from simulator.expr import Imm

from .dma import bursts, gm_strides, merge_dims
from .errors import CodegenError
from graph_passes.dialects.hivm import element_gather

from .vector import buffer_tags, counted, fold, static_int

INDEX_DTYPES = ("i32", "i64")  # ld_ub reads either; the arithmetic runs on 64-bit data registers


def emit_embedding_gather(state, op) -> None:
    src, index, dst = (state.buf(op.operand(n)) for n in ("src", "index", "dst"))
    if src.scope != "gm" or index.scope != "ub" or dst.scope != "ub":
        raise CodegenError(op, f"gathers GM rows into UB by a UB index, got {src.type}, {index.type}, {dst.type}")
    if index.dtype not in INDEX_DTYPES or src.dtype != dst.dtype:
        raise CodegenError(op, f"gathers {src.dtype} rows into {dst.dtype} by {index.dtype} (index: i32 or i64)")
    offsets = [state.index(v) for v in op.offsets()]
    extents = [state.index(v) for v in op.extents()]
    if any(static_int(e) == 0 for e in extents):
        return
    es = src.es
    natural = gm_strides(state, src)
    dim = op.attributes.get("dim", 0)
    element = element_gather(src.type.rank, dim)
    loop = 0 if element else dim  # the dim of the index tile the scalar loop walks
    others = [d for d in range(len(natural)) if d != dim]
    rows = state.size(src.type.shape[dim])
    row_bytes = fold(natural[dim] * es)  # the index's step: a row, a slab, or one element along the last dim
    lin = Imm(0)
    for o, d in zip(offsets, others):
        lin = fold(lin + o * natural[d])
    base = fold(src.addr + lin * es)
    step = fold(natural[0] * es) if element else Imm(0)  # along the last dim: each index row is the next source row
    if not isinstance(base, Imm) and base != src.addr:
        base = state.b.mov(state.fresh("table_row"), base)
    bound = fold(rows * row_bytes)
    if isinstance(bound, Imm) and bound.value <= 0:
        raise CodegenError(op, f"gathers from an empty table {src.type}")
    us = dst.static_strides()
    idx_pitch = index.static_strides()[loop] * index.es
    dims = [d for d in range(len(extents)) if d != loop and static_int(extents[d]) != 1]
    dims, box, gs, ub_strides = merge_dims(dims, extents, natural, us)  # along the last dim: no dim, one element
    state.b.dmov("g_lo", -1)
    state.b.dmov("g_hi", rows)
    state.b.dmov("g_row", row_bytes)

    def row(r):
        state.b.ld_ub(index.dtype, "g_i", fold(index.addr + r * idx_pitch), tags=buffer_tags(addr=index))
        state.b.smax("i64", "g_i", "g_i", "g_lo")
        state.b.smin("i64", "g_i", "g_i", "g_hi")
        state.b.smul("i64", "g_i", "g_i", "g_row")
        bursts(state, op, dims, box, fold(base + r * step), fold(dst.addr + r * (us[loop] * dst.es)), gs, ub_strides,
               es, "ub", gm_reg="g_i", gm_bound=bound, tags=buffer_tags(dst=dst))

    counted(state, "r", extents[loop], row, max_unroll=1)


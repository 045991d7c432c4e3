"""``hivm.vindex`` → ``vci`` + vector-scalar ops (a table of byte offsets); ``hivm.vpermute`` → ``vgather`` (Ascend C
Gather by those offsets), PIPE_V: a permutation of a box in UB, for data-movement kernels (docs/schedule.md).

``vindex dst {strides = w, clamp = n}`` fills the i32 buffer ``dst`` (static shape ``D``, row-major, padding
included) dim by dim; one barrier per dim orders copies that all read the first block::

    dst[0, …, 0, j] = min(j, n - 1) · w[r-1]              vci, vmins (when n < D[r-1]), vmuls
    for d = r-2 … 0:                                       (B = Π D[d+1:], the elements of one index of dim d)
        pipe_barrier V
        for h in range(1, D[d]):  dst[h·B : (h+1)·B] = dst[0 : B] + h · w[d]              vadds

``vpermute src, offsets, dst, e`` gathers the destination's valid rows, padding included (flat), per index of its
``m`` leading batch dims (those ``offsets`` does not have; src and dst walk them by their own strides)::

    for b in valid batch indices:
        for k in range(valid_rows(e[m:]) · D[r-1]):  dst[b][k] = UB[src[b] + offsets[k]]   vgather, 255 repeats each

A vgather reads 4 B of offsets per lane of every repeat it runs, a partial last repeat included: the offsets buffer
is longer than the destination along dim 0 by at least one repeat (its extra entries are never used).
"""

from __future__ import annotations

from graph_passes.intmath import prod
from simulator.expr import Imm
from simulator.isa.index import GATHER_DTYPES

from .errors import CodegenError
from .operands import barrier, ub_buf
from .vector import Operand, buffer_tags, counted, flat, fold, valid_rows, vector_instr


def emit_vindex(state, op) -> None:
    dst = ub_buf(state, op, op.operand("dst"))
    if dst.dtype != "i32":
        raise CodegenError(op, f"offsets are i32, got {dst.dtype}")
    ds, w, n = list(dst.type.static_shape()), list(op.attributes["strides"]), op.attributes["clamp"]
    base = dst.addr

    def vs(form, at, n_elems: int, value) -> None:  # dst[at : at+n] = dst[0 : n] (op) value
        emit = vector_instr(state, "v" + form, "i32", ("dst", "src"), scalar=value)
        flat(state, emit, [Operand(fold(base + at * 4), 4, [1], dst.tag), Operand(base, 4, [1], dst.tag)], Imm(n_elems),
             n_elems)

    vci = vector_instr(state, "vci", "i32", ("dst",), first=lambda a: fold((a[0] - base) // 4))
    flat(state, vci, [Operand(base, 4, [1], dst.tag)], Imm(ds[-1]), ds[-1])
    if n < ds[-1]:  # padded columns read the row's last valid element (never stored)
        barrier(state)
        vs("mins", 0, ds[-1], Imm(n - 1))
    barrier(state)
    vs("muls", 0, ds[-1], Imm(w[-1]))
    for d in reversed(range(len(ds) - 1)):
        if ds[d] == 1:
            continue
        block = prod(ds[d + 1:])
        barrier(state)
        counted(state, "h", Imm(ds[d] - 1), lambda h, d=d, block=block: vs("adds", (h + 1) * block, block,
                                                                         fold((h + 1) * w[d])))


def emit_vpermute(state, op) -> None:
    src, table, dst = (ub_buf(state, op, op.operand(n)) for n in ("src", "offsets", "dst"))
    if dst.dtype not in GATHER_DTYPES:
        raise CodegenError(op, f"a permutation of {dst.dtype} elements: vgather moves {', '.join(GATHER_DTYPES)} "
                               f"(ASCENDC Gather on A2)")
    ds, es = list(dst.type.static_shape()), dst.es
    r, m = len(ds), dst.type.rank - table.type.rank  # m batch dims, shared by src and dst
    ext = [state.index(v) for v in op.indices]
    s_strides, d_strides = src.static_strides(), dst.static_strides()
    src_len = prod(src.type.static_shape()[m:]) * es

    def gather(s_at, d_at):
        emit = vector_instr(state, "vgather", dst.dtype, ("dst",), fold_exprs=False, src=s_at, src_len=src_len,
                            offset=lambda a: fold(table.addr + (a[0] - d_at) // es * 4),
                            tags=buffer_tags(src=src, offset=table))
        n = fold(valid_rows(ext[m:], ds[m:], range(r - 1 - m)) * ds[-1])
        flat(state, emit, [Operand(d_at, es, [1], dst.tag)], n, prod(ds[m:]))

    def batch(k, s_at, d_at):
        if k == m:
            return gather(s_at, d_at)
        counted(state, "b", ext[k], lambda i: batch(k + 1, fold(s_at + i * (s_strides[k] * es)),
                                                 fold(d_at + i * (d_strides[k] * es))), max_unroll=1)

    batch(0, src.addr, dst.addr)

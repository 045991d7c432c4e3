"""``hivm.load`` / ``hivm.store`` → ``copy_gm_to_ub`` (or, into L1, ``copy_gm_to_l1``) / ``copy_ub_to_gm`` (MTE2 / MTE3).

A tile of valid extents ``e`` at GM offsets ``off`` moves as bursts: the innermost dim is one burst per row
(``burst_len = e[-1]·es``), rows are ``n_burst = e[-2]`` apart by the GM row stride (from the GM memref's symbolic
shape, through kernel params) and the UB row pitch (the alloc's static, 32-B padded shape)::

    gm_addr = base + (Σ off[d]·gm_stride[d])·es
    for r in range(e[-2]):  ub[r·ub_pitch : +e[-1]·es] <-> gm[gm_addr + r·gm_stride[-2]·es : +e[-1]·es]

Dims of static extent 1 drop out; a region that is contiguous on both sides is one burst; dims beyond two loop.

A load/store with ``dims``/``steps`` (docs/hivm.md) walks a permuted, strided view of GM: each local dim's GM
stride is its GM dim's row-major stride × its step. When the innermost moved dim is not contiguous (a transpose, a
strided slice, a selected column) every element is its own burst — the UB side holds one element per 32-B block
(the local buffer's last dim is a block of ``32 / es`` elements, extent 1) — one instruction per outer row::

    for r in range(e[-2]):  for c in range(e[-1]):  ub[(r·e[-1] + c)·32 : +es] <-> gm[addr(r, c) : +es]
"""

from __future__ import annotations

import sympy

from simulator.expr import Expr, Imm

from .errors import CodegenError
from .vector import buffer_tags, counted, fold, static_int


def gm_strides(state, buf) -> list[Expr]:
    shape = list(buf.type.shape)
    out = []
    for d in range(len(shape)):
        out.append(state.size(sympy.Mul(*shape[d + 1 :]) if d + 1 < len(shape) else sympy.Integer(1)))
    return out


COPY_INTO = ("ub", "l1")  # the local scopes a GM load may fill


def emit_load(state, op) -> None:
    local = state.buf(op.local)
    _transfer(state, op, gm=state.buf(op.gm), ub=local, into=local.scope)


def emit_store(state, op) -> None:
    _transfer(state, op, gm=state.buf(op.gm), ub=state.buf(op.local), into=None)


def _transfer(state, op, gm, ub, into: str | None) -> None:
    """A box between GM and a local buffer: loaded ``into`` its scope (UB, or L1 for a cube operand), or stored
    from UB (``into`` None)."""
    if gm.scope != "gm" or ub.scope not in (COPY_INTO if into else ("ub",)):
        raise CodegenError(op, f"moves between GM and UB (or GM into L1), got {gm.type} and {ub.type}")
    if ub.dtype == "i1":
        raise CodegenError(op, "i1 buffers are packed bit masks in UB (vcmp/vsel) while GM bools are bytes; "
                               "hfusion-legalize-bool moves GM bools as i8 (a bitcast at the kernel boundary)")
    # GM bools are bytes (0 or 1): hfusion-legalize-bool moves them to and from i8 buffers; DMA copies bytes.
    if gm.dtype != ub.dtype and (gm.dtype, ub.dtype) != ("i1", "i8"):
        raise CodegenError(op, f"element types differ ({gm.dtype} vs {ub.dtype}); DMA does not convert")
    offsets = [state.index(v) for v in op.offsets()]
    extents = [state.index(v) for v in op.extents()]
    es = gm.es
    natural = gm_strides(state, gm)
    gs = [Imm(0) if g == -1 else fold(natural[g] * step) for g, step in zip(op.gm_dims(), op.gm_steps())]
    us = ub.static_strides()
    lin = Imm(0)
    for o, s in zip(offsets, natural):
        lin = fold(lin + o * s)
    gaddr = fold(gm.addr + lin * es)
    if not isinstance(gaddr, Imm) and gaddr != gm.addr:
        gaddr = state.b.mov(state.fresh(f"{'src' if into else 'dst'}_gm"), gaddr)
    dims = [d for d, e in enumerate(extents) if static_int(e) != 1]
    dims, extents, gs, us = merge_dims(dims, extents, gs, us)
    bursts(state, op, dims, extents, gaddr, ub.addr, gs, us, es, into,
           tags=buffer_tags(**{"dst" if into else "src": ub}))


def merge_dims(dims, extents, gs, us):
    """Merge a dim into the next inner one when the inner dim is whole on both sides (static extent equal to the
    stride ratio in GM and in UB): [len0, 8, 32] over strides [256, 32, 1] moves as one run of len0·256."""
    ext, gs, us = list(extents), list(gs), list(us)
    out = list(dims)
    i = len(out) - 2
    while i >= 0:
        a, b = out[i], out[i + 1]
        eb = static_int(ext[b])
        if eb is not None and static_int(gs[a]) is not None and static_int(gs[b]) is not None \
                and static_int(gs[a]) == eb * static_int(gs[b]) and us[a] == eb * us[b]:
            ea = static_int(ext[a])
            ext[b] = Imm(ea * eb) if ea is not None else fold(ext[a] * eb)
            del out[i]
        i -= 1
    return out, ext, gs, us


def bursts(state, op, dims, extents, gaddr, uaddr, gs, us, es, into, **reg) -> None:
    """The copies of one box (``into``: the local scope loaded into, None for a store; ``reg``: a data-register GM
    offset and its bound, forwarded to every copy)."""
    if len(dims) > 2:
        d = dims[0]

        def body(i):
            bursts(state, op, dims[1:], extents, fold(gaddr + i * gs[d] * es), fold(uaddr + i * (us[d] * es)), gs, us,
                    es, into, **reg)

        return counted(state, "d", extents[d], body, max_unroll=1)
    if not dims:
        return _copy(state, into, gaddr, uaddr, Imm(es), Imm(1), Imm(0), Imm(0), **reg)
    inner = dims[-1]
    if static_int(gs[inner]) != 1 or us[inner] != 1:
        # one element per burst (a column, a strided or transposed view): each UB burst starts a 32-B block
        if (us[inner] * es) % 32:
            raise CodegenError(op, f"UB bursts {us[inner] * es} B apart are not 32-B aligned (a strided or "
                                   f"transposed view needs one element per 32-B block in UB)")
        if len(dims) == 2:
            d = dims[0]

            def column(i):
                _copy(state, into, fold(gaddr + i * gs[d] * es), fold(uaddr + i * (us[d] * es)), Imm(es),
                      extents[inner], fold(gs[inner] * es), Imm(us[inner] * es), **reg)

            return counted(state, "d", extents[d], column, max_unroll=1)
        return _copy(state, into, gaddr, uaddr, Imm(es), extents[inner], fold(gs[inner] * es), Imm(us[inner] * es),
                     **reg)
    row = fold(extents[inner] * es)
    if len(dims) == 1:
        return _copy(state, into, gaddr, uaddr, row, Imm(1), Imm(0), Imm(0), **reg)
    outer = dims[0]
    e1 = static_int(extents[inner])
    if e1 is not None and static_int(gs[outer]) == e1 and us[outer] == e1:  # contiguous on both sides
        return _copy(state, into, gaddr, uaddr, fold(extents[outer] * (e1 * es)), Imm(1), Imm(0), Imm(0), **reg)
    if (us[outer] * es) % 32:
        raise CodegenError(op, f"UB rows {us[outer] * es} B apart are not 32-B aligned (pad the alloc's last dim)")
    _copy(state, into, gaddr, uaddr, row, extents[outer], fold(gs[outer] * es), Imm(us[outer] * es), **reg)


def _copy(state, into, gaddr, uaddr, burst_len, n_burst, gm_stride, ub_stride, **reg) -> None:
    if into:  # MTE2: GM -> UB, or a cube operand's box GM -> L1
        load = state.b.copy_gm_to_l1 if into == "l1" else state.b.copy_gm_to_ub
        load(uaddr, gaddr, burst_len, n_burst, src_stride=gm_stride, dst_stride=ub_stride, **reg)
    else:
        state.b.copy_ub_to_gm(gaddr, uaddr, burst_len, n_burst, src_stride=ub_stride, dst_stride=gm_stride, **reg)

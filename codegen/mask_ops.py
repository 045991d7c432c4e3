"""``hivm.vcmp`` / ``hivm.vsel`` on packed bit masks in UB (bit c of row r at byte r·pitch + c/8; a column mask —
last dim 1 — is one bit string over its rows, bit r at byte r/8); see docs/codegen.md."""

from __future__ import annotations

from graph_passes.ir.types import MemRefType
from simulator.expr import Imm, emin

from .errors import CodegenError
from .lowering import Buf
from .operands import splat, ub_buf, vector_dtype
from .vector import (SCRATCH, buffer_tags, column_bits, counted, flat_extent, flatten_alike, fold, static_int,
                     valid_rows)

LANES_OF = {"bf16": "f16", "i32": "f32"}  # vsel moves these as lanes of the same width


def _bit_rows(state, op, data: list[Buf], mask_buf: Buf, ext, body) -> None:
    """Run ``body(row data addrs, row mask addr, n)`` per row (bit c of row r at byte r·pitch + c/8)."""
    shape = mask_buf.type.static_shape()
    if len(shape) == 1:
        return body([b.addr for b in data], mask_buf.addr, ext[0], shape[0])
    if column_bits(shape):  # one bit per row, the rows' bits contiguous; so are the operands' elements
        if not flatten_alike(shape, [b.type.static_shape() for b in data]):
            raise CodegenError(op, f"a column mask {mask_buf.type} with operands {[str(b.type) for b in data]}: "
                                   f"their rows do not flatten alike")
        cap = min(b.flat().type.shape[0] for b in data)  # the operands' run (the mask holds 8 bits per byte)
        return body([b.addr for b in data], mask_buf.addr, flat_extent(ext, shape), cap)
    rows = fold(valid_rows(ext, shape, [k for k in range(len(shape) - 1) if shape[k] > 1]))  # the dims above the
    rows_cap = 1                                                       # last flatten into rows (only it is padded)
    for n in shape[:-1]:
        rows_cap *= n
    if shape[-1] % 32 and rows_cap > 1:
        raise CodegenError(op, f"i1 rows of {shape[-1]} B are not 32-B aligned")
    var = state.fresh("r")
    with state.b.loop(var, 0, rows, 1) as r:
        body([fold(b.addr + r * (b.static_strides()[-2] * b.es)) for b in data], fold(mask_buf.addr + r * shape[-1]),
             ext[-1], shape[-1])


def _bit_flat(state, op, n, cap, lanes, emit) -> None:
    """Emit over n elements so that every instruction's bit-mask address (element k at byte k / 8) is 32-B aligned:
    whole groups of q = 256 / lanes repeats, then the remaining repeats in one instruction with a full mask. That
    last instruction also computes the lanes after n up to the next repeat boundary (inside the buffer when its
    capacity is a multiple of lanes; those lanes are not valid data and never stored)."""
    q = 256 // lanes  # repeats per 32 B of mask bits
    nv = static_int(n)
    if nv is not None and (nv % lanes == 0 or (nv // lanes) % q == 0):
        done, full, tail = 0, nv // lanes, nv % lanes
        while full:
            r = min(252, full)
            emit(done, Imm(r), Imm(lanes))
            done += r * lanes
            full -= r
        if tail:
            emit(done, Imm(1), Imm(tail))
        return
    if cap <= lanes:  # one repeat, its mask bits at the start
        emit(0, Imm(1), n)
        return
    if cap % lanes:
        raise CodegenError(op, f"compare/select over {cap} elements (not a multiple of {lanes}): the bit mask of a "
                               f"partial tail would start at an unaligned UB address")
    reps = state.mov("reps", (n + lanes - 1) // lanes)
    main = state.mov("main", reps - reps % q)
    if cap // lanes > 252:
        counted(state, "g", (main + 251) // 252, lambda g: emit(g * (252 * lanes), fold(emin(252, main - g * 252)),
                                                             Imm(lanes)), max_unroll=0)
    else:
        with state.b.if_(main > 0):
            emit(0, main, Imm(lanes))
    with state.b.if_(reps > main):
        emit(main * lanes, reps - main, Imm(lanes))


def emit_vcmp(state, op) -> None:
    a_v, b_v, dst_v = op.operand("lhs"), op.operand("rhs"), op.operand("dst")
    dst = ub_buf(state, op, dst_v)
    pred = op.attributes["predicate"]
    if not isinstance(a_v.type, MemRefType):
        a_v, b_v = b_v, a_v
        pred = {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le"}.get(pred, pred)
    a = ub_buf(state, op, a_v)
    dtype = vector_dtype(op, a.type, ("f16", "f32", "i32"))
    lanes = 256 // a.es
    scalar = not isinstance(b_v.type, MemRefType)
    data = [a] if scalar else [a, ub_buf(state, op, b_v)]
    ext = [state.index(v) for v in op.indices]

    tags = buffer_tags(src0=a, src1=None if scalar else data[1], dst=dst)

    def body(addrs, bits, n, cap):
        def emit(k, repeat, mask):
            kw = dict(repeat=repeat, mask=mask, tags=tags)
            if scalar:
                getattr(state.b, "vcmps_" + pred)(dtype, fold(bits + k // 8), fold(addrs[0] + k * a.es),
                                                  scalar=state.scalar(b_v), **kw)
            else:
                getattr(state.b, "vcmp_" + pred)(dtype, fold(bits + k // 8), fold(addrs[0] + k * a.es),
                                                 fold(addrs[1] + k * a.es), **kw)

        _bit_flat(state, op, n, cap, lanes, emit)

    _bit_rows(state, op, data, dst, ext, body)


def emit_vsel(state, op) -> None:
    """A scalar true/false value is ``vdup``-ed into a 256-B scratch block read by every repeat (repeat stride 0).

    Note: vsel moves lanes without arithmetic, so bf16 selects as f16 lanes (AscendNPU-IR's LegalizeBF16 leaves
    select in bf16 on A2/A3 for the same reason) and i32 as f32 lanes (CANN-INI lists vsel for f16/f32 only; the
    lanes' bits are copied, whatever they encode)."""
    c_v, t_v, f_v, dst_v = op.operand("cond"), op.operand("true_value"), op.operand("false_value"), op.operand("dst")
    dst, cond = ub_buf(state, op, dst_v), ub_buf(state, op, c_v)
    dtype = LANES_OF.get(dst.dtype) or vector_dtype(op, dst.type, ("f16", "f32"))
    lanes = 256 // dst.es
    ext = [state.index(v) for v in op.indices]
    held = state.scratch_used
    try:
        blocks = {}
        for v in (t_v, f_v):
            if not isinstance(v.type, MemRefType):
                blocks[id(v)] = splat(state, op, state.scalar(v), dst.dtype).addr
                state.scratch_used += 256
        data = [ub_buf(state, op, v) for v in (t_v, f_v) if id(v) not in blocks] + [dst]
        sources = iter(data)
        src0, src1 = (SCRATCH if id(v) in blocks else next(sources) for v in (t_v, f_v))
        tags = buffer_tags(src0=src0, src1=src1, sel=cond, dst=dst)

        def body(addrs, bits, n, cap):
            it = iter(addrs)
            srcs = [(blocks[id(v)], 0) if id(v) in blocks else (next(it), 8) for v in (t_v, f_v)]
            out = next(it)

            def emit(k, repeat, mask):
                kw = {}
                for name, (a, rep) in zip(("src0", "src1"), srcs):
                    kw[name], kw[name + "_rep"] = (a if rep == 0 else fold(a + k * dst.es)), rep
                state.b.vsel(dtype, fold(out + k * dst.es), fold(bits + k // 8), repeat=repeat, mask=mask, tags=tags,
                             **kw)

            _bit_flat(state, op, n, cap, lanes, emit)

        _bit_rows(state, op, data, cond, ext, body)
    finally:
        state.scratch_used = held

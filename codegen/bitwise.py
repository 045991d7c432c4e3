"""Bitwise ``vbinary``/``vunary`` (and, or, xor, not) on i16 lanes over the operands' bytes.

The vector unit's ``vand``/``vor``/``vnot`` take i16 lanes only (CANN-INI), and a bitwise op does not care how its
bits are grouped, so every operand is viewed as i16 lanes over the same bytes (the same view AscendNPU-IR's HIVM
library takes of ``vand``/``vor``/``vnot`` on i1 masks):

- i16: as is; i32: two lanes per element (twice the elements); i8: a lane per two elements;
- i1, a packed bit mask (bit ``c`` of row ``r`` at byte ``r·pitch + c/8``, docs/codegen.md): 16 bits per lane,
  ``ceil(e/16)`` lanes per row, rows ``pitch/2`` lanes apart; a column mask (last dim 1) is one bit string over its
  rows: ``ceil(rows/16)`` lanes.

The last lane of a row may cover bits (or a byte) past the valid extent: inside the buffer (rows are padded to
32 B), never valid data, never stored. ``xor`` has no instruction: ``(a | b) − (a & b)``, exact per i16 lane (the
bits of ``a & b`` are a subset of those of ``a | b``: no borrow), with ``a & b`` in the kernel's scratch
(``graph_passes.idioms.scratch`` sizes it: the destination's bytes)::

    tmp = a & b;  dst = a | b;  dst = dst - tmp        (vand, vor, vsub on i16; pipe_barrier V between)
"""

from __future__ import annotations

from graph_passes.intmath import prod
from graph_passes.ir.types import MemRefType
from simulator.expr import Imm, as_expr

from .errors import CodegenError
from .operands import barrier, splat, ub_buf
from .vector import SCRATCH, Operand, ceil_expr, column_bits, flat_extent, region, static_int, vector_instr

LANE_OPS = {"bitwise_and": "vand", "bitwise_or": "vor", "bitwise_not": "vnot"}
BITS = {"i1": 1, "i8": 8, "ui8": 8, "i16": 16, "i32": 32}  # bits per element of the dtypes viewed as i16 lanes


def _lanes(e, bits: int):
    """i16 lanes holding ``e`` elements of ``bits`` bits."""
    if bits == 16:
        return e
    s = static_int(e)
    if bits == 32:
        return Imm(2 * s) if s is not None else as_expr(e) * 2
    return ceil_expr(as_expr(e) * bits if s is None else Imm(s * bits), 16)


def lane_view(op, buf, ext: list, caps: list):
    """``buf`` (a UB ``Buf``) as an i16 ``Operand`` with the region's extents and caps in lanes."""
    bits = BITS.get(buf.dtype)
    if bits is None:
        raise CodegenError(op, f"bitwise op on {buf.dtype}: the vector unit's vand/vor/vnot take i16 lanes "
                               f"(integers and i1 masks only)")
    shape = buf.type.static_shape()
    if bits == 1 and column_bits(shape):  # one bit string over the rows
        n, cap = flat_extent(ext, shape), buf.flat().type.shape[0]
        return Operand(buf.addr, 2, [1], buf.tag), [_lanes(n, 1)], [int(static_int(_lanes(Imm(cap), 1)))]
    strides = [0 if n == 1 else s * buf.es for n, s in zip(shape, buf.static_strides())]  # bytes
    if any(s % 2 for s in strides[:-1]):
        raise CodegenError(op, f"bitwise op on {buf.type}: a row is not a whole number of i16 lanes")
    lane_strides = [s // 2 for s in strides[:-1]] + [1]
    return (Operand(buf.addr, 2, lane_strides, buf.tag), ext[:-1] + [_lanes(ext[-1], bits)],
            caps[:-1] + [int(static_int(_lanes(Imm(caps[-1]), bits)))])


def _i16(state, mnem: str, names: tuple[str, ...]):
    return vector_instr(state, mnem, "i16", names)


def emit_not(state, op, src, dst, ext, caps) -> None:
    (s, e, c), (d, _, _) = lane_view(op, src, ext, caps), lane_view(op, dst, ext, caps)
    region(state, _i16(state, "vnot", ("src", "dst")), [s, d], e, c)


def emit_binary(state, op, fun: str, a_v, b_v, dst, ext, caps) -> None:
    """dst = a fun b; ``a_v``/``b_v`` are the op's operands (a buffer, or an integer scalar splatted in scratch)."""
    d, e, c = lane_view(op, dst, ext, caps)
    held = state.scratch_used
    try:
        tmp = None
        if fun == "bitwise_xor":
            barrier(state)  # the op writes scratch: after every earlier user of it
            nbytes = dst.es * prod(dst.type.static_shape())
            tmp = Operand(Imm(state.scratch(nbytes, "the a & b temporary of a bitwise xor")), 2, d.strides, SCRATCH)
            state.scratch_used += state.scratch_size(nbytes)
        ins = []
        for v in (a_v, b_v):
            if isinstance(v.type, MemRefType):
                ins.append(lane_view(op, ub_buf(state, op, v), ext, caps)[0])
                continue
            if dst.dtype not in ("i16", "i32"):
                raise CodegenError(op, f"a bitwise op of {dst.dtype} with a scalar operand")
            ins.append(splat(state, op, state.scalar(v), dst.dtype))  # lanes of a 256-B block: whole elements
            state.scratch_used += 256
        names = ("src0", "src1", "dst")
        if tmp is None:
            return region(state, _i16(state, LANE_OPS[fun], names), [*ins, d], e, c)
        region(state, _i16(state, "vand", names), [*ins, tmp], e, c)
        barrier(state)
        region(state, _i16(state, "vor", names), [*ins, d], e, c)
        barrier(state)
        region(state, _i16(state, "vsub", names), [d, tmp, d], e, c)
    finally:
        state.scratch_used = held

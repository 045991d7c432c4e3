"""Cube emitters: ``hivm.load_l0a``/``hivm.load_l0b`` → ``load_l1_to_l0a``/``load_l1_to_l0b`` (MTE1),
``hivm.mmad`` → ``mmad`` (M), ``hivm.fixpipe`` → ``fixpipe`` (FIX, L0C → GM with the output cast).

The layouts are read from the IR (``codegen/cube_layouts.py``: a CodegenError when they are not the
instruction's): an L1 tile holds ND rows of its alloc's static row pitch; a window at (row r, column c) starts at
``addr + r·pitch + c·es``. Without ``transpose`` in its ND layout the rows of an A tile are m and its columns k (a
B tile: rows k, columns n); with it the L1 tile holds the operand transposed and the MTE1 load transposes it back
(its ND rows are then k for A, n for B). The fixpipe reads the zN accumulator and writes its m × n box at the GM
offsets, ND rows the GM row stride apart, cast to the output's dtype.
"""

from __future__ import annotations

from simulator.expr import Imm

from .cube_layouts import read_layouts
from .dma import gm_strides
from .errors import CodegenError
from .vector import buffer_tags, fold


def _window(state, buf, row, col):
    """Address of element (row, col) of an L1 tile, and its row pitch in bytes."""
    pitch = buf.type.static_shape()[-1] * buf.es
    return fold(buf.addr + row * pitch + col * buf.es), pitch


def emit_load_l0a(state, op) -> None:
    src, dst = state.buf(op.operands[0]), state.buf(op.operands[1])
    k_off, m, k = (state.index(v) for v in op.indices)
    t = read_layouts(op)
    addr, pitch = _window(state, src, k_off, Imm(0)) if t else _window(state, src, Imm(0), k_off)
    state.b.load_l1_to_l0a(dst.addr, addr, m, k, pitch, src.dtype, int(t), tags=buffer_tags(src=src, dst=dst))


def emit_load_l0b(state, op) -> None:
    src, dst = state.buf(op.operands[0]), state.buf(op.operands[1])
    k_off, n_off, k, n = (state.index(v) for v in op.indices)
    t = read_layouts(op)
    addr, pitch = _window(state, src, n_off, k_off) if t else _window(state, src, k_off, n_off)
    state.b.load_l1_to_l0b(dst.addr, addr, k, n, pitch, src.dtype, int(t), tags=buffer_tags(src=src, dst=dst))


def emit_mmad(state, op) -> None:
    read_layouts(op)
    a, b, c = (state.buf(v) for v in op.operands[:3])
    init, m, k, n = (state.index(v) for v in op.indices)
    state.b.mmad(c.addr, a.addr, b.addr, m, k, n, a.dtype, init=init, tags=buffer_tags(a=a, b=b, dst=c))


def emit_fixpipe(state, op) -> None:
    src, dst = state.buf(op.operands[0]), state.buf(op.operands[1])
    if dst.scope != "gm":
        raise CodegenError(op, f"drains the accumulator to GM, got {dst.type}")
    read_layouts(op)
    offsets = [state.index(v) for v in op.offsets()]
    m, n = (state.index(v) for v in op.indices[len(offsets):])
    strides = gm_strides(state, dst)
    lin = Imm(0)
    for o, s in zip(offsets, strides):
        lin = fold(lin + o * s)
    addr = fold(dst.addr + lin * dst.es)
    state.b.fixpipe(addr, src.addr, m, n, fold(strides[-2] * dst.es), src_dtype=src.dtype, dst_dtype=dst.dtype,
                    relu=int(bool(op.attributes.get("relu"))), tags=buffer_tags(src=src))

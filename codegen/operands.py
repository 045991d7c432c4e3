"""The UB operands of a vector op as the emitters see them: buffers, element types, the op's region, the vector
pipe's barrier and a splatted scalar (shared by every vector emitter: vector_ops, bitwise, broadcast, reduce,
mask_ops, index_ops, permute)."""

from __future__ import annotations

from graph_passes.ir.types import MemRefType
from simulator.expr import Expr, Imm

from .dtypes import sim_dtype
from .errors import CodegenError
from .lowering import Buf
from .vector import SCRATCH, Operand, static_int

VECTOR_DTYPES = ("f16", "f32", "i16", "i32")  # element types the vector unit computes on (no bf16: CANN-INI)


def vector_dtype(op, t, allowed=VECTOR_DTYPES) -> str:
    """The simulator dtype of buffer type ``t``, which must be one of ``allowed``."""
    d = sim_dtype(t.dtype) if isinstance(t, MemRefType) else None
    if d not in allowed:
        why = ("the vector unit has no bf16 arithmetic (CANN-INI); hfusion-legalize-bf16 rewrites bf16 compute to "
               "f32 between casts" if d == "bf16" else f"the vector unit supports {', '.join(allowed)} here")
        raise CodegenError(op, f"element type {t.dtype if isinstance(t, MemRefType) else t}: {why}")
    return d


def operand_of(buf: Buf) -> Operand:
    """``buf`` as a region operand: its element strides, 0 along its dims of size 1 (a broadcast)."""
    shape = buf.type.static_shape()
    strides = [0 if n == 1 else s for n, s in zip(shape, buf.static_strides())]
    return Operand(buf.addr, buf.es, strides, buf.tag)


def ub_buf(state, op, v) -> Buf:
    """The UB buffer of value ``v`` (a vector operand)."""
    b = state.buf(v)
    if b.scope != "ub":
        raise CodegenError(op, f"vector operands live in UB, got {b.type}")
    return b


def op_region(state, op):
    """(extents, caps) of a vector op: its valid extents, and the static shape of its destination."""
    ext = [state.index(v) for v in op.indices]
    caps = list(state.buf(op.operand("dst")).type.static_shape())
    for d, e in enumerate(ext):
        s = static_int(e)
        if s is not None and s > caps[d]:
            raise CodegenError(op, f"extent {s} of dim {d} exceeds the buffer's {caps[d]}")
    return ext, caps


def barrier(state) -> None:
    state.b.pipe_barrier("V")


def splat(state, op, value: Expr, dtype: str) -> Operand:
    """A 256-B scratch block filled with ``value`` (vdup), read by every repeat."""
    addr = state.scratch(256, f"the scalar operand of {op.name}")
    barrier(state)
    state.b.vdup(dtype, addr, value, repeat=1, tags={"dst": SCRATCH})
    barrier(state)
    return Operand(Imm(addr), 0, None, SCRATCH)

"""Scalar-unit emitters: index arithmetic, constants, the block index, buffer addresses.

Every ``arith`` index op is one ``mov`` (the scalar unit pays one instruction each); constants are immediates.
``hivm.alloc`` is the byte offset ``hivm-plan-memory`` gave it; ``hivm.multi_buffer_select %k, b0 … bn-1`` is
``b0 + (k % n)·(b1 − b0)`` when the copies are evenly spaced, else a sum of ``(k % n == i)·b_i``.
"""

from __future__ import annotations

from graph_passes.intmath import ceil_div
from graph_passes.ir.types import IndexType, MemRefType, ScalarType
from simulator.expr import Expr, Imm, emax, emin

from .errors import CodegenError
from .lowering import Buf

LOCAL_SCOPES = ("ub", "l1", "l0a", "l0b", "l0c")

_ARITH = {
    "arith.addi": lambda a, b: a + b,
    "arith.subi": lambda a, b: a - b,
    "arith.muli": lambda a, b: a * b,
    "arith.floordivsi": lambda a, b: a // b,
    "arith.ceildivsi": lambda a, b: (a + b - 1) // b,  # index operands are non-negative sizes/offsets
    "arith.remsi": lambda a, b: a % b,
    "arith.minsi": emin,
    "arith.maxsi": emax,
}


def _const_fold(name, a: Imm, b: Imm) -> Imm:
    x, y = a.value, b.value
    fold = {"arith.addi": lambda: x + y, "arith.subi": lambda: x - y, "arith.muli": lambda: x * y,
            "arith.floordivsi": lambda: x // y, "arith.ceildivsi": lambda: ceil_div(x, y), "arith.remsi": lambda: x % y,
            "arith.minsi": lambda: min(x, y), "arith.maxsi": lambda: max(x, y)}
    return Imm(fold[name]())  # only the op's own fold: x + 0 must not evaluate x // 0


def emit_constant(state, op) -> None:
    t, v = op.result.type, op.attributes["value"]
    if not isinstance(t, (IndexType, ScalarType)) or isinstance(v, (list, tuple)):
        raise CodegenError(op, f"only scalar constants live in kernels, got {t}")
    state.values[op.result] = Imm(int(v) if isinstance(t, IndexType) else v)


def emit_index_binary(state, op) -> None:
    if not isinstance(op.result.type, IndexType):
        raise CodegenError(op, f"integer arithmetic on {op.result.type} is not supported (index only)")
    a, b = state.index(op.operand("lhs")), state.index(op.operand("rhs"))
    if isinstance(a, Imm) and isinstance(b, Imm):
        state.values[op.result] = _const_fold(op.name, a, b)
        return
    state.values[op.result] = state.b.mov(state.fresh(op.result.name_hint), _ARITH[op.name](a, b))


def emit_index_cast(state, op) -> None:
    state.values[op.result] = state.scalar(op.operand("input"))


def emit_block_idx(state, op) -> None:
    state.values[op.result] = state.b.mov(state.fresh(op.result.name_hint, "bid"), state.b.reg("block_idx"))


def emit_sub_block_idx(state, op) -> None:
    state.values[op.result] = state.b.mov(state.fresh(op.result.name_hint, "sb"), state.b.reg("subblock_idx"))


def emit_alloc(state, op) -> None:
    t = op.result.type
    offsets = op.attributes.get("offsets")
    if not isinstance(t, MemRefType) or t.scope not in LOCAL_SCOPES:
        raise CodegenError(op, f"allocates a local buffer ({', '.join(LOCAL_SCOPES)}), got {t}")
    if offsets is None:
        raise CodegenError(op, "the buffer has no 'offsets' (run hivm-plan-memory)")
    if len(offsets) != 1:
        raise CodegenError(op, f"a multi_buffer = {len(offsets)} alloc was not split (run hivm-enable-multi-buffer)")
    i = op.attributes.get("buffer")
    tag = f"buf{i}" if i is not None else (op.result.name_hint or f"alloc{len(state.values)}")
    state.values[op.result] = Buf(t.scope, Imm(int(offsets[0])), t, tag)


def emit_multi_buffer_select(state, op) -> None:
    k = state.index(op.operand("counter"))
    copies = [state.buf(v) for v in op.operands[1:]]
    n = len(copies)
    if not all(isinstance(c.addr, Imm) for c in copies):
        raise CodegenError(op, "selects among buffers whose addresses are not static")
    bases = [c.addr.value for c in copies]
    step = bases[1] - bases[0]
    if all(bases[i] == bases[0] + i * step for i in range(n)):
        addr: Expr = (k % n) * step if bases[0] == 0 else bases[0] + (k % n) * step
    else:
        addr = (k % n).eq(0) * bases[0]
        for i, base in enumerate(bases[1:], 1):
            addr = addr + (k % n).eq(i) * base
    reg = state.b.mov(state.fresh(op.result.name_hint, "buf"), addr)
    tags = sorted({c.tag for c in copies if c.tag is not None})
    scope = copies[0].scope
    state.values[op.result] = Buf(scope, reg, op.result.type,
                                  "|".join(tags) if len(tags) == len(copies) else None)

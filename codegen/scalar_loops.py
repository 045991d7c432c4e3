"""HIVM vector ops on i64 → scalar loops over UB elements (PIPE_S).

The A2 vector unit has no i64 arithmetic, compare, select or reduction (CANN-INI; i64 exists only in ``vconv``).
AscendNPU-IR lowers such ops to scalar loops over UB (``ShouldLowerToScalarLoops.cpp``: an op whose element type
is i64 ``shouldLowerToScalarLoops``; ``HIVMLowerToLoops`` rewrites it into ``scf.for`` over ``memref.load``/
``store``, which run on the scalar unit). Here the HIVM op keeps its form and reports ``pipe = PIPE_S``
(:func:`graph_passes.dialects.hivm.lowers_to_scalar_loops`), so ``hivm-inject-sync`` orders it against the V and MTE
pipes with S flags; codegen emits the loop: per element ``ld_ub`` (Ascend C ``GetValue``), integer data-register
arithmetic wrapped to 64 bits (torch's two's-complement int64), ``st_ub`` (``SetValue``).

Why scalar loops rather than i32 halves with a carry on the vector unit: the halves would cover add/sub only
(mul, max/min, compares and abs need 64-bit products or a signed compare of the high half followed by an unsigned
one of the low half, which the vector unit's signed-only integer compares cannot give directly), while the scalar
loop is exact for every op with one rule, as AscendNPU-IR does on A2.

    vbinary a, b, dst      dst[i] = a[i] op b[i]   add sub mul max min bitwise_and/or, xor = (a|b) - (a&b) (a scalar operand:
                           one dmov before the loop); no division: hfusion-decompose-divmod builds it from f32
                           estimates (vconv) and these ops
    vunary src, dst        neg, abs (wrapping: abs(INT64_MIN) = INT64_MIN, as torch), bitwise_not = -a - 1,
                           sign = (a > 0) - (a < 0)
    vcmp a, b, dst(i1)     packed bits as vcmp writes them (bit c of row r at byte r·pitch + c/8): per byte, up to 8
                           compares shifted into place, one u8 store
    vsel c, t, f, dst      bit c%8 of the mask byte (shr, and 1), then sel
    vfill dst              dmov value, st_ub per element
    vbrc src, dst          dst[i] = src[i with the broadcast dims at 0]
    varange dst            dmov start + step·(offset + i) (a scalar-register expression), st_ub
    vreduce src, dst       per dst element: acc = identity (0, 1, INT64_MIN, INT64_MAX), acc ⊕= src over the
                           reduced dims (sum, prod, max, min)
"""

from __future__ import annotations

from contextlib import nullcontext as _nothing

from graph_passes.dialects.hfusion import DIVMOD_FUNS
from graph_passes.ir.types import MemRefType
from simulator.expr import Expr, Imm

from .errors import CodegenError
from .lowering import Buf
from .vector import buffer_tags, column_bits, flat_extent, flatten_alike, fold, static_int

BINARY = {"add": "add", "sub": "sub", "mul": "mul", "max": "max", "min": "min", "bitwise_and": "and",
          "bitwise_or": "or"}
UNARY = ("neg", "abs", "bitwise_not", "sign")
REDUCE = {"sum": ("add", 0), "prod": ("mul", 1), "max": ("max", -(2**63)), "min": ("min", 2**63 - 1)}
SWAPPED = {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le"}
DT = "i64"


def _ub(state, op, v) -> Buf:
    b = state.buf(v)
    if b.scope != "ub":
        raise CodegenError(op, f"scalar-loop operands live in UB, got {b.type}")
    return b


def _i64(state, op, v) -> Buf:
    b = _ub(state, op, v)
    if b.dtype != DT:
        raise CodegenError(op, f"a scalar loop over i64 got a {b.dtype} operand ({b.type}); its operands are i64 "
                               f"(i1 masks for vcmp/vsel)")
    return b


def _addr(b: Buf, idx: list) -> Expr:
    """Byte address of element ``idx`` of ``b`` (dims of static size 1 read index 0: a broadcast operand)."""
    a = b.addr
    for i, n, s in zip(idx, b.type.static_shape(), b.static_strides()):
        if n != 1:
            a = a + i * (s * b.es)
    return fold(a)


def _bit(b: Buf, idx: list) -> tuple[Expr, Expr]:
    """(byte address, bit) of element ``idx`` of the packed i1 mask ``b``: bit c of row r at byte r·pitch + c/8."""
    *outer, last = idx
    return fold(_addr(b, list(outer) + [Imm(0)]) + last // 8), fold(last % 8)


def _nest(state, extents: list, body, idx=()) -> None:
    """``body(idx)`` for every index of ``extents`` (loops; a dim of static extent 1 is index 0)."""
    if len(idx) == len(extents):
        return body(list(idx))
    e = extents[len(idx)]
    if static_int(e) == 0:
        return
    if static_int(e) == 1:
        return _nest(state, extents, body, idx + (Imm(0),))
    with state.b.loop(state.fresh("e"), 0, e, 1) as i:
        _nest(state, extents, body, idx + (i,))


def _source(state, op, v, reg: str, flat: bool = False):
    """A per-element loader for operand ``v``: a buffer loads at its address (``flat``: indexed as 1-D over its
    elements), a scalar is one dmov up front."""
    if isinstance(v.type, MemRefType):
        b = _i64(state, op, v)
        b = b.flat() if flat else b
        return lambda idx: state.b.ld_ub(DT, reg, _addr(b, idx), tags=buffer_tags(addr=b))
    state.b.dmov(reg, state.scalar(v))
    return lambda idx: None


def _extents(state, op) -> list:
    return [state.index(v) for v in op.indices]


def _mask_view(state, op, mask: Buf) -> tuple[Buf, list, bool]:
    """(mask, extents, flat): a column mask (last dim 1) is one bit string over its rows, so the loop runs over the
    flattened elements of every operand (docs/codegen.md)."""
    ext = _extents(state, op)
    shape = mask.type.static_shape()
    if not column_bits(shape):
        return mask, ext, False
    others = [v.type.static_shape() for v in op.buffers if isinstance(v.type, MemRefType) and v.type.dtype != "i1"]
    if not flatten_alike(shape, others):
        raise CodegenError(op, f"a column mask {mask.type} with operands of shapes {others}: their rows do not "
                               f"flatten alike")
    return mask.flat(), [flat_extent(ext, shape)], True


def emit_vbinary(state, op) -> None:
    a_v, b_v, dst_v = op.operand("lhs"), op.operand("rhs"), op.operand("dst")
    fun = op.attributes["fun"]
    if fun not in BINARY and fun != "bitwise_xor":
        why = ("the scalar unit has no divide: hfusion-decompose-divmod rewrites divisions before fusion"
               if fun in ("div", *DIVMOD_FUNS) else "no scalar instruction for it")
        raise CodegenError(op, f"i64 '{fun}' in a scalar loop: {why}")
    dst = _i64(state, op, dst_v)
    la, lb = _source(state, op, a_v, "a"), _source(state, op, b_v, "b")

    def body(idx):
        la(idx)
        lb(idx)
        if fun == "bitwise_xor":  # a ^ b = (a | b) - (a & b), exact with the wrap
            state.b.sor(DT, "t", "a", "b")
            state.b.sand(DT, "r", "a", "b")
            state.b.ssub(DT, "r", "t", "r")
        else:
            getattr(state.b, "s" + BINARY[fun])(DT, "r", "a", "b")
        state.b.st_ub(DT, "r", _addr(dst, idx), tags=buffer_tags(addr=dst))

    _nest(state, _extents(state, op), body)


def emit_vunary(state, op) -> None:
    src_v, dst_v = op.operand("src"), op.operand("dst")
    fun = op.attributes["fun"]
    if fun not in UNARY:
        raise CodegenError(op, f"i64 '{fun}' in a scalar loop: no scalar instruction sequence for it "
                               f"({', '.join(UNARY)})")
    src, dst = _i64(state, op, src_v), _i64(state, op, dst_v)
    if fun in ("bitwise_not", "sign"):
        state.b.dmov(*(("one", 1) if fun == "bitwise_not" else ("zero", 0)))

    def body(idx):
        state.b.ld_ub(DT, "a", _addr(src, idx), tags=buffer_tags(addr=src))
        if fun == "bitwise_not":  # ~a = -a - 1 (two's complement, wrapping)
            state.b.sneg(DT, "t", "a")
            state.b.ssub(DT, "r", "t", "one")
        elif fun == "sign":  # (a > 0) - (a < 0)
            state.b.scmp_gt(DT, "t", "a", "zero")
            state.b.scmp_lt(DT, "r", "a", "zero")
            state.b.ssub(DT, "r", "t", "r")
        else:
            getattr(state.b, "s" + fun)(DT, "r", "a")
        state.b.st_ub(DT, "r", _addr(dst, idx), tags=buffer_tags(addr=dst))

    _nest(state, _extents(state, op), body)


def emit_vcmp(state, op) -> None:
    a_v, b_v, dst_v = op.operand("lhs"), op.operand("rhs"), op.operand("dst")
    pred = op.attributes["predicate"]
    if not isinstance(a_v.type, MemRefType):
        a_v, b_v, pred = b_v, a_v, SWAPPED.get(pred, pred)
    mask, ext, flat = _mask_view(state, op, _ub(state, op, dst_v))
    la, lb = _source(state, op, a_v, "a", flat), _source(state, op, b_v, "b", flat)
    *outer_ext, last = ext
    for k in range(1, 8):
        state.b.dmov(f"sh{k}", k)

    n = static_int(last)

    def row(outer):
        def byte(j):
            state.b.dmov("m", 0)
            for k in range(8):
                idx = list(outer) + [fold(j * 8 + k)]
                if n is not None and isinstance(idx[-1], Imm) and idx[-1].value >= n:
                    break
                guard = n is None or (n % 8 and not isinstance(idx[-1], Imm))  # the last byte may be partial
                with state.b.if_(idx[-1] < last) if guard else _nothing():
                    la(idx)
                    lb(idx)
                    getattr(state.b, "scmp_" + pred)(DT, "t", "a", "b")
                    if k:
                        state.b.sshl(DT, "t", "t", f"sh{k}")
                    state.b.sor(DT, "m", "m", "t")
            state.b.st_ub("u8", "m", _bit(mask, list(outer) + [fold(j * 8)])[0], tags=buffer_tags(addr=mask))

        if n is not None and n <= 8:
            return byte(Imm(0))
        with state.b.loop(state.fresh("j"), 0, (last + 7) // 8, 1) as j:
            byte(j)

    _nest(state, outer_ext, row)


def emit_vsel(state, op) -> None:
    c_v, t_v, f_v, dst_v = op.operand("cond"), op.operand("true_value"), op.operand("false_value"), op.operand("dst")
    cond, ext, flat = _mask_view(state, op, _ub(state, op, c_v))
    dst = _i64(state, op, dst_v).flat() if flat else _i64(state, op, dst_v)
    lt, lf = _source(state, op, t_v, "a", flat), _source(state, op, f_v, "b", flat)
    state.b.dmov("one", 1)

    def body(idx):
        byte_addr, bit = _bit(cond, idx)
        state.b.ld_ub("u8", "m", byte_addr, tags=buffer_tags(addr=cond))
        state.b.dmov("sh", bit)
        state.b.sshr(DT, "t", "m", "sh")
        state.b.sand(DT, "t", "t", "one")
        lt(idx)
        lf(idx)
        state.b.ssel(DT, "r", "t", "a", "b")
        state.b.st_ub(DT, "r", _addr(dst, idx), tags=buffer_tags(addr=dst))

    _nest(state, ext, body)


def emit_vfill(state, op) -> None:
    dst = _i64(state, op, op.operand("dst"))
    value = op.attributes["value"]
    if isinstance(value, float) and not value.is_integer():
        raise CodegenError(op, f"fills i64 with the non-integer {value}")
    state.b.dmov("r", int(value))
    _nest(state, _extents(state, op), lambda idx: state.b.st_ub(DT, "r", _addr(dst, idx), tags=buffer_tags(addr=dst)))


def emit_vbrc(state, op) -> None:
    src, dst = _i64(state, op, op.operand("src")), _i64(state, op, op.operand("dst"))
    dims = set(op.attributes["dims"])

    def body(idx):
        state.b.ld_ub(DT, "a", _addr(src, [Imm(0) if d in dims else i for d, i in enumerate(idx)]), tags=buffer_tags(addr=src))
        state.b.st_ub(DT, "a", _addr(dst, idx), tags=buffer_tags(addr=dst))

    _nest(state, _extents(state, op), body)


def emit_vreduce(state, op) -> None:
    src, dst = _i64(state, op, op.operand("src")), _i64(state, op, op.operand("dst"))
    kind = op.attributes["kind"]
    if kind not in REDUCE:
        raise CodegenError(op, f"i64 reduction '{kind}' in a scalar loop: kinds are {', '.join(REDUCE)}")
    comb, identity = REDUCE[kind]
    dims = set(op.attributes["dims"])
    ext = _extents(state, op)
    kept = [Imm(1) if d in dims else e for d, e in enumerate(ext)]
    reduced = [e for d, e in enumerate(ext) if d in dims]

    def out(idx):
        state.b.dmov("acc", identity)

        def acc(ridx):
            it = iter(ridx)
            full = [next(it) if d in dims else i for d, i in enumerate(idx)]
            state.b.ld_ub(DT, "a", _addr(src, full), tags=buffer_tags(addr=src))
            getattr(state.b, "s" + comb)(DT, "acc", "acc", "a")

        _nest(state, reduced, acc)
        state.b.st_ub(DT, "acc", _addr(dst, idx), tags=buffer_tags(addr=dst))

    _nest(state, kept, out)


def emit_varange(state, op) -> None:
    dst = _i64(state, op, op.operand("dst"))
    start, step = op.attributes["start"], op.attributes["step"]
    if any(isinstance(v, float) and not v.is_integer() for v in (start, step)):
        raise CodegenError(op, f"an i64 arange with start {start}, step {step}: not integers")
    offset = state.index(op.offset())
    (d,) = [k for k, n in enumerate(dst.type.static_shape()) if n != 1] or [0]

    def body(idx):
        state.b.dmov("r", fold(int(start) + int(step) * (offset + idx[d])))
        state.b.st_ub(DT, "r", _addr(dst, idx), tags=buffer_tags(addr=dst))

    _nest(state, [state.index(v) for v in op.extents()], body)


def emit_vcast(state, op) -> None:
    """An i64 ↔ i32 cast of a column (graph_passes.dialects.hivm.is_column_int_cast): per element ``ld_ub`` in the
    source type, ``st_ub`` in the destination type (wrapping to 32 bits, torch's int64 → int32 cast)."""
    src_v, dst_v = op.operand("src"), op.operand("dst")
    src, dst = _ub(state, op, src_v), _ub(state, op, dst_v)
    if sorted((src.dtype, dst.dtype)) != ["i32", "i64"]:
        raise CodegenError(op, f"a scalar-loop cast is i64 <-> i32, got {src.dtype} -> {dst.dtype}")

    def body(idx):
        state.b.ld_ub(src.dtype, "a", _addr(src, idx), tags=buffer_tags(addr=src))
        state.b.st_ub(dst.dtype, "a", _addr(dst, idx), tags=buffer_tags(addr=dst))

    _nest(state, _extents(state, op), body)


EMITTERS = {"hivm.vcast": emit_vcast, "hivm.vbinary": emit_vbinary, "hivm.vunary": emit_vunary, "hivm.vcmp": emit_vcmp,
            "hivm.vsel": emit_vsel, "hivm.vfill": emit_vfill, "hivm.vbrc": emit_vbrc, "hivm.vreduce": emit_vreduce,
            "hivm.varange": emit_varange}


def on_scalar_pipe(vector_emitter):
    """``vector_emitter`` for ops on PIPE_V; the scalar loop for ops that lower to one (i64)."""

    def emit(state, op) -> None:
        if op.pipe == "PIPE_S":
            if op.name not in EMITTERS:
                raise CodegenError(op, "runs on the scalar unit (i64) but has no scalar-loop emitter")
            return EMITTERS[op.name](state, op)
        return vector_emitter(state, op)

    return emit

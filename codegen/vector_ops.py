"""HIVM elementwise vector ops → PIPE_V instructions (see :mod:`codegen.vector` for how a region becomes repeats;
broadcasts, reductions and compare/select live in :mod:`codegen.broadcast`, :mod:`codegen.reduce`,
:mod:`codegen.mask_ops`; this overview covers all of them).

Per op (``e`` = valid extents, ``lanes`` = 256 B / widest element)::

    vbinary a, b, dst     vadd/vsub/vmul/vdiv/vmax/vmin over the region; a scalar operand uses the
                          vector-scalar form (vadds/vmuls/vmaxs/vmins; x - s = vadds(x, -s)), else vdup s over
                          dst and the vector-vector op (in place: a vdup'ed scratch block); a [R, 1] column
                          operand: vbrcb into scratch and the op with block stride 0, or (``scalar_column``) a V→S
                          flag, ld_ub per row and the vector-scalar form per row (_scalar_column_binary)
                          bitwise and/or/xor/not: vand/vor/vnot on i16 lanes over the bytes (codegen.bitwise)
    vunary src, dst       vexp/vln/vsqrt/vrsqrt/vrec/vabs/vrelu/vneg; sigmoid, tanh, silu, gelu_tanh as
                          in-place sequences on dst (COMPOSITE); floor/ceil/trunc as vconv f32->f32 with the round
                          mode;
                          erf, gelu_erf, sin, cos, sign (and vbinary pow): codegen.math_ops, f32 temporaries in scratch
    vcast src, dst        vconv with the round mode
    vfill dst             vdup
    copy src, dst         vcopy
    vbrc src, dst         row broadcast (src row 0 for every row): vcopy with a 0 repeat stride;
                          column broadcast (src[r] across row r): vbrcb puts src[r] in the first 32-B block of row
                          r, then vcopy with block stride 0 spreads that block over the row
    vreduce src, dst      last dim: vcadd/vcmax/vcmin, one repeat per row (rows > lanes: fold the column chunks
                          into a scratch row with vadd/vmax/vmin first); all of a 1-D buffer: vcadd levels;
                          a non-last dim: pairwise halves of the rows in scratch (log-depth elementwise combines)
    vcmp a, b, dst(i1)    vcmp_<pred>/vcmps_<pred>: packed bits, bit c of row r at byte r·pitch + c/8
    vsel c, a, b, dst     vsel over the same bit layout

Dependent instructions inside one op are separated by ``pipe_barrier V`` (the vector pipe may overlap its own
instructions; inject-sync only sees the HIVM op as a whole). bf16 arithmetic does not exist on the vector unit
(CANN-INI): ``hfusion-legalize-bf16`` rewrites bf16 compute to f32 between casts before fusion, so a bf16 vunary,
vbinary, vreduce or vcmp reaching codegen is a CodegenError naming that pass.
"""

from __future__ import annotations

from graph_passes.ir.types import MemRefType
from graph_passes.idioms.columns import column_scratch_bytes, scalar_column
from simulator.expr import Imm

from . import bitwise, math_ops
from .dtypes import np_dtype, sim_dtype
from .errors import CodegenError
from .operands import barrier, op_region, operand_of, splat, ub_buf, vector_dtype
from .vector import SCRATCH, Operand, buffer_tags, fold, region, rows, static_int, vector_instr

BINARY = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "max": "max", "min": "min"}
BITWISE = ("bitwise_and", "bitwise_or", "bitwise_xor")  # on i16 lanes over the bytes: codegen.bitwise
SCALAR_FORM = {"add": "adds", "mul": "muls", "max": "maxs", "min": "mins"}  # x op s; commutative: s op x too
UNARY = {"neg": "neg", "abs": "abs", "exp": "exp", "log": "ln", "sqrt": "sqrt", "rsqrt": "rsqrt",
         "reciprocal": "rec", "relu": "relu"}


# -- elementwise -----------------------------------------------------------------------------------------------------


def emit_vbinary(state, op) -> None:
    a_v, b_v, dst_v = op.operand("lhs"), op.operand("rhs"), op.operand("dst")
    dst = ub_buf(state, op, dst_v)
    fun = op.attributes["fun"]
    if fun in BITWISE:
        return bitwise.emit_binary(state, op, fun, a_v, b_v, dst, *op_region(state, op))
    if fun not in BINARY and fun != "pow":
        raise CodegenError(op, f"binary fun '{fun}' has no vector instruction")
    ins = [operand_of(ub_buf(state, op, v)) if isinstance(v.type, MemRefType) else state.scalar(v) for v in (a_v, b_v)]
    if not any(isinstance(x, Operand) for x in ins):
        raise CodegenError(op, "both operands are scalars")
    ext, caps = op_region(state, op)
    if fun == "pow":
        return math_ops.emit_pow(state, op, vector_dtype(op, dst.type), ins[0], ins[1], operand_of(dst), ext, caps,
                                 dst.type.static_shape())
    shape = dst.type.static_shape()
    columns = [i for i, (x, v) in enumerate(zip(ins, (a_v, b_v))) if isinstance(x, Operand) and len(shape) == 2
               and shape[1] > 1 and v.type.static_shape()[1] == 1]
    if columns:
        return _column_binary(state, op, fun, vector_dtype(op, dst.type), ins, columns, operand_of(dst), ext, caps)
    _binary(state, op, fun, vector_dtype(op, dst.type), ins[0], ins[1], operand_of(dst), ext, caps)


def _binary_instr(state, fun: str, dtype: str):
    return vector_instr(state, "v" + BINARY[fun], dtype, ("src0", "src1", "dst"))


def _binary(state, op, fun, dtype, a, b, dst: Operand, ext, caps) -> None:
    """dst = a fun b over the region; a or b may be a scalar expression."""
    if isinstance(a, Operand) and isinstance(b, Operand):
        return region(state, _binary_instr(state, fun, dtype), [a, b, dst], ext, caps)
    a_is_buf = isinstance(a, Operand)
    src, s = (a, b) if a_is_buf else (b, a)
    form = None
    if fun in SCALAR_FORM:
        form = SCALAR_FORM[fun]
    elif fun == "sub" and a_is_buf:
        form, s = "adds", fold(Imm(0) - s) if not isinstance(s, Imm) else Imm(-s.value)
    if form is not None:
        return region(state, vector_instr(state, "v" + form, dtype, ("src", "dst"), scalar=s), [src, dst], ext, caps)
    if src.addr != dst.addr:  # no aliasing: fill dst with the scalar, then dst = src fun dst element by element
        region(state, vector_instr(state, "vdup", dtype, ("dst",), scalar=s), [dst], ext, caps)
        barrier(state)
        ops = [src, dst, dst] if a_is_buf else [dst, src, dst]
        return region(state, _binary_instr(state, fun, dtype), ops, ext, caps)
    if fun == "sub":  # s - x in place: -x, then + s (both exact)
        _scalar_form(state, dtype, "muls", Imm(-1.0), [src, dst], ext, caps)
        barrier(state)
        return _scalar_form(state, dtype, "adds", s, [dst, dst], ext, caps)
    if state.scratch_free() >= 256:  # in place: the scalar needs a block of its own (the kernel's scratch)
        block = splat(state, op, s, dtype)
        ops = [src, block, dst] if a_is_buf else [block, src, dst]
        return region(state, _binary_instr(state, fun, dtype), ops, ext, caps)
    if fun == "div" and dtype in ("f16", "f32"):
        # Note: in place with no free UB, x / s = x * (1 / s) and s / x = s * rec(x): within an ulp or two of the
        # correctly rounded quotient (the only inexact lowering; docs/codegen.md).
        if a_is_buf:
            return _scalar_form(state, dtype, "muls", fold(Imm(1.0) / s) if not isinstance(s, Imm) else
                                Imm(1.0 / s.value), [src, dst], ext, caps)
        region(state, vector_instr(state, "vrec", dtype, ("src", "dst")), [src, dst], ext, caps)
        barrier(state)
        return _scalar_form(state, dtype, "muls", s, [dst, dst], ext, caps)
    raise CodegenError(op, f"'{fun}' with a scalar operand, in place, with no UB free for the scalar's block")


def _column_binary(state, op, fun, dtype, ins, columns, dst: Operand, ext, caps) -> None:
    """dst[r, c] = a[r, c] fun col[r] (or col[r] fun b[r, c]) with ``col`` a ``[R, 1]`` buffer (an inlined column
    broadcast; docs/schedule.md): vbrcb puts col[r] in block r of the scratch (8 rows per repeat), then the op
    reads that block for every 32 B of row r (block stride 0, one block per row): Ascend C's softmax idiom."""
    if len(columns) != 1 or fun not in BINARY:
        raise CodegenError(op, f"'{fun}' with {len(columns)} column operands has no vector idiom")
    i = columns[0]
    col = ins[i]
    e0, e1 = ext
    scale = op.attributes.get("column_scale")
    if op.attributes.get("scalar_column") and scalar_column(fun, i == 0, dtype, caps[0], caps[1]):
        ids = state.spare_event_id("V", "S"), state.spare_event_id("S", "V")
        if None not in ids:
            return _scalar_column_binary(state, fun, dtype, ins[1 - i], col, dst, ext, caps, ids, scale)
    S = state.scratch(column_scratch_bytes(caps[0]), f"the column operand of {op.name}", fence=True)
    state.b.vbrcb(dtype, S, col.addr, repeat=fold((e0 + 7) // 8), dst_blk=1, dst_rep=8,
                  tags=buffer_tags(src=col, dst=SCRATCH))
    barrier(state)
    if scale is not None:  # the column's blocks scaled in place: 8 rows' blocks a repeat
        state.b.vmuls(dtype, S, S, Imm(float(scale)), repeat=fold((e0 + 7) // 8), mask=256 // col.es,
                      tags=buffer_tags(src=SCRATCH, dst=SCRATCH))
        barrier(state)
    ops = list(ins)
    ops[i] = Operand(Imm(S), col.es, [32 // col.es, 0], SCRATCH)
    names = ("src0", "src1", "dst")
    emit = vector_instr(state, "v" + BINARY[fun], dtype, names, **{names[i] + "_blk": 0})  # the column: block stride 0

    if caps[0] == 1:  # one row: every repeat reads the same block (one instruction per 255 repeats)
        ops[i] = Operand(Imm(S), col.es, None, SCRATCH)
        return region(state, emit, ops + [dst], [Imm(1), e1], caps)
    rows(state, emit, ops + [dst], e0, e1, caps[0], caps[1], 0, 1)


def _scalar_column_binary(state, fun, dtype, x: Operand, col: Operand, dst: Operand, ext, caps, ids, scale) -> None:
    """dst[r, c] = x[r, c] fun col[r] with col[r] read as a scalar (``idioms.columns.scalar_column``)::

        set_flag V S e; wait_flag V S e     the scalar unit waits for the vector op that wrote col
        ld_ub d_r, col[r]                   per row (GetValue), times ``column_scale`` (smul: rounded to the dtype,
                                            as vmuls would), negated for a subtraction (x − s = x + (−s))
        set_flag S V e'; wait_flag S V e'   later vector writes to col wait for the loads
        vadds/vmuls/vmaxs/vmins dst[r, :], x[r, :], sreg=d_r     per row

    The flags are the op's own (ids no inject-sync flag of the kernel uses: ``spare_event_id``), set and waited
    back to back, so the op stays one step to inject-sync and to a pipelined loop's interleaving (codegen.stages)."""
    e0, e1 = ext
    n0 = static_int(e0)
    row_ids = range(caps[0] if n0 is None else min(n0, caps[0]))
    if not row_ids:
        return
    form = "adds" if fun == "sub" else SCALAR_FORM[fun]
    regs = [state.fresh(f"col{r}") for r in row_ids]

    def per_row(r, body):
        if n0 is None and r:
            with state.b.if_(e0 > r):
                body()
        else:
            body()

    def load(r):
        state.b.ld_ub(dtype, regs[r], fold(col.addr + r * col.strides[0] * col.es), tags=buffer_tags(addr=col))
        if scale is not None:
            state.b.smul(dtype, regs[r], regs[r], factor)
        if fun == "sub":
            state.b.sneg(dtype, regs[r], regs[r])

    if scale is not None:  # rounded to the dtype first, as vmuls rounds its scalar
        factor = state.fresh("scale")
        state.b.dmov(factor, Imm(float(np_dtype(dtype).type(scale))))
    state.b.set_flag("V", "S", ids[0])
    state.b.wait_flag("V", "S", ids[0])
    for r in row_ids:
        per_row(r, lambda r=r: load(r))
    state.b.set_flag("S", "V", ids[1])
    state.b.wait_flag("S", "V", ids[1])

    def row(r):
        ops = [Operand(fold(o.addr + r * o.strides[0] * o.es), o.es, o.strides, o.tag) for o in (x, dst)]
        region(state, vector_instr(state, "v" + form, dtype, ("src", "dst"), sreg=regs[r]), ops, [Imm(1), e1],
               [1, caps[1]])

    for r in row_ids:
        per_row(r, lambda r=r: row(r))


def _scalar_form(state, dtype, form, s, ops, ext, caps) -> None:
    region(state, vector_instr(state, "v" + form, dtype, ("src", "dst"), scalar=s), ops, ext, caps)


_SIGMOID = [("s", "muls", -1.0), ("u", "exp"), ("s", "adds", 1.0), ("u", "rec")]  # 1 / (1 + exp(-x))
_TANH = [("s", "muls", 2.0), ("u", "exp"), ("s", "adds", 1.0), ("u", "rec"), ("s", "muls", -2.0),
         ("s", "adds", 1.0)]  # 1 - 2 / (exp(2x) + 1)
COMPOSITE = {  # unary funs with no instruction: steps in place on dst ("x" = multiply by the source again)
    "sigmoid": _SIGMOID,
    "tanh": _TANH,
    "silu": _SIGMOID + [("x", "mul")],  # x * sigmoid(x)
    "gelu_tanh": [("x0", "mul"), ("s", "muls", 0.044715), ("s", "adds", 1.0), ("x", "mul"),
                  ("s", "muls", 0.7978845608028654)] + _TANH + [("s", "adds", 1.0), ("s", "muls", 0.5),
                                                                ("x", "mul")],  # (1 + tanh)·½ before ·x: no
    # overflow where eager's ½·x·(1 + tanh) has none (x = 3e38)
    "floor": [("r", "floor")],
    "ceil": [("r", "ceil")],
    "trunc": [("r", "trunc")],
}


def emit_vunary(state, op) -> None:
    src_v, dst_v = op.operand("src"), op.operand("dst")
    dst, src = ub_buf(state, op, dst_v), ub_buf(state, op, src_v)
    fun = op.attributes["fun"]
    ext, caps = op_region(state, op)
    if fun == "bitwise_not":
        return bitwise.emit_not(state, op, src, dst, ext, caps)
    if fun in math_ops.SEQ_UNARY:
        return math_ops.emit_unary_seq(state, op, fun, vector_dtype(op, dst.type), operand_of(src), operand_of(dst),
                                       ext, caps, dst.type.static_shape())
    if fun not in UNARY and fun not in COMPOSITE:
        raise CodegenError(op, f"unary fun '{fun}' has no vector instruction sequence")
    in_place = src_v is dst_v or src.addr == dst.addr
    _unary(state, op, fun, vector_dtype(op, dst.type), operand_of(src), operand_of(dst), ext, caps, in_place)


def _unary(state, op, fun, dtype, src: Operand, dst: Operand, ext, caps, in_place: bool) -> None:
    ops = [src, dst]
    if fun in UNARY:
        return region(state, vector_instr(state, "v" + UNARY[fun], dtype, ("src", "dst")), ops, ext, caps)
    steps = COMPOSITE[fun]
    if fun in ("floor", "ceil", "trunc") and dtype != "f32":
        raise CodegenError(op, f"unary fun '{fun}' on {dtype}: the rounding vconv is f32 -> f32 only (CANN-INI); "
                               f"hfusion-legalize-bf16 widens f16/bf16 {fun} to f32")
    if dtype not in ("f16", "f32"):
        raise CodegenError(op, f"unary fun '{fun}' on {dtype} has no vector instruction sequence")
    if any(st[0].startswith("x") for st in steps) and in_place:  # NOT_IN_PLACE_FUNS keeps the passes from it
        raise CodegenError(op, f"'{fun}' reads its source after writing dst, but dst is the source (in place)")
    d = [dst, dst]
    for i, st in enumerate(steps):
        cur = ops if i == 0 else d
        if i:
            barrier(state)
        if st[0] == "s":
            _scalar_form(state, dtype, st[1], Imm(st[2]), cur, ext, caps)
        elif st[0] == "u":
            region(state, vector_instr(state, "v" + st[1], dtype, ("src", "dst")), cur, ext, caps)
        elif st[0] == "r":
            region(state, vector_instr(state, "vconv", (dtype, dtype), ("src", "dst"), round_mode=st[1]), cur, ext,
                   caps)
        else:  # "x": dst = dst * src;  "x0": dst = src * src
            first = src if st[0] == "x0" else dst
            region(state, vector_instr(state, "v" + st[1], dtype, ("src0", "src1", "dst")), [first, src, dst], ext,
                   caps)


def emit_vcast(state, op) -> None:
    src_v, dst_v = op.operand("src"), op.operand("dst")
    src, dst = ub_buf(state, op, src_v), ub_buf(state, op, dst_v)
    sd, dd = sim_dtype(src.dtype), sim_dtype(dst.dtype)
    mode = op.attributes.get("round_mode", "rint")
    if sd is None or dd is None:
        raise CodegenError(op, f"cast {src.dtype} -> {dst.dtype}: no vector type for it")
    ext, caps = op_region(state, op)
    if sd == dd:
        copy = vector_instr(state, "vcopy", sd, ("src", "dst"))
        return region(state, copy, [operand_of(src), operand_of(dst)], ext, caps)
    from simulator.isa.vector import CASTS, OVERFLOW_MODES

    if (sd, dd) not in CASTS or mode not in CASTS[(sd, dd)]:
        raise CodegenError(op, f"cast {src.dtype} -> {dst.dtype} with round mode '{mode}' is not a vconv "
                               f"(CANN-INI vconv list; hfusion-legalize-casts composes the exact ones)")
    # an integer narrowing keeps the low bits (torch's cast), the CTRL setting vconv_s642s32 offers
    kw = {"overflow": "wrap"} if (sd, dd) in OVERFLOW_MODES else {}
    emit = vector_instr(state, "vconv", (sd, dd), ("src", "dst"), round_mode=mode, **kw)
    region(state, emit, [operand_of(src), operand_of(dst)], ext, caps)


def emit_vfill(state, op) -> None:
    dst = ub_buf(state, op, op.operand("dst"))
    dtype = vector_dtype(op, dst.type, ("f16", "f32", "i16", "i32", "bf16"))
    value = op.attributes["value"]
    if dtype.startswith("i") and isinstance(value, float):
        value = int(max(min(value, 2**31 - 1), -(2**31)))
    ext, caps = op_region(state, op)
    region(state, vector_instr(state, "vdup", dtype, ("dst",), scalar=Imm(value)), [operand_of(dst)], ext, caps)


def emit_copy(state, op) -> None:
    src, dst = ub_buf(state, op, op.operand("src")), ub_buf(state, op, op.operand("dst"))
    dtype = vector_dtype(op, dst.type, ("f16", "f32", "i16", "i32", "bf16"))
    ext, caps = op_region(state, op)
    region(state, vector_instr(state, "vcopy", dtype, ("src", "dst")), [operand_of(src), operand_of(dst)], ext, caps)

"""HIVM elementwise vector ops → PIPE_V instructions (see :mod:`codegen.vector` for how a region becomes repeats;
broadcasts, reductions and compare/select live in :mod:`codegen.broadcast`, :mod:`codegen.reduce`,
:mod:`codegen.mask_ops`; this overview covers all of them).

Per op (``e`` = valid extents, ``lanes`` = 256 B / widest element)::

    vbinary a, b, dst     vadd/vsub/vmul/vdiv/vmax/vmin/vand/vor over the region; a scalar operand uses the
                          vector-scalar form (vadds/vmuls/vmaxs/vmins; x - s = vadds(x, -s)), else vdup s over
                          dst and the vector-vector op (in place: a vdup'ed scratch block)
    vunary src, dst       vexp/vln/vsqrt/vrsqrt/vrec/vabs/vrelu/vneg/vnot; sigmoid, tanh, silu, gelu_tanh as
                          in-place sequences on dst (COMPOSITE); floor/ceil as vconv f32->f32 with the round mode
    vcast src, dst        vconv with the round mode
    vfill dst             vdup
    copy src, dst         vcopy
    vbrc src, dst         row broadcast (src row 0 for every row): vcopy with a 0 repeat stride;
                          column broadcast (src[r] across row r): vbrcb puts src[r] in the first 32-B block of row
                          r, then vcopy with block stride 0 spreads that block over the row
    vreduce src, dst      last dim: vcadd/vcmax/vcmin, one repeat per row (rows > lanes: fold the column chunks
                          into a scratch row with vadd/vmax/vmin first); all of a 1-D buffer: vcadd levels;
                          a non-last dim: dst = row 0, then dst ⊕= row r for each r (elementwise accumulation)
    vcmp a, b, dst(i1)    vcmp_<pred>/vcmps_<pred>: packed bits, bit c of row r at byte r·pitch + c/8
    vsel c, a, b, dst     vsel over the same bit layout

Dependent instructions inside one op are separated by ``pipe_barrier V`` (the vector pipe may overlap its own
instructions; inject-sync only sees the HIVM op as a whole). bf16 arithmetic does not exist on the vector unit
(CANN-INI): vunary/vbinary on bf16 go through f32 copies in UB scratch above the memory plan (``_via_f32``); when
the plan left no room that is a CodegenError.
"""

from __future__ import annotations

from graph_passes.ir.types import MemRefType
from simulator.expr import Expr, Imm, emin

from .dtypes import sim_dtype
from .errors import CodegenError
from .lowering import Buf
from .vector import Operand, _fold, _static, counted, flat, region

BINARY = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "max": "max", "min": "min",
          "bitwise_and": "and", "bitwise_or": "or"}
SCALAR_FORM = {"add": "adds", "mul": "muls", "max": "maxs", "min": "mins"}  # x op s; commutative: s op x too
UNARY = {"neg": "neg", "abs": "abs", "exp": "exp", "log": "ln", "sqrt": "sqrt", "rsqrt": "rsqrt",
         "reciprocal": "rec", "relu": "relu", "bitwise_not": "not"}
VECTOR_DTYPES = ("f16", "f32", "i16", "i32")  # element types the vector unit computes on (no bf16: CANN-INI)


# -- operands --------------------------------------------------------------------------------------------------------


def _dtype(op, t, allowed=VECTOR_DTYPES) -> str:
    d = sim_dtype(t.dtype) if isinstance(t, MemRefType) else None
    if d not in allowed:
        why = ("bf16 arithmetic needs an f32 scratch copy that hivm-plan-memory did not plan"
               if d == "bf16" else f"the vector unit supports {', '.join(allowed)} here")
        raise CodegenError(op, f"element type {t.dtype if isinstance(t, MemRefType) else t}: {why}")
    return d


def _operand(buf: Buf) -> Operand:
    shape = buf.type.static_shape()
    strides = [0 if n == 1 else s for n, s in zip(shape, buf.static_strides())]
    return Operand(buf.addr, buf.es, strides)


def _ub(L, op, v) -> Buf:
    b = L.buf(v)
    if b.scope != "ub":
        raise CodegenError(op, f"vector operands live in UB, got {b.type}")
    return b


def _region(L, op):
    ext = [L.index(v) for v in op.indices]
    caps = list(L.buf(op.buffers[-1]).type.static_shape())
    for d, e in enumerate(ext):
        s = _static(e)
        if s is not None and s > caps[d]:
            raise CodegenError(op, f"extent {s} of dim {d} exceeds the buffer's {caps[d]}")
    return ext, caps


def barrier(L) -> None:
    L.b.pipe_barrier("V")


def splat(L, op, value: Expr, dtype: str) -> Operand:
    """A 256-B scratch block filled with ``value`` (vdup), read by every repeat."""
    addr = L.scratch(256, f"the scalar operand of {op.name}")
    barrier(L)
    L.b.vdup(dtype, addr, value, repeat=1)
    barrier(L)
    return Operand(Imm(addr), 0, None)


def _vec(L, mnem: str, dtype: str, names: list[str]):
    """An Emit callback for a vector instruction whose operands are ``names`` (in Operand order)."""

    def emit(addrs, repeat, mask, reps):
        kw = {"repeat": _fold(repeat), "mask": _fold(mask)}
        for n, a, r in zip(names, addrs, reps):
            kw[n] = _fold(a)
            kw[n + "_rep"] = r
        getattr(L.b, mnem)(dtype, **kw)

    return emit


# -- elementwise -----------------------------------------------------------------------------------------------------


def emit_vbinary(L, op) -> None:
    a_v, b_v, dst_v = op.buffers
    dst = _ub(L, op, dst_v)
    fun = op.attributes["fun"]
    if fun not in BINARY:
        raise CodegenError(op, f"binary fun '{fun}' has no vector instruction")
    ins = [_operand(_ub(L, op, v)) if isinstance(v.type, MemRefType) else L.scalar(v) for v in (a_v, b_v)]
    if not any(isinstance(x, Operand) for x in ins):
        raise CodegenError(op, "both operands are scalars")
    ext, caps = _region(L, op)
    if dst.dtype == "bf16":
        return _via_f32(L, op, [a_v, b_v], dst, ext, caps,
                        lambda xs, out, e, c: _binary(L, op, fun, "f32", xs[0], xs[1], out, e, c))
    _binary(L, op, fun, _dtype(op, dst.type), ins[0], ins[1], _operand(dst), ext, caps)


def _binary(L, op, fun, dtype, a, b, dst: Operand, ext, caps) -> None:
    """dst = a fun b over the region; a or b may be a scalar expression."""
    if isinstance(a, Operand) and isinstance(b, Operand):
        return region(L, _vec(L, "v" + BINARY[fun], dtype, ["src0", "src1", "dst"]), [a, b, dst], ext, caps)
    a_is_buf = isinstance(a, Operand)
    src, s = (a, b) if a_is_buf else (b, a)
    form = None
    if fun in SCALAR_FORM:
        form = SCALAR_FORM[fun]
    elif fun == "sub" and a_is_buf:
        form, s = "adds", _fold(Imm(0) - s) if not isinstance(s, Imm) else Imm(-s.value)
    if form is not None:

        def emit(addrs, repeat, mask, reps):
            getattr(L.b, "v" + form)(dtype, _fold(addrs[1]), _fold(addrs[0]), s, repeat=_fold(repeat), mask=_fold(mask),
                                     src_rep=reps[0], dst_rep=reps[1])

        return region(L, emit, [src, dst], ext, caps)
    if src.addr != dst.addr:  # no aliasing: fill dst with the scalar, then dst = src fun dst element by element
        def dup(addrs, repeat, mask, reps):
            L.b.vdup(dtype, _fold(addrs[0]), s, repeat=_fold(repeat), mask=_fold(mask), dst_rep=reps[0])

        region(L, dup, [dst], ext, caps)
        barrier(L)
        ops = [src, dst, dst] if a_is_buf else [dst, src, dst]
        return region(L, _vec(L, "v" + BINARY[fun], dtype, ["src0", "src1", "dst"]), ops, ext, caps)
    if fun == "sub":  # s - x in place: -x, then + s (both exact)
        _scalar_form(L, dtype, "muls", Imm(-1.0), [src, dst], ext, caps)
        barrier(L)
        return _scalar_form(L, dtype, "adds", s, [dst, dst], ext, caps)
    if L.ub_bytes - L.scratch_base >= 256:  # in place: the scalar needs a block of its own
        block = splat(L, op, s, dtype)
        ops = [src, block, dst] if a_is_buf else [block, src, dst]
        return region(L, _vec(L, "v" + BINARY[fun], dtype, ["src0", "src1", "dst"]), ops, ext, caps)
    if fun == "div" and dtype in ("f16", "f32"):
        # Note: in place with no free UB, x / s = x * (1 / s) and s / x = s * rec(x): within an ulp or two of the
        # correctly rounded quotient (the only inexact lowering; docs/codegen.md).
        if a_is_buf:
            return _scalar_form(L, dtype, "muls", _fold(Imm(1.0) / s) if not isinstance(s, Imm) else
                                Imm(1.0 / s.value), [src, dst], ext, caps)
        region(L, _vec(L, "vrec", dtype, ["src", "dst"]), [src, dst], ext, caps)
        barrier(L)
        return _scalar_form(L, dtype, "muls", s, [dst, dst], ext, caps)
    raise CodegenError(op, f"'{fun}' with a scalar operand, in place, with no UB free for the scalar's block")


def _scalar_form(L, dtype, form, s, ops, ext, caps) -> None:
    def emit(addrs, repeat, mask, reps):
        getattr(L.b, "v" + form)(dtype, _fold(addrs[1]), _fold(addrs[0]), s, repeat=_fold(repeat), mask=_fold(mask),
                                 src_rep=reps[0], dst_rep=reps[1])

    region(L, emit, ops, ext, caps)


def _via_f32(L, op, inputs, dst: Buf, ext, caps, body) -> None:
    """bf16 elementwise math through f32 (the vector unit has no bf16 arithmetic): per chunk of K elements of each
    row, vconv the bf16 inputs into f32 scratch, run ``body(inputs, out, [n], [K])`` in f32 into the first scratch
    (or a fresh one), vconv the result back into dst (rint)."""
    shape = dst.type.static_shape()
    dims = [d for d, e in enumerate(ext) if _static(e) != 1]
    if len(dims) > 2 or (dims and dims[-1] != len(shape) - 1):
        raise CodegenError(op, "bf16 math over this region shape is not supported")
    bufs = [L.buf(v) if isinstance(v.type, MemRefType) else None for v in inputs]
    for b in bufs:
        if b is not None and b.dtype != "bf16":
            raise CodegenError(op, f"mixes bf16 with {b.dtype}")
    n_scratch = max(1, sum(b is not None for b in bufs))
    cap = shape[-1]
    free = L.ub_bytes - L.scratch_base
    K = min(-(-cap // 64) * 64, (free // (4 * n_scratch)) // 64 * 64)
    if K < 64:
        raise CodegenError(op, f"bf16 arithmetic needs f32 scratch ({n_scratch} x {4 * min(cap, 64)} B at least) that "
                               f"hivm-plan-memory did not plan; {free} B are free above the plan")
    S = [L.scratch(n_scratch * K * 4, "bf16 math through f32") + i * K * 4 for i in range(n_scratch)]
    L.scratch_base += n_scratch * K * 4
    n = ext[dims[-1]] if dims else Imm(1)

    def row(offset_elems):
        def chunk(j):
            nj = _fold(emin(K, n - j * K)) if cap > K else n
            base = _fold(offset_elems + j * K)
            barrier(L)
            xs, k = [], 0
            for v, b in zip(inputs, bufs):
                if b is None:
                    xs.append(L.scalar(v))
                    continue
                _cast(L, "bf16", "f32", Operand(_fold(b.addr + base * 2), 2, [1]), Operand(Imm(S[k]), 4, [1]), nj, K)
                xs.append(Operand(Imm(S[k]), 4, [1]))
                k += 1
            barrier(L)
            body(xs, Operand(Imm(S[0]), 4, [1]), [nj], [K])
            barrier(L)
            _cast(L, "f32", "bf16", Operand(Imm(S[0]), 4, [1]), Operand(_fold(dst.addr + base * 2), 2, [1]), nj, K)

        if cap > K:
            counted(L, "j", (n + K - 1) // K, chunk, max_unroll=0)
        else:
            chunk(Imm(0))

    try:
        if len(dims) == 2:
            pitch = dst.static_strides()[dims[0]]
            var = L.fresh("r")
            with L.b.loop(var, 0, ext[dims[0]], 1) as r:
                row(r * pitch)
        else:
            row(Imm(0))
        barrier(L)
    finally:
        L.scratch_base -= n_scratch * K * 4


def _cast(L, sd, dd, src: Operand, dst: Operand, n, cap) -> None:
    def emit(addrs, repeat, mask, reps):
        L.b.vconv(sd, dd, _fold(addrs[1]), _fold(addrs[0]), repeat=_fold(repeat), mask=_fold(mask), src_rep=reps[0],
                  dst_rep=reps[1])

    flat(L, emit, [src, dst], n, cap)


_SIGMOID = [("s", "muls", -1.0), ("u", "exp"), ("s", "adds", 1.0), ("u", "rec")]  # 1 / (1 + exp(-x))
_TANH = [("s", "muls", 2.0), ("u", "exp"), ("s", "adds", 1.0), ("u", "rec"), ("s", "muls", -2.0),
         ("s", "adds", 1.0)]  # 1 - 2 / (exp(2x) + 1)
COMPOSITE = {  # unary funs with no instruction: steps in place on dst ("x" = multiply by the source again)
    "sigmoid": _SIGMOID,
    "tanh": _TANH,
    "silu": _SIGMOID + [("x", "mul")],  # x * sigmoid(x)
    "gelu_tanh": [("x0", "mul"), ("s", "muls", 0.044715), ("s", "adds", 1.0), ("x", "mul"),
                  ("s", "muls", 0.7978845608028654)] + _TANH + [("s", "adds", 1.0), ("x", "mul"),
                                                                ("s", "muls", 0.5)],
    "floor": [("r", "floor")],
    "ceil": [("r", "ceil")],
}


def emit_vunary(L, op) -> None:
    src_v, dst_v = op.buffers
    dst, src = _ub(L, op, dst_v), _ub(L, op, src_v)
    fun = op.attributes["fun"]
    ext, caps = _region(L, op)
    if fun not in UNARY and fun not in COMPOSITE:
        raise CodegenError(op, f"unary fun '{fun}' has no vector instruction sequence")
    in_place = src_v is dst_v or src.addr == dst.addr
    if dst.dtype == "bf16":
        if in_place and any(st[0].startswith("x") for st in COMPOSITE.get(fun, [])):
            raise CodegenError(op, f"'{fun}' in place on bf16")
        return _via_f32(L, op, [src_v], dst, ext, caps,
                        lambda xs, out, e, c: _unary(L, op, fun, "f32", xs[0], out, e, c, False))
    _unary(L, op, fun, _dtype(op, dst.type), _operand(src), _operand(dst), ext, caps, in_place)


def _unary(L, op, fun, dtype, src: Operand, dst: Operand, ext, caps, in_place: bool) -> None:
    ops = [src, dst]
    if fun in UNARY:
        return region(L, _vec(L, "v" + UNARY[fun], dtype, ["src", "dst"]), ops, ext, caps)
    steps = COMPOSITE[fun]
    if dtype not in ("f16", "f32") or (fun in ("floor", "ceil") and dtype != "f32"):
        raise CodegenError(op, f"unary fun '{fun}' on {dtype} has no vector instruction sequence")
    if any(st[0].startswith("x") for st in steps) and in_place:
        raise CodegenError(op, f"'{fun}' reads its source after writing dst, but dst is the source (in place)")
    d = [dst, dst]
    for i, st in enumerate(steps):
        cur = ops if i == 0 else d
        if i:
            barrier(L)
        if st[0] == "s":
            form, value = st[1], Imm(st[2])

            def emit(addrs, repeat, mask, reps, form=form, value=value):
                getattr(L.b, "v" + form)(dtype, _fold(addrs[1]), _fold(addrs[0]), value, repeat=_fold(repeat),
                                         mask=_fold(mask), src_rep=reps[0], dst_rep=reps[1])

            region(L, emit, cur, ext, caps)
        elif st[0] == "u":
            region(L, _vec(L, "v" + st[1], dtype, ["src", "dst"]), cur, ext, caps)
        elif st[0] == "r":

            def emit(addrs, repeat, mask, reps, mode=st[1]):
                L.b.vconv(dtype, dtype, _fold(addrs[1]), _fold(addrs[0]), round_mode=mode, repeat=_fold(repeat),
                          mask=_fold(mask), src_rep=reps[0], dst_rep=reps[1])

            region(L, emit, cur, ext, caps)
        else:  # "x": dst = dst * src;  "x0": dst = src * src
            first = src if st[0] == "x0" else dst
            region(L, _vec(L, "v" + st[1], dtype, ["src0", "src1", "dst"]), [first, src, dst], ext, caps)


def emit_vcast(L, op) -> None:
    src_v, dst_v = op.buffers
    src, dst = _ub(L, op, src_v), _ub(L, op, dst_v)
    sd, dd = sim_dtype(src.dtype), sim_dtype(dst.dtype)
    mode = op.attributes.get("round_mode", "rint")
    if sd is None or dd is None:
        raise CodegenError(op, f"cast {src.dtype} -> {dst.dtype}: no vector type for it")
    ext, caps = _region(L, op)
    if sd == dd:
        return region(L, _vec(L, "vcopy", sd, ["src", "dst"]), [_operand(src), _operand(dst)], ext, caps)
    from simulator.isa.vector import _CASTS

    if (sd, dd) not in _CASTS or mode not in _CASTS[(sd, dd)]:
        raise CodegenError(op, f"cast {src.dtype} -> {dst.dtype} with round mode '{mode}' is not a vconv "
                               f"(CANN-INI vconv list)")

    def emit(addrs, repeat, mask, reps):
        L.b.vconv(sd, dd, _fold(addrs[1]), _fold(addrs[0]), round_mode=mode, repeat=_fold(repeat), mask=_fold(mask),
                  src_rep=reps[0], dst_rep=reps[1])

    region(L, emit, [_operand(src), _operand(dst)], ext, caps)


def emit_vfill(L, op) -> None:
    dst = _ub(L, op, op.buffers[0])
    dtype = _dtype(op, dst.type, ("f16", "f32", "i16", "i32", "bf16"))
    value = op.attributes["value"]
    if dtype.startswith("i") and isinstance(value, float):
        value = int(max(min(value, 2**31 - 1), -(2**31)))
    ext, caps = _region(L, op)

    def emit(addrs, repeat, mask, reps):
        L.b.vdup(dtype, _fold(addrs[0]), Imm(value), repeat=_fold(repeat), mask=_fold(mask), dst_rep=reps[0])

    region(L, emit, [_operand(dst)], ext, caps)


def emit_copy(L, op) -> None:
    src, dst = _ub(L, op, op.buffers[0]), _ub(L, op, op.buffers[1])
    dtype = _dtype(op, dst.type, ("f16", "f32", "i16", "i32", "bf16"))
    ext, caps = _region(L, op)
    region(L, _vec(L, "vcopy", dtype, ["src", "dst"]), [_operand(src), _operand(dst)], ext, caps)


def emit_vtranspose(L, op) -> None:
    raise CodegenError(op, "vtranspose has no emitter yet (the simulator's vtranspose moves one 16x16 2-byte block; "
                           "a general transpose needs a blocking the schedule does not provide)")

"""HIVM vector ops → PIPE_V instructions (see :mod:`codegen.vector` for how a region becomes repeats).

Per op (``e`` = valid extents, ``lanes`` = 256 B / widest element)::

    vbinary a, b, dst     vadd/vsub/vmul/vdiv/vmax/vmin/vand/vor over the region; a scalar operand uses the
                          vector-scalar form (vadds/vmuls/vmaxs/vmins; x - s = vadds(x, -s)), else a vdup'ed
                          256-B block read by every repeat
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
from .vector import MAX_REPEAT, Operand, _fold, _static, counted, flat, region

BINARY = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "max": "max", "min": "min",
          "bitwise_and": "and", "bitwise_or": "or"}
SCALAR_FORM = {"add": "adds", "mul": "muls", "max": "maxs", "min": "mins"}  # x op s; commutative: s op x too
UNARY = {"neg": "neg", "abs": "abs", "exp": "exp", "log": "ln", "sqrt": "sqrt", "rsqrt": "rsqrt",
         "reciprocal": "rec", "relu": "relu", "bitwise_not": "not"}
REDUCE = {"sum": ("sum", "add"), "max": ("rmax", "max"), "min": ("rmin", "min")}  # (vcadd/vcmax/vcmin, combine)
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


# -- broadcast -------------------------------------------------------------------------------------------------------


def emit_vbrc(L, op) -> None:
    src, dst = _ub(L, op, op.buffers[0]), _ub(L, op, op.buffers[1])
    dims = sorted(op.attributes["dims"])
    rank = dst.type.rank
    dtype = _dtype(op, dst.type, ("f16", "f32", "i16", "i32", "bf16"))
    ext, caps = _region(L, op)
    if rank - 1 not in dims:  # row broadcast: the source's rows are re-read (stride 0 along dims)
        return region(L, _vec(L, "vcopy", dtype, ["src", "dst"]), [_operand(src), _operand(dst)], ext, caps)
    if rank == 1 or (rank == 2 and dims == [1]):
        return _column_broadcast(L, op, src, dst, dtype, ext)
    raise CodegenError(op, f"broadcast along dims {dims} of a rank-{rank} buffer has no vector idiom here")


def _column_broadcast(L, op, src: Buf, dst: Buf, dtype: str, ext) -> None:
    """dst[r, c] = src[r]: vbrcb puts src[r] in row r's first block, vcopy (block stride 0) spreads it::

        rows [0, T0) (T0 = rows rounded down to 8):  vbrcb 8 rows per repeat into their own first blocks; spread
        rows [T0, e0) when the tile's rows are not a multiple of 8 (vbrcb would write past the buffer): vbrcb
            their values (from the aligned row Ts) as contiguous blocks into rows [B, T0) of dst, spread each
            block over its row, then the main part overwrites rows [B, T0)
    """
    shape = dst.type.static_shape()
    rows_cap, pitch = (1, shape[0]) if len(shape) == 1 else shape
    e0, e1 = (Imm(1), ext[0]) if len(shape) == 1 else (ext[0], ext[1])
    es = dst.es
    pb = pitch * es  # row pitch in bytes
    lanes = 256 // es
    if pb % 32:
        raise CodegenError(op, f"rows of {pb} B are not 32-B aligned")
    T0 = rows_cap - rows_cap % 8
    if T0 == 0:
        return _small_column_broadcast(L, op, src, dst, dtype, e0, e1, rows_cap, pitch, pb, lanes)
    if T0 != rows_cap:
        align = max(8, 32 // es)  # vbrcb's source must start 32-B aligned
        Ts = T0 - T0 % align
        blocks = 256 * -(-(rows_cap - Ts) // 8)
        B = T0 - -(-blocks // pb)
        if B < 0:
            raise CodegenError(op, f"column broadcast into {rows_cap} rows of {pb} B: no room to stage the last "
                                   f"{rows_cap - T0} rows' blocks")
        with L.b.if_(e0 > T0):
            L.b.vbrcb(dtype, _fold(dst.addr + B * pb), _fold(src.addr + Ts * es), repeat=_fold((e0 - Ts + 7) // 8), dst_blk=1,
                      dst_rep=8)
            barrier(L)
            _spread(L, dtype, _fold(dst.addr + T0 * pb), _fold(dst.addr + (B * pb + 32 * (T0 - Ts))), 1, e0 - T0, e1,
                    rows_cap - T0, pitch, lanes, dst_rep=pb // 32)
            barrier(L)
    groups = T0 // 8
    step = 252  # vbrcb repeats per instruction: 8 source elements each, keeps the source 32-B aligned
    n_rep = (e0 + 7) // 8 if T0 == rows_cap else emin((e0 + 7) // 8, groups)

    def brcb(g):
        rep = emin(step, n_rep - g * step) if groups > step else n_rep
        L.b.vbrcb(dtype, _fold(dst.addr + g * (step * 8 * pb)), _fold(src.addr + g * (step * 8 * es)),
                  repeat=_fold(rep), dst_blk=pb // 32, dst_rep=8 * pb // 32)

    if groups > step:
        counted(L, "g", (n_rep + step - 1) // step, brcb, max_unroll=0)
    else:
        brcb(Imm(0))
    barrier(L)
    rows_main = e0 if T0 == rows_cap else _fold(emin(e0, T0))
    _spread(L, dtype, dst.addr, dst.addr, pb // 32, rows_main, e1, T0, pitch, lanes)


def _small_column_broadcast(L, op, src, dst, dtype, e0, e1, rows_cap, pitch, pb, lanes) -> None:
    """Fewer than 8 rows: row 0's first 8 blocks get src[0..7]; rows 1.. spread their block from row 0, then row 0
    spreads its own (block 0, rewritten with the same values)."""
    if pb < 256:
        raise CodegenError(op, f"column broadcast into {rows_cap} rows of {pb} B: vbrcb needs 8 blocks of room")
    L.b.vbrcb(dtype, dst.addr, src.addr, repeat=1, dst_blk=1, dst_rep=8)
    barrier(L)
    if rows_cap > 1:
        def rest():
            _spread(L, dtype, _fold(dst.addr + pb), _fold(dst.addr + 32), 1, _fold(e0 - 1), e1, rows_cap - 1, pitch,
                    lanes, dst_rep=pb // 32)

        if _static(e0) is None:
            with L.b.if_(e0 > 1):
                rest()
        elif _static(e0) > 1:
            rest()
        barrier(L)
    _spread(L, dtype, dst.addr, dst.addr, 0, Imm(1), e1, 1, pitch, lanes, dst_rep=pb // 32)


def _spread(L, dtype, dst, src, src_rep, e0, e1, cap0, cap1, lanes, dst_rep=None):
    """vcopy the 32-B block at src (+ src_rep blocks per row) over e1 elements of each of e0 rows of dst."""
    dst_rep = src_rep if dst_rep is None else dst_rep
    e1s = _static(e1)

    def chunk(c):
        if cap1 <= lanes:
            mask = e1
        elif e1s is not None and isinstance(c, Imm):
            mask = Imm(min(lanes, e1s - c.value * lanes))
        else:
            mask = _fold(emin(lanes, e1 - c * lanes))

        def group(g):
            rep = e0 if cap0 <= MAX_REPEAT else emin(MAX_REPEAT, e0 - g * MAX_REPEAT)
            L.b.vcopy(dtype, _fold(dst + c * 256 + g * (MAX_REPEAT * dst_rep * 32)),
                      _fold(src + g * (MAX_REPEAT * src_rep * 32)), repeat=_fold(rep), mask=mask, src_blk=0,
                      src_rep=src_rep, dst_rep=dst_rep)

        if cap0 <= MAX_REPEAT:
            group(Imm(0))
        else:
            counted(L, "g", (e0 + MAX_REPEAT - 1) // MAX_REPEAT, group, max_unroll=0)

    if cap1 <= lanes:
        chunk(Imm(0))
    else:
        counted(L, "c", Imm(-(-e1s // lanes)) if e1s is not None else (e1 + lanes - 1) // lanes, chunk)


# -- reductions ------------------------------------------------------------------------------------------------------


def emit_vreduce(L, op) -> None:
    src, dst = _ub(L, op, op.buffers[0]), _ub(L, op, op.buffers[1])
    kind = op.attributes["kind"]
    dims = sorted(op.attributes["dims"])
    if kind not in REDUCE:
        raise CodegenError(op, f"reduction kind '{kind}' has no vector instruction (sum, max, min)")
    dtype = _dtype(op, src.type, ("f16", "f32"))
    if dst.dtype != src.dtype:
        raise CodegenError(op, f"reduces {src.dtype} into {dst.dtype}")
    ext = [L.index(v) for v in op.indices]
    shape = src.type.static_shape()
    rank = len(shape)
    if len(dims) != 1:
        raise CodegenError(op, f"reduces several dims {dims} at once")
    d = dims[0]
    if d == rank - 1 and rank == 1:
        return _reduce_all(L, op, kind, dtype, src.addr, dst.addr, ext[0], shape[0], src.es)
    if d == rank - 1 and rank == 2:
        return _reduce_rows(L, op, kind, dtype, src, dst, ext)
    if d < rank - 1 and all(_static(e) == 1 for e in ext[d + 2 :]):
        return _reduce_outer(L, op, kind, dtype, src, dst, ext, d)
    raise CodegenError(op, f"reduction over dim {d} of a rank-{rank} buffer has no vector idiom here")


def _reduce_rows(L, op, kind, dtype, src: Buf, dst: Buf, ext) -> None:
    """dst[r] = ⊕ src[r, :e1] for r < e0 (dst is [R, 1]: contiguous)."""
    red, comb = REDUCE[kind]
    R, P = src.type.static_shape()
    es = src.es
    lanes = 256 // es
    e0, e1 = ext
    pitch = P * es // 32
    if (P * es) % 32:
        raise CodegenError(op, f"rows of {P * es} B are not 32-B aligned")

    def vred(d_addr, s_addr, repeat, mask, src_rep):
        getattr(L.b, {"sum": "vcadd", "rmax": "vcmax", "rmin": "vcmin"}[red])(
            dtype, d_addr, s_addr, repeat=_fold(repeat), mask=_fold(mask), src_rep=src_rep)

    if P <= lanes:  # one repeat per row
        def group(g):
            rep = emin(MAX_REPEAT, e0 - g * MAX_REPEAT) if R > MAX_REPEAT else e0
            vred(_fold(dst.addr + g * (MAX_REPEAT * es)), _fold(src.addr + g * (MAX_REPEAT * P * es)), rep, e1, pitch)

        return counted(L, "g", (e0 + MAX_REPEAT - 1) // MAX_REPEAT, group, max_unroll=0) if R > MAX_REPEAT \
            else group(Imm(0))
    # rows longer than one repeat: fold the column chunks into a scratch row per row, then reduce it
    free = L.ub_bytes - L.scratch_base
    G = min(R, MAX_REPEAT, free // 256)
    if G < 1:
        raise CodegenError(op, "a row reduction needs a 256-B scratch row per row; no UB is free above the plan")
    S = L.scratch(G * 256, "a row reduction")
    n_chunks = (e1 + lanes - 1) // lanes

    def group(g):
        rows_here = _fold(emin(G, e0 - g * G)) if R > G else e0
        base = _fold(src.addr + g * (G * P * es))
        barrier(L)
        L.b.vcopy(dtype, S, base, repeat=rows_here, mask=_fold(emin(lanes, e1)), src_rep=pitch, dst_rep=8)
        barrier(L)

        def chunk(c):
            getattr(L.b, "v" + comb)(dtype, S, S, _fold(base + c * 256), repeat=rows_here,
                                     mask=_fold(emin(lanes, e1 - c * lanes)), dst_rep=8, src0_rep=8, src1_rep=pitch)
            barrier(L)

        var = L.fresh("c")
        with L.b.loop(var, 1, n_chunks, 1) as c:
            chunk(c)
        vred(_fold(dst.addr + g * (G * es)), S, rows_here, emin(lanes, e1), 8)

    if R > G:
        counted(L, "g", (e0 + G - 1) // G, group, max_unroll=0)
    else:
        group(Imm(0))
    barrier(L)


def _reduce_all(L, op, kind, dtype, s_addr, d_addr, n, cap, es) -> None:
    """dst[0] = ⊕ src[:n]: per-repeat partials (vcadd …) into scratch, level by level until one value remains."""
    mnem = {"sum": "vcadd", "rmax": "vcmax", "rmin": "vcmin"}[REDUCE[kind][0]]
    lanes = 256 // es
    if cap <= lanes:
        getattr(L.b, mnem)(dtype, d_addr, s_addr, repeat=1, mask=_fold(n))
        return
    parts = -(-cap // lanes)
    S = L.scratch(parts * es, "a whole-buffer reduction")
    nv = _static(n)
    full = Imm(nv // lanes) if nv is not None else L.mov("full", n // lanes)
    tail = Imm(nv % lanes) if nv is not None else L.mov("tail", n % lanes)

    def group(g):
        rep = emin(MAX_REPEAT, full - g * MAX_REPEAT) if cap // lanes > MAX_REPEAT else full
        getattr(L.b, mnem)(dtype, _fold(S + g * (MAX_REPEAT * es)), _fold(s_addr + g * (MAX_REPEAT * 256)),
                           repeat=_fold(rep), mask=lanes)

    barrier(L)
    if cap // lanes > MAX_REPEAT:
        counted(L, "g", (full + MAX_REPEAT - 1) // MAX_REPEAT, group, max_unroll=0)
    elif nv is None:
        with L.b.if_(full > 0):
            group(Imm(0))
    elif nv >= lanes:
        group(Imm(0))

    def last():
        getattr(L.b, mnem)(dtype, _fold(S + full * es), _fold(s_addr + full * 256), repeat=1, mask=tail)

    if nv is None:
        with L.b.if_(tail > 0):
            last()
    elif nv % lanes:
        last()
    barrier(L)
    L.scratch_base += -(-parts * es // 32) * 32  # the next level must not overwrite these partials
    try:
        _reduce_all(L, op, kind, dtype, Imm(S), d_addr, _fold((n + lanes - 1) // lanes), parts, es)
    finally:
        L.scratch_base -= -(-parts * es // 32) * 32


def _reduce_outer(L, op, kind, dtype, src: Buf, dst: Buf, ext, d: int) -> None:
    """dst[a, 0, c] = ⊕_r src[a, r, c]: dst = row 0, then dst ⊕= row r for r = 1 … e_d − 1; each step covers every
    outer index a at once (one repeat per a, rows mode)."""
    _, comb = REDUCE[kind]
    shape = src.type.static_shape()
    strides, dstrides = src.static_strides(), dst.static_strides()
    es = src.es
    inner = ext[d + 1] if d + 1 < len(ext) else Imm(1)
    cap_inner = shape[d + 1] if d + 1 < len(shape) else 1
    outer = [k for k in range(d) if _static(ext[k]) != 1]
    if len(outer) > 1:
        raise CodegenError(op, "reduction with several outer dims")
    if outer:
        k = outer[0]
        ext2, caps2 = [ext[k], inner], [shape[k], cap_inner]
        row = lambda r: Operand(_fold(src.addr + r * (strides[d] * es)), es, [strides[k], 1])
        out = Operand(dst.addr, es, [dstrides[k], 1])
    else:
        ext2, caps2 = [inner], [cap_inner]
        row = lambda r: Operand(_fold(src.addr + r * (strides[d] * es)), es, [1])
        out = Operand(dst.addr, es, [1])
    region(L, _vec(L, "vcopy", dtype, ["src", "dst"]), [row(Imm(0)), out], ext2, caps2)
    barrier(L)
    var = L.fresh("r")
    with L.b.loop(var, 1, ext[d], 1) as r:
        region(L, _vec(L, "v" + comb, dtype, ["src0", "src1", "dst"]), [out, row(r), out], ext2, caps2)
        barrier(L)


# -- compare / select ------------------------------------------------------------------------------------------------


def _bit_rows(L, op, data: list[Buf], mask_buf: Buf, ext, body) -> None:
    """Run ``body(row data addrs, row mask addr, n)`` per row (bit c of row r at byte r·pitch + c/8)."""
    shape = mask_buf.type.static_shape()
    if len(shape) == 1:
        return body([b.addr for b in data], mask_buf.addr, ext[0], shape[0])
    if len(shape) != 2:
        raise CodegenError(op, "compare/select on buffers of rank > 2")
    if shape[1] % 32 and shape[0] > 1:
        raise CodegenError(op, f"i1 rows of {shape[1]} B are not 32-B aligned")
    var = L.fresh("r")
    with L.b.loop(var, 0, ext[0], 1) as r:
        body([_fold(b.addr + r * (b.static_strides()[0] * b.es)) for b in data], _fold(mask_buf.addr + r * shape[1]),
             ext[1], shape[1])


def _bit_flat(L, op, n, cap, lanes, emit) -> None:
    """Emit over n elements so that every instruction's bit-mask address (element k at byte k / 8) is 32-B aligned:
    whole groups of q = 256 / lanes repeats, then the remaining repeats in one instruction with a full mask. That
    last instruction also computes the lanes after n up to the next repeat boundary (inside the buffer when its
    capacity is a multiple of lanes; those lanes are not valid data and never stored)."""
    q = 256 // lanes  # repeats per 32 B of mask bits
    nv = _static(n)
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
    if cap % lanes:
        raise CodegenError(op, f"compare/select over {cap} elements (not a multiple of {lanes}): the bit mask of a "
                               f"partial tail would start at an unaligned UB address")
    if cap <= lanes:
        emit(0, Imm(1), n)
        return
    reps = L.mov("reps", (n + lanes - 1) // lanes)
    main = L.mov("main", reps - reps % q)
    if cap // lanes > 252:
        counted(L, "g", (main + 251) // 252, lambda g: emit(g * (252 * lanes), _fold(emin(252, main - g * 252)),
                                                             Imm(lanes)), max_unroll=0)
    else:
        with L.b.if_(main > 0):
            emit(0, main, Imm(lanes))
    with L.b.if_(reps > main):
        emit(main * lanes, reps - main, Imm(lanes))


def emit_vcmp(L, op) -> None:
    a_v, b_v, dst_v = op.buffers
    dst = _ub(L, op, dst_v)
    pred = op.attributes["predicate"]
    if not isinstance(a_v.type, MemRefType):
        a_v, b_v = b_v, a_v
        pred = {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le"}.get(pred, pred)
    a = _ub(L, op, a_v)
    dtype = _dtype(op, a.type, ("f16", "f32", "i32"))
    lanes = 256 // a.es
    scalar = not isinstance(b_v.type, MemRefType)
    data = [a] if scalar else [a, _ub(L, op, b_v)]
    ext = [L.index(v) for v in op.indices]

    def body(addrs, bits, n, cap):
        def emit(k, repeat, mask):
            kw = dict(repeat=repeat, mask=mask)
            if scalar:
                getattr(L.b, "vcmps_" + pred)(dtype, _fold(bits + k // 8), _fold(addrs[0] + k * a.es),
                                              scalar=L.scalar(b_v), **kw)
            else:
                getattr(L.b, "vcmp_" + pred)(dtype, _fold(bits + k // 8), _fold(addrs[0] + k * a.es),
                                             _fold(addrs[1] + k * a.es), **kw)

        _bit_flat(L, op, n, cap, lanes, emit)

    _bit_rows(L, op, data, dst, ext, body)


def emit_vsel(L, op) -> None:
    c_v, t_v, f_v, dst_v = op.buffers
    dst = _ub(L, op, dst_v)
    if not all(isinstance(v.type, MemRefType) for v in (c_v, t_v, f_v)):
        raise CodegenError(op, "select with a scalar operand (vsel takes vectors)")
    cond, t, f = _ub(L, op, c_v), _ub(L, op, t_v), _ub(L, op, f_v)
    dtype = _dtype(op, dst.type, ("f16", "f32"))
    lanes = 256 // dst.es
    ext = [L.index(v) for v in op.indices]

    def body(addrs, bits, n, cap):
        def emit(k, repeat, mask):
            L.b.vsel(dtype, _fold(addrs[2] + k * dst.es), _fold(bits + k // 8), _fold(addrs[0] + k * dst.es),
                     _fold(addrs[1] + k * dst.es), repeat=repeat, mask=mask)

        _bit_flat(L, op, n, cap, lanes, emit)

    _bit_rows(L, op, [t, f, dst], cond, ext, body)


def emit_vtranspose(L, op) -> None:
    raise CodegenError(op, "vtranspose has no emitter yet (the simulator's vtranspose moves one 16x16 2-byte block; "
                           "a general transpose needs a blocking the schedule does not provide)")

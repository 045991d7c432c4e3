"""``hivm.vreduce`` → vcadd/vcmax/vcmin per row (last dim; rows of whole repeats first fold block by block with
vcgadd/vcgmax/vcgmin, :func:`_block_fold_rows`), per-repeat partials level by level (a whole 1-D buffer),
or a tree of elementwise combines of rows (a non-last dim, :func:`_reduce_outer`); prod (no per-repeat product
instruction) by a vmul tree, :func:`_prod_rows`; see docs/codegen.md."""

from __future__ import annotations

from graph_passes.idioms.folds import (BLOCK_FOLD_BYTES, block_fold_bytes, block_fold_lengths, block_fold_rows,
                                       row_fold_shape)
from graph_passes.idioms.outer_folds import outer_fold_bytes, outer_fold_rows
from graph_passes.idioms.reductions import reduce_stages
from graph_passes.intmath import ceil_div, prod
from simulator.expr import Imm, as_expr, emax, emin

from .errors import CodegenError
from .lowering import Buf
from .operands import barrier, operand_of, ub_buf, vector_dtype
from .vector import (MAX_REPEAT, SCRATCH, Operand, buffer_tags, counted, fold, region, static_int, valid_rows,
                     vector_instr)

REDUCE = {"sum": ("sum", "add"), "max": ("rmax", "max"), "min": ("rmin", "min"),  # (vcadd/vcmax/vcmin, combine)
          "prod": (None, "mul")}  # no per-repeat product: _prod_rows
IDENTITY = {"sum": 0.0, "max": float("-inf"), "min": float("inf"), "prod": 1.0}


def emit_vreduce(state, op) -> None:
    src, dst = ub_buf(state, op, op.operand("src")), ub_buf(state, op, op.operand("dst"))
    kind = op.attributes["kind"]
    if kind not in REDUCE:
        raise CodegenError(op, f"reduction kind '{kind}' has no vector instruction sequence (sum, max, min, prod)")
    dtype = vector_dtype(op, src.type, ("f32",) if kind == "prod" else ("f16", "f32"))
    if dst.dtype != src.dtype:
        raise CodegenError(op, f"reduces {src.dtype} into {dst.dtype}")
    ext = [state.index(v) for v in op.indices]
    shape = src.type.static_shape()
    dims = sorted(op.attributes["dims"])
    dims = [d for d in dims if shape[d] > 1] or dims[:1]  # dims of one element reduce to a copy
    if not dims:  # no dim (hfusion-flatten-ops dropped the reduced unit dims): a copy
        copy = vector_instr(state, "vcopy", dtype, ("src", "dst"))
        return region(state, copy, [operand_of(src), operand_of(dst)], ext, shape)
    if len(dims) == 1:
        return _reduce_dim(state, op, kind, dtype, src, dst, ext, dims[0])
    # several dims: one at a time (graph_passes.idioms.reductions.reduce_stages), the stages between in scratch
    stages = reduce_stages(shape, dims)
    held = 0
    try:
        cur, cur_ext = src, list(ext)
        for stage in stages:
            d = next(k for k, (a, b) in enumerate(zip(cur.type.static_shape(), stage)) if a != b)
            if stage is stages[-1]:
                out = dst
            else:
                nbytes = state.scratch_size(prod(stage) * src.es)
                out = Buf("ub", Imm(state.scratch(nbytes, f"stage {stage} of a reduction over dims {dims}")),
                          src.type.with_shape(stage), SCRATCH)
                state.scratch_used += nbytes  # the next stages must not overwrite it
                held += nbytes
            _reduce_dim(state, op, kind, dtype, cur, out, cur_ext, d)
            barrier(state)
            cur, cur_ext = out, [Imm(1) if k == d else e for k, e in enumerate(cur_ext)]
    finally:
        state.scratch_used -= held


def _reduce_dim(state, op, kind, dtype, src: Buf, dst: Buf, ext, d: int) -> None:
    """dst = src reduced over dim ``d``."""
    shape = src.type.static_shape()
    rank = len(shape)
    if kind == "prod" and d == rank - 1:
        e0 = valid_rows(ext, shape, [k for k in range(rank - 1) if shape[k] > 1])
        return _prod_rows(state, op, src, shape[-1] * src.es, dst, prod(shape[:-1]), shape[-1], e0, ext[-1])
    if kind != "prod" and (d != rank - 1 or rank == 1) and all(n == 1 for k, n in enumerate(shape) if k != d):
        return _reduce_all(state, op, kind, dtype, src, dst, ext[d], shape[d])  # a contiguous vector
    if d == rank - 1:
        return _reduce_rows(state, op, kind, dtype, src, dst, ext)
    return _reduce_outer(state, op, kind, dtype, src, dst, ext, d)


def _reduce_rows(state, op, kind, dtype, src: Buf, dst: Buf, ext) -> None:
    """dst[r] = ⊕ src[r, :e1] for r < e0, the dims above the last flattened into rows (dst is [R, 1]: contiguous;
    e0 is the last valid row's index + 1, invalid rows between are reduced too, harmlessly)."""
    red, comb = REDUCE[kind]
    shape = src.type.static_shape()
    if prod(dst.type.static_shape()[:-1]) != prod(shape[:-1]):
        return _reduce_row_slabs(state, op, kind, dtype, src, dst, ext)
    R, P = prod(shape[:-1]), shape[-1]
    es = src.es
    lanes = 256 // es
    e0, e1 = valid_rows(ext, shape, [k for k in range(len(shape) - 1) if shape[k] > 1]), ext[-1]
    pitch = P * es // 32
    if (P * es) % 32:
        raise CodegenError(op, f"rows of {P * es} B are not 32-B aligned")

    def vred(d_addr, s_addr, repeat, mask, src_rep, s_tag=src.tag, d_tag=dst.tag):
        getattr(state.b, {"sum": "vcadd", "rmax": "vcmax", "rmin": "vcmin"}[red])(
            dtype, d_addr, s_addr, repeat=fold(repeat), mask=fold(mask), src_rep=src_rep,
            tags=buffer_tags(src=s_tag, dst=d_tag))

    if P <= lanes:  # one repeat per row
        def group(g, rows):
            vred(fold(dst.addr + g * (MAX_REPEAT * es)), fold(src.addr + g * (MAX_REPEAT * P * es)), rows, e1, pitch)

        return _per_repeat_rows(state, R, e0, group)
    e1s = static_int(e1)
    lengths = block_fold_lengths(P, es) if e1s == P else []  # rows of whole repeats, every column valid
    if lengths:
        in_place = bool(op.attributes.get("fold_in_place"))
        G = block_fold_rows(R, lengths, es, in_place, min(BLOCK_FOLD_BYTES, state.scratch_free()))
        if G:
            return _block_fold_rows(state, red, comb, vred, dtype, src, dst, R, e0, lengths, G, in_place)
    if op.attributes.get("fold_in_place"):
        if e1s is None:  # the schedule planned no scratch for it (the schedule's in_place_folds: static rows only)
            raise CodegenError(op, f"fold_in_place over rows of a symbolic length {e1}")
        return _fold_rows_in_place(state, comb, vred, dtype, src, dst, R, e0, e1s, lanes, pitch)
    # rows longer than one repeat: fold the column chunks into K partials per row, halve them to one, reduce it
    n_cap = ceil_div(P, lanes)
    G, K = row_fold_shape(R, n_cap, wide=True)
    narrow = row_fold_shape(R, n_cap)[1]
    while G * K * 256 > state.scratch_free() and (G > 1 or K > 1):  # the schedule sized a smaller scratch: fewer
        G, K = (G, K // 2) if K > narrow or G == 1 else (G // 2, K)  # partials down to the narrow fold, then rows
    S = state.scratch(G * K * 256, "a row reduction", fence=True)
    srep = K * 8  # a scratch row (K partials) in 32-B blocks
    n_chunks = (e1 + lanes - 1) // lanes

    def vop(d_addr, a_addr, b_addr, rows_here, mask, a_rep, b_rep, a_tag=SCRATCH, b_tag=src.tag):
        getattr(state.b, "v" + comb)(dtype, fold(d_addr), fold(a_addr), fold(b_addr), repeat=rows_here,
                                     mask=fold(Imm(mask) if isinstance(mask, int) else mask), dst_rep=srep,
                                     src0_rep=a_rep, src1_rep=b_rep, tags=buffer_tags(src0=a_tag, src1=b_tag,
                                                                                      dst=SCRATCH))

    def group(g):
        rows_here = fold(emin(G, e0 - g * G)) if R > G else e0
        base = fold(src.addr + g * (G * P * es))
        if R > G:  # the previous group's partials (a program loop: every iteration)
            barrier(state)
        if e1s is not None and e1s // lanes >= 2 * K:  # partial k = chunk k ⊕ chunk k + K (both whole)
            first = 2 * K
            for k in range(K):
                vop(S + k * 256, base + k * 256, base + (k + K) * 256, rows_here, lanes, pitch, pitch, src.tag)
        else:  # partials start at the identity; every chunk folds in
            first = 0
            state.b.vdup(dtype, S, Imm(IDENTITY[kind]), repeat=G * K, mask=lanes, dst_rep=8, tags={"dst": SCRATCH})
        barrier(state)
        if e1s is not None:
            for c in range(first, ceil_div(e1s, lanes)):
                k = c % K
                vop(S + k * 256, S + k * 256, base + c * 256, rows_here, min(lanes, e1s - c * lanes), srep, pitch)
                if k == K - 1 or c == ceil_div(e1s, lanes) - 1:
                    barrier(state)
        else:
            var = state.fresh("j")
            with state.b.loop(var, 0, (n_chunks + (K - 1)) // K, 1) as j:
                for k in range(K):
                    c = j * K + k
                    with state.b.if_(c < n_chunks):
                        vop(S + k * 256, S + k * 256, base + c * 256, rows_here, emin(lanes, e1 - c * lanes), srep, pitch)
                barrier(state)
        h = K // 2
        while h:  # halve the partials: k ⊕= k + h
            for k in range(h):
                vop(S + k * 256, S + k * 256, S + (k + h) * 256, rows_here, lanes, srep, srep, b_tag=SCRATCH)
            barrier(state)
            h //= 2
        vred(fold(dst.addr + g * (G * es)), S, rows_here, lanes, srep, s_tag=SCRATCH)

    if R > G:
        counted(state, "g", (e0 + G - 1) // G, group, max_unroll=0)
    else:
        group(Imm(0))
    barrier(state)


def _block_fold_rows(state, red, comb, vred, dtype, src: Buf, dst: Buf, R: int, e0, lengths: list, G: int,
                     in_place: bool) -> None:
    """dst[r] = ⊕ src[r, :] by block reductions, G rows at a time (idioms.folds.block_fold_lengths, block_fold_rows):
    each level reduces every 32-B block of the rows' current length to one element (vcgadd/vcgmax/vcgmin: the
    contiguous rows in instructions of up to MAX_REPEAT repeats, one dependent step), the levels alternating between
    scratch A and B — B is the source's own buffer when it dies here (``fold_in_place``) —, then vcadd/vcmax/vcmin
    per row when the last length is one repeat at most, else the pairwise fold of what is left (in scratch)::

        f32 rows of 4096:  4096 -vcgadd-> 512 -vcgadd-> 64 -vcadd-> 1     3 steps, 73 repeat cycles a row

    (the pairwise fold: 7 steps, 133 cycles). Sums add the elements of a block as a tree, then the blocks' sums,
    level by level: a pairwise order too, as the fold's."""
    es = src.es
    lanes, per_block = 256 // es, 32 // es
    block_red = {"sum": "vcgadd", "rmax": "vcgmax", "rmin": "vcgmin"}[red]
    S = state.scratch(block_fold_bytes(G, lengths, es, in_place), "a block fold of rows", fence=True)
    first = state.scratch_size(G * lengths[1] * es)

    def group(g, rows):
        if R > G:  # the previous group's last step read the scratch
            barrier(state)
        row0 = fold(src.addr + g * (G * lengths[0] * es))
        cur, outs = row0, [Imm(S), row0 if in_place else Imm(S + first)]
        cur_tag, out_tags = src.tag, [SCRATCH, src.tag if in_place else SCRATCH]
        for level, m in enumerate(lengths[:-1]):
            out, reps = outs[level % 2], m // lanes  # repeats a row (every level reads whole repeats)
            tags = buffer_tags(src=cur_tag, dst=out_tags[level % 2])
            cap = MAX_REPEAT // reps  # rows an instruction takes
            for j in range(ceil_div(G, cap)):  # instruction j: rows [j·cap, (j + 1)·cap)
                here = rows if G <= cap else fold(emin(cap, rows - j * cap))
                emit = lambda here=here, j=j: getattr(state.b, block_red)(  # noqa: E731
                    dtype, fold(out + j * cap * (m // per_block) * es), fold(cur + j * cap * m * es),
                    repeat=fold(here * reps), mask=lanes, tags=tags)
                if j == 0 or (static_int(rows) is not None and static_int(rows) > j * cap):
                    emit()
                elif static_int(rows) is None:
                    with state.b.if_(rows > j * cap):
                        emit()
            barrier(state)
            cur, cur_tag = out, out_tags[level % 2]
        m = lengths[-1]
        d_addr = fold(dst.addr + g * (G * es))
        if m <= lanes:
            vred(d_addr, cur, rows, m, m * es // 32, s_tag=cur_tag)
        else:
            left = src.type.with_shape([G, m])
            _fold_rows_in_place(state, comb, vred, dtype, Buf("ub", cur, left, cur_tag),
                                Buf(dst.scope, d_addr, dst.type, dst.tag),
                                G, rows, m, lanes, m * es // 32)

    if R > G:
        counted(state, "g", (e0 + G - 1) // G, lambda g: group(g, fold(emin(G, e0 - g * G))), max_unroll=0)
    else:
        group(Imm(0), e0)
    barrier(state)


def _reduce_row_slabs(state, op, kind, dtype, src: Buf, dst: Buf, ext) -> None:
    """Rows reduced into a dst whose innermost row dim is padded (a column padded to whole repeats for a compare on
    it, ``Buffer.whole_repeats``: a looped reduction's partial shares its result's layout so that the two combine
    row for row): one contiguous row reduction per slab of that dim, the slabs ``dshape[d]`` elements apart."""
    shape, dshape = src.type.static_shape(), dst.type.static_shape()
    rank = len(shape)
    wider = [k for k in range(rank - 1) if dshape[k] != shape[k]]
    d = wider[0] if wider else 0
    if len(wider) != 1 or dshape[d] < shape[d] or any(shape[k] != 1 for k in range(d + 1, rank - 1)):
        raise CodegenError(op, f"reduces {src.type} into {dst.type}: only the innermost row dim may be padded")
    inner, P, es = shape[d], shape[-1], src.es
    slabs = valid_rows(ext, shape, [k for k in range(d) if shape[k] > 1])
    long_rows = P > 256 // es  # the row fold's scratch partials are rewritten per slab

    def slab(i):
        if long_rows:
            barrier(state)
        s_buf = Buf(src.scope, fold(src.addr + i * (inner * P * es)), src.type.with_shape([inner, P]), src.tag)
        d_buf = Buf(dst.scope, fold(dst.addr + i * (dshape[d] * dst.es)), dst.type.with_shape([inner, 1]), dst.tag)
        _reduce_rows(state, op, kind, dtype, s_buf, d_buf, [ext[d], ext[-1]])

    counted(state, "slab", slabs, slab)


def _fold_rows_in_place(state, comb, vred, dtype, src: Buf, dst: Buf, R: int, e0, e1: int, lanes: int, pitch: int):
    """dst[r] = ⊕ src[r, :e1] folding each row in place (the source dies here: ``fold_in_place``), up to
    MAX_REPEAT rows per instruction, n = ceil(e1 / lanes) chunks of a row (the last one e1 − (n − 1)·lanes wide)::

        chunk k ⊕= chunk k + H  for k < n − H     (H: the largest power of two < n)
        chunk k ⊕= chunk k + h  for k < h,  h = H/2 … 1
        dst[r] = vcadd(chunk 0)

    ceil(log2(n)) + 1 dependent steps (idioms.folds.in_place_fold_levels), a pairwise tree, and no scratch."""
    n = ceil_div(e1, lanes)

    def group(g, rows):
        base = fold(src.addr + g * (MAX_REPEAT * pitch * 32))
        h = 1 << (n - 1).bit_length() - 1 if n > 1 else 0
        count = n - h
        while h:
            for k in range(count):
                mask = min(lanes, e1 - (k + h) * lanes)
                getattr(state.b, "v" + comb)(dtype, fold(base + k * 256), fold(base + k * 256),
                                             fold(base + (k + h) * 256), repeat=rows, mask=Imm(mask), dst_rep=pitch,
                                             src0_rep=pitch, src1_rep=pitch,
                                             tags=buffer_tags(src0=src, src1=src, dst=src))
            barrier(state)
            h //= 2
            count = h
        vred(fold(dst.addr + g * (MAX_REPEAT * src.es)), base, rows, min(lanes, e1), pitch, s_tag=src.tag,
             d_tag=dst.tag)

    _per_repeat_rows(state, R, e0, group)
    barrier(state)


def _per_repeat_rows(state, R: int, e0, group) -> None:
    """``group(g, rows)`` for the rows below e0 of a buffer of R rows, MAX_REPEAT at a time (one instruction's
    repeats): g the group's index, rows its rows (e0 when R fits one group)."""
    if R <= MAX_REPEAT:
        return group(Imm(0), e0)
    counted(state, "g", (e0 + MAX_REPEAT - 1) // MAX_REPEAT,
            lambda g: group(g, fold(emin(MAX_REPEAT, e0 - g * MAX_REPEAT))), max_unroll=0)


def _reduce_all(state, op, kind, dtype, src: Buf, dst: Buf, n, cap) -> None:
    """dst[0] = ⊕ src[:n]: per-repeat partials (vcadd …) into scratch, level by level until one value remains."""
    mnem = {"sum": "vcadd", "rmax": "vcmax", "rmin": "vcmin"}[REDUCE[kind][0]]
    s_addr, d_addr, es = src.addr, dst.addr, src.es
    lanes = 256 // es
    if cap <= lanes:
        getattr(state.b, mnem)(dtype, d_addr, s_addr, repeat=1, mask=fold(n), tags=buffer_tags(src=src, dst=dst))
        return
    into_scratch = buffer_tags(src=src, dst=SCRATCH)
    parts = ceil_div(cap, lanes)
    S = state.scratch(parts * es, "a whole-buffer reduction")
    nv = static_int(n)
    full = Imm(nv // lanes) if nv is not None else state.mov("full", n // lanes)
    tail = Imm(nv % lanes) if nv is not None else state.mov("tail", n % lanes)

    def group(g):
        rep = emin(MAX_REPEAT, full - g * MAX_REPEAT) if cap // lanes > MAX_REPEAT else full
        getattr(state.b, mnem)(dtype, fold(S + g * (MAX_REPEAT * es)), fold(s_addr + g * (MAX_REPEAT * 256)),
                               repeat=fold(rep), mask=lanes, tags=into_scratch)

    barrier(state)
    if cap // lanes > MAX_REPEAT:
        counted(state, "g", (full + MAX_REPEAT - 1) // MAX_REPEAT, group, max_unroll=0)
    elif nv is None:
        with state.b.if_(full > 0):
            group(Imm(0))
    elif nv >= lanes:
        group(Imm(0))

    def last():
        getattr(state.b, mnem)(dtype, fold(S + full * es), fold(s_addr + full * 256), repeat=1, mask=tail,
                               tags=into_scratch)

    if nv is None:
        with state.b.if_(tail > 0):
            last()
    elif nv % lanes:
        last()
    barrier(state)
    state.scratch_used += state.scratch_size(parts * es)  # the next level must not overwrite these partials
    try:
        partials = Buf("ub", Imm(S), src.type.with_shape([parts]), SCRATCH)
        _reduce_all(state, op, kind, dtype, partials, dst, fold((n + lanes - 1) // lanes), parts)
    finally:
        state.scratch_used -= state.scratch_size(parts * es)


def _reduce_outer(state, op, kind, dtype, src: Buf, dst: Buf, ext, d: int) -> None:
    """dst[a, 0, c] = ⊕_{r < e} src[a, r, c] (e = ext[d], its capacity ``cap`` static) as a tree of pairwise
    halves in K scratch rows T (``outer_fold_rows``: the power of two with the fewest steps that fits the scratch),
    each step one set of instructions over all the rows it combines (one repeat per row and column chunk, or one
    flat run when the rows are contiguous), separated by ``pipe_barrier V``::

        T[r] = src[r] ⊕ src[r + K]  for r < e − K;  T[r] = src[r]  for e − K ≤ r < min(e, K);
        T[r] = identity  for min(e, K) ≤ r < K                            (one level: disjoint rows)
        T[r] ⊕= src[r + jK]  for j = 2 …, r < min(K, e − jK)               (only when 2K < cap)
        T[:h] ⊕= T[h:2h]  for h = K/2 … 2;  dst = T[0] ⊕ T[1]               (log2(K) levels)

    ceil(log2(cap)) dependent steps (``outer_fold_levels``) instead of cap − 1 (K = 1, no scratch: dst itself
    accumulates, one step per row).

    Summation order: eager's CPU kernel adds a column's rows in row order (into cascaded partial sums); here row r
    meets row r + K first and the partials then combine pairwise, so a float sum may differ from eager's in the
    last bits — a pairwise sum's error bound, no larger than a sequential one's (docs/codegen.md,
    *Measurements*). max and min are exact; prod rounds once per product, in another order."""
    comb = "v" + REDUCE[kind][1]
    shape = src.type.static_shape()
    rank, es, cap, e = len(shape), src.es, shape[d], ext[d]
    strides = src.static_strides()
    row_bytes = strides[d] * es  # one row: the dims inside d, padding included
    K = outer_fold_rows(cap, prod(shape[:d]), row_bytes, state.scratch_free())
    on_kept = lambda st: [0 if shape[k] == 1 and k != d else st[k] for k in range(rank)]  # noqa: E731
    out = Operand(dst.addr, es, on_kept(dst.static_strides()), dst.tag)
    srcs = Operand(src.addr, es, on_kept(strides), src.tag)
    if K > 1:
        t_strides, acc = list(strides), outer_fold_bytes(K, 1, row_bytes) // es  # K rows per slab, whole blocks
        for k in reversed(range(d)):
            t_strides[k], acc = acc, acc * shape[k]
        T = Operand(Imm(state.scratch(outer_fold_bytes(K, prod(shape[:d]), row_bytes), "a reduction over a non-last "
                                      "dim", fence=True)), es, on_kept(t_strides), SCRATCH)
    else:
        T = out  # no scratch: dst accumulates (only its row 0 is addressed)

    def at(o: Operand, r) -> Operand:  # o from its row r on
        return Operand(fold(o.addr + r * (o.strides[d] * es)), es, o.strides, o.tag)

    # Note: a kept last dim of at most one repeat is processed whole, padding included (garbage in, garbage out
    # in padding nothing reads): its rows are then one contiguous run — whole 256-B repeats instead of one repeat
    # per row, e.g. the 32-B column tiles of a bias gradient, whose valid extent is a run-time min(n − off, 8).
    kept_ext = list(ext)
    if d != rank - 1 and shape[-1] * es <= 256:
        kept_ext[-1] = Imm(shape[-1])

    def step(emit, ops, count, cap_rows: int) -> None:
        """``emit`` over ``count`` rows of the operands (each from the row it points at) and the extents of the
        other dims (a vector instruction has at least one repeat: a dynamic count is guarded)."""
        if static_int(count) == 0:
            return
        extents, caps = list(kept_ext), list(shape)
        extents[d], caps[d] = count, cap_rows
        if static_int(count) is None:
            with state.b.if_(count > 0):
                region(state, emit, ops, extents, caps)
        else:
            region(state, emit, ops, extents, caps)

    binary = vector_instr(state, comb, dtype, ("src0", "src1", "dst"))
    if cap == 1:  # one row: a copy
        return step(vector_instr(state, "vcopy", dtype, ("src", "dst")), [srcs, out], e, 1)

    identity = vector_instr(state, "vdup", dtype, ("dst",), scalar=Imm(IDENTITY[kind]))
    # level 0, disjoint rows of T: pairs r, r + K; single rows (no partner below e); the identity (no row)
    pairs, upto = _min(K, _max(0, e - K)), _min(e, K)
    step(binary, [srcs, at(srcs, Imm(K)), T], pairs, K)
    step(vector_instr(state, "vcopy", dtype, ("src", "dst")), [at(srcs, pairs), at(T, pairs)], fold(upto - pairs), K)
    step(identity, [at(T, upto)], fold(K - upto), K)
    barrier(state)
    if cap > 2 * K:  # rows from 2K on: K more per dependent step, then the last partial step
        def whole(j):
            step(binary, [T, at(srcs, fold((j + 2) * K)), T], Imm(K), K)
            barrier(state)

        counted(state, "j", _max(0, e // K - 2), whole)
        tail = _min(e % K, _max(0, e - 2 * K))  # e % K rows from (e // K)·K on, when that is >= 2K
        if K > 1 and static_int(tail) != 0:
            step(binary, [T, at(srcs, fold(e - e % K)), T], tail, K)
            barrier(state)
    h = K // 2
    while h:  # halve: T[:h] ⊕= T[h:2h], the last step into dst
        step(binary, [T, at(T, Imm(h)), out if h == 1 else T], Imm(h), h)
        barrier(state)
        h //= 2


def _min(a, b):
    a, b = fold(as_expr(a)), fold(as_expr(b))
    return Imm(min(a.value, b.value)) if isinstance(a, Imm) and isinstance(b, Imm) else emin(a, b)


def _max(a, b):
    a, b = fold(as_expr(a)), fold(as_expr(b))
    return Imm(max(a.value, b.value)) if isinstance(a, Imm) and isinstance(b, Imm) else emax(a, b)


def _prod_rows(state, op, src: Buf, pitch_bytes: int, dst: Buf, R: int, P: int, e0, e1) -> None:
    """dst[r] = Π src[r, :e1] (f32) for r < e0, a group of G rows at a time, in scratch rows ``A`` of 256 B::

        A = 1;  A *= chunk c of the row, for each 64-column chunk      (vdup, vmul: the padding stays 1)
        halve(A): A[:32] *= A[32:], A[:16] *= A[16:32], A[:8] *= A[8:16]  (8 partial products in block 0)
        C = block 0 of each row (vcopy, contiguous); A = vbrcb(C)       (block i of row r = C[r, i])
        halve(A)                                                        (every lane of block 0 = the product)
        dst[r] = vcmax(A[r, :1])                                        (one value per row, contiguous)

    Every step rounds once in f32 (the order differs from torch's, within an ulp per factor)."""
    if pitch_bytes % 32:
        raise CodegenError(op, f"rows of {pitch_bytes} B are not 32-B aligned")
    G = max(1, min(R, MAX_REPEAT, state.scratch_free() // 288))  # rows at once (state.scratch checks one)
    A = state.scratch(G * 256 + G * 32, "a product reduction")
    C = A + G * 256
    n_chunks = (e1 + 63) // 64
    s_addr, d_addr = src.addr, dst.addr
    binary, unary = buffer_tags(src0=SCRATCH, src1=SCRATCH, dst=SCRATCH), buffer_tags(src=SCRATCH, dst=SCRATCH)

    def halve(rows):
        for half in (32, 16, 8):
            state.b.vmul("f32", A, A, A + half * 4, repeat=rows, mask=half, tags=binary)
            barrier(state)

    def group(g):
        rows = fold(emin(G, e0 - g * G)) if R > G else e0
        base = fold(s_addr + g * (G * pitch_bytes))
        barrier(state)
        state.b.vdup("f32", A, Imm(1.0), repeat=rows, tags={"dst": SCRATCH})
        barrier(state)

        def chunk(c):
            state.b.vmul("f32", A, A, fold(base + c * 256), repeat=rows, mask=fold(emin(64, e1 - c * 64)),
                         src1_rep=pitch_bytes // 32, tags=buffer_tags(src0=SCRATCH, src1=src, dst=SCRATCH))
            barrier(state)

        counted(state, "c", n_chunks, chunk, max_unroll=2)
        halve(rows)
        state.b.vcopy("f32", C, A, repeat=rows, mask=8, dst_rep=1, tags=unary)
        barrier(state)
        state.b.vbrcb("f32", A, C, repeat=rows, tags=unary)
        barrier(state)
        halve(rows)
        state.b.vcmax("f32", fold(d_addr + g * (G * 4)), A, repeat=rows, mask=1,
                      tags=buffer_tags(src=SCRATCH, dst=dst))

    if R > G:
        counted(state, "g", (e0 + G - 1) // G, group, max_unroll=0)
    else:
        group(Imm(0))
    barrier(state)

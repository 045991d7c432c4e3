"""Index ops on PIPE_V: ``hivm.varange`` → ``vci`` (CreateVecIndex) and, for a step or start, ``vmuls``/``vadds``;
``hivm.vgather`` → index conversion to byte offsets, then ``vgather`` (Ascend C Gather) per row.

``varange dst, offset, e {start, step}`` counts along the one dim of ``dst`` whose size is not 1 (flat in UB)::

    vci   dst, first = offset + k          # k: position of the instruction's first element in the region
    vmuls dst, dst, step                   # when step != 1
    vadds dst, dst, start                  # when start != 0 (with step 1, start folds into vci's first value)

Every value ``start + step·(offset + i)`` is the one eager computes: ``hfusion-auto-schedule`` lowers an arange only
when its start and step are integers and ``|start| + |step|·(n − 1)`` is exactly representable in its dtype, or for a
float arange of step 1 (``vci`` forms ``start + i`` exactly and rounds it once, like eager) (kernel_info). The vector
unit has no i64 (CANN-INI): an i64 arange is a scalar loop
(codegen.scalar_loops).
"""

from __future__ import annotations

from simulator.expr import Imm
from simulator.isa.index import GATHER_DTYPES, VCI_DTYPES

from .errors import CodegenError
from .vector import Operand, _fold, _static, counted, flat, region
from .vector_ops import _dtype, _operand, _ub, barrier


def emit_varange(L, op) -> None:
    dst = _ub(L, op, op.buffers[0])
    dtype = _dtype(op, dst.type, VCI_DTYPES)
    ext = [L.index(v) for v in op.extents()]
    caps = list(dst.type.static_shape())
    offset = L.index(op.offset())
    start, step = op.attributes["start"], op.attributes["step"]
    is_float = dtype.startswith("f")
    num = (lambda x: float(x)) if is_float else (lambda x: int(x))
    base = dst.addr
    first_extra = start if step == 1 else 0

    def vci(addrs, repeat, mask, reps):
        first = _fold(offset + (addrs[0] - base) // dst.es + first_extra)
        L.b.vci(dtype, _fold(addrs[0]), first, repeat=_fold(repeat), mask=_fold(mask), dst_rep=reps[0])

    ops = [_operand(dst)]
    region(L, vci, ops, ext, caps)
    for form, value, needed in (("muls", step, step != 1), ("adds", start, step != 1 and start != 0)):
        if not needed:
            continue

        def emit(addrs, repeat, mask, reps, form=form, value=value):
            getattr(L.b, "v" + form)(dtype, _fold(addrs[0]), _fold(addrs[0]), Imm(num(value)), repeat=_fold(repeat),
                                     mask=_fold(mask), src_rep=reps[0], dst_rep=reps[0])

        barrier(L)
        region(L, emit, ops, ext, caps)


def emit_vgather_offsets(L, op) -> None:
    """``vgather_offsets index, n {es}``: the conversion of :func:`emit_vgather`, into the scratch, for the
    ``vgather {converted}`` right after it (which finds the offsets there: the same scratch address)."""
    idx = _ub(L, op, op.buffers[0])
    n = L.static(op.indices[0])
    if n is None:
        raise CodegenError(op, "the gathered rows' length must be static")
    shape = list(idx.type.static_shape())
    idx_rows, idx_cols = ([1] + shape) if len(shape) == 1 else shape
    _convert(L, idx, idx_rows, idx_cols, n, op.attributes["es"])


def _check_offsets_precede(L, op) -> None:
    """A ``vgather {converted}`` reads the offsets its ``vgather_offsets`` left in the scratch: that op, on the same
    index, must be the last vector op before it (any other could have reused the scratch)."""
    prev = L.last_vector_op
    if prev is None or prev.name != "hivm.vgather_offsets" or prev.operands[0] is not op.operands[1]:
        found = "no vector op" if prev is None else f"'{prev.name}'"
        raise CodegenError(op, f"a vgather {{converted}} needs the hivm.vgather_offsets of its index as the vector op "
                               f"right before it (it reads the offsets from the scratch); found {found}")


def _layout(idx_cols: int, idx_rows: int) -> tuple[int, int, int]:
    """(i32 words per index row in scratch — 32-B aligned rows —, words, bytes of one word table)."""
    pitch = -(-idx_cols // 8) * 8
    words = idx_rows * pitch
    return pitch, words, -(-words * 4 // 32) * 32


def _convert(L, idx, idx_rows: int, idx_cols: int, n: int, es: int) -> int:
    """The index's checked byte offsets in the scratch (see :func:`emit_vgather`); returns their address."""
    pitch, words, wbytes = _layout(idx_cols, idx_rows)
    wide = idx.dtype == "i64"
    q = L.scratch(wbytes * (3 if wide else 1), "the byte offsets of a vgather")
    ops_q = [Operand(Imm(q), 4, [1])]

    def scalar(form, dst_addr, src_addr, value, fence=True):
        def emit(addrs, repeat, mask, reps):
            getattr(L.b, "v" + form)("i32", _fold(addrs[0] + (dst_addr - q)), _fold(addrs[0] + (src_addr - q)),
                                     Imm(value), repeat=_fold(repeat), mask=_fold(mask), src_rep=reps[0],
                                     dst_rep=reps[0])

        if fence:
            barrier(L)
        flat(L, emit, ops_q, Imm(words), words)

    if wide:
        w, h = q + wbytes, q + 2 * wbytes

        def row_positions(r):  # w[r][c] = r*idx_cols + c: the i64 element behind word (r, c)
            def emit(addrs, repeat, mask, reps):
                first = _fold(r * idx_cols + (addrs[0] - (w + r * (pitch * 4))) // 4)
                L.b.vci("i32", _fold(addrs[0]), first, repeat=_fold(repeat), mask=_fold(mask), dst_rep=reps[0])

            flat(L, emit, [Operand(Imm(w) + r * (pitch * 4), 4, [1])], Imm(pitch), pitch)

        def words_of(target, offsets, fence=True):  # target[k] = the b32 word of the index at byte offsets[k]
            def emit(addrs, repeat, mask, reps):
                L.b.vgather("i32", _fold(addrs[0] + (target - q)), idx.addr, _fold(addrs[0] + (offsets - q)),
                            idx_rows * idx_cols * 8, repeat=_fold(repeat), mask=_fold(mask), dst_rep=reps[0])

            if fence:
                barrier(L)
            flat(L, emit, ops_q, Imm(words), words)

        barrier(L)
        counted(L, "r", Imm(idx_rows), row_positions)
        scalar("mins", w, w, idx_rows * idx_cols - 1)  # the padding words read the last element (any valid one)
        scalar("muls", w, w, 8)  # w: byte offsets of the low words
        words_of(q, w)  # q: low words;  h: byte offsets of the high words (both read w)
        scalar("adds", h, w, 4, fence=False)
        words_of(w, h)  # w: high words (w's offsets were read one level up);  then q's steps beside w's
        scalar("maxs", q, q, -1, fence=False)
        scalar("maxs", w, w, -1)
        scalar("mins", q, q, n, fence=False)
        scalar("mins", w, w, 1)
        scalar("muls", q, q, es, fence=False)
        scalar("muls", w, w, (n + 1) * es)
        barrier(L)
        flat(L, lambda a, rep, m, reps: L.b.vadd("i32", _fold(a[0]), _fold(a[0]), _fold(a[0] + (w - q)),
                                                 repeat=_fold(rep), mask=_fold(m), dst_rep=reps[0],
                                                 src0_rep=reps[0], src1_rep=reps[0]), ops_q, Imm(words), words)
    else:
        scalar("maxs", q, idx.addr, -1)
        scalar("mins", q, q, n)
        scalar("muls", q, q, es)
    barrier(L)
    return q


def emit_vgather(L, op) -> None:
    """``vgather src, index, dst, n, e``: index → checked byte offsets in scratch, then one ``vgather`` per row;
    ``{converted}``: the ``vgather_offsets`` right before it left the offsets in the scratch (the wait for the
    loaded rows sits between the two, after the conversion).

    i64 indices are pairs of i32 words (little-endian: low word first); a ``vgather`` of b32 words by the offsets
    ``8k`` / ``8k + 4`` takes them apart, into rows padded to 8 words (32 B). Every index is then made exact or
    out of range before the multiply by the element size, so that no value wraps into a valid offset::

        offsets = min(max(low, -1), n) * es + min(max(high, -1), 1) * (n + 1) * es
                  # in [0, n*es) iff 0 <= index < n; an invalid index: < 0 or >= n*es

    and the data ``vgather`` (whose source is the row's ``n`` elements) rejects an offset outside the row, naming
    the element and the numbers. The low and high words' steps are independent: each level (one ``pipe_barrier V``
    and one vector start-up) holds one step of each — 9 levels before the data gathers, not 13. i32 indices skip
    the words: ``offsets = min(max(index, -1), n) * es``.

    i64 data (the A2 ``vgather`` moves b16 and b32 elements) moves as pairs of b32 words: :func:`_word_offsets`
    turns each element's offset ``o`` into its words' ``o`` and ``o + 4`` (an invalid ``o`` — negative or at least
    ``n * 8``, a multiple of 8 either way — stays invalid), then one b32 ``vgather`` per row moves twice the words.
    """
    src_v, idx_v, dst_v = op.buffers
    src, idx, dst = _ub(L, op, src_v), _ub(L, op, idx_v), _ub(L, op, dst_v)
    wide_data = dst.dtype == src.dtype == "i64"
    dtype = "i32" if wide_data else _dtype(op, dst.type, GATHER_DTYPES)
    n = L.static(op.row_length())
    if n is None:
        raise CodegenError(op, "the gathered rows' length must be static")
    ext = [L.index(v) for v in op.extents()]
    if len(ext) > 2:
        raise CodegenError(op, f"gathers of rank {len(ext)} are not emitted (rank 1 or 2)")
    d_shape, i_shape, s_shape = (list(b.type.static_shape()) for b in (dst, idx, src))
    if len(ext) == 1:
        d_shape, i_shape, s_shape, ext = [1] + d_shape, [1] + i_shape, [1] + s_shape, [Imm(1)] + ext
    idx_rows, idx_cols = i_shape
    if idx_rows not in (1, d_shape[0]) or s_shape[0] != d_shape[0]:
        raise CodegenError(op, f"index rows {idx_rows} / source rows {s_shape[0]} do not match {d_shape[0]} rows")
    pitch, _, wbytes = _layout(idx_cols, idx_rows)
    if op.attributes.get("converted"):
        _check_offsets_precede(L, op)
        q = L.scratch(wbytes, "the byte offsets of a vgather")  # where vgather_offsets left them
    else:
        q = _convert(L, idx, idx_rows, idx_cols, n, dst.es)
    words = 2 if wide_data else 1  # b32 words an element moves as
    if wide_data:
        q, pitch = _word_offsets(L, q, idx_rows, pitch, wbytes), 2 * pitch
    es = dst.es // words

    def row(j):
        d_row = dst.addr + j * (d_shape[1] * dst.es)
        s_row = src.addr + j * (s_shape[1] * src.es)
        o_row = Imm(q) + (j * (pitch * 4) if idx_rows > 1 else 0)

        def emit(addrs, repeat, mask, reps):
            L.b.vgather(dtype, _fold(addrs[0]), _fold(s_row), _fold(o_row + (addrs[0] - d_row) // es * 4),
                        n * src.es, repeat=_fold(repeat), mask=_fold(mask), dst_rep=reps[0])

        flat(L, emit, [Operand(d_row, es, [1])], _fold(ext[1] * words), d_shape[1] * words)

    counted(L, "row", ext[0], row, max_unroll=1 if _static(ext[0]) is None else 4)


def _word_offsets(L, q: int, idx_rows: int, pitch: int, wbytes: int) -> int:
    """The byte offsets of the b32 words of i64 elements whose offsets are in ``q`` (``idx_rows`` rows of ``pitch``
    words, ``wbytes`` in all): ``e[k] = q[k // 2] + 4 · (k % 2)``, ``2 · pitch`` words a row, in the scratch after
    ``q`` (idioms.gathers.gather_scratch: 7 tables). No i32 shift or ``and`` on the A2 vector unit: ``k // 2`` is
    ``floor(k · 0.5)`` in f32 (exact: k < 2^24), and the parity ``4k − 2 · 4(k // 2)``::

        vci t = k;  vconv p = f32(t);  vmuls p ·= 0.5;  vconv p = floor(p)        t, p: 2 · rows · pitch words
        vmuls p ·= 4;  vmuls t ·= 4                                               p: each element's offset twice
        vgather e = q at p;  vsub t −= p;  then vsub t −= p;  then vadd e += t
    """
    n = 2 * idx_rows * pitch
    e, t, p = q + wbytes, q + 3 * wbytes, q + 5 * wbytes
    table = Imm(n)

    def over(*addrs):  # flat over the n words of each table in ``addrs``
        return lambda emit: flat(L, emit, [Operand(Imm(a), 4, [1]) for a in addrs], table, n)

    def at(addrs, a, base):  # the address in table ``a`` of the element at addrs[0] in table ``base``
        return _fold(addrs[0] + (a - base))

    # the conversion of ``q`` ended with a pipe_barrier V (its scratch temporaries are free)
    over(t)(lambda a, r, m, reps: L.b.vci("i32", _fold(a[0]), _fold((a[0] - t) // 4), repeat=_fold(r),
                                          mask=_fold(m), dst_rep=reps[0]))
    barrier(L)
    over(t, p)(lambda a, r, m, reps: L.b.vconv("i32", "f32", _fold(a[1]), _fold(a[0]), round_mode="rint",
                                               repeat=_fold(r), mask=_fold(m), src_rep=reps[0], dst_rep=reps[1]))
    barrier(L)
    over(p)(lambda a, r, m, reps: L.b.vmuls("f32", _fold(a[0]), _fold(a[0]), Imm(0.5), repeat=_fold(r),
                                            mask=_fold(m), src_rep=reps[0], dst_rep=reps[0]))
    barrier(L)
    over(p)(lambda a, r, m, reps: L.b.vconv("f32", "i32", _fold(a[0]), _fold(a[0]), round_mode="floor",
                                            repeat=_fold(r), mask=_fold(m), src_rep=reps[0], dst_rep=reps[0]))
    barrier(L)
    for x in (p, t):
        over(x)(lambda a, r, m, reps: L.b.vmuls("i32", _fold(a[0]), _fold(a[0]), Imm(4), repeat=_fold(r),
                                                mask=_fold(m), src_rep=reps[0], dst_rep=reps[0]))
    barrier(L)
    over(e)(lambda a, r, m, reps: L.b.vgather("i32", _fold(a[0]), Imm(q), at(a, p, e), wbytes, repeat=_fold(r),
                                              mask=_fold(m), dst_rep=reps[0]))

    def sub(a, r, m, reps):
        L.b.vsub("i32", dst=_fold(a[0]), src0=_fold(a[0]), src1=at(a, p, t), repeat=_fold(r), mask=_fold(m),
                 src0_rep=reps[0], src1_rep=reps[0], dst_rep=reps[0])

    over(t)(sub)
    barrier(L)
    over(t)(sub)
    barrier(L)
    over(e)(lambda a, r, m, reps: L.b.vadd("i32", dst=_fold(a[0]), src0=_fold(a[0]), src1=at(a, t, e),
                                           repeat=_fold(r), mask=_fold(m), src0_rep=reps[0], src1_rep=reps[0],
                                           dst_rep=reps[0]))
    barrier(L)
    return e

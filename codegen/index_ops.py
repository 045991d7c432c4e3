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

from graph_passes.dialects.hivm import VGatherOffsetsOp
from graph_passes.intmath import align_up, prod
from simulator.expr import Expr, Imm
from simulator.isa.index import GATHER_DTYPES, VCI_DTYPES

from .errors import CodegenError
from .operands import barrier, operand_of, ub_buf, vector_dtype
from .vector import SCRATCH, Operand, buffer_tags, counted, flat, fold, region, static_int, vector_instr


def emit_varange(state, op) -> None:
    dst = ub_buf(state, op, op.operand("dst"))
    dtype = vector_dtype(op, dst.type, VCI_DTYPES)
    ext = [state.index(v) for v in op.extents()]
    caps = list(dst.type.static_shape())
    offset = state.index(op.offset())
    start, step = op.attributes["start"], op.attributes["step"]
    is_float = dtype.startswith("f")
    num = (lambda x: float(x)) if is_float else (lambda x: int(x))
    base = dst.addr
    first_extra = start if step == 1 else 0

    vci = vector_instr(state, "vci", dtype, ("dst",),
                       first=lambda a: fold(offset + (a[0] - base) // dst.es + first_extra))
    ops = [operand_of(dst)]
    region(state, vci, ops, ext, caps)
    for form, value, needed in (("muls", step, step != 1), ("adds", start, step != 1 and start != 0)):
        if needed:  # in place: dst = dst (form) value
            barrier(state)
            region(state, vector_instr(state, "v" + form, dtype, ("src", "dst"), scalar=Imm(num(value))), ops * 2,
                   ext, caps)


def emit_vgather_offsets(state, op) -> None:
    """``vgather_offsets index, n {es}``: the conversion of :func:`emit_vgather`, into the scratch, for the
    ``vgather {converted}`` right after it (which finds the offsets there: the same scratch address)."""
    idx = ub_buf(state, op, op.operand("index"))
    n = state.static(op.indices[0])
    if n is None:
        raise CodegenError(op, "the gathered rows' length must be static")
    shape = list(idx.type.static_shape())
    idx_rows, idx_cols = prod(shape[:-1]), shape[-1]
    _convert(state, idx, idx_rows, idx_cols, n, op.attributes["es"])


def _check_offsets_precede(state, op) -> None:
    """A ``vgather {converted}`` reads the offsets its ``vgather_offsets`` left in the scratch: that op, on the same
    index, must be the last vector op before it (any other could have reused the scratch)."""
    prev = state.last_vector_op
    if prev is None or not isinstance(prev, VGatherOffsetsOp) or prev.operand("index") is not op.operand("index"):
        found = "no vector op" if prev is None else f"'{prev.name}'"
        raise CodegenError(op, f"a vgather {{converted}} needs the hivm.vgather_offsets of its index as the vector op "
                               f"right before it (it reads the offsets from the scratch); found {found}")


def _layout(idx_cols: int, idx_rows: int) -> tuple[int, int, int]:
    """(i32 words per index row in scratch — 32-B aligned rows —, words, bytes of one word table)."""
    pitch = align_up(idx_cols, 8)
    words = idx_rows * pitch
    return pitch, words, align_up(words * 4, 32)


def _convert(state, idx, idx_rows: int, idx_cols: int, n: int, es: int) -> int:
    """The index's checked byte offsets in the scratch (see :func:`emit_vgather`); returns their address."""
    pitch, words, wbytes = _layout(idx_cols, idx_rows)
    wide = idx.dtype == "i64"
    q = state.scratch(wbytes * (3 if wide else 1), "the byte offsets of a vgather")

    def tables(*addrs):  # the words of tables at ``addrs`` (in the scratch) as region operands
        return [Operand(a if isinstance(a, Expr) else Imm(a), 4, [1], SCRATCH) for a in addrs]

    def scalar(form, dst_addr, src_addr, value, fence=True):  # dst = src (form) value, word by word
        if fence:
            barrier(state)
        emit = vector_instr(state, "v" + form, "i32", ("dst", "src"), scalar=Imm(value))
        src_op = Operand(idx.addr, 4, [1], idx.tag) if src_addr is idx.addr else tables(src_addr)[0]
        flat(state, emit, tables(dst_addr) + [src_op], Imm(words), words)

    if wide:
        w, h = q + wbytes, q + 2 * wbytes

        def row_positions(r):  # w[r][c] = r*idx_cols + c: the i64 element behind word (r, c)
            row = Imm(w) + r * (pitch * 4)
            emit = vector_instr(state, "vci", "i32", ("dst",), first=lambda a: fold(r * idx_cols + (a[0] - row) // 4))
            flat(state, emit, [Operand(row, 4, [1], SCRATCH)], Imm(pitch), pitch)

        def words_of(target, offsets, fence=True):  # target[k] = the b32 word of the index at byte offsets[k]
            if fence:
                barrier(state)
            emit = vector_instr(state, "vgather", "i32", ("dst", None), src=idx.addr, offset=lambda a: a[1],
                                src_len=idx_rows * idx_cols * 8, tags=buffer_tags(src=idx, offset=SCRATCH))
            flat(state, emit, tables(target, offsets), Imm(words), words)

        barrier(state)
        counted(state, "r", Imm(idx_rows), row_positions)
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
        barrier(state)
        flat(state, vector_instr(state, "vadd", "i32", ("dst", "src0", "src1")), tables(q, q, w), Imm(words), words)
    else:
        scalar("maxs", q, idx.addr, -1)
        scalar("mins", q, q, n)
        scalar("muls", q, q, es)
    barrier(state)
    return q


def emit_vgather(state, op) -> None:
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
    src_v, idx_v, dst_v = op.operand("src"), op.operand("index"), op.operand("dst")
    src, idx, dst = ub_buf(state, op, src_v), ub_buf(state, op, idx_v), ub_buf(state, op, dst_v)
    wide_data = dst.dtype == src.dtype == "i64"
    dtype = "i32" if wide_data else vector_dtype(op, dst.type, GATHER_DTYPES)
    n = state.static(op.row_length())
    if n is None:
        raise CodegenError(op, "the gathered rows' length must be static")
    ext = [state.index(v) for v in op.extents()]
    d_shape, i_shape, s_shape = (list(b.type.static_shape()) for b in (dst, idx, src))
    if len(ext) == 1:
        d_shape, i_shape, s_shape, ext = [1] + d_shape, [1] + i_shape, [1] + s_shape, [Imm(1)] + ext
    lead = len(ext) - 1  # the dims above the last: rows, walked over their valid extents only
    if any(n not in (1, m) for n, m in zip(i_shape[:lead], d_shape[:lead])):
        raise CodegenError(op, f"index rows {i_shape[:lead]} do not match the destination's {d_shape[:lead]}")
    if s_shape[:lead] != d_shape[:lead]:
        raise CodegenError(op, f"source rows {s_shape[:lead]} do not match the destination's {d_shape[:lead]}")
    idx_rows, idx_cols = prod(i_shape[:lead]), i_shape[-1]
    pitch, _, wbytes = _layout(idx_cols, idx_rows)
    if op.attributes.get("converted"):
        _check_offsets_precede(state, op)
        q = state.scratch(wbytes, "the byte offsets of a vgather")  # where vgather_offsets left them
    else:
        q = _convert(state, idx, idx_rows, idx_cols, n, dst.es)
    words = 2 if wide_data else 1  # b32 words an element moves as
    if wide_data:
        q, pitch = _word_offsets(state, q, idx_rows, pitch, wbytes), 2 * pitch
    es = dst.es // words

    def row_of(shape, at):  # the row (of ``shape``'s rows) of destination row ``at`` (an index per leading dim)
        r, pitch_rows = Imm(0), 1
        for k in reversed(range(lead)):
            if shape[k] > 1:
                r = fold(r + at[k] * pitch_rows)
            pitch_rows *= shape[k]
        return r

    def row(at):
        j, i = row_of(d_shape, at), row_of(i_shape, at)
        d_row = dst.addr + j * (d_shape[-1] * dst.es)
        s_row = src.addr + j * (s_shape[-1] * src.es)
        o_row = Imm(q) + (i * (pitch * 4) if idx_rows > 1 else 0)

        emit = vector_instr(state, "vgather", dtype, ("dst",), src=fold(s_row), src_len=n * src.es,
                            offset=lambda a: fold(o_row + (a[0] - d_row) // es * 4),
                            tags=buffer_tags(src=src, offset=SCRATCH))
        flat(state, emit, [Operand(fold(d_row), es, [1], dst.tag)], fold(ext[-1] * words), d_shape[-1] * words)

    def rows(at):  # the valid rows of leading dim len(at) onwards
        if len(at) == lead:
            return row(at)
        e = ext[len(at)]
        counted(state, "row", e, lambda i: rows(at + [i]), max_unroll=1 if static_int(e) is None else 4)

    rows([])


def _word_offsets(state, q: int, idx_rows: int, pitch: int, wbytes: int) -> int:
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

    def over(mnemonic, dtype, addrs, operands, **fields):  # one instruction over the n words of each table
        emit = vector_instr(state, mnemonic, dtype, operands, **fields)
        flat(state, emit, [Operand(Imm(a), 4, [1], SCRATCH) for a in addrs], table, n)

    # the conversion of ``q`` ended with a pipe_barrier V (its scratch temporaries are free)
    over("vci", "i32", [t], ("dst",), first=lambda a: fold((a[0] - t) // 4))
    barrier(state)
    over("vconv", ("i32", "f32"), [t, p], ("src", "dst"), round_mode="rint")
    barrier(state)
    over("vmuls", "f32", [p, p], ("src", "dst"), scalar=Imm(0.5))
    barrier(state)
    over("vconv", ("f32", "i32"), [p, p], ("src", "dst"), round_mode="floor")
    barrier(state)
    for x in (p, t):
        over("vmuls", "i32", [x, x], ("src", "dst"), scalar=Imm(4))
    barrier(state)
    over("vgather", "i32", [e, p], ("dst", None), src=Imm(q), offset=lambda a: a[1], src_len=wbytes,
         tags={"src": SCRATCH, "offset": SCRATCH})
    for _ in range(2):
        over("vsub", "i32", [t, t, p], ("dst", "src0", "src1"))
        barrier(state)
    over("vadd", "i32", [e, e, t], ("dst", "src0", "src1"))
    barrier(state)
    return e

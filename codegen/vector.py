"""Repeat-based vector emission: how a HIVM region (valid extents over buffers) becomes vector instructions.

A vector instruction processes ``repeat`` (≤ 255) repeats of ``mask`` (≤ lanes = 256 B / widest element) elements;
operand addresses must be 32-B aligned and advance by ``rep`` 32-B blocks per repeat. Two shapes of region:

- **flat** — every operand is contiguous over the region's ``n`` elements::

      full, tail = n // lanes, n % lanes
      for g in range(ceil(full / 255)):   op(repeat=min(255, full - 255 g), mask=lanes)    at + 255 g lanes
      if tail:                            op(repeat=1, mask=tail)                            at + full lanes

- **rows** — ``e0`` rows of ``e1`` valid elements each, a row ``pitch`` apart (rows padded to 32 B in UB)::

      for c in range(ceil(e1 / lanes)):                 # column chunks
          for g in range(ceil(e0 / 255)):               # row groups: one repeat per row
              op(repeat=min(255, e0 - 255 g), mask=min(lanes, e1 - c lanes), rep=pitch)   at + c lanes + 255 g pitch

  An operand whose ``pitch`` is 0 reads the same row for every repeat (a row broadcast).

Dims of static extent 1 are dropped; leading dims beyond two become loops. An operand may also be a *block*: a
256-B region read by every repeat (a vdup'ed scalar), whatever the shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from graph_passes.idioms.limits import MAX_REPEAT  # the repeat field's limit (the schedule's estimate reads it too)
from graph_passes.intmath import ceil_div
from simulator.expr import Expr, Imm, as_expr, emin

from .errors import CodegenError


@dataclass
class Operand:
    """One vector operand: byte address, element size, per-dim element strides of the region (None: a block)."""

    addr: Expr
    es: int
    strides: list | None  # element stride per region dim (0 = broadcast along that dim); None = a 256-B block
    tag: str | None = None  # the logical buffer (Buf.tag; SCRATCH for the kernel's scratch); None: untagged


SCRATCH = "scratch"  # the buffer tag of every part of the kernel's scratch buffer


def buffer_tags(**operands) -> dict:
    """An instruction's ``tags=`` (the simulator's buffer-tag check): operand field -> the logical buffer it names,
    from a Buf or an Operand (its ``tag``) or a tag string; untagged (None) operands are left out."""
    out = {}
    for field, b in operands.items():
        t = b if isinstance(b, str) or b is None else b.tag
        if t is not None:
            out[field] = t
    return out


Emit = Callable[[list, Expr, Expr, list], None]  # (addresses, repeat, mask, rep strides in blocks) -> emits


def vector_instr(state, mnemonic: str, dtype: str | tuple[str, ...], operands, fold_exprs: bool = True,
                 **fields) -> Emit:
    """The :data:`Emit` issuing one ``mnemonic`` instruction per call: ``operands`` names the instruction operand each
    region operand is, in order (it gets the region's address and its repeat stride ``<name>_rep``; None: a region
    operand the instruction does not name); ``fields`` are its other operands, each a value or a function of the
    call's addresses (``tags``: the buffer tags of operands given as fields); ``dtype`` is its leading type operand (a
    tuple for several, vconv's source and destination).
    Addresses, repeat and mask are folded (:func:`fold`) unless ``fold_exprs`` is False."""
    dtypes = dtype if isinstance(dtype, tuple) else (dtype,)
    f = fold if fold_exprs else (lambda e: e)
    field_tags = fields.pop("tags", None) or {}  # the tags of operands given as fields (a scratch block)

    def emit(addrs, repeat, mask, reps):
        kw = {"repeat": f(repeat), "mask": f(mask)}
        tags = dict(field_tags)
        for name, a, r, t in zip(operands, addrs, reps, state.region_tags or [None] * len(addrs)):
            if name is not None:
                kw[name], kw[name + "_rep"] = f(a), r
                if t is not None:
                    tags[name] = t
        if tags:
            kw["tags"] = tags
        for name, v in fields.items():
            kw[name] = v(addrs) if callable(v) else v
        getattr(state.b, mnemonic)(*dtypes, **kw)

    return emit


def lanes_of(ops: list[Operand]) -> int:
    return 256 // max(o.es for o in ops)


def static_int(e) -> int | None:
    e = as_expr(e)
    return int(e.value) if isinstance(e, Imm) else None


def counted(state, hint: str, count, body, max_unroll: int = 4) -> None:
    """Call ``body(i)`` for i in range(count): unrolled when count is static and small, else a program loop."""
    n = static_int(count)
    if n is not None and n <= max_unroll:
        for i in range(n):
            body(Imm(i))
        return
    var = state.fresh(hint)
    with state.b.loop(var, 0, count, 1) as i:
        body(i)


def region(state, emit: Emit, ops: list[Operand], extents: list, caps: list[int]) -> None:
    """Emit ``emit`` over the region ``extents`` (caps: static upper bound per dim) of every operand."""
    dims = [d for d, e in enumerate(extents) if static_int(e) != 1]
    if any(static_int(extents[d]) == 0 for d in dims):
        return
    if len(dims) > 2 and _contiguous(ops, extents, dims[-2], dims[-1]):
        ops, extents, caps = _merged(ops, extents, caps, dims[-2], dims[-1])
        return region(state, emit, ops, extents, caps)
    if len(dims) > 2:
        outer, dims = dims[0], dims[1:]

        def body(i):
            shifted = [o if o.strides is None else Operand(o.addr + i * (o.strides[outer] * o.es), o.es, o.strides,
                                                           o.tag) for o in ops]
            region(state, emit, shifted, [e if d != outer else 1 for d, e in enumerate(extents)], caps)

        return counted(state, "d", extents[outer], body, max_unroll=1)
    if not dims:
        return flat(state, emit, ops, Imm(1), 1)
    if len(dims) == 1:
        d = dims[0]
        if all(o.strides is None or o.strides[d] == 1 for o in ops):
            return flat(state, emit, ops, as_expr(extents[d]), caps[d])
        return rows(state, emit, ops, as_expr(extents[d]), Imm(1), caps[d], 1, d, None)
    d0, d1 = dims
    if not all(o.strides is None or o.strides[d1] == 1 for o in ops):
        if not _blocks_apart(ops, d1):
            bad = [o.strides[d1] for o in ops if o.strides is not None]
            raise CodegenError(state.b.current, f"the innermost dim of the region is not contiguous in every operand "
                                                f"and its element strides {bad} (dim {d1}) are not whole 32-B blocks")
        if _contiguous(ops, extents, d0, d1):  # a padded column buffer [A, B, 1]: A·B rows, one element each
            ops, extents, caps = _merged(ops, extents, caps, d0, d1)
            return region(state, emit, ops, extents, caps)

        def strided_row(i):
            shifted = [o if o.strides is None else Operand(o.addr + i * (o.strides[d0] * o.es), o.es, o.strides,
                                                           o.tag) for o in ops]
            rows(state, emit, shifted, as_expr(extents[d1]), Imm(1), caps[d1], 1, d1, None)

        return counted(state, "d", extents[d0], strided_row, max_unroll=1)
    e1 = static_int(extents[d1])
    if e1 is not None and all(o.strides is None or o.strides[d0] == e1 for o in ops):
        n = as_expr(extents[d0]) * e1 if static_int(extents[d0]) is None else Imm(static_int(extents[d0]) * e1)
        return flat(state, emit, ops, n, caps[d0] * e1)
    return rows(state, emit, ops, as_expr(extents[d0]), as_expr(extents[d1]), caps[d0], caps[d1], d0, d1)


def _blocks_apart(ops: list[Operand], d: int) -> bool:
    """Whether consecutive elements along dim ``d`` lie whole 32-B blocks apart in every operand (0: a broadcast): a
    strided innermost dim (a padded buffer's column ``[A, B, 1]`` viewed as ``[A, B]``) as rows of one element each,
    one repeat per element (mask 1, the repeat stride that many blocks)."""
    return all(o.strides is None or (o.strides[d] * o.es) % 32 == 0 for o in ops)


def _contiguous(ops: list[Operand], extents: list, a: int, b: int) -> bool:
    """Whether dims ``a`` then ``b`` (the next one of the region) are one run in every operand: ``b``'s extent is
    static and ``a``'s stride is ``b``'s times it (a packed column buffer ``2x3x4x1``: its 24 elements)."""
    e = static_int(extents[b])
    return e is not None and all(o.strides is None or o.strides[a] == o.strides[b] * e for o in ops)


def _merged(ops: list[Operand], extents: list, caps: list[int], a: int, b: int):
    """The region with contiguous dims ``a`` and ``b`` (:func:`_contiguous`) as one dim ``a``: rows of the outer
    dims then start where the operands' runs do, never at an unaligned pitch of a packed buffer."""
    e = static_int(extents[b])
    merged = []
    for o in ops:
        strides = None if o.strides is None else [o.strides[b] if d == a else (0 if d == b else s)
                                                   for d, s in enumerate(o.strides)]
        merged.append(Operand(o.addr, o.es, strides, o.tag))
    n = static_int(extents[a])
    extents = [(Imm(n * e) if n is not None else as_expr(x) * e) if d == a else (Imm(1) if d == b else x)
               for d, x in enumerate(extents)]
    caps = [c * e if d == a else (1 if d == b else c) for d, c in enumerate(caps)]
    return merged, extents, caps


def flat(state, emit: Emit, ops: list[Operand], n: Expr, cap: int) -> None:
    state.region_tags = [o.tag for o in ops]  # the buffer tags vector_instr gives the operands it names
    lanes = lanes_of(ops)
    reps = [0 if o.strides is None else lanes * o.es // 32 for o in ops]

    def at(k):  # addresses after k elements
        return [o.addr if o.strides is None else o.addr + k * o.es for o in ops]

    nv = static_int(n)
    if nv is not None:
        done = 0
        full, tail = divmod(nv, lanes)
        while full > 0:
            r = min(MAX_REPEAT, full)
            emit([fold(a) for a in at(done)], Imm(r), Imm(lanes), reps)
            done += r * lanes
            full -= r
        if tail:
            emit([fold(a) for a in at(done)], Imm(1), Imm(tail), reps)
        return
    full = state.mov("full", n // lanes)
    tail = state.mov("tail", n % lanes)
    if cap // lanes <= MAX_REPEAT:
        if cap >= lanes:
            with state.b.if_(full > 0):
                emit(at(Imm(0)), full, Imm(lanes), reps)
    else:

        def group(g):
            emit(at(g * (MAX_REPEAT * lanes)), emin(MAX_REPEAT, full - g * MAX_REPEAT), Imm(lanes), reps)

        counted(state, "g", (full + (MAX_REPEAT - 1)) // MAX_REPEAT, group, max_unroll=0)
    with state.b.if_(tail > 0):
        emit(at(full * lanes), Imm(1), tail, reps)


def rows(state, emit: Emit, ops, e0: Expr, e1: Expr, cap0: int, cap1: int, d0: int, d1: int | None) -> None:
    state.region_tags = [o.tag for o in ops]  # the buffer tags vector_instr gives the operands it names
    lanes = lanes_of(ops)
    reps = []
    for o in ops:
        if o.strides is None:
            reps.append(0)
            continue
        pitch_bytes = o.strides[d0] * o.es
        if pitch_bytes % 32:
            raise CodegenError(state.b.current, f"rows of {pitch_bytes} B are not 32-B aligned in UB (pad the buffer)")
        reps.append(pitch_bytes // 32)

    def at(c, g):
        out = []
        for o in ops:
            if o.strides is None:
                out.append(o.addr)
                continue
            a = o.addr
            if d1 is not None:
                a = a + c * (lanes * o.strides[d1] * o.es)  # 0 for a column operand (one block per row)
            out.append(fold(a + g * (MAX_REPEAT * o.strides[d0] * o.es)))
        return out

    n_chunks = ceil_expr(e1, lanes)
    n_groups = ceil_expr(e0, MAX_REPEAT)
    e1s = static_int(e1)

    def chunk(c):
        mask = chunk_mask(c, e1, e1s, cap1, lanes)
        if cap0 <= MAX_REPEAT:
            emit(at(c, Imm(0)), e0, mask, reps)
            return
        counted(state, "g", n_groups, lambda g: emit(at(c, g), fold(emin(MAX_REPEAT, e0 - g * MAX_REPEAT)), mask, reps),
                max_unroll=0)

    if cap1 <= lanes:
        chunk(Imm(0))
    else:
        counted(state, "c", n_chunks, chunk)


def ceil_expr(e: Expr, k: int) -> Expr:
    v = static_int(e)
    return Imm(ceil_div(v, k)) if v is not None else (e + (k - 1)) // k


def fold(e: Expr) -> Expr:
    """Fold ``x + 0`` / constant arithmetic so that the assembly stays readable."""
    from simulator.expr import BinOp

    if not isinstance(e, BinOp):
        return e
    a, b = fold(e.a), fold(e.b)
    if isinstance(a, Imm) and isinstance(b, Imm) and e.op in ("+", "-", "*", "//", "%"):
        return Imm({"+": a.value + b.value, "-": a.value - b.value, "*": a.value * b.value,
                    "//": a.value // b.value if b.value else 0, "%": a.value % b.value if b.value else 0}[e.op])
    if e.op in ("+", "-") and isinstance(b, Imm) and b.value == 0:
        return a
    if e.op == "+" and isinstance(a, Imm) and a.value == 0:
        return b
    if e.op == "*" and ((isinstance(b, Imm) and b.value == 0) or (isinstance(a, Imm) and a.value == 0)):
        return Imm(0)
    if e.op == "*" and isinstance(b, Imm) and b.value == 1:
        return a
    return BinOp(e.op, a, b)


def valid_rows(ext, caps, dims):
    """Rows of a buffer whose ``dims`` (row-major, caps ``caps``) flatten into one run of rows: the last valid row's
    index + 1 (the invalid rows between valid ones are processed too, harmlessly)."""
    rows = None
    for d in dims:
        rows = ext[d] if rows is None else fold((rows - 1) * caps[d] + ext[d])
    return Imm(1) if rows is None else rows


def column_bits(shape) -> bool:
    """Whether an i1 mask of static ``shape`` is a *column* mask: last dim 1, one bit per row (``x != c`` of a
    row-wise value). Such a mask is one bit string over its row-major elements (bit k at byte k/8), like a 1-D mask,
    not a 32-B row per element; its operands (the same shape) are contiguous too (docs/codegen.md)."""
    return len(shape) > 1 and shape[-1] == 1


def flatten_alike(mask_shape, shapes) -> bool:
    """Whether operands of static ``shapes`` flatten like a column mask of ``mask_shape``: element k of the run is
    element k of each (one spanned dim, each buffer's run padded by its own dtype; or identical shapes)."""
    one_run = all(len(sh) == len(mask_shape) and sh[-1] == 1 and sum(n > 1 for n in sh[:-1]) <= 1
                  for sh in list(shapes) + [mask_shape])
    return one_run or all(list(sh) == list(mask_shape) for sh in shapes)


def flat_extent(ext, shape):
    """The valid elements of a buffer of static ``shape`` with last dim 1, flattened row-major (:func:`valid_rows`)."""
    return valid_rows(ext, shape, [k for k in range(len(shape)) if shape[k] > 1])


def chunk_mask(c, e1, e1s: int | None, cap1: int, lanes: int):
    """Elements of the row that chunk ``c`` (``lanes`` wide) covers: all of ``e1`` when one chunk holds a row
    (``cap1 <= lanes``), else ``min(lanes, e1 - c*lanes)`` — an immediate when both are static."""
    if cap1 <= lanes:
        return e1
    if e1s is not None and isinstance(c, Imm):
        return Imm(min(lanes, e1s - c.value * lanes))
    return emin(lanes, e1 - c * lanes)

"""The local buffers a vector kernel's lowering allocates, shared by ``hfusion-auto-schedule`` (to size tiles so
they fit UB) and ``convert-to-hivm`` (to allocate exactly those buffers).

One buffer per tensor value of the body, except that an elementwise op writes in place into an operand that
is an intermediate value of the same dtype and domain dims read by no one after it: its only reader is this op,
or (one-pass kernels) every other reader is an ancestor of this op — softmax's ``exp(x - max) * (1 / sum)`` writes
over ``exp(x - max)``, whose other reader, the row sum, it depends on.
Reductions whose reduced dims are tiled (looped) also get a *partial* buffer per reduction: each reduced tile is
reduced into it and combined into the accumulator (the reduction's result buffer).

Buffers fed by a load (kernel inputs) or drained by a store (kernel results) get the multi-buffer depth;
the others get one copy. A buffer's shape has the domain's rank: the tile size in the dims its values span and 1
elsewhere; its last dim is padded to the UB alignment (32 B) so that every row starts aligned.

*Scratch*: one more buffer per kernel, ``hivm.alloc {scratch = true}``, the temporary UB of the code generator's
multi-instruction idioms (docs/codegen.md), shared by every op (they run one after the other on PIPE_V), so its
size is the largest need of one op (:func:`scratch_bytes`; a software-pipelined kernel has one such part per stage,
pipeline.py):

- a last-dim reduction of rows of whole repeats: the first level (and, unless its source dies at it, the second)
  of a block fold of a group of rows (:func:`block_fold_lengths`, :func:`block_fold_rows`: each level reduces
  every 32-B block to one element); of other rows longer than one vector repeat: ``K`` 256-B partials per row for
  a group of ``G`` rows (:func:`row_fold_shape`: the column chunks fold into the K partials, which then halve to
  one) — none when its source dies at it (:func:`in_place_folds`: the rows fold in the source's own buffer);
- a reduction over a dim that is not the last (a bias gradient's column sums): the rows of a pairwise tree fold,
  ``K`` rows of the kept dims (:func:`outer_fold_rows`: the rows r and r + K combine into them, then they halve);
- a reduction of a whole 1-D buffer longer than one repeat: the per-repeat partials of every level;
- a last-dim product (any row length): a 256-B row and a 32-B block per row of a group of
  ``min(rows, SCRATCH_ROWS)`` rows (the vmul tree of ``codegen.reduce._prod_rows``);
- a binary op with a scalar operand and no vector-scalar instruction (div): one 256-B block (in place, the
  scalar is ``vdup``-ed into it); a select with scalar values (0/1 from a mask, ``hfusion-legalize-bool``): one
  block per scalar;
- a bitwise xor: ``(a | b) − (a & b)`` keeps ``a & b`` in a temporary the size of the destination;
- a column broadcast into fewer than 8 rows shorter than 256 B, or a broadcast of one element into a buffer that does
  not span the last dim (:func:`element_broadcast`): ``vbrcb``'s 8 blocks (256 B);
- a math fun with no vector instruction (erf, gelu_erf, sin, cos, pow other than x², √x, 1/√x, 1/x, 1):
  :func:`math_temps` f32 temporaries shaped like the destination (its elements × 4 B each; f16 computes in f32,
  so two more for the f32 input and result). ``codegen.math_ops`` uses exactly this count.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..dialects.hfusion import NOT_IN_PLACE_FUNS
from ..ir.core import OpResult, Value
from ..ir.sizes import as_expr
from ..ir.types import DTYPE_BYTES, TensorType
from .kernel_info import ELEMENTWISE_OPS, KernelInfo, gather_index, looked_through


@dataclass(eq=False)
class Buffer:
    index: int
    dtype: str
    mask: tuple  # domain dims spanned
    loaded: bool = False
    stored: bool = False
    values: list = field(default_factory=list)
    role: str = "value"  # "value" | "partial"
    fixed: dict = field(default_factory=dict)  # domain dim -> extent independent of the tile (a gathered row)
    whole_repeats: bool = False  # an operand of a column-mask compare/select: rows padded to 256 elements
    lanes: tuple = ()  # an operand of compares/selects along the last dim, their lanes per repeat: rows longer than
    #                    one op's repeat are padded to whole repeats of it (codegen issues its last vcmp/vsel over whole
    #                    repeats), for every such op (an f16 compare's mask read by an f32 select: 128 and 64 lanes)

    def depth(self, multi_buffer: int, whole=()) -> int:
        """Copies: the multi-buffer depth when a DMA in the work-item loop feeds or drains it; one for a loaded
        buffer spanning only dims in ``whole`` (dims the tile covers: the load is loop-invariant, hoisted before
        the loop by convert-to-hivm, and hivm-mark-multi-buffer leaves it single)."""
        if self.loaded and not self.stored and set(self.mask) <= set(whole):
            return 1
        return multi_buffer if (self.loaded or self.stored) else 1

    def shape(self, tile, ub_align: int) -> list[int]:
        rank = len(tile)
        shape = [self.fixed.get(d, int(tile[d])) if d in self.mask else 1 for d in range(rank)]
        if rank and (rank - 1) in self.mask:
            granule = max(1, ub_align // DTYPE_BYTES[self.dtype])
            shape[-1] = -(-shape[-1] // granule) * granule
            for lanes in sorted(self.lanes):
                if shape[-1] > lanes:
                    shape[-1] = -(-shape[-1] // lanes) * lanes
        elif self.whole_repeats and self.mask:  # a column: pad its run of rows to whole repeats of any dtype (256
            # elements), the same shape for the mask and every operand; the innermost spanned dim holding more than
            # one element is padded, so that spanned dims of one element (a [R, 1] value in an [R, 1, C] domain)
            # leave the run contiguous instead of spacing its rows 256 elements apart
            d = max((k for k in self.mask if shape[k] > 1), default=max(self.mask))
            shape[d] = -(-shape[d] // REPEAT_BYTES) * REPEAT_BYTES
        return shape

    def nbytes(self, tile, ub_align: int) -> int:
        n = DTYPE_BYTES[self.dtype]
        for s in self.shape(tile, ub_align):
            n *= s
        return -(-n // ub_align) * ub_align


REPEAT_BYTES = 256  # one vector repeat
SCRATCH_ROWS = 16  # rows folded at once by a long-row reduction
FOLD_PARTIALS = 16  # most 256-B partials per row a long-row reduction folds into
WIDE_FOLD_PARTIALS = 32  # ... when the tile leaves UB for it (``wide``): one fold step fewer for rows of 64 chunks
FOLD_REPEATS = 64  # most 256-B partials of one group of rows (G·K): the reduction's scratch is at most 16 KiB
MAX_REPEAT = 255  # repeats of one vector instruction (the repeat field's 8 bits)
SCALAR_FORMS = ("add", "mul", "max", "min", "sub")  # binary funs a scalar operand never needs scratch for
MATH_TEMPS = {"erf": 4, "gelu_erf": 4, "sin": 4, "cos": 4}  # f32 temporaries of codegen.math_ops' sequences
ONE_INSTRUCTION_POW = (0.0, 1.0, 2.0, 0.5, -0.5, -1.0)  # x ** e emitted as one instruction in the op's dtype


def row_fold_shape(rows: int, chunks: int, wide: bool = False) -> tuple[int, int]:
    """(G, K) of a last-dim reduction over ``rows`` rows of ``chunks`` 256-B column chunks (> 1): G rows at a
    time, each row's chunks folded into K partials (a power of two, at most half the chunks), which then halve to
    one in log2(K) steps — log-depth, so few rows of many chunks do not pay one dependent instruction per chunk.
    Its scratch is G·K·256 B. ``wide``: up to WIDE_FOLD_PARTIALS partials (the schedule grants it when the tile
    leaves UB for the larger scratch)."""
    g = max(1, min(rows, SCRATCH_ROWS))
    k = 1
    while k * 2 <= min(chunks // 2, WIDE_FOLD_PARTIALS if wide else FOLD_PARTIALS, FOLD_REPEATS // g):
        k *= 2
    return g, k


BLOCK_FOLD_BYTES = FOLD_REPEATS * REPEAT_BYTES  # most scratch of a block fold's levels (as a pairwise row fold's)


def block_fold_lengths(cols: int, es: int) -> list[int]:
    """The row lengths a last-dim sum, max or min over rows of ``cols`` elements of ``es`` bytes passes through
    when block reductions fold it (codegen.reduce: ``vcgadd/vcgmax/vcgmin`` reduce every 32-B block to one
    element, 1 cycle a repeat against 2 for a pairwise ``vadd`` level and 7 for ``vcadd``): ``[cols, cols/e, …]``
    (``e`` elements a block), one dependent step per level, while the row is longer than one repeat and the next
    one is whole 32-B blocks (so every level reads whole repeats of contiguous rows). The last length is then
    reduced per repeat (``vcadd …``, at most one repeat a row) or, longer, by the pairwise fold. Empty (no block
    fold) unless the rows are whole repeats longer than one, at most MAX_REPEAT of them, and the fold takes fewer
    dependent steps than the pairwise one in place (ceil(log2 chunks) + 1: rows of two repeats keep it — the same
    steps and cycles, and its order of summation). f32 rows of 4096: 4096, 512, 64 — three dependent steps with
    the ``vcadd``, where the pairwise fold takes seven."""
    lanes, per_block = REPEAT_BYTES // es, 32 // es
    chunks = cols // lanes
    if cols <= lanes or (cols * es) % REPEAT_BYTES or chunks > MAX_REPEAT:
        return []
    out = [cols]
    while out[-1] > lanes and (out[-1] // per_block * es) % 32 == 0:
        out.append(out[-1] // per_block)
    return out if len(out) > 1 and block_fold_levels(out, es) < in_place_fold_levels(1, chunks) else []


def block_fold_levels(lengths: list[int], es: int) -> int:
    """Dependent steps of a block fold through ``lengths`` (:func:`block_fold_lengths`) of one group of rows: one
    per level, then one per-repeat reduction, or the pairwise fold in place of a last length longer than a repeat
    (:func:`in_place_fold_levels`)."""
    left = -(-lengths[-1] // (REPEAT_BYTES // es))
    return len(lengths) - 1 + (1 if left == 1 else in_place_fold_levels(1, left))


def block_fold_bytes(rows: int, lengths: list[int], es: int, in_place: bool) -> int:
    """Scratch of a block fold (:func:`block_fold_lengths`) of ``rows`` rows at a time: the first level's results
    and, unless the source dies at the reduction (``in_place``: the second level writes into it), the second's —
    the levels alternate between the two, so no level overwrites what it reads."""
    align = lambda n: -(-n // 32) * 32  # noqa: E731
    second = align(rows * lengths[2] * es) if len(lengths) > 2 and not in_place else 0
    return align(rows * lengths[1] * es) + second


def block_fold_rows(rows: int, lengths: list[int], es: int, in_place: bool, budget: int = BLOCK_FOLD_BYTES) -> int:
    """Rows a block fold reduces at a time: all of them, or the most whose scratch (:func:`block_fold_bytes`) fits
    ``budget`` (at most MAX_REPEAT: its last step takes one repeat a row); 0 when one row does not fit."""
    g = min(rows, MAX_REPEAT)
    while g and block_fold_bytes(g, lengths, es, in_place) > budget:
        g = min(g - 1, budget * g // block_fold_bytes(g, lengths, es, in_place))
    return g


def in_place_fold_levels(rows: int, chunks: int) -> int:
    """Dependent steps of a last-dim reduction folded in its source's buffer (:func:`in_place_folds`), ``rows``
    rows of ``chunks`` 256-B column chunks (> 1): per group of MAX_REPEAT rows, chunk k ⊕= chunk k + H for the
    largest power of two H < chunks, then the H chunks halve to one, then one per-repeat reduce —
    ceil(log2(chunks)) + 1 (a scratch fold into K partials takes ceil((chunks − 2K) / K) more)."""
    return ((chunks - 1).bit_length() + 1) * -(-rows // MAX_REPEAT)


def block_fold_scratch(rows: int, lengths: list[int], es: int, in_place: bool) -> int:
    """Scratch of a block fold of ``rows`` rows, :func:`block_fold_rows` of them at a time (0: no block fold)."""
    return block_fold_bytes(block_fold_rows(rows, lengths, es, in_place), lengths, es, in_place) if lengths else 0


def block_folds(info: KernelInfo, reduce_looped: bool) -> set:
    """The reductions whose rows codegen may fold block by block (:func:`block_fold_lengths` decides by the row's
    length): a sum, max or min over the last domain dim alone, of a static length, in a one-pass kernel — the rows
    it holds whole, every column valid."""
    last = info.rank - 1
    if reduce_looped or last < 0 or not as_expr(info.domain[last]).is_Integer:
        return set()
    return {op for op in info.ops if op.name == "hfusion.reduce" and op.attributes["kind"] in ("sum", "max", "min")
            and [info.masks[op.operands[0]][i] for i in op.attributes["dims"]] == [last]
            and info.masks[op.operands[0]][-1] == last}


def in_place_folds(info: KernelInfo, of_value: dict, inlined: set, hoisted: list, reduce_looped: bool) -> set:
    """The reductions of a one-pass kernel that fold their rows in their source's buffer, needing no scratch (a
    block fold, :func:`block_fold_lengths`: only its first level's): a
    sum, max or min over the last domain dim alone, of a static length longer than one repeat, whose source is an
    intermediate value (not loaded, stored, hoisted or an inlined broadcast) read by that reduction only — it dies
    there, so the fold may overwrite it (a norm's squares)."""
    out: set = set()
    last = info.rank - 1
    if reduce_looped or last < 1 or not as_expr(info.domain[last]).is_Integer:
        return out
    cols = int(info.domain[last])
    hoisted_ids = set(map(id, hoisted))
    for op in info.ops:
        if op.name != "hfusion.reduce" or op.attributes["kind"] not in ("sum", "max", "min"):
            continue
        src = op.operands[0]
        b = of_value.get(src)
        if (isinstance(src, OpResult) and b is not None and not (b.loaded or b.stored) and src not in inlined
                and cols * DTYPE_BYTES[b.dtype] > REPEAT_BYTES
                and id(src) not in hoisted_ids and len(src.uses) == 1
                and [info.masks[src][i] for i in op.attributes["dims"]] == [last] and info.masks[src][-1] == last):
            out.add(op)
    return out


OUTER_FOLD_BYTES = FOLD_REPEATS * REPEAT_BYTES  # a non-wide outer fold's scratch: at most 16 KiB, as a row fold's


def outer_fold_rows(rows: int, lead: int, row_bytes: int, budget: int | None = None, ub_align: int = 32) -> int:
    """K of a reduction over a non-last dim of ``rows`` rows, each ``row_bytes`` bytes of the dims inside it, for
    each of ``lead`` indices of the dims outside it: codegen folds rows r and r + K into K scratch rows, the rows
    from 2K on K at a time, then halves the K rows to one — each step one set of instructions over all the rows it
    combines, :func:`outer_fold_levels` dependent steps. K is the power of two (at most half the next one at or
    above ``rows``) whose rows fit ``budget`` bytes (None: any) with the fewest steps, the smallest on a tie
    (256 rows: K = 128, 8 steps; 300 rows: K = 128, 9 steps — as many as K = 256 takes). K = 1 folds into the
    destination itself (no scratch: one step per row)."""
    best, k = 1, 2
    while k < rows and (budget is None or outer_fold_bytes(k, lead, row_bytes, ub_align) <= budget):
        if outer_fold_levels(rows, k) < outer_fold_levels(rows, best):
            best = k
        k *= 2
    return best


def outer_fold_levels(rows: int, k: int) -> int:
    """Dependent steps of an outer fold of ``rows`` rows into ``k`` (:func:`outer_fold_rows`): the first pairs, one
    per further K rows, the halvings."""
    return 1 + max(0, -(-rows // k) - 2) + (k.bit_length() - 1)


def outer_fold_bytes(k: int, lead: int, row_bytes: int, ub_align: int = 32) -> int:
    """Scratch of an outer fold into ``k`` rows (:func:`outer_fold_rows`): per index of the dims outside the reduced
    one, ``k`` rows padded to whole ``ub_align`` blocks (so that every slab starts aligned); none for k = 1."""
    return 0 if k <= 1 else lead * (-(-k * row_bytes // ub_align) * ub_align)


def math_temps(fun: str, dtype: str, exponent=None) -> int:
    """f32 temporaries (each the destination's element count × 4 B) that codegen's sequence for ``fun`` needs in
    scratch (``exponent``: pow's constant exponent, None when unknown or for a scalar base)."""
    if fun in MATH_TEMPS:
        n = MATH_TEMPS[fun]
    elif fun == "pow":
        if exponent is not None and float(exponent) in ONE_INSTRUCTION_POW:
            return 0
        n = 2 if exponent is not None and float(exponent).is_integer() else 0  # square-and-multiply: base, product
    else:
        return 0
    return n + (2 if dtype == "f16" else 0)  # f16 computes in f32: the input and the result


INLINE_BROADCAST_FUNS = ("add", "sub", "mul", "div", "max", "min")  # vector-vector binaries a column operand feeds
INLINE_BROADCAST_DTYPES = ("f16", "f32", "i16", "i32")  # the vector unit's arithmetic types


def inlined_broadcasts(info: KernelInfo) -> set:
    """Broadcasts of a rank-2 domain that no buffer holds: every use is a binary op (``INLINE_BROADCAST_FUNS``) of
    the broadcast's dtype whose other operand spans the whole domain, and the binary reads the broadcast's source:

    - a *row* ``[C] -> [R, C]`` (dims [0], e.g. a norm's weight): every row of the op reads the same source row
      (repeat stride 0), as a row-broadcast ``vbrc`` would have;
    - a *column* ``[R] -> [R, C]`` (dims [1], e.g. a row max): codegen ``vbrcb``-s one 32-B block per row into
      scratch and the op reads that block for every 32 B of its row (block stride 0) — Ascend C's softmax idiom.

    So the R×C copy is neither computed nor held in UB."""
    out = set()
    if info.rank != 2:
        return out
    full = (0, 1)
    for op in info.ops:
        if op.name != "hfusion.broadcast" or list(op.attributes["dims"]) not in ([0], [1]):
            continue
        v, src = op.result, op.operands[0]
        if info.masks.get(v) != full or info.masks.get(src) != tuple(d for d in full if d not in op.attributes["dims"]):
            continue
        ok = bool(v.uses)
        for u in v.uses:
            user = u.op
            other = user.operands[1 - u.index] if len(user.operands) == 2 else None
            ok = ok and (user.name == "hfusion.elemwise_binary" and user.attributes.get("fun") in
                         INLINE_BROADCAST_FUNS and other is not None and other is not v
                         and isinstance(other.type, TensorType) and info.masks.get(other) == full
                         and getattr(getattr(other, "op", None), "name", None) != "hfusion.broadcast"
                         and other.type.dtype == v.type.dtype == user.result.type.dtype
                         and v.type.dtype in INLINE_BROADCAST_DTYPES)
        if ok:
            out.add(v)
    return out


SCALAR_COLUMN_MAX_ROWS = 8  # a column operand of at most this many rows a tile is read as per-row scalars ...
SCALAR_COLUMN_MIN_REPEATS = 4  # ... when every row is at least this many vector repeats
SCALAR_COLUMN_FUNS = ("add", "sub", "mul", "max", "min")  # with a vector-scalar instruction (sub: the column second)


def scalar_column(fun: str, column_first: bool, dtype: str, rows: int, cols: int) -> bool:
    """Whether a binary op with an inlined column operand (``[rows, 1]`` broadcast along ``cols``) may read the
    column as one scalar per row (codegen: a V→S flag, ``ld_ub`` per row, the vector-scalar instruction per row)
    instead of vbrcb into scratch and the vector-vector instruction with block stride 0.

    The scalar form costs a vector-scalar repeat (1 cycle, PTO vadds/vmuls) where the other costs a binary one (2),
    and per row one scalar load and one instruction more: it pays when the tile has few rows of several repeats —
    a norm's or softmax's rows of thousands of elements, the case AscendNPU-IR meets when it inlines the broadcast
    of a one-element tensor as a scalar (``hfusion-inline-brc``). The scalar unit waits for the vector pipe there,
    and issues nothing else meanwhile (the next tile's load included): the schedule keeps vbrcb for a kernel that
    streams DDR longer than it computes (``BufferPlan.scalar_columns``, cost.streams_ddr)."""
    if fun not in SCALAR_COLUMN_FUNS or (fun == "sub" and column_first) or dtype not in ("f16", "f32"):
        return False
    lanes = REPEAT_BYTES // DTYPE_BYTES[dtype]
    return rows <= SCALAR_COLUMN_MAX_ROWS and -(-cols // lanes) >= SCALAR_COLUMN_MIN_REPEATS


def column_scratch_bytes(rows: int) -> int:
    """Scratch of a binary op with an inlined column operand: one 32-B block per row (vbrcb writes 8 per repeat)."""
    return -(-rows // 8) * 8 * 32


@dataclass
class BufferPlan:
    buffers: list[Buffer]
    of_value: dict  # Value -> Buffer
    partial: dict  # reduce op -> Buffer (only when the reduced dims are looped)
    ops: list = field(default_factory=list)  # the kernel's ops (for the scratch they need; not inlined ones)
    inlined: set = field(default_factory=set)  # broadcasts read by their binary users (no buffer)
    hoisted: list = field(default_factory=list)  # values computed once per core, before the work-item loop
    row_gathers: dict = field(default_factory=dict)  # KernelInfo.row_gathers: sources read row by row, no buffer
    in_place: set = field(default_factory=set)  # reductions folding in their source's buffer (in_place_folds)
    blocks: set = field(default_factory=set)  # reductions whose rows may fold block by block (block_folds)
    # column operands read as per-row scalars where scalar_column allows (the schedule turns it off for a kernel
    # whose work items stream DDR longer than they compute: cost.streams_ddr)
    scalar_columns: bool = True

    def columns(self, op) -> list:
        """The operands of ``op`` that are column broadcasts (``[R] → [R, C]``) its binary reads in place."""
        return [v for v in op.operands if v in self.inlined and list(v.op.attributes["dims"]) == [1]]

    def source(self, v):
        """The value read for ``v``: through the broadcasts its users read in place (``inlined``) to their source."""
        while v in self.inlined:
            v = v.op.operands[0]
        return v

    def ub_bytes(self, tile, ub_align: int, multi_buffer: int, whole=(), wide: bool = False) -> int:
        """UB of every buffer × its depth, plus the scratch (``whole``: the dims the tile covers)."""
        return self.ub_peak(tile, ub_align, {b.index: b.depth(multi_buffer, whole) for b in self.buffers}, whole,
                            self.scratch_bytes(tile, ub_align, wide))

    def ub_peak(self, tile, ub_align: int, copies: dict, whole, scratch: int) -> int:
        """UB of the buffers (``copies``: buffer index -> copies) and the scratch at the busiest point: a
        loop-invariant load that only hoisted values read is dead before the work-item loop starts, so it shares
        UB with the loop's buffers (hivm-plan-memory's lifetimes let it: it is placed over them)."""
        size = {b.index: b.nbytes(tile, ub_align) * copies[b.index] for b in self.buffers}
        early = {b.index for b in self.buffers if self._dead_before_loop(b, whole)}
        hoisted = {self.of_value[v].index for v in self.hoisted}
        loop = sum(n for i, n in size.items() if i not in early) + scratch
        before = sum(size[i] for i in early | hoisted)
        return max(loop, before)

    def _dead_before_loop(self, b: Buffer, whole) -> bool:
        if not (b.loaded and not b.stored and set(b.mask) <= set(whole)) or not b.values:
            return False
        hoisted = set(map(id, self.hoisted))
        return all(u.op.results and id(u.op.result) in hoisted for v in b.values for u in v.uses)

    def scratch_bytes(self, tile, ub_align: int, wide: bool = False) -> int:
        """The kernel's scratch buffer: the largest need of one op (0: none); ``wide``: row reductions fold into
        up to WIDE_FOLD_PARTIALS partials."""
        return max((self._op_scratch(op, tile, ub_align, wide) for op in self.ops), default=0)

    def _op_scratch(self, op, tile, ub_align: int, wide: bool = False) -> int:
        align = lambda n: -(-n // ub_align) * ub_align  # noqa: E731
        fun = op.attributes.get("fun")
        if (op.name == "hfusion.elemwise_unary" and fun in MATH_TEMPS) or \
                (op.name == "hfusion.elemwise_binary" and fun == "pow"):
            exponent = None
            if fun == "pow" and isinstance(op.operands[0].type, TensorType):
                c = op.operands[1]
                if isinstance(c, OpResult) and c.op.name == "arith.constant":
                    exponent = c.op.attributes["value"]
            k = math_temps(fun, op.result.type.dtype, exponent)
            if k == 0:
                return 0
            n = 1
            for s in self.of_value[op.result].shape(tile, ub_align):
                n *= s
            return k * align(n * 4)
        if op.name == "hfusion.elemwise_binary" and self.columns(op):
            rows = 1
            for s in self.of_value[op.result].shape(tile, ub_align)[:-1]:
                rows *= s
            return column_scratch_bytes(rows)
        scalars = sum(not isinstance(v.type, TensorType) for v in op.operands)
        if op.name == "hfusion.select":  # each scalar value is vdup'ed into a block of its own
            return scalars * REPEAT_BYTES
        if op.name == "hfusion.elemwise_binary" and fun == "bitwise_xor":  # the a & b temporary (+ the scalar)
            return align(self.of_value[op.result].nbytes(tile, ub_align)) + scalars * REPEAT_BYTES
        if op.name == "hfusion.elemwise_binary" and op.attributes["fun"] not in SCALAR_FORMS:
            return REPEAT_BYTES if scalars else 0
        if op.name == "hfusion.broadcast":  # a column broadcast into < 8 rows shorter than 8 blocks: vbrcb stages
            dst = self.of_value[op.result]   # its 8 blocks in scratch; so does an element broadcast
            shape = dst.shape(tile, ub_align)
            if element_broadcast(shape, self.of_value[op.operands[0]].shape(tile, ub_align)):
                return REPEAT_BYTES
            if len(shape) - 1 not in dst.mask or len(shape) - 1 in self.of_value[op.operands[0]].mask:
                return 0  # a row broadcast (vcopy)
            rows, pitch = column_broadcast_rows(shape, self.of_value[op.operands[0]].shape(tile, ub_align))
            return REPEAT_BYTES if rows < 8 and pitch * DTYPE_BYTES[dst.dtype] < REPEAT_BYTES else 0
        if op.name == "hfusion.gather":  # a row gather (embedding_gather) needs none: its DMAs write dst
            if op.operands[0] in self.row_gathers:
                return 0
            return gather_scratch(self.of_value[gather_index(op)], tile, ub_align, DTYPE_BYTES[op.result.type.dtype])
        if op.name != "hfusion.reduce":
            return 0
        src = self.of_value[op.operands[0]]
        shape = src.shape(tile, ub_align)
        if op in self.in_place:  # a block fold's first level still needs scratch (the source takes the second)
            es, rows = DTYPE_BYTES[src.dtype], _prod(shape[:-1])
            return block_fold_scratch(rows, block_fold_lengths(shape[-1], es) if op in self.blocks else [], es, True)
        dims = [src.mask[i] for i in op.attributes["dims"]]  # the reduced domain dims
        return reduce_scratch_bytes(shape, dims, DTYPE_BYTES[src.dtype], ub_align, op.attributes["kind"], wide,
                                    blocks=op in self.blocks)


def element_broadcast(dst_shape, src_shape) -> bool:
    """A broadcast of one element into a buffer that does not span the last dim (a column ``[R, 1]``, or ``[A, B, 1]``):
    dst's rows are one element, not padded to 32 B, so no vcopy row pitch reaches them. Codegen ``vbrcb``s the element
    into a 32-B block of scratch and copies that block (block stride 0) over dst's elements, which are contiguous."""
    return dst_shape[-1] == 1 and all(n == 1 for n in src_shape) and any(n > 1 for n in dst_shape)


def column_broadcast_rows(dst_shape, src_shape) -> tuple[int, int]:
    """(rows, pitch in elements) of a broadcast along the last dim: the source's elements (contiguous, its last dim
    1) go to the first element of each of ``rows`` rows of dst, ``pitch`` apart, that lie at index 0 of every other
    broadcast dim (codegen then copies that slab along those dims). The source's dims above the last must be one
    uniform run of rows in dst: a ValueError otherwise."""
    strides, acc = [], 1
    for n in reversed(dst_shape):
        strides.append(acc)
        acc *= n
    strides = strides[::-1]
    spanned = [d for d in range(len(dst_shape) - 1) if src_shape[d] > 1]
    if not spanned:
        return 1, dst_shape[-1]
    for a, b in zip(spanned, spanned[1:]):
        if strides[a] != strides[b] * dst_shape[b]:
            raise ValueError(f"the source's dims {spanned} are not one run of rows in the destination {dst_shape}")
    rows = 1
    for d in spanned:
        rows *= dst_shape[d]
    return rows, strides[spanned[-1]]


def reduce_stages(shape, dims) -> list[list[int]]:
    """The shapes a reduction over several ``dims`` of a buffer of ``shape`` goes through, one dim at a time: the
    dims above the last from the innermost out (elementwise accumulation of rows: every stage keeps the padded
    rows, so its rows stay 32-B aligned), then the last dim (when reduced); the last entry is the result's shape.
    Codegen keeps every stage but the last in scratch."""
    last = len(shape) - 1
    order = sorted((d for d in dims if d != last), reverse=True) + ([last] if last in dims else [])
    out, cur = [], list(shape)
    for d in order:
        cur = list(cur)
        cur[d] = 1
        out.append(cur)
    return out


def reduce_scratch_bytes(shape, dims, es: int, ub_align: int, kind: str = "sum", wide: bool = False,
                         blocks: bool = False) -> int:
    """Scratch a reduction of a buffer of ``shape`` over ``dims`` needs (as codegen.reduce emits it): its
    intermediate stages (:func:`reduce_stages`, all but the result) and the largest need of one stage — a last-dim
    reduction of rows longer than one repeat folds ``min(rows, SCRATCH_ROWS)`` rows of 256 B (``blocks``, the rows
    held whole: at most that, the levels of a block fold, :func:`block_fold_bytes`); a reduction over a
    non-last dim folds its rows into :func:`outer_fold_rows` scratch rows (the whole tree when ``wide``, else at
    most OUTER_FOLD_BYTES of them); a reduction of a
    contiguous vector (a 1-D buffer, or a non-last dim with every other dim 1) longer than one repeat keeps the
    per-repeat partials of every level; a product over the last dim (no per-repeat product instruction) folds
    ``min(rows, SCRATCH_ROWS)`` rows of 256 B plus a 32-B block each, whatever the row's length."""
    align = lambda n: -(-n // ub_align) * ub_align  # noqa: E731
    dims = [d for d in dims if shape[d] > 1] or list(dims)[:1]
    stages = reduce_stages(shape, dims)
    total = sum(align(_prod(s) * es) for s in stages[:-1])
    lanes = REPEAT_BYTES // es
    need, cur = 0, list(shape)
    for stage in stages:
        d = next((k for k, (a, b) in enumerate(zip(cur, stage)) if a != b), None)
        vector = d is not None and kind != "prod" and (d != len(cur) - 1 or len(cur) == 1) and \
            all(n == 1 for k, n in enumerate(cur) if k != d)  # a contiguous vector
        if d == len(cur) - 1 and kind == "prod":
            need = max(need, min(_prod(cur[:-1]), SCRATCH_ROWS) * (REPEAT_BYTES + 32))
        elif vector:
            n, levels = cur[d], 0  # per-repeat partials, level by level (none within one repeat)
            while n > lanes:
                n = -(-n // lanes)
                levels += align(n * es)
            need = max(need, levels)
        elif d == len(cur) - 1 and cur[d] > lanes:
            g, k = row_fold_shape(_prod(cur[:-1]), -(-cur[d] // lanes), wide)
            fold = g * k * REPEAT_BYTES
            lengths = block_fold_lengths(cur[d], es) if blocks and kind != "prod" else []
            if lengths:  # Note: at most the pairwise fold's (codegen folds pairwise when a block level does not
                # fit), so a tile's scratch never grows as its rows shorten to whole repeats (tiling.choose_tile)
                fold = min(fold, block_fold_scratch(_prod(cur[:-1]), lengths, es, False))
            need = max(need, fold)
        elif d is not None and d != len(cur) - 1:  # an outer fold (two rows fold straight into the result)
            lead, row_bytes = _prod(cur[:d]), _prod(cur[d + 1:]) * es
            k = outer_fold_rows(cur[d], lead, row_bytes, None if wide else OUTER_FOLD_BYTES, ub_align)
            need = max(need, outer_fold_bytes(k, lead, row_bytes, ub_align))
        cur = stage
    return total + need


def _prod(xs) -> int:
    p = 1
    for x in xs:
        p *= x
    return p


def gather_scratch(index: Buffer, tile, ub_align: int, es: int = 4) -> int:
    """Scratch of a ``hivm.vgather``'s index conversion (codegen.index_ops): the byte offsets, one i32 per index
    element in rows padded to 8 (32 B), plus for i64 indices the low and high words of each; for 8-byte data
    (``es``, the gathered element's size: i64, moved as pairs of b32 words) the offsets of each word, the table
    that duplicates each element's offset and the words' parities — 7 tables where 1 serves 4-byte data; and one
    repeat's offsets past the last row, since a ``vgather`` reads a whole repeat of offsets (64 words) whatever its
    mask — the last row's read otherwise ran into the next buffer, which the next work item's index load was writing
    (64 rows of 7000 f32 by an i64 index: a race the hazard checker stopped)."""
    shape = index.shape(tile, ub_align)
    rows = 1
    for s in shape[:-1]:
        rows *= s
    words = rows * (-(-shape[-1] // 8) * 8)
    tables = 7 if es == 8 else 3 if index.dtype == "i64" else 1
    return tables * (-(-words * 4 // ub_align) * ub_align) + REPEAT_BYTES - ub_align


def _reuse_candidates(op) -> list[Value]:
    if op.name == "hfusion.elemwise_unary" and op.attributes["fun"] in NOT_IN_PLACE_FUNS:
        return []  # reads its source after writing dst
    if op.name == "hfusion.elemwise_ternary":
        return list(op.operands[:2])  # the third operand is read after the first instruction writes dst
    if op.name == "hfusion.select":
        return list(op.operands[1:])
    return list(op.operands)


MASK_OPS = ("hfusion.compare", "hfusion.select", "hfusion.elemwise_binary", "hfusion.elemwise_unary")


def mask_op_lanes(op) -> int:
    """Elements per repeat of a compare's data operands or a select's result (codegen.mask_ops): its last
    instruction covers whole repeats, so its mask and data buffers hold whole repeats once longer than one."""
    data = [v for v in list(op.operands) + list(op.results) if isinstance(v.type, TensorType) and v.type.dtype != "i1"]
    return REPEAT_BYTES // max((DTYPE_BYTES[v.type.dtype] for v in data), default=1)


def is_column_mask_op(info: KernelInfo, op) -> bool:
    """A compare, select or bitwise op on an i1 *column* mask (spanning dims above the last only, a bit per row).
    Codegen treats such a mask and its operands as one run of elements (a bit string over the rows); an instruction
    over a dynamic run longer than one repeat ends with a whole repeat, so the schedule pads the innermost spanned
    dim holding more than one element of each of their buffers to a multiple of 256 elements, a whole repeat of any
    dtype (``Buffer.whole_repeats``): the last repeat stays inside the buffer, and the mask and its operands keep
    one shape (element k of the run is element k of each)."""
    if op.name not in MASK_OPS:
        return False
    last = info.rank - 1
    return any(isinstance(v.type, TensorType) and v.type.dtype == "i1" and v in info.masks and
               info.masks[v] and last not in info.masks[v] for v in list(op.operands) + list(op.results))


def hoisted_values(info: KernelInfo, reduce_looped: bool) -> list[Value]:
    """Elementwise values of a one-pass reduction kernel that span only reduced dims and are computed from kernel
    inputs only (a norm's weight cast to f32): the tile covers those dims, so they are the same in every work item
    and ``convert-to-hivm`` computes them once per core, before the work-item loop, like the invariant loads.
    Their buffers are never shared in place (they must survive every work item)."""
    out: list[Value] = []
    if reduce_looped or not info.reduce_dims:
        return out
    ready = set(info.inputs) | set(info.views)
    for op in info.ops:
        v = op.result if op.results else None
        if v is None or op.name not in ELEMENTWISE_OPS or v in info.results:
            continue
        mask = info.masks.get(v, ())
        if mask and set(mask) <= set(info.reduce_dims) and all(
                x in ready or not isinstance(x.type, TensorType) for x in op.operands):
            out.append(v)
            ready.add(v)
    return out


def _ancestors(info: KernelInfo) -> dict:
    """id(op) -> ids of the body ops it depends on, transitively."""
    out: dict = {}
    for op in info.ops:
        anc = set()
        for x in op.operands:
            d = getattr(x, "op", None)
            if d is not None and id(d) in out:
                anc.add(id(d))
                anc |= out[id(d)]
        out[id(op)] = anc
    return out


def plan_buffers(info: KernelInfo, reduce_looped: bool) -> BufferPlan:
    buffers: list[Buffer] = []
    of_value: dict = {}

    def new(v: Value, **kw) -> Buffer:
        b = Buffer(len(buffers), v.type.dtype, info.masks[v], values=[v], **kw)
        buffers.append(b)
        of_value[v] = b
        return b

    for a in info.inputs:
        if a in info.masks and a not in info.row_gathers:  # a row-gathered table stays in GM
            gathered = info.gather_sources.get(a)
            new(a, loaded=True, fixed={gathered[0]: gathered[1]} if gathered else {})
    for res in info.views:
        new(res, loaded=True)
    partial = {}
    inlined = inlined_broadcasts(info)
    hoisted = hoisted_values(info, reduce_looped)
    ancestors = {} if reduce_looped else _ancestors(info)

    def read_before(c: Value, op) -> bool:
        """Every other reader of ``c`` is an ancestor of ``op`` (op depends on it), so it runs before op in any
        order the lowering emits them: op may overwrite c. Only one-pass kernels (a multi-pass kernel recomputes
        values per pass)."""
        if reduce_looped:
            return False
        readers, seen = [], set()
        todo = [u.op for u in c.uses]
        while todo:  # through inlined broadcasts: their binary users read c
            r = todo.pop()
            if r.results and r.result in inlined:
                todo += [u.op for u in r.result.uses]
            elif r is not op and id(r) not in seen:
                seen.add(id(r))
                readers.append(r)
        return all(id(r) in ancestors[id(op)] for r in readers)
    for op in info.ops:
        if op.name == "arith.constant" or looked_through(op) or op.result in inlined:
            continue
        v = op.result
        if op.name in ELEMENTWISE_OPS and op.name != "hfusion.cast" and v not in hoisted:
            for c in _reuse_candidates(op):
                b = of_value.get(c)
                if (
                    isinstance(c, OpResult)
                    and b is not None
                    and c not in hoisted
                    and not b.loaded
                    and (len(c.uses) == 1 or read_before(c, op))
                    and c.type.dtype == v.type.dtype
                    and info.masks[c] == info.masks[v]
                ):
                    b.values.append(v)
                    of_value[v] = b
                    break
        if v not in of_value:  # rows gathered from GM: a DMA fills the buffer (multi-buffered like a load's)
            new(v, loaded=op.name == "hfusion.gather" and op.operands[0] in info.row_gathers)
        if op.name == "hfusion.reduce" and reduce_looped:
            p = Buffer(len(buffers), v.type.dtype, info.masks[v], values=[], role="partial")
            buffers.append(p)
            partial[op] = p
    for res in info.results:
        of_value[res].stored = True
    for op in info.ops:
        if is_column_mask_op(info, op):
            for v in list(op.operands) + list(op.results):
                if v in of_value:
                    of_value[v].whole_repeats = True
        elif op.name in ("hfusion.compare", "hfusion.select"):
            lanes = mask_op_lanes(op)
            for v in list(op.operands) + list(op.results):
                if v in of_value:
                    of_value[v].lanes = tuple(sorted(set(of_value[v].lanes) | {lanes}))
    for op, p in partial.items():  # combined row for row with the reduction's result: the same layout
        p.whole_repeats, p.lanes = of_value[op.result].whole_repeats, of_value[op.result].lanes
    ops = [op for op in info.ops
           if op.name != "arith.constant" and not looked_through(op) and op.result not in inlined]
    return BufferPlan(buffers, of_value, partial, ops, inlined, hoisted, dict(info.row_gathers),
                      in_place_folds(info, of_value, inlined, hoisted, reduce_looped), block_folds(info, reduce_looped))

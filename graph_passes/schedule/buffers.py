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
size is the largest need of one op (:meth:`BufferPlan.scratch_bytes`, by the table of graph_passes/idioms/scratch.py;
a software-pipelined kernel has one such part per stage, software_pipeline.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..dialects.hfusion import NOT_IN_PLACE_FUNS
from ..idioms.broadcasts import INLINE_BROADCAST_DTYPES, INLINE_BROADCAST_FUNS
from ..idioms.limits import REPEAT_BYTES, mask_op_lanes
from ..idioms.scratch import op_scratch
from ..intmath import align_up
from ..ir.core import OpResult, Value
from ..ir.sizes import as_expr
from ..ir.types import DTYPE_BYTES, TensorType
from .kernel_info import ELEMENTWISE_OPS, KernelInfo, Unsupported, looked_through


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
            shape[-1] = align_up(shape[-1], granule)
            for lanes in sorted(self.lanes):
                if shape[-1] > lanes:
                    shape[-1] = align_up(shape[-1], lanes)
        elif self.whole_repeats and self.mask:  # a column: pad its run of rows to whole repeats of any dtype (256
            # elements), the same shape for the mask and every operand; the innermost spanned dim holding more than
            # one element is padded, so that spanned dims of one element (a [R, 1] value in an [R, 1, C] domain)
            # leave the run contiguous instead of spacing its rows 256 elements apart
            d = max((k for k in self.mask if shape[k] > 1), default=max(self.mask))
            shape[d] = align_up(shape[d], REPEAT_BYTES)
        return shape

    def nbytes(self, tile, ub_align: int) -> int:
        n = DTYPE_BYTES[self.dtype]
        for s in self.shape(tile, ub_align):
            n *= s
        return align_up(n, ub_align)


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
        need = 0
        for op in self.ops:
            try:
                need = max(need, op_scratch(self, op, tile, ub_align, wide))
            except ValueError as e:  # an idiom that cannot lower this op at this layout
                raise Unsupported(op.name, str(e)) from None
        return need


def _reuse_candidates(op) -> list[Value]:
    if op.name == "hfusion.elemwise_unary" and op.attributes["fun"] in NOT_IN_PLACE_FUNS:
        return []  # reads its source after writing dst
    if op.name == "hfusion.elemwise_ternary":
        return list(op.operands[:2])  # the third operand is read after the first instruction writes dst
    if op.name == "hfusion.select":
        return list(op.operands[1:])
    return list(op.operands)


MASK_OPS = ("hfusion.compare", "hfusion.select", "hfusion.elemwise_binary", "hfusion.elemwise_unary")


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

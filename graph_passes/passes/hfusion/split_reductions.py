"""``hfusion-split-reductions``: a reduction that few cores would run becomes a multi-core one and a final one.

A last-axis kernel gives each core whole rows (docs/schedule.md, "Work split"), so ``x.sum()`` over a million
elements would run on one core and ``x.amax(-1)`` over 4 long rows on four; a column sum gives each core a strip of the
kept columns and reads every row in bursts of that strip (``g.sum(0)`` of 8192×128 f32: 16 strips of 32 B). The
reduced dims of a static input (a block of trailing dims: rows; or of leading dims: columns), ``n`` elements, are
split into ``P`` slices of ``n / P``::

    %s = hfusion.reduce %x {dims = [0, 1], kind = "sum"} : (tensor<256x4096xf32>) -> tensor<f32>
  →
    %v = hfusion.reshape %x : (tensor<256x4096xf32>) -> tensor<1024x1024xf32>
    %p = hfusion.reduce %v {dims = [1], kind = "sum"} : (tensor<1024x1024xf32>) -> tensor<1024xf32>
    %s = hfusion.reduce %p {dims = [0], kind = "sum"} : (tensor<1024xf32>) -> tensor<f32>

    %c = hfusion.reduce %g {dims = [0], kind = "sum"} : (tensor<8192x128xf32>) -> tensor<128xf32>
  →
    %v = hfusion.reshape %g : (tensor<8192x128xf32>) -> tensor<128x64x128xf32>
    %p = hfusion.reduce %v {dims = [1], kind = "sum"} : (tensor<128x64x128xf32>) -> tensor<128x128xf32>
    %c = hfusion.reduce %p {dims = [0], kind = "sum"} : (tensor<128x128xf32>) -> tensor<128xf32>

The partial reduction runs on the cores; the final one reads the partials. Rows (:func:`split_factor`): ``P``
divides ``n``, keeps rows of at least ``min-row`` elements, and gives the busiest core the fewest elements (rows are
dealt in work items of one 32-B block of partial results); made when it cuts the busiest core's elements to a third.
Columns (:func:`column_split_factor`): ``P`` gives about ``2·cores`` work items of 512-B stretches of a slice's
rows, slices of at least 16 rows; made when the rows are under ``cores`` × 512 B and at least 512 of them or at most
512 B. Either way the reduction reads at least ``min-elems`` elements. After Inductor's split reductions
(``split_reduction`` in ``torch/_inductor/ir.py``); AscendNPU-IR instead spreads a full reduction with atomic-add
stores (``enableMultiCoreReduce``), which the simulator does not model.

The reshape reaches the reduction's input through the elementwise ops that feed it (each rebuilt at the new shape;
an original with other users stays for them) and through broadcasts along the reduced dims of one value per kept
element (a softmax's row max in ``exp(x - max)``, a bias row over the rows: rebuilt over the split shape; that
value must be a GM tensor or elementwise ops of GM tensors, which join the partial kernel) or along
the kept dims of one value per reduced element (a norm's per-row mean in a weight gradient: reshaped to the slices
first), down to values that are GM tensors anyway: function arguments or results of ops that are not elementwise,
broadcast, fill or arange (a reduction, a gather, a matmul). A chain reaching another value fused ops would
compute is left alone: its reshape would make that value a GM tensor.

A row kernel (the result broadcast back over its rows: softmax, norms) gives each core a whole row unsplit, and
split it reads the rows once more per split reduction; it is split only when that cuts the busiest core's share
to 40% (a pure reduction: to a third). A column reduction broadcast back (``x - x.mean(0)``, a batch norm's
statistics) is split only when its kept columns hold fewer 32-B strips than there are cores (the strips are the
unsplit kernel's work items, so fewer strips leave cores idle); with a strip for every core, the one kernel reads
x once and is faster than the split (measurements: docs/passes.md). Kinds
``sum``, ``prod``, ``max``, ``min``: a float sum or product is summed in another order (a tree already); an integer
one is exact; max and min are exact. A dynamic shape has no static divisor to reshape by: a reduction over trailing
dims of one keeps the input's own rows in the partial reduction (``x.sum()`` of ``[s0, 4096]``: ``s0`` partial
sums), when their count may reach ``2·cores`` (:meth:`SplitReductions._own_rows`). A reduction over dims that are
not one block but end with the last (a batch norm's ``[N, C, H·W]`` over dims 0 and 2) reduces its trailing block
first, as rows of every kept index in between (``[N, C]`` partial sums over the cores), then the rest; no reshape
(:meth:`SplitReductions._trailing_block`).

Counters: ``reductions-split``.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import ClassVar

from ...dialects.hfusion import ReduceOp, ReshapeOp
from ...analysis.fusion_kind import OpPattern, op_pattern
from ...intmath import ceil_div
from ...ir.core import OP_REGISTRY, Elementwise, Operation, Value
from ...ir.sizes import SizeVars, as_expr
from ...ir.types import TensorType
from ...target import TargetSpec, module_target
from .. import ModulePass, PassContext, register_pass

SPLIT_KINDS = ("sum", "prod", "max", "min")
# producers fusion computes inside the kernels that use them (elementwise ops, fills, aranges, broadcasts)
COMPUTED_IN_KERNELS = frozenset({OpPattern.ELEMENTWISE, OpPattern.ZERO_RANK_ELEMWISE, OpPattern.LAST_AXIS_BROADCAST,
                                 OpPattern.OTHER_BROADCAST})
BURST_BYTES = 512  # a GM burst this long runs at full rate (ASCENDC: 512-B aligned GM runs fastest)
MIN_COLUMN_ROWS = 512  # reduced rows below which a column reduction of rows wider than a burst is left alone


def split_factor(k: int, n: int, cores: int, min_row: int, block_rows: int, row_kernel: bool) -> int | None:
    """The ``P`` that gives the busiest core the fewest elements as ``k·P`` rows of ``n / P``, dealt in work items
    of ``block_rows`` rows (a core writes whole 32-B blocks of partial results); None unless it cuts what the busiest
    core reduces unsplit to a third, or to 40% for a ``row_kernel``: the final reduction is a kernel more (its
    launch and latency), which a halving does not pay for.

    Unsplit, a reduction whose result only leaves the kernel is dealt in the same blocks of rows (``x.sum(-1)`` of 8
    rows of f32 runs on one core); a row kernel (the result broadcast back over its rows: softmax, norms) writes
    whole rows, one per core, and split it reads its rows once more per split reduction, hence the stricter 40%
    (the thresholds are measured: docs/passes.md, ``hfusion-split-reductions``)."""
    def busiest(p: int, block: int) -> int:
        rows = k * p
        return ceil_div(rows, block * cores) * min(block, rows) * (n // p)

    unsplit = busiest(1, 1 if row_kernel else block_rows)
    best = None
    for p in _divisors(n, n // min_row):
        if best is None or busiest(p, block_rows) < busiest(best, block_rows):
            best = p
    if best is None or (5 if row_kernel else 6) * busiest(best, block_rows) > 2 * unsplit:
        return None
    return best


def _divisors(n: int, most: int) -> list[int]:
    """The divisors of ``n`` from 2 to ``most``, ascending."""
    small = [d for d in range(1, int(n ** 0.5) + 1) if n % d == 0]
    return sorted({x for d in small for x in (d, n // d) if 2 <= x <= most})


def _static_shape(t) -> tuple[int, ...] | None:
    return t.static_shape() if isinstance(t, TensorType) and t.is_static else None


def _is_kernel_input(v: Value) -> bool:
    """Is ``v`` a value no kernel would compute fused with its users (so a reshape of it is a view of GM)?"""
    op = getattr(v, "op", None)
    if op is None:
        return True
    if op.name == "hfusion.reshape":
        return _is_kernel_input(op.operand("input"))
    return op_pattern(op) not in COMPUTED_IN_KERNELS


def column_split_factor(n: int, row_bytes: int, cores: int, min_rows: int = 16) -> int | None:
    """``P`` for a reduction over leading dims (``n`` reduced rows of ``row_bytes`` kept bytes, a column sum): the
    smallest divisor of ``n`` giving ``2·cores`` work items of up to 512 B of columns (``P · ceil(row_bytes / 512)``),
    at most ``n / min_rows`` (else the largest such divisor). None when the rows are wide enough (``cores`` strips of
    512 B or more), or too few for the rows' width: under 512 rows of more than 512 B, the unsplit kernel's strips are
    wide and short enough that the final reduction's kernel costs more than the split saves.

    Unsplit, a column sum's work items are strips of the kept columns spread over the cores down to 32 B: each reads
    every row in bursts of its strip (narrow strips: short bursts, few cores). Split, a work item reads whole 512-B
    stretches of its slice's rows. ``2·cores`` items balance better than ``cores``, and slices under 16 rows lose to
    the final reduction (measurements: docs/passes.md, ``hfusion-split-reductions``)."""
    if row_bytes >= cores * BURST_BYTES or (n < MIN_COLUMN_ROWS and row_bytes > BURST_BYTES):
        return None
    want = ceil_div(2 * cores, ceil_div(row_bytes, BURST_BYTES))
    divisors = _divisors(n, n // min_rows)
    if not divisors:
        return None
    return next((p for p in divisors if p >= want), divisors[-1])


@dataclass(frozen=True)
class _Layout:
    """A reduction's static input ``shape`` reduced over the dims ``[lo, hi)``, their ``n`` elements split ``p`` ways:
    the split shape holds ``(p, n / p)`` in their place."""

    shape: tuple
    lo: int
    hi: int
    p: int

    @property
    def split(self) -> tuple:
        n = prod(self.shape[self.lo:self.hi])
        return self.shape[:self.lo] + (self.p, n // self.p) + self.shape[self.hi:]

    @property
    def reduced(self) -> list[int]:
        return list(range(self.lo, self.hi))

    @property
    def kept(self) -> list[int]:
        return [d for d in range(len(self.shape)) if not self.lo <= d < self.hi]

    @property
    def kept_in_split(self) -> list[int]:
        return [d if d < self.lo else d - (self.hi - self.lo) + 2 for d in self.kept]

    def broadcast(self, op: Operation | None) -> str | None:
        """``"kept"`` for a broadcast of per-kept values along the reduced dims (a row max back over the row, a bias
        row over the rows), ``"reduced"`` for one of a reduced-shaped value along the kept dims (a row's mean in a
        column sum); else None."""
        if op is None or op.name != "hfusion.broadcast" or _static_shape(op.result.type) != self.shape:
            return None
        return {tuple(self.reduced): "kept", tuple(self.kept): "reduced"}.get(tuple(op.attributes["dims"]))


def _splittable(v: Value, layout: _Layout, seen: dict, per_row: dict) -> bool:
    """Can ``v`` (of the input's shape) be rebuilt at the split shape: elementwise ops and broadcasts (see
    :meth:`_Layout.broadcast`) down to values that are GM tensors anyway (see the module docstring)? ``seen`` and
    ``per_row`` memoize values already answered (a graph shared by many paths is walked once)."""
    if v not in seen:
        op = getattr(v, "op", None)
        kind = layout.broadcast(op)
        if kind == "kept":
            seen[v] = _per_row(op.operand("input"), per_row)
        elif kind == "reduced":
            seen[v] = _is_kernel_input(op.operand("input"))
        elif op is None or not op.has_trait(Elementwise):
            seen[v] = _is_kernel_input(v)
        else:
            seen[v] = all(_splittable(x, layout, seen, per_row) for x in op.operands if isinstance(x.type, TensorType))
    return seen[v]


def _per_row(v: Value, seen: dict) -> bool:
    """Is ``v`` (one value per kept element) a GM tensor or computed from GM tensors by elementwise ops alone? Such
    ops join the partial reduction's kernel at the kept shape; a reshape among them (a row max through a keepdim
    view, as logsumexp has) could not be lowered there."""
    if v not in seen:
        op = getattr(v, "op", None)
        if op is not None and op.has_trait(Elementwise):
            seen[v] = all(_per_row(x, seen) for x in op.operands if isinstance(x.type, TensorType))
        else:
            seen[v] = op is None or (op.name != "hfusion.reshape" and _is_kernel_input(v))
    return seen[v]


def _rebuild(v: Value, layout: _Layout, anchor: Operation, done: dict) -> Value:
    """``v`` at the split shape: its elementwise ops and broadcasts rebuilt before ``anchor`` (the originals stay
    for their other users), other values reshaped."""
    if v in done:
        return done[v]
    op = getattr(v, "op", None)
    t = v.type.with_shape(layout.split)
    kind = layout.broadcast(op)
    if kind == "kept":
        new = OP_REGISTRY[op.name](list(op.operands), [t], {"dims": [layout.lo, layout.lo + 1]}, [], op.loc)
    elif kind == "reduced":
        src = op.operand("input")
        rows = ReshapeOp([src], [src.type.with_shape(layout.split[layout.lo:layout.lo + 2])], {}, [], anchor.loc)
        anchor.parent.insert_before(anchor, rows)
        new = OP_REGISTRY[op.name]([rows.result], [t], {"dims": layout.kept_in_split}, [], op.loc)
    elif op is not None and op.has_trait(Elementwise):
        operands = [_rebuild(x, layout, anchor, done) if isinstance(x.type, TensorType) else x
                    for x in op.operands]
        new = OP_REGISTRY[op.name](operands, [t], dict(op.attributes), [], op.loc)
    else:
        new = ReshapeOp([v], [t], {}, [], anchor.loc)
    anchor.parent.insert_before(anchor, new)
    new.result.name_hint = v.name_hint
    done[v] = new.result
    return new.result


def _broadcast_back(v: Value, reduced: list[int]) -> bool:
    """Is the reduction result ``v`` (or a value computed from it elementwise) broadcast back along the ``reduced``
    dims?"""
    for user in v.users:
        if user.name == "hfusion.broadcast" and list(user.attributes["dims"]) == reduced:
            return True
        if user.has_trait(Elementwise) and user.result.type.shape == v.type.shape \
                and _broadcast_back(user.result, reduced):
            return True
    return False


@register_pass
@dataclass(frozen=True)
class SplitReductions(ModulePass):
    """Split reductions to few rows into a multi-core partial reduction and a final one."""

    name: ClassVar[str] = "hfusion-split-reductions"
    min_elems: int = 32768  # smaller reductions are latency-bound: a second kernel costs more than it saves
    min_row: int = 1024  # elements per partial row (a row kernel's fixed costs are per row)
    min_trailing: int = 64  # elements of a trailing block reduced first as rows (shorter rows cost more than they save)

    def run(self, module: Operation, ctx: PassContext) -> None:
        ctx.count("reductions-split", 0)
        target, sizes = module_target(module), module.size_vars()
        for host in [f for f in module.functions if not f.attributes.get("kernel")]:
            for op in [o for o in host.body.ops if o.name == "hfusion.reduce"]:
                layout = self._layout(op, target)
                if layout is not None and self._split(op, layout):
                    ctx.count("reductions-split")
                    continue
                m = self._own_rows(op, sizes, target) if layout is None else None
                if m is not None:
                    src, lo = op.operand("input"), _reduced_block(op)[0]
                    _replace(op, src, src.type.shape[:m], list(range(m, src.type.rank)), list(range(lo, m)))
                    ctx.count("reductions-split")
                    continue
                trailing = self._trailing_block(op, sizes) if layout is None else None
                if trailing is not None:
                    src, dims = op.operand("input"), list(op.attributes["dims"])
                    rest = [d for d in dims if d not in trailing]
                    _replace(op, src, [s for d, s in enumerate(src.type.shape) if d not in trailing], trailing, rest)
                    ctx.count("reductions-split")

    def _layout(self, op: Operation, target: TargetSpec) -> _Layout | None:
        """How ``op`` splits, if it does: its reduced dims trailing (rows) or leading (columns)."""
        shape, block = _static_shape(op.operand("input").type), _reduced_block(op)
        if shape is None or block is None or prod(shape) < self.min_elems:
            return None
        lo, hi = block
        dims = list(range(lo, hi))
        n = prod(shape[lo:hi])
        kept = prod(shape) // n
        if hi == len(shape):  # rows
            block_rows = max(1, target.ub_align // op.result.type.element_bytes)
            row_kernel = _broadcast_back(op.result, dims)
            p = split_factor(kept, n, target.vector_cores, self.min_row, block_rows, row_kernel)
        elif _broadcast_back(op.result, dims) and \
                kept * op.operand("input").type.element_bytes // target.ub_align >= target.vector_cores:
            return None  # x - x.mean(0) with a 32-B column strip for every core: one kernel reads x once
        else:
            p = column_split_factor(n, kept * op.operand("input").type.element_bytes, target.vector_cores)
        return _Layout(tuple(shape), lo, hi, p) if p is not None else None

    def _own_rows(self, op: Operation, sizes: SizeVars, target: TargetSpec) -> int | None:
        """For a reduction over trailing dims of a dynamic shape, the last dim ``m`` from which the reduced dims hold
        at least ``min-row`` elements (or a symbolic count), when the dims before it (some of them reduced) may hold
        ``2·cores`` rows: the partial reduction reduces ``[m, rank)`` keeping those rows, the final one the rest. No
        reshape (a dynamic count has no static divisor), so an elementwise chain needs no rebuilding. A row kernel
        (the result broadcast back) is left alone."""
        t, block = op.operand("input").type, _reduced_block(op)
        if block is None or _static_shape(t) is not None:
            return None
        lo, hi = block
        if hi != t.rank or _broadcast_back(op.result, list(range(lo, hi))):
            return None
        shape = [as_expr(d) for d in t.shape]
        for m in range(hi - 1, lo, -1):
            tail = prod(shape[m:])
            if not tail.is_Integer or tail >= self.min_row:  # a symbolic row length: as long as it may be
                rows = sizes.upper_bound(prod(shape[:m]))
                return m if rows is None or rows >= 2 * target.vector_cores else None
        return None

    def _trailing_block(self, op: Operation, sizes: SizeVars) -> list[int] | None:
        """For a reduction over dims that are not one block but end with the last (a batch norm's ``[N, C, H·W]``
        over dims 0 and 2), the trailing block of reduced dims, when it holds at least ``min-trailing`` elements:
        reduced first, as rows (every ``(n, c)`` a row, spread over the cores), then the rest from those partial
        results. No reshape: the input and its elementwise producers stay as they are."""
        dims, t = sorted(op.attributes["dims"]), op.operand("input").type
        if op.attributes["kind"] not in SPLIT_KINDS or not dims or t.rank - 1 not in dims or \
                _reduced_block(op) is not None:
            return None
        lo = t.rank - 1
        while lo - 1 in dims:
            lo -= 1
        trailing = list(range(lo, t.rank))
        row = sizes.lower_bound(as_expr(prod([as_expr(t.shape[d]) for d in trailing])))
        total = sizes.lower_bound(as_expr(t.numel()))
        if row is None or row < self.min_trailing or total is None or total < self.min_elems:
            return None
        return trailing

    def _split(self, op: Operation, layout: _Layout) -> bool:
        src = op.operand("input")
        same = layout.split == layout.shape  # [A, B] reduced whole: the rows of B
        if not same and not _splittable(src, layout, {}, {}):
            return False
        split = src if same else _rebuild(src, layout, op, {})
        partial_shape = layout.split[:layout.lo + 1] + layout.split[layout.lo + 2:]
        _replace(op, split, partial_shape, [layout.lo + 1], [layout.lo])
        if split is not src:
            _erase_dead(getattr(src, "op", None))
        return True


def _reduced_block(op: Operation) -> tuple[int, int] | None:
    """``(lo, hi)`` when ``op`` is a reduction of a kind that splits over the dims ``[lo, hi)``, a block of trailing
    or leading dims (the kept elements stay contiguous)."""
    dims = sorted(op.attributes["dims"])
    if op.attributes["kind"] not in SPLIT_KINDS or not dims:
        return None
    lo, hi = dims[0], dims[-1] + 1
    rank = op.operand("input").type.rank
    return (lo, hi) if dims == list(range(lo, hi)) and (lo == 0 or hi == rank) else None


def _replace(op: Operation, split: Value, partial_shape, partial_dims: list[int], final_dims: list[int]) -> None:
    """Replace the reduction ``op`` by one of ``split`` over ``partial_dims`` (to ``partial_shape``) and one of that
    over ``final_dims``."""
    kind = op.attributes["kind"]
    partial = ReduceOp([split], [op.result.type.with_shape(tuple(partial_shape))],
                       {"kind": kind, "dims": partial_dims}, [], op.loc)
    final = ReduceOp([partial.result], [op.result.type], {"kind": kind, "dims": final_dims}, [], op.loc)
    for new in (partial, final):
        op.parent.insert_before(op, new)
    partial.result.name_hint = f"{op.result.name_hint or 'r'}_partial"
    final.result.name_hint = op.result.name_hint
    op.result.replace_all_uses_with(final.result)
    op.erase()


def _erase_dead(op: Operation | None) -> None:
    """Erase ``op`` and then its producers as they lose their last use (the chain the split rebuilt)."""
    stack = [op]
    while stack:
        op = stack.pop()
        if op is None or op.parent is None or any(r.uses for r in op.results):
            continue
        producers = [getattr(x, "op", None) for x in op.operands]
        op.erase()
        stack += producers

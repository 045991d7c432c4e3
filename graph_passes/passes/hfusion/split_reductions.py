"""``hfusion-split-reductions``: a reduction to fewer rows than the chip has vector cores runs as two reductions.

A last-axis kernel gives each core whole rows (docs/schedule.md, "Work split"), so ``x.sum()`` over a million
elements ran on one core and ``x.amax(-1)`` over 4 long rows on four. When a reduction over the trailing dims ``D``
of a static ``[K..., D...]`` tensor keeps ``k = prod(K)`` rows of ``n = prod(D)`` elements and ``k`` is small, the
reduced elements are split into ``P`` rows of ``M = n / P``::

    %s = hfusion.reduce %x {dims = [0, 1], kind = "sum"} : (tensor<256x4096xf32>) -> tensor<f32>
  →
    %v = hfusion.reshape %x : (tensor<256x4096xf32>) -> tensor<1024x1024xf32>
    %p = hfusion.reduce %v {dims = [1], kind = "sum"} : (tensor<1024x1024xf32>) -> tensor<1024xf32>
    %s = hfusion.reduce %p {dims = [0], kind = "sum"} : (tensor<1024xf32>) -> tensor<f32>

The partial reduction is a multi-core row kernel; the final one reads ``k·P`` partials. ``P`` divides ``n``, keeps
rows of at least ``min-row`` elements, and gives the busiest core the fewest elements (rows are dealt in work items
of one 32-B block of partial results: ``ceil(k·P / (b·cores)) · b · M`` for ``b`` results per block; ties: the
smaller ``P``). The split is made only when it at least halves the busiest core's elements and the
reduction reads at least ``min-elems`` elements. After Inductor's split reductions (``split_reduction`` in
``torch/_inductor/ir.py``); AscendNPU-IR instead spreads a full reduction with atomic-add stores
(``enableMultiCoreReduce``), which the simulator does not model.

The reshape reaches the reduction's input through the elementwise ops that feed it (each rebuilt at the new shape;
an original with other users stays for them) and through broadcasts of one value per kept row along the reduced
dims (a softmax's row max in ``exp(x - max)``, a norm's mean: the broadcast is rebuilt over the split rows), down
to values that are GM tensors anyway: function arguments or results of ops that are not elementwise, broadcast,
fill or arange (a reduction, a gather, a matmul). A chain reaching another value fused ops would compute (a row of
weights broadcast along the rows) is left alone: its reshape would make that value a GM tensor.

A row kernel (the result broadcast back over its rows: softmax, norms) gives each core a whole row unsplit, and
split it reads the rows once more per split reduction; it is split only when that cuts the busiest core's share
to 40% (a pure reduction: to half). Kinds ``sum``, ``prod``, ``max``, ``min``: a float sum or product is summed in
another order (a tree already); an integer one is exact; max and min are exact. Dynamic shapes are left alone.

Counters: ``reductions-split``.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import ClassVar

from ...dialects.hfusion import ReduceOp, ReshapeOp
from ...ir.core import OP_REGISTRY, Broadcast, Elementwise, Operation, Value
from ...ir.sizes import as_expr
from ...ir.types import TensorType
from ...target import TargetSpec, module_target
from .. import ModulePass, PassContext, register_pass

SPLIT_KINDS = ("sum", "prod", "max", "min")
FUSIBLE_PRODUCERS = ("hfusion.fill", "hfusion.arange")


def split_factor(k: int, n: int, cores: int, min_row: int, block_rows: int, row_kernel: bool) -> int | None:
    """The ``P`` that gives the busiest core the fewest elements as ``k·P`` rows of ``n / P``, dealt in work items
    of ``block_rows`` rows (a core writes whole 32-B blocks of partial results); None unless it cuts what the busiest
    core reduces unsplit at least in half, or to 40% for a ``row_kernel``.

    Unsplit, a reduction whose result only leaves the kernel is dealt in the same blocks of rows (``x.sum(-1)`` of 8
    rows of f32 runs on one core); a row kernel (the result broadcast back over its rows: softmax, norms) writes
    whole rows, one per core, and split it reads its rows once more per split reduction. The 40% is measured: 65536
    f32 columns, softmax split at 8 rows (15.5 -> 9.1 us) and 16 (15.7 -> 14.2), not at 24 (16.4 -> 20.8 split);
    layer norm gains at 24 too (28.5 -> 21.6) but both are left alone there."""
    def busiest(p: int, block: int) -> int:
        rows = k * p
        return -(-rows // (block * cores)) * min(block, rows) * (n // p)

    unsplit = busiest(1, 1 if row_kernel else block_rows)
    best = None
    for p in range(2, n // min_row + 1):
        if n % p == 0 and (best is None or busiest(p, block_rows) < busiest(best, block_rows)):
            best = p
    if best is None or (5 if row_kernel else 4) * busiest(best, block_rows) > 2 * unsplit:
        return None
    return best


def _broadcast_back(v: Value, first: int, kept: list[int]) -> bool:
    """Is the reduction result ``v`` (or a per-row value computed from it) broadcast back over its rows?"""
    for user in v.users:
        if _row_broadcast(user, first):
            return True
        if user.has_trait(Elementwise) and _static_shape(user.result.type) == kept \
                and _broadcast_back(user.result, first, kept):
            return True
    return False


def _static_shape(t) -> list[int] | None:
    if not isinstance(t, TensorType):
        return None
    dims = [as_expr(d) for d in t.shape]
    return [int(d) for d in dims] if all(d.is_Integer for d in dims) else None


def _is_kernel_input(v: Value) -> bool:
    """Is ``v`` a value no kernel would compute fused with its users (so a reshape of it is a view of GM)?"""
    op = getattr(v, "op", None)
    if op is None:
        return True
    if op.name == "hfusion.reshape":
        return _is_kernel_input(op.operands[0])
    return not (op.has_trait(Elementwise) or op.has_trait(Broadcast) or op.name in FUSIBLE_PRODUCERS)


def _splittable(v: Value, shape: list[int], first: int) -> bool:
    """Can ``v`` (of ``shape``, reduced from dim ``first`` on) be rebuilt at the split shape: elementwise ops and
    broadcasts of the kept rows down to values that are GM tensors anyway (see the module docstring)?"""
    op = getattr(v, "op", None)
    if op is not None and _row_broadcast(op, first):
        return True
    if op is None or not op.has_trait(Elementwise):
        return _is_kernel_input(v)
    return all(_static_shape(x.type) == shape and _splittable(x, shape, first)
               for x in op.operands if isinstance(x.type, TensorType))


def _row_broadcast(op: Operation, first: int) -> bool:
    """Is ``op`` a broadcast of one value per kept row along the reduced dims (a row max or mean, back over the row)?"""
    return op.name == "hfusion.broadcast" and list(op.attributes["dims"]) == list(range(first, op.result.type.rank))


def _rebuild(v: Value, shape: tuple, first: int, anchor: Operation, done: dict) -> Value:
    """``v`` at ``shape``: its elementwise ops and row broadcasts rebuilt before ``anchor`` (the originals stay for
    their other users), other values reshaped."""
    if v in done:
        return done[v]
    op = getattr(v, "op", None)
    t = v.type.with_shape(shape)
    if op is not None and _row_broadcast(op, first):
        new = OP_REGISTRY[op.name](list(op.operands), [t], {"dims": [first, first + 1]}, [], op.loc)
    elif op is not None and op.has_trait(Elementwise):
        operands = [_rebuild(x, shape, first, anchor, done) if isinstance(x.type, TensorType) else x
                    for x in op.operands]
        new = OP_REGISTRY[op.name](operands, [t], dict(op.attributes), [], op.loc)
    else:
        new = ReshapeOp([v], [t], {}, [], anchor.loc)
    anchor.parent.insert_before(anchor, new)
    new.result.name_hint = v.name_hint
    done[v] = new.result
    return new.result


@register_pass
@dataclass(frozen=True)
class SplitReductions(ModulePass):
    """Split reductions to few rows into a multi-core partial reduction and a final one."""

    name: ClassVar[str] = "hfusion-split-reductions"
    min_elems: int = 32768  # smaller reductions are latency-bound: a second kernel costs more than it saves
    min_row: int = 1024  # elements per partial row (a row kernel's fixed costs are per row)

    def run(self, module: Operation, ctx: PassContext) -> None:
        ctx.count("reductions-split", 0)
        target = module_target(module)
        for host in [f for f in module.functions if not f.attributes.get("kernel")]:
            for op in [o for o in host.body.ops if o.name == "hfusion.reduce"]:
                if self._split(op, target):
                    ctx.count("reductions-split")

    def _split(self, op: Operation, target: TargetSpec) -> bool:
        src = op.operands[0]
        shape = _static_shape(src.type)
        dims = list(op.attributes["dims"])
        if op.attributes["kind"] not in SPLIT_KINDS or shape is None or not dims:
            return False
        first = dims[0]
        if dims != list(range(first, len(shape))):
            return False  # only trailing reduced dims: the kept rows stay contiguous
        k, n = prod(shape[:first]), prod(shape[first:])
        if k * n < self.min_elems:
            return False
        block_rows = max(1, target.ub_align // op.result.type.element_bytes)
        row_kernel = _broadcast_back(op.result, first, shape[:first])
        p = split_factor(k, n, target.vector_cores, self.min_row, block_rows, row_kernel)
        rows = tuple(shape[:first]) + (p, n // p) if p is not None else None
        if rows is None or (list(rows) != shape and not _splittable(src, shape, first)):
            return False
        split = src if list(rows) == shape else _rebuild(src, rows, first, op, {})  # [A, B] summed whole: rows of B
        partial = ReduceOp([split], [op.result.type.with_shape(rows[:-1])],
                           {"kind": op.attributes["kind"], "dims": [first + 1]}, [], op.loc)
        final = ReduceOp([partial.result], [op.result.type], {"kind": op.attributes["kind"], "dims": [first]}, [],
                         op.loc)
        for new in (partial, final):
            op.parent.insert_before(op, new)
        partial.result.name_hint = f"{op.result.name_hint or 'r'}_partial"
        final.result.name_hint = op.result.name_hint
        op.result.replace_all_uses_with(final.result)
        op.erase()
        if split is not src:
            _erase_dead(getattr(src, "op", None))
        return True


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

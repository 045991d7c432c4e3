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

The reshape reaches the reduction's input through the elementwise ops that feed only it (each is rebuilt at the
new shape), down to values that are kernel inputs anyway: function arguments or results of ops that are not
elementwise, broadcast, fill or arange (a reduction, a gather, a matmul). A chain that reaches a value fused
ops would compute (a broadcast of a row maximum, an op with other users) is left alone: its reshape would make
that value a GM tensor. Kinds ``sum``, ``prod``, ``max``, ``min``: a float sum or product is summed in another
order (a tree already); an integer one is exact; max and min are exact. Dynamic shapes are left alone.

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


def split_factor(k: int, n: int, cores: int, min_row: int, block_rows: int = 1) -> int | None:
    """The ``P`` that gives the busiest core the fewest of ``k·n`` elements, as ``k·P`` rows of ``n / P`` dealt in
    work items of ``block_rows`` rows (a core writes whole 32-B blocks of the partial results); None when no ``P``
    at least halves what the busiest core reduces unsplit (``ceil(k / cores) · n``)."""
    def busiest(p: int) -> int:
        if p == 1:
            return -(-k // cores) * n
        rows = k * p
        return -(-rows // (block_rows * cores)) * min(block_rows, rows) * (n // p)

    best = None
    for p in range(2, n // min_row + 1):
        if n % p == 0 and (best is None or busiest(p) < busiest(best)):
            best = p
    if best is None or 2 * busiest(best) > busiest(1):
        return None
    return best


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


def _chain(v: Value, shape: list[int]) -> list[Operation] | None:
    """The elementwise ops, producers first, that feed ``v`` and only the reduction; None when a leaf is a value
    fused ops would compute (see the module docstring)."""
    op = getattr(v, "op", None)
    if op is None or not op.has_trait(Elementwise):
        return [] if _is_kernel_input(v) else None
    if len(v.uses) != 1 or len(op.results) != 1:
        return None
    ops: list[Operation] = []
    for x in op.operands:
        if not isinstance(x.type, TensorType):
            continue
        if _static_shape(x.type) != shape:
            return None
        sub = _chain(x, shape)
        if sub is None:
            return None
        ops += [o for o in sub if o not in ops]
    return ops + [op]


def _rebuild(v: Value, shape: tuple, anchor: Operation, done: dict) -> Value:
    """``v`` at ``shape``: its chain rebuilt before ``anchor``, leaves reshaped."""
    if v in done:
        return done[v]
    op = getattr(v, "op", None)
    if op is None or not op.has_trait(Elementwise):
        new = ReshapeOp([v], [v.type.with_shape(shape)], {}, [], anchor.loc)
    else:
        operands = [_rebuild(x, shape, anchor, done) if isinstance(x.type, TensorType) else x for x in op.operands]
        new = OP_REGISTRY[op.name](operands, [v.type.with_shape(shape)], dict(op.attributes), [], op.loc)
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
        p = split_factor(k, n, target.vector_cores, self.min_row, block_rows)
        rows = tuple(shape[:first]) + (p, n // p) if p is not None else None
        if rows is None or (list(rows) != shape and _chain(src, shape) is None):
            return False
        split = src if list(rows) == shape else _rebuild(src, rows, op, {})  # [A, B] summed whole: rows of B
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

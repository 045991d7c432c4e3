"""``hfusion-rematerialize-layouts``: inside a vector kernel, a cheap value needed in several layouts is computed
once per layout.

A value of a vector kernel lives in one UB buffer laid along the domain dims of its mask (docs/schedule.md). After
CSE one value can be needed along two different dims: a causal mask ``ones(t, t).tril()`` compares one arange
broadcast as a row with the same arange broadcast as a column, and no buffer holds it both ways::

    %a = hfusion.arange : tensor<8xi64>                                     needed along dims [1] and [0]
    %r = hfusion.broadcast %a {dims = [0]} : tensor<8xi64> -> tensor<8x8xi64>
    %c = hfusion.broadcast %a {dims = [1]} : tensor<8xi64> -> tensor<8x8xi64>
 -> %a0 = hfusion.arange : tensor<8xi64>                                    along [1]
    %r = hfusion.broadcast %a0 {dims = [0]} …
    %a1 = hfusion.arange : tensor<8xi64>                                    along [0]
    %c = hfusion.broadcast %a1 {dims = [1]} …

A value is *cheap* when computing it reads nothing from GM: ``hfusion.arange``, ``hfusion.fill``, and elementwise
ops and broadcasts whose tensor operands are cheap. In a kernel with a layout conflict (``kernel_info``'s
:class:`LayoutConflict`), every cheap value is first copied once per use (its cheap operands with it), then copies
that are the same op on the same operands and lie along the same domain dims are merged again: one copy per layout
is left. A kernel argument needed in several layouts (an index vector another kernel computed, read as a row and
as a column) gets a parameter per layout instead — appended after the others, each loaded into its own buffer —
and every call passes the same host value again. The rewrite is kept only when no conflict is left; a conflict on
a value computed from GM inside the kernel stays, and the kernel's fallback reason names the value and both dims.

AscendNPU-IR reaches the same result while tiling: producers are fused into each consumer's loop with
``duplicate_producer`` (``ExtendedFuseIntoContainingOp``, AnyPBRSchedule / PureElemwiseSchedule), so a producer used
by several consumers is computed once in each. Our lowering has one loop nest over the domain, so the copies are
per layout instead. Runs after ``hfusion-fuse-ops`` (the last CSE is before it) and before ``hfusion-flatten-ops``
(which can then collapse dims the shared value tied together).
Counters: ``kernels-rematerialized``, ``ops-copied`` (ops added, after the merge), ``arguments-copied``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...ir.core import Broadcast, Elementwise, Operation, Value
from ...ir.types import TensorType
from ...schedule.kernel_info import VECTOR_KINDS, LayoutConflict, Unsupported, kernel_layout
from ..cse import op_key
from .. import ModulePass, PassContext, register_pass

SOURCES = ("hfusion.arange", "hfusion.fill")
"""Cheap ops with no tensor operand."""
CHEAP_OVER_CHEAP = (Elementwise, Broadcast)
"""Traits of ops that are cheap when every tensor operand is cheap."""


@register_pass
@dataclass(frozen=True)
class RematerializeLayouts(ModulePass):
    """Copy cheap values (arange, fill, elementwise/broadcast chains over them) once per layout a kernel needs."""

    name: ClassVar[str] = "hfusion-rematerialize-layouts"

    def run(self, module: Operation, ctx: PassContext) -> None:
        sizes = module.size_vars()
        ctx.count("kernels-rematerialized", 0)
        ctx.count("ops-copied", 0)
        for func in list(module.functions):
            if not func.attributes.get("kernel") or func.attributes.get("fusion_kind") not in VECTOR_KINDS:
                continue
            if not _has_layout_conflict(func, sizes):
                continue
            new = func.clone()
            copied_args = []
            twins = _copy_per_use(new)
            if not _merge_same_layout(new, sizes, twins):
                copied_args = _copy_arguments_per_layout(new, sizes)
                if copied_args is None or not _merge_same_layout(new, sizes, twins):
                    continue  # the conflict is on a value computed from GM: the kernel keeps its reason
            ctx.count("kernels-rematerialized")
            ctx.count("ops-copied", len(new.body.ops) - len(func.body.ops))
            ctx.count("arguments-copied", len(copied_args))
            module.body.insert_before(func, new)
            func.erase()
            if copied_args:  # the host passes the same value again for each copy
                for call in [op for op in module.walk() if op.name == "func.call" and
                             op.attributes["callee"] == new.sym_name]:
                    operands = list(call.operands)
                    call.set_operands(operands + [operands[i] for i in copied_args])


def _copy_arguments_per_layout(func: Operation, sizes) -> list[int] | None:
    """Give each use of an input argument its own parameter, then merge those along the same domain dims: one
    parameter per layout, each loaded into its own buffer (a causal mask over a dynamic sequence reads the
    sequence's arange, computed by another kernel, as a row and as a column). Returns, for each parameter added
    (appended after the others), the index of the argument it copies; None when a layout conflict is left."""
    block = func.body
    outputs = set(func.attributes.get("output_args") or [])
    copies: list[tuple[Value, int]] = []
    for i, a in enumerate(list(block.args)):
        if i in outputs or not isinstance(a.type, TensorType):
            continue
        for use in list(a.uses)[1:]:
            copy = block.add_arg(a.type, a.name_hint)
            use.op.set_operand(use.index, copy)
            copies.append((copy, i))
    try:
        masks = kernel_layout(func, sizes).masks
    except (LayoutConflict, Unsupported):
        return None
    kept: dict[tuple, Value] = {}
    for i, a in enumerate(block.args[:len(block.args) - len(copies)]):
        if i not in outputs:
            kept[(i, masks.get(a))] = a
    for copy, i in copies:
        into = kept.setdefault((i, masks.get(copy)), copy)
        if into is not copy:
            copy.replace_all_uses_with(into)
    survivors = []
    for copy, i in reversed(copies):
        if copy.uses:
            survivors.append(i)
        else:
            block.erase_arg(copy.index)
    func.set_function_type()
    return survivors[::-1]


def _has_layout_conflict(func: Operation, sizes) -> bool:
    try:
        kernel_layout(func, sizes)
    except LayoutConflict:
        return True
    except Unsupported:
        return False  # something else keeps the kernel off the vector unit
    return False


def _cheap_ops(func: Operation) -> set[int]:
    """ids of the ops of ``func``'s body whose results are cheap (see the module docstring)."""
    cheap: set[int] = set()
    for op in func.body.ops:
        tensors = [v for v in op.operands if isinstance(v.type, TensorType)]
        if op.name in SOURCES or (any(op.has_trait(t) for t in CHEAP_OVER_CHEAP) and tensors and
                                  all(hasattr(v, "op") and id(v.op) in cheap for v in tensors)):
            cheap.add(id(op))
    return cheap


def _copy_per_use(func: Operation) -> dict[int, Value]:
    """Give every use of a cheap value its own copy (last op first, so the copies' operands are copied in turn).

    Returns each copy's *twin*: a copy made for an operand of another copy ``U'`` (of ``U``) computes what ``U``'s
    operand at that position computes, for the same kind of use; a copy the domain does not reach takes its twin's
    layout when merged (a returned mask whose only other use is a broadcast keeps that broadcast's layout)."""
    block = func.body
    cheap = _cheap_ops(func)
    origin: dict[int, Operation] = {}  # id(copy) -> the op it copies
    made_for: dict[int, tuple[Operation, int]] = {}  # id(copy) -> (the user it was made for, operand index)
    copies: list[Operation] = []
    for op in reversed(list(block.ops)):
        if id(op) not in cheap:
            continue
        for use in op.result.uses[1:]:
            copy = op.clone()
            block.insert_after(op, copy)
            origin[id(copy)], made_for[id(copy)] = op, (use.op, use.index)
            copies.append(copy)
            use.op.set_operand(use.index, copy.result)
    twins = {}
    for copy in copies:
        user, index = made_for[id(copy)]
        if id(user) in origin:
            twins[id(copy)] = origin[id(user)].operands[index]
    return twins


def _merge_same_layout(func: Operation, sizes, twins: dict[int, Value]) -> bool:
    """Merge copies that compute the same op on the same operands along the same domain dims; a copy the domain
    does not reach merges with its twin, or else with any equal op. False when a layout conflict is left."""
    try:
        masks = kernel_layout(func, sizes).masks
    except LayoutConflict:
        return False
    cheap = _cheap_ops(func)
    merged: dict[int, Value] = {}  # id(erased result) -> the value that replaced it

    def resolve(v: Value) -> Value:
        while id(v) in merged:
            v = merged[id(v)]
        return v

    seen: dict[tuple, Operation] = {}
    for op in list(func.body.ops):
        if id(op) not in cheap:
            continue
        mask = masks.get(op.result)
        placed, anywhere = op_key(op) + (mask,), op_key(op) + ("any",)
        if mask is None and id(op) in twins:
            into = resolve(twins[id(op)])
        else:
            twin = seen.get(placed) or (seen.get(anywhere) if mask is None else None)
            into = twin.result if twin is not None else None
        if into is not None and into is not op.result:
            merged[id(op.result)] = into
            op.replace_with([into])
            continue
        seen[placed] = op
        seen.setdefault(anywhere, op)
    try:
        kernel_layout(func, sizes)
    except LayoutConflict:
        return False
    except Unsupported:
        pass
    return True

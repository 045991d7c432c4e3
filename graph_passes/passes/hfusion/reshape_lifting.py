"""Unit-dim reshapes inside outlined vector kernels: collapses move down, expands move up, to the kernel boundary.

The patterns of ``hfusion-propagate-reshape{outlined=true}``, after AscendNPU-IR's ``PropagateCollapseDown`` and
``PropagateExpandUp`` (``Tensor/Transforms/PropagateReshape/``), which ``HFusionPipelines.cpp`` runs on the outlined
kernels in multi-kernel mode (``preFlattenPass`` after ``inferAndOutlineOp``). A reshape inside a kernel body is not
lowered to HIVM; one on an argument is a load and one before the return a store. Here a reshape only ever *lifts*
ops to the larger of its two shapes (the one with the unit dims), so the kernel body ends up in one shape and the
reshapes at its boundary::

    %c = hfusion.reshape %a : tensor<3x1xf32> -> tensor<3xf32>            // a collapse of a computed value
    %r = hfusion.elemwise_binary %c, %b {fun = "add"} : tensor<3xf32>
 -> %e = hfusion.reshape %b : tensor<3xf32> -> tensor<3x1xf32>            // expanded, then moved up (below)
    %l = hfusion.elemwise_binary %a, %e {fun = "add"} : tensor<3x1xf32>
    %r = hfusion.reshape %l : tensor<3x1xf32> -> tensor<3xf32>            // moves on down, to the return

Patterns, for reshapes that only drop (*collapse*) or only insert (*expand*) unit dims:

- ``collapse_down``: ``E(collapse(a: S -> T), v…) -> collapse(E(a, expand(v: T -> S)…))`` for an elementwise
  ``E``; ``reduce(collapse(a), dims) -> reduce(a, dims ∪ the unit dims)`` (a size-1 dim reduces to itself, the
  result keeps its type). The collapse of a computed value moves, or that of an argument also read whole.
- ``expand_up``: ``expand(E(v…): T -> S) -> E(expand(v)…)``, ``expand(broadcast(x, dims)) ->
  broadcast(x, dims ∪ the unit dims)`` (only unit dims new: ``expand(x)``). The op's other readers get
  ``collapse(E')``, which moves down in turn. An expand read only by the return (a store) stays.
- ``collapse_down`` also reads an argument ``x`` that has an expand view ``reshape(x: T -> S)`` as
  ``collapse(reshape(x))``: ``E(x, …)`` and ``reduce(x)`` are lifted too, so the kernel loads ``x`` in one shape.

Then, in a sweep of its own, ``hoist_reshape_to_arguments`` (propagate_reshape.py) takes a collapse still inside
the body of an op that reads only arguments and constants (a rotary table's ``cos`` of ``[1, T, D]`` collapsed and
broadcast over ``[B, H, T, D]``: no larger shape to lift to): the op reads its arguments collapsed.

Every rewrite raises an op's rank (to a shape already in the body), so the driver converges. A reshape that cannot
move (of a reduction result, a gather or a slice) stays where it is, and the kernel stays unsupported.
"""

from __future__ import annotations

from ...ir.core import BlockArgument, Broadcast, Elementwise, Operation, Reduction, Value
from ...ir.sizes import SizeVars
from ...dialects.hfusion import unit_dims_inserted
from ...ir.types import TensorType
from ...rewrite import Rewriter


def unit_reshape(op: Operation, sizes: SizeVars) -> tuple[str, list[int]] | None:
    """``("collapse" | "expand", positions of the unit dims in the larger shape)`` for a reshape that only drops or
    only inserts unit dims; None otherwise."""
    if op.name != "hfusion.reshape":
        return None
    src, dst = op.operand("input").type.shape, op.result.type.shape
    if len(dst) > len(src):
        units = unit_dims_inserted(src, dst, sizes)
        return ("expand", units) if units else None
    if len(dst) < len(src):
        units = unit_dims_inserted(dst, src, sizes)
        return ("collapse", units) if units else None
    return None


def _lifted_dims(dims, rank: int, units: list[int]) -> list[int]:
    """An op's ``dims`` (positions in the smaller shape) in the larger shape of ``rank`` dims, with the unit dims
    ``units`` added."""
    kept = [k for k in range(rank) if k not in units]  # the smaller shape's dims in the larger shape, in order
    return sorted({kept[d] for d in dims} | set(units))


def _read_whole(x: BlockArgument) -> bool:
    return any(u.name != "hfusion.reshape" for u in x.users)


def _lift_source(v: Value, sizes: SizeVars) -> tuple[Value | None, list[int], tuple] | None:
    """``(value in the larger shape S or None, unit positions in S, S)`` when ``v`` (shape T) may be read at S:
    ``v = collapse(a)`` of a computed ``a`` (or of an argument also read whole): ``a``; or ``v`` an argument that also
    has an expand view ``reshape(v: T -> S)`` (the first one): None, read through a new view (merged with the old
    one at the end; the old one may come later in the body)."""
    op = getattr(v, "op", None)
    if op is not None:
        kind = unit_reshape(op, sizes)
        if kind is None or kind[0] != "collapse":
            return None
        src = op.operand("input")
        if isinstance(src, BlockArgument) and not _read_whole(src):
            return None  # a collapse of an argument read only through views: a load at the boundary already
        return src, kind[1], tuple(src.type.shape)
    if not isinstance(v, BlockArgument):
        return None
    for user in v.users:
        kind = unit_reshape(user, sizes)
        if kind is not None and kind[0] == "expand":
            return None, kind[1], tuple(user.result.type.shape)
    return None


def _at_shape(v: Value, shape, rw: Rewriter, before: Operation) -> Value:
    """``v`` read at ``shape`` (the same elements with unit dims inserted); a constant's reshape folds into it
    (``fold_reshape_of_constant``)."""
    return rw.create("hfusion.reshape", [v], [v.type.with_shape(shape)], before=before).result


def _lift_operands(op: Operation, shape, sources: dict, rw: Rewriter, before: Operation) -> list[Value]:
    """``op``'s operands at ``shape``: tensors from ``sources`` (operand -> its value at ``shape``) or re-read at
    ``shape``; scalars as they are."""
    out = []
    for v in op.operands:
        if not isinstance(v.type, TensorType):
            out.append(v)
        elif id(v) in sources:
            out.append(sources[id(v)])
        else:
            out.append(_at_shape(v, shape, rw, before))
    return out


def _replace_lifted(old: Operation, new: Operation, rw: Rewriter, keep: Operation | None = None) -> None:
    """Readers of ``old``'s result read ``collapse(new)`` (``keep``, an expand being replaced, reads ``new``)."""
    result = old.result
    if keep is not None:
        rw.replace_op(keep, new.results)
    if result.uses:
        back = rw.create("hfusion.reshape", [new.result], [result.type], before=old)
        back.result.name_hint = result.name_hint
        rw.replace_all_uses(result, back.result)
    rw.erase_op(old)


def collapse_down(sizes: SizeVars):
    def collapse_down(op: Operation, rw: Rewriter) -> bool:
        """E(collapse(a: S -> T), v…) -> collapse(E(a, expand(v)…)); reduce(collapse(a), dims) -> reduce(a, dims ∪
        the unit dims). Also for an argument read through an expand elsewhere."""
        if len(op.results) != 1 or not isinstance(op.result.type, TensorType):
            return False
        if not (op.has_trait(Elementwise) or op.has_trait(Reduction)):
            return False
        if op.name == "hfusion.cast" and isinstance(op.operand("input"), BlockArgument):
            # Note: a cast of an argument lifted to the argument's expand view is collapsed back for its readers,
            # and fold_reshape (reshape(cast(reshape(x))) -> cast(x)) undoes that: the sweep would never end.
            return False
        lifted = None
        sources: dict = {}
        for v in op.operands:
            if not isinstance(v.type, TensorType) or id(v) in sources:
                continue
            found = _lift_source(v, sizes)
            if found is None:
                continue
            if lifted is not None and (found[1], found[2]) != lifted:
                return False  # operands lifted to different shapes: no one shape for the op
            lifted = (found[1], found[2])
            sources[id(v)] = found[0] if found[0] is not None else _at_shape(v, found[2], rw, op)
        if lifted is None:
            return False
        units, shape = lifted
        if op.has_trait(Reduction):
            dims = _lifted_dims(op.attributes["dims"], len(shape), units)
            new = rw.create(op.name, [sources[id(op.operand("input"))]], [op.result.type],
                            {**op.attributes, "dims": dims}, loc=op.loc)
            new.result.name_hint = op.result.name_hint
            rw.replace_op(op, new.results)
            return True
        operands = _lift_operands(op, shape, sources, rw, op)
        new = rw.create(op.name, operands, [op.result.type.with_shape(shape)], dict(op.attributes), loc=op.loc)
        new.result.name_hint = op.result.name_hint
        _replace_lifted(op, new, rw)
        return True

    return collapse_down


def expand_up(sizes: SizeVars):
    def expand_up(op: Operation, rw: Rewriter) -> bool:
        """expand(E(v…): T -> S) -> E(expand(v)…); expand(broadcast(x, dims)) -> broadcast(x, dims ∪ the unit
        dims). Other readers of E read collapse(E')."""
        kind = unit_reshape(op, sizes)
        producer = getattr(op.operand("input"), "op", None)
        if kind is None or kind[0] != "expand" or producer is None or len(producer.results) != 1:
            return False
        if all(u.name == "func.return" for u in op.result.users):
            return False  # read only by the return: a store at the boundary already
        shape, units = op.result.type.shape, kind[1]
        if producer.has_trait(Elementwise):
            operands = _lift_operands(producer, shape, {}, rw, producer)
            new = rw.create(producer.name, operands, [op.result.type], dict(producer.attributes), before=producer,
                            loc=producer.loc)
        elif producer.has_trait(Broadcast):
            dims = _lifted_dims(producer.attributes["dims"], len(shape), units)
            x = producer.operand("input")
            if all(sizes.statically_known_equal(shape[d], 1) for d in dims):  # only unit dims new: a reshape
                new = rw.create("hfusion.reshape", [x], [op.result.type], before=producer, loc=producer.loc)
            else:
                new = rw.create(producer.name, [x], [op.result.type], {"dims": dims}, before=producer,
                                loc=producer.loc)
        else:
            return False
        new.result.name_hint = producer.result.name_hint
        _replace_lifted(producer, new, rw, keep=op)
        return True

    return expand_up


def tidy_reshapes(func: Operation) -> None:
    """Drop reshapes nothing reads; keep the first of identical reshapes of one value (an argument expanded twice
    is loaded once)."""
    seen: dict = {}
    for op in reversed(list(func.body.ops)):
        if op.name == "hfusion.reshape" and not op.result.uses:
            op.erase()
    for op in list(func.body.ops):
        if op.name != "hfusion.reshape":
            continue
        key = (id(op.operand("input")), op.result.type)
        if key in seen:
            op.result.replace_all_uses_with(seen[key])
            op.erase()
        else:
            seen[key] = op.result

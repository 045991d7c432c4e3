"""``hfusion-propagate-reshape``: sink collapse/expand reshapes through elementwise ops until they meet their
inverse (or the end of the chain), and fold unit-dim expands into broadcasts.

After AscendNPU-IR's reshape propagation (``Tensor/Transforms/PropagateReshape/`` — ``PropagateCollapseDown``,
``PropagateExpandUp``, ``PropagateNearEndExpandDown``), which ``HFusionPipelines.cpp`` runs in ``preFlattenPass``,
followed by canonicalization, before flattening and outlining. Its main target here is keepdim reductions, which import as a reshape adding a unit dim after the
reduce and one dropping it again before the broadcast, with elementwise ops between::

    %s = hfusion.reduce %x {dims = [1]} : tensor<Nx D> -> tensor<N>
    %k = hfusion.reshape %s : tensor<N> -> tensor<Nx1>
    %r = hfusion.elemwise_unary %k {fun = "rsqrt"} : tensor<Nx1>
    %u = hfusion.reshape %r : tensor<Nx1> -> tensor<N>
    %b = hfusion.broadcast %u {dims = [1]} : tensor<N> -> tensor<NxD>
 -> %r = hfusion.elemwise_unary %s {fun = "rsqrt"} : tensor<N>
    %b = hfusion.broadcast %r {dims = [1]} : tensor<N> -> tensor<NxD>

A reshape inside a kernel body is not lowered to HIVM (docs/schedule.md, "Not lowered"); one at the boundary is a
load or a store. Patterns (run to a fixed point by the shared greedy driver):

- ``sink_reshape``: ``E(reshape(a: S -> T), …) -> reshape(E(a, …): S -> T)`` for an elementwise op ``E`` whose
  tensor operands are all reshapes from the same shape ``S`` to ``E``'s shape (a collapse or an expand, see
  :func:`~graph_passes.dialects.hfusion.reassociation`, or rank 0 <-> all unit dims), or constants
  (``hfusion.fill``, ``arith.constant``), re-created at ``S``. Scalar operands are kept. A reshape of a function
  argument is already at the boundary (a load): it moves only beside the reshape of a computed value.
- ``hoist_reshape_to_arguments``: ``reshape(E(a, c…): S -> T) -> E(reshape(a), c'…)`` when the reshape is
  ``E``'s only user and ``E``'s tensor operands are function arguments (of shape ``S``) or constants: a saved
  keepdim statistic scaled before its broadcast (``div(rstd: Nx1x1, c)`` then a reshape to ``N``) reads the
  argument through a boundary reshape instead (AscendNPU-IR's ``PropagateExpandUp`` / collapse-up). It never
  undoes ``sink_reshape``, which does not move reshapes of arguments alone.
- ``fold_reshape`` (from canonicalize): ``reshape(reshape(x)) -> reshape(x)``, ``reshape(x: T) -> T -> x``, so a
  sunk reshape cancels against its inverse.
- ``fold_reshape_of_constant``: ``reshape(fill)`` / ``reshape(arith.constant)`` -> the constant at the new shape
  (AscendNPU-IR's ``FoldFillWithTensorReshape``).
- ``unit_broadcast_to_reshape``: ``broadcast(x, dims)`` whose new dims are all unit dims -> ``reshape(x)``.
- ``fold_unit_expand_into_broadcast``: ``broadcast(reshape(x), dims)`` where the reshape only inserts unit dims
  -> ``broadcast(x, dims ∪ those unit dims)``.

Counter ``reshapes-propagated``: reshapes sunk through an elementwise op, folded into a constant or into a
broadcast.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...dialects.hfusion import reassociation, unit_dims_inserted
from ...ir.core import Broadcast, Constant, Elementwise, Operation, Value
from ...ir.sizes import SizeVars
from ...ir.types import TensorType
from ...schedule.kernel_info import ELEMENTWISE_OPS, VECTOR_KINDS
from ...rewrite import Pattern, Rewriter, apply_patterns_greedily
from .. import ModulePass, PassContext, register_pass
from ..canonicalize import fold_reshape
from ..folding import flat
from .reshape_lifting import collapse_down, expand_up, tidy_reshapes


def _same_shape(a, b, sizes: SizeVars) -> bool:
    return len(a) == len(b) and all(sizes.statically_known_equal(x, y) for x, y in zip(a, b))


def _is_collapse_or_expand(src: TensorType, dst: TensorType, sizes: SizeVars) -> bool:
    # Note: rank 0 <-> 1x…x1 (a full reduction with keepdim) is one too; kernels whose reductions reduce different
    # dims are kept apart by hfusion-fuse-ops' legality (fusion_kind.reductions_agree), not here.
    if src.rank == 0 or dst.rank == 0:
        return all(sizes.statically_known_equal(d, 1) for d in (src.shape or dst.shape))
    return (reassociation(src.shape, dst.shape, sizes) is not None
            or reassociation(dst.shape, src.shape, sizes) is not None)  # fmt: skip


def _movable_reshape(v: Value, sizes: SizeVars, of_argument: bool = False) -> Operation | None:
    """The reshape defining ``v`` when it may be sunk: a collapse or expand of a value computed by an op (or of a
    function argument, with ``of_argument``: one only moves beside a computed one)."""
    op = getattr(v, "op", None)
    if op is None or op.name != "hfusion.reshape":
        return None
    src = op.operand("input")
    if getattr(src, "op", None) is None and not of_argument:  # a reshape of an argument is a load at the kernel
        return None                                          # boundary: keep it
    if not isinstance(src.type, TensorType) or not _is_collapse_or_expand(src.type, op.result.type, sizes):
        return None
    return op


def _recreatable_constant(v: Value) -> Operation | None:
    op = getattr(v, "op", None)
    if op is not None and op.name in ("hfusion.fill", "arith.constant") and not op.operands:
        return op
    return None


def _sink_reshape(sizes: SizeVars):
    def sink_reshape(op: Operation, rw: Rewriter) -> bool:
        """E(reshape(a: S -> T), c…) -> reshape(E(a, c'…) : S -> T), constants c re-created at S."""
        if not op.has_trait(Elementwise) or len(op.results) != 1 or not isinstance(op.result.type, TensorType):
            return False
        out_t: TensorType = op.result.type
        src_shape = None
        plan: list[tuple[str, Operation | None]] = []
        for v in op.operands:
            if not isinstance(v.type, TensorType):
                plan.append(("keep", None))
                continue
            reshape = _movable_reshape(v, sizes, of_argument=True)
            if reshape is not None:
                shape = reshape.operand("input").type.shape
                if src_shape is None:
                    src_shape = shape
                elif not _same_shape(shape, src_shape, sizes):
                    return False  # operands reshaped from different shapes: not one consistent reshape
                plan.append(("reshape", reshape))
                continue
            const = _recreatable_constant(v)
            if const is not None:
                plan.append(("const", const))
            elif getattr(v, "op", None) is None:
                plan.append(("argument", None))  # read through a reshape at S (a load at the boundary)
            else:
                return False
        if src_shape is None or not any(kind == "reshape" and getattr(r.operand("input"), "op", None) is not None
                                        for kind, r in plan):
            return False  # nothing but reshapes of arguments: those are loads at the boundary already
        operands = []
        for v, (kind, src_op) in zip(op.operands, plan):
            if kind == "keep":
                operands.append(v)
            elif kind == "reshape":
                operands.append(src_op.operand("input"))
            elif kind == "argument":
                operands.append(rw.create("hfusion.reshape", [v], [v.type.with_shape(src_shape)]).result)
            else:
                attrs = dict(src_op.attributes)
                if src_op.has_trait(Constant):
                    attrs["value"] = flat(attrs.get("value"))  # row-major order is what a reshape keeps
                new_const = rw.create(src_op.name, [], [v.type.with_shape(src_shape)], attrs, loc=src_op.loc)
                operands.append(new_const.result)
        new = rw.create(op.name, operands, [out_t.with_shape(src_shape)], dict(op.attributes))
        new.result.name_hint = op.result.name_hint
        back = rw.create("hfusion.reshape", [new.result], [out_t])
        rw.replace_op(op, back.results)
        return True

    return sink_reshape


def _hoist_reshape(sizes: SizeVars, inside_body: bool = False):
    def readable_at_any_shape(e: Operation, src: Value) -> bool:
        """Are ``e``'s tensor operands function arguments of ``src``'s shape, constants or splats of a rank-0 value
        (broadcast again at the new shape: a host scalar) — or, ``inside_body``, results of elementwise ops that only
        ``e`` reads (the reshape moves on up through them: a rotary table's ``cast(cos(x))``)?"""
        def readable(v):
            if not isinstance(v.type, TensorType) or _recreatable_constant(v) is not None or _splat(v) is not None:
                return True
            if not _same_shape(v.type.shape, src.type.shape, sizes):
                return False
            d = getattr(v, "op", None)
            return d is None or (inside_body and d.has_trait(Elementwise) and len(d.results) == 1 and
                                 len(v.uses) == 1)
        return all(readable(v) for v in e.operands)

    def rebuild(e: Operation, src: Value, shape, before: Operation, loc, rw: Rewriter) -> Value:
        """``e`` at ``shape``, reading its arguments reshaped, inserted before ``before``."""
        operands = []
        for v in e.operands:
            const = _recreatable_constant(v) if isinstance(v.type, TensorType) else None
            if not isinstance(v.type, TensorType):
                operands.append(v)
            elif (scalar := _splat(v)) is not None:  # a rank-0 value broadcast: broadcast again at the new shape
                operands.append(rw.create("hfusion.broadcast", [scalar], [v.type.with_shape(shape)],
                                          {"dims": list(range(len(shape)))}, before=before, loc=loc).result)
            elif const is None:  # an argument, or an elementwise result this reshape then moves up through
                operands.append(rw.create("hfusion.reshape", [v], [v.type.with_shape(shape)], before=before,
                                          loc=loc).result)
            else:
                attrs = dict(const.attributes)
                if const.has_trait(Constant):
                    attrs["value"] = flat(attrs.get("value"))
                operands.append(rw.create(const.name, [], [v.type.with_shape(shape)], attrs, before=before,
                                          loc=const.loc).result)
        new = rw.create(e.name, operands, [src.type.with_shape(shape)], dict(e.attributes), before=before, loc=e.loc)
        new.result.name_hint = src.name_hint
        return new.result

    def broadcasts_read_collapsed(op: Operation, readers: list, rw: Rewriter) -> bool:
        """``broadcast(x, dims) -> broadcast(reshape(x), dims ∪ x's unit dims)`` for each broadcast in ``readers``
        of ``x``, the source of ``op``, a reshape dropping unit dims only, and the return reads ``x`` collapsed and
        expanded again (a store); when every reader is a reshape, such a broadcast or the return."""
        x, shape = op.operand("input"), op.result.type.shape
        units = unit_dims_inserted(shape, x.type.shape, sizes)
        if not units or not all(u.name in ("hfusion.reshape", "func.return") or
                                (u.name == "hfusion.broadcast" and u.operand("input") is x) for u in readers):
            return False
        for u in readers:
            if u.name == "func.return":
                collapsed = rw.create("hfusion.reshape", [x], [op.result.type], before=u, loc=op.loc).result
                stored = rw.create("hfusion.reshape", [collapsed], [x.type], before=u, loc=op.loc).result
                rw.set_operands(u, [stored if v is x else v for v in u.operands])
                continue
            if u.name != "hfusion.broadcast":
                continue
            dims = list(u.attributes["dims"])
            kept = [k for k in range(u.result.type.rank) if k not in dims]
            collapsed = rw.create("hfusion.reshape", [x], [op.result.type], before=u, loc=u.loc).result
            rw.replace_op(u, [rw.create("hfusion.broadcast", [collapsed], [u.result.type],
                                        {"dims": sorted(set(dims) | {kept[j] for j in units})}, before=u,
                                        loc=u.loc).result])
        return True

    def hoist_reshape_to_arguments(op: Operation, rw: Rewriter) -> bool:
        """reshape(E(a, c…): S -> T) -> E(reshape(a), c'…) when E's only user is the reshape and its tensor operands
        are function arguments, constants or splats: the reshapes then sit on arguments (loads at a kernel's boundary).
        ``inside_body``: for a reshape an op other than the return reads (one before the return is a store), when
        E's users are all reshapes; E's other reshapes then read the new E (a saved rotary table's unsqueeze before
        the return: a store of the value the body computes). E's other readers may also be broadcasts, when the
        reshape only drops unit dims: each reads E collapsed, those dims broadcast dims of size 1 (a multi-query
        rotary table's ``cos`` of ``[1, T, D]``, broadcast over the one key head and, collapsed, over the query
        heads), so that E's readers are all reshapes."""
        if inside_body and all(u.name == "func.return" for u in op.result.users):
            return False
        src = op.operand("input")
        e = getattr(src, "op", None)
        if e is None or not e.has_trait(Elementwise) or len(e.results) != 1 or not isinstance(src.type, TensorType):
            return False
        others = [u for u in dict.fromkeys(src.users) if u is not op]
        if others and not inside_body:
            return False
        if any(u.name != "hfusion.reshape" for u in others):
            return inside_body and readable_at_any_shape(e, src) and broadcasts_read_collapsed(op, others, rw)
        if not all(r.name == "hfusion.reshape" and _is_collapse_or_expand(src.type, r.result.type, sizes)
                   for r in [op, *others]) or not readable_at_any_shape(e, src):
            return False
        first = min([op, *others], key=lambda u: u.parent.ops.index(u))
        new = rebuild(e, src, op.result.type.shape, first, op.loc, rw)
        rw.replace_op(op, [new])
        for r in others:
            same = _same_shape(r.result.type.shape, new.type.shape, sizes)
            rw.replace_op(r, [new if same else rw.create("hfusion.reshape", [new], [r.result.type], before=r,
                                                         loc=r.loc).result])
        if not src.uses:
            rw.erase_op(e)  # its operands may now have the one reader the next hoist needs
        return True

    return hoist_reshape_to_arguments


def _splat(v: Value) -> Value | None:
    """The rank-0 value ``v`` broadcasts to every element of (a host scalar's splat), or None."""
    d = getattr(v, "op", None)
    if d is not None and d.name == "hfusion.broadcast" and isinstance(d.operand("input").type, TensorType) and \
            d.operand("input").type.rank == 0:
        return d.operand("input")
    return None


def _reshape_constant(sizes: SizeVars):
    def fold_reshape_of_constant(op: Operation, rw: Rewriter) -> bool:
        """reshape(fill / constant) -> the fill / constant at the reshape's type (a sunk reshape meets it)."""
        const = _recreatable_constant(op.operand("input"))
        if const is None:
            return False
        attrs = dict(const.attributes)
        if const.has_trait(Constant):
            attrs["value"] = flat(attrs.get("value"))
        new = rw.create(const.name, [], [op.result.type], attrs, loc=const.loc)
        rw.replace_op(op, new.results)
        return True

    return fold_reshape_of_constant


def _unit_broadcast(sizes: SizeVars):
    def unit_broadcast_to_reshape(op: Operation, rw: Rewriter) -> bool:
        """broadcast(x, dims) whose new dims are all unit -> reshape(x): it copies nothing (and may then sink)."""
        shape = op.result.type.shape
        if not all(sizes.statically_known_equal(shape[d], 1) for d in op.attributes["dims"]):
            return False
        new = rw.create("hfusion.reshape", [op.operand("input")], [op.result.type])
        rw.replace_op(op, new.results)
        return True

    return unit_broadcast_to_reshape


def _fold_unit_expand_into_broadcast(sizes: SizeVars):
    def fold_unit_expand_into_broadcast(op: Operation, rw: Rewriter) -> bool:
        """broadcast(reshape(x) inserting unit dims, dims) -> broadcast(x, dims ∪ the unit dims)."""
        reshape = getattr(op.operand("input"), "op", None)
        if reshape is None or reshape.name != "hfusion.reshape":
            return False
        x = reshape.operand("input")
        inserted = unit_dims_inserted(x.type.shape, reshape.result.type.shape, sizes)
        if not inserted:
            return False
        dims = list(op.attributes["dims"])
        kept = [k for k in range(op.result.type.rank) if k not in dims]
        new_dims = sorted(set(dims) | {kept[j] for j in inserted})
        new = rw.create("hfusion.broadcast", [x], [op.result.type], {"dims": new_dims})
        rw.replace_op(op, new.results)
        return True

    return fold_unit_expand_into_broadcast


@register_pass
@dataclass(frozen=True)
class PropagateReshape(ModulePass):
    """Sink reshapes so pairs cancel; with ``outlined``, move vector kernels' unit-dim reshapes to their boundary."""

    name: ClassVar[str] = "hfusion-propagate-reshape"
    max_iterations: int = 10
    outlined: bool = False  # run on the outlined vector kernels (reshape_lifting), not on host functions

    def run(self, module: Operation, ctx: PassContext) -> None:
        sizes = module.size_vars()
        if self.outlined:
            self.run_on_kernels(module, sizes, ctx)
            return
        patterns = [
            Pattern("hfusion.reshape", fold_reshape, "fold_reshape", "chains-folded"),
            Pattern("hfusion.reshape", _reshape_constant(sizes), "fold_reshape_of_constant", "reshapes-propagated"),
            Pattern("hfusion.reshape", _hoist_reshape(sizes), "hoist_reshape_to_arguments", "reshapes-propagated"),
            *[Pattern(name, _sink_reshape(sizes), "sink_reshape", "reshapes-propagated") for name in ELEMENTWISE_OPS],
            Pattern("hfusion.broadcast", _fold_unit_expand_into_broadcast(sizes), "fold_unit_expand_into_broadcast",
                    "reshapes-propagated"),
            Pattern("hfusion.broadcast", _unit_broadcast(sizes), "unit_broadcast_to_reshape", "reshapes-propagated"),
        ]  # fmt: skip
        stats = apply_patterns_greedily(module, patterns, max_sweeps=self.max_iterations)
        ctx.count("reshapes-propagated", stats.by_counter.get("reshapes-propagated", 0))

    def run_on_kernels(self, module: Operation, sizes: SizeVars, ctx: PassContext) -> None:
        patterns = [
            Pattern("hfusion.reshape", fold_reshape, "fold_reshape", "chains-folded"),
            Pattern("hfusion.reshape", _reshape_constant(sizes), "fold_reshape_of_constant", "reshapes-propagated"),
            Pattern("hfusion.reshape", expand_up(sizes), "expand_up", "reshapes-propagated"),
            *[Pattern(name, collapse_down(sizes), "collapse_down", "reshapes-propagated")
              for name in ELEMENTWISE_OPS + ("hfusion.reduce",)],
        ]  # fmt: skip
        # A collapse left inside the body reads a value computed from arguments only (a rotary table's cos
        # [1, T, D] collapsed to [T, D] and broadcast over [B, H, T, D]: there is no larger shape to lift to):
        # the op reads its arguments collapsed instead, loads at the boundary, and the op it replaces goes. A
        # separate sweep, so collapse_down does not move it back.
        hoist = Pattern("hfusion.reshape", _hoist_reshape(sizes, inside_body=True), "hoist_reshape_to_arguments",
                        "reshapes-propagated")
        moved = 0
        for func in module.functions:
            if not func.attributes.get("kernel") or func.attributes.get("fusion_kind") not in VECTOR_KINDS:
                continue
            stats = apply_patterns_greedily(func, patterns, max_sweeps=self.max_iterations)
            moved += stats.by_counter.get("reshapes-propagated", 0)
            stats = apply_patterns_greedily(func, [hoist], max_sweeps=self.max_iterations)
            moved += stats.by_counter.get("reshapes-propagated", 0)
            for op in reversed(list(func.body.ops)):  # the ops the hoist replaced (they read arguments whole)
                dead = not any(r.uses for r in op.results)
                if dead and (op.has_trait(Elementwise) or op.has_trait(Broadcast)):
                    op.erase()
            tidy_reshapes(func)
        ctx.count("reshapes-propagated", moved)

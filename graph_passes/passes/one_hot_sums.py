"""A sum along a dim of a one-hot select: ``sum_d(select(index == positions_d, a, 0) * w)`` -> ``select(0 <= index
< n, a, 0) * w + 0 * w``, for ``a``, ``w`` and ``index`` constant along ``d`` (a canonicalize rule).

This is the reduction of a cross-entropy backward: ``nll_loss_backward`` scatters one value per row into zeros (a
one-hot select after ``scatter``'s lowering) and ``_log_softmax_backward_data`` sums that row again. At most one
position of a slice matches its index, so the sum holds one term: the rewrite computes it per slice, and the kernel
over the full rows keeps no reduction (an elementwise kernel over every core instead of a row kernel whose rows —
a vocabulary long — may not fit UB). The value is the same: ``a * w`` plus zeros, or zero when the index is out of
range; ``+ 0 * w`` keeps a non-finite ``w`` giving NaN, as the sum's ``0 * w`` terms do.
"""

from __future__ import annotations

from ..ir.core import Operation, Value
from ..ir.types import INT_DTYPES, ScalarType, TensorType
from ..rewrite import Rewriter
from .folding import splat_value


def _along(v: Value, d: int, reduced: tuple):
    """How to get ``v``'s value per slice when it is the same at every position along ``d``: ``("value", x)`` (a
    scalar, or a tensor of the reduced shape), ``("splat", number)``, ``("broadcast", source, dims)``; else None."""
    if isinstance(v.type, ScalarType):
        return ("value", v)
    value = splat_value(v)
    if value is not None and not isinstance(value, str):
        return ("splat", value)
    op = getattr(v, "op", None)
    if op is None or op.name != "hfusion.broadcast" or d not in op.attributes["dims"]:
        return None
    src, rest = op.operand("input"), [x - (x > d) for x in op.attributes["dims"] if x != d]
    if not rest:
        return ("value", src) if tuple(src.type.shape) == reduced else None
    return ("broadcast", src, rest)


def _positions(v: Value, d: int, n) -> bool:
    """Whether ``v`` holds each position's index along ``d`` (an arange from 0 by 1 of the dim's length, broadcast
    along the other dims)."""
    op = getattr(v, "op", None)
    if op is not None and op.name == "hfusion.broadcast":
        rank = v.type.rank
        if sorted(op.attributes["dims"]) != [i for i in range(rank) if i != d]:
            return False
        op = getattr(op.operand("input"), "op", None)
    return op is not None and op.name == "hfusion.arange" and op.attributes["start"] == 0 and \
        op.attributes["step"] == 1 and op.result.type.shape == (n,)


def _is_tensor(how) -> bool:
    """Does the recipe ``how`` (:func:`_along`) give a tensor of the reduced shape (not a scalar)?"""
    return how[0] == "broadcast" or (how[0] == "value" and isinstance(how[1].type, TensorType))


def _build(rw: Rewriter, how, reduced: tuple, dtype: str) -> Value:
    if how[0] == "value":
        return how[1]
    if how[0] == "splat":
        return rw.create("arith.constant", [], [ScalarType(dtype)], {"value": how[1]}).result
    return rw.create("hfusion.broadcast", [how[1]], [TensorType(reduced, how[1].type.dtype)], {"dims": how[2]}).result


def _one_hot(x: Value, d: int, n, reduced: tuple):
    """(index, a) recipes when ``x = select(index == positions_d, a, 0)`` (the compare either way round)."""
    sel = getattr(x, "op", None)
    if sel is None or sel.name != "hfusion.select" or splat_value(sel.operand("false_value")) != 0:
        return None
    cmp = getattr(sel.operand("cond"), "op", None)
    if cmp is None or cmp.name != "hfusion.compare" or cmp.attributes["predicate"] != "eq":
        return None
    a = _along(sel.operand("true_value"), d, reduced)
    for idx, pos in (cmp.operands, cmp.operands[::-1]):
        index = _along(idx, d, reduced)
        if a and index and index[0] != "splat" and _positions(pos, d, n) and idx.type.dtype in INT_DTYPES:
            return index, a
    return None


def sum_of_one_hot(op: Operation, rw: Rewriter) -> bool:
    """sum_d(select(index == positions_d, a, 0) [* w]) -> select(0 <= index < n, a, 0) [* w + 0 * w]."""
    dims = op.attributes.get("dims")
    if op.attributes.get("kind") != "sum" or len(dims) != 1:
        return False
    x, d = op.operand("input"), dims[0]
    xt, out = x.type, op.result.type
    n = xt.shape[d]
    reduced = tuple(s for i, s in enumerate(xt.shape) if i != d)
    if out.dtype != xt.dtype or tuple(out.shape) != reduced or not str(n).isdigit():
        return False
    factor, found = None, _one_hot(x, d, n, reduced)
    prod = getattr(x, "op", None)
    if found is None and prod is not None and prod.name == "hfusion.elemwise_binary" and \
            prod.attributes["fun"] == "mul":
        for s, w in (prod.operands, prod.operands[::-1]):
            found, factor = _one_hot(s, d, n, reduced), _along(w, d, reduced)
            if found and factor:
                break
        else:
            return False
    if found is None:
        return False
    (index, a), dtype = found, xt.dtype
    if not _is_tensor(index):
        return False  # a scalar index: the sum is a constant fold's business
    if factor is not None and not _is_tensor(factor):
        return False  # a scalar factor: sum_d(x * c) is not this rule's (c * 0 would need a scalar op)
    idx = _build(rw, index, reduced, "")
    it, bt = TensorType(reduced, idx.type.dtype), TensorType(reduced, "i1")
    zero_i = rw.create("arith.constant", [], [ScalarType(it.dtype)], {"value": 0}).result
    last = rw.create("arith.constant", [], [ScalarType(it.dtype)], {"value": int(n) - 1}).result  # fits: an index
    low = rw.create("hfusion.compare", [idx, zero_i], [bt], {"predicate": "ge"}).result
    high = rw.create("hfusion.compare", [idx, last], [bt], {"predicate": "le"}).result
    inside = rw.create("hfusion.elemwise_binary", [low, high], [bt], {"fun": "logical_and"}).result
    zero = rw.create("arith.constant", [], [ScalarType(dtype)], {"value": 0 if dtype in INT_DTYPES else 0.0}).result
    res = rw.create("hfusion.select", [inside, _build(rw, a, reduced, dtype), zero], [out]).result
    if factor is not None:
        w = _build(rw, factor, reduced, dtype)
        res = rw.create("hfusion.elemwise_binary", [res, w], [out], {"fun": "mul"}).result
        if dtype not in INT_DTYPES:
            nan_of_w = rw.create("hfusion.elemwise_binary", [w, zero], [out], {"fun": "mul"}).result
            res = rw.create("hfusion.elemwise_binary", [res, nan_of_w], [out], {"fun": "add"}).result
    rw.replace_op(op, [res])  # sum_d(select(i == arange_d, a, 0) * w) -> select(0 <= i < n, a, 0) * w + 0 * w
    return True

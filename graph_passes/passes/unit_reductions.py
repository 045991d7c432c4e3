"""Reductions over dims of static size 1 (canonicalize rules): such a dim holds one element, so reducing it moves no
value — ``sum``/``max``/``min``/``prod``/``any``/``all`` of one element is that element.

- reduce(x, dims) with every reduced dim of size 1 -> reshape(x) to the result's shape (``x.sum(0)`` of a ``[1, C]``
  tensor; a norm over a last dim of 1);
- reduce(x, dims) with some reduced dims of size 1 -> reduce(reshape(x) without them, the other dims): the kernel
  sees only the dims it reduces.

A reshape that only drops or adds unit dims costs nothing (a view), and ``fold_reshape`` folds the chains it makes
(``reshape(reduce(x))`` back to ``x``'s shape is ``x``); a reduction over one element kept as a reduction would
instead be a kernel op with a unit dim (before, a norm over ``[1]`` ran in the reference interpreter). Only when the
result's element type is the input's (a sum widened by ``hfusion-legalize-int-sums`` is a cast, not a view). Kernel
bodies are left alone: this runs before fusion.
"""

from __future__ import annotations

import sympy

from ..ir.core import Operation
from ..rewrite import Rewriter
from .zero_size import _in_kernel


def _unit(size) -> bool:
    return sympy.sympify(size) == 1


def reduce_over_unit_dims(op: Operation, rw: Rewriter) -> bool:
    """reduce(x, dims) over unit dims -> reshape(x), or a reduction over the other dims of reshape(x)."""
    src = op.operand("input")
    dims = list(op.attributes["dims"])
    unit = [d for d in dims if _unit(src.type.shape[d])]
    if not unit or _in_kernel(op) or src.type.dtype != op.result.type.dtype:
        return False
    if len(unit) == len(dims):
        rw.replace_op(op, rw.create("hfusion.reshape", [src], [op.result.type]).results)
        return True
    keep = [d for d in range(src.type.rank) if d not in unit]
    view = rw.create("hfusion.reshape", [src], [src.type.with_shape([src.type.shape[d] for d in keep])]).result
    attrs = dict(op.attributes)
    attrs["dims"] = [keep.index(d) for d in dims if d not in unit]
    rw.replace_op(op, rw.create("hfusion.reduce", [view], [op.result.type], attrs).results)
    return True

"""Zero-size tensors (a dim of static size 0) in a host function: nothing to compute (canonicalize rules).

- An op whose tensor result holds no elements becomes ``tensor.empty``: an allocation, no kernel computes it.
- A reduction over dims holding no elements, to a result that holds some, is a fill of the kind's identity
  (sum 0, prod 1, any false, all true), as eager; max/min of no elements has no identity and is an error, as
  eager's (``amax(): Expected reduction dim 0 to have non-zero size``).
- A concat drops its inputs of no elements (one left: that input); a matmul contracting no elements is zeros.

Kernel bodies are left alone: these rules run before fusion, so kernels see no zero-size values at compile time (a
launch whose symbolic sizes give no elements is skipped at run time, ``torch_npu_backend/runtime.py``).
"""

from __future__ import annotations

import sympy

from ..ir.core import Operation, Pure, Value
from ..ir.types import TensorType
from ..rewrite import Rewriter
from .base import PassError

IDENTITY = {"sum": 0, "prod": 1, "any": False, "all": True}
"""The value of a reduction over no elements, per reduce kind (max and min have none)."""


def _empty(v: Value) -> bool:
    """Whether ``v`` is a tensor with a dim of static size 0."""
    return isinstance(v.type, TensorType) and any(sympy.sympify(d) == 0 for d in v.type.shape)


def _in_kernel(op: Operation) -> bool:
    func = op.parent_op()
    return func is not None and bool(func.attributes.get("kernel"))


def _fill_value(value, dtype: str):
    if dtype == "i1":
        return bool(value)
    return float(value) if dtype.startswith(("f", "bf")) else int(value)


def empty_result(op: Operation, rw: Rewriter) -> bool:
    """op(…) -> tensor.empty when its one tensor result holds no elements."""
    if op.name == "tensor.empty" or not op.has_trait(Pure) or len(op.results) != 1 or not _empty(op.result):
        return False
    if _in_kernel(op):
        return False
    new = rw.create("tensor.empty", [], [op.result.type], {})
    rw.replace_op(op, new.results)
    return True


def _reduces_nothing(op: Operation) -> bool:
    src = op.operand("input")
    return not _empty(op.result) and any(sympy.sympify(src.type.shape[d]) == 0 for d in op.attributes["dims"])


def reduce_of_nothing(op: Operation, rw: Rewriter) -> bool:
    """reduce<kind>(x) over dims of x holding no elements -> fill(identity of kind); max/min are left for
    :func:`check_no_reduction_of_nothing` (their result may be dead once the values of no elements are gone: a
    softmax over a dim of size 0)."""
    kind = op.attributes["kind"]
    if kind not in IDENTITY or _in_kernel(op) or not _reduces_nothing(op):
        return False
    new = rw.create("hfusion.fill", [], [op.result.type], {"value": _fill_value(IDENTITY[kind], op.result.type.dtype)})
    rw.replace_op(op, new.results)
    return True


def check_no_reduction_of_nothing(module: Operation) -> None:
    """Raise for a max/min reduction over no elements still computed after canonicalization (no identity)."""
    for op in module.walk():
        if op.name == "hfusion.reduce" and not _in_kernel(op) and _reduces_nothing(op):
            kind, dims = op.attributes["kind"], list(op.attributes["dims"])
            sizes = "x".join(str(d) for d in op.operand("input").type.shape)
            raise PassError(f"canonicalize: {op.loc or '<unknown>'}: '{op.name}' op {kind} over dims {dims} of "
                            f"{sizes} reduces no elements, and {kind} has no identity (eager raises too)")


def concat_without_empty(op: Operation, rw: Rewriter) -> bool:
    """concat(a, <no elements>, b) -> concat(a, b); concat(a) -> a."""
    if _empty(op.result) or _in_kernel(op) or not any(_empty(v) for v in op.operands):
        return False
    kept = [v for v in op.operands if not _empty(v)]
    if len(kept) == 1 and kept[0].type == op.result.type:
        rw.replace_op(op, kept)
    else:
        rw.set_operands(op, kept)
    return True


def matmul_of_nothing(op: Operation, rw: Rewriter) -> bool:
    """matmul(a, b) contracting no elements -> fill(0)."""
    if _empty(op.result) or _in_kernel(op) or not any(_empty(v) for v in op.operands[:2]):
        return False
    if len(op.operands) > 2:  # init + nothing: the init itself
        rw.replace_op(op, [op.operands[2]])
        return True
    new = rw.create("hfusion.fill", [], [op.result.type], {"value": _fill_value(0, op.result.type.dtype)})
    rw.replace_op(op, new.results)
    return True

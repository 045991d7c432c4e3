"""Constant values of SSA values and numpy evaluation of elementwise ops on them (for canonicalize's folds).

A *splat* is one number for every element: a scalar ``arith.constant``, an ``hfusion.fill``, or a tensor
``arith.constant`` whose values are all equal. A *dense* constant is a small static tensor ``arith.constant``.
"""

from __future__ import annotations

import math

import numpy as np

from ..intmath import ceil_div
from ..ir.core import Constant, Value
from ..ir.types import IndexType, ScalarType, ShapedType, dtype_of

MAX_FOLD_ELEMENTS = 64  # larger constants are left alone (the IR stays small and folding cheap)

NUMPY_DTYPES = {
    "f16": np.float16, "f32": np.float32, "f64": np.float64, "i1": np.bool_, "i8": np.int8, "ui8": np.uint8,
    "i16": np.int16, "i32": np.int32, "i64": np.int64,
}  # fmt: skip  (bf16 is not folded: numpy has no bf16 without ml_dtypes)


def flat(v) -> list:
    """The scalars of a (nested) list attribute in row-major order; a scalar is a list of one."""
    if isinstance(v, (list, tuple)):
        return [x for item in v for x in flat(item)]
    return [v]


def splat_value(v: Value) -> float | int | bool | None:
    """The number every element of ``v`` holds, or None when ``v`` is not a known splat constant."""
    op = getattr(v, "op", None)
    if op is None:
        return None
    if op.name == "hfusion.fill":
        return op.attributes.get("value")
    if op.has_trait(Constant):
        values = flat(op.attributes.get("value"))
        if values and all(x == values[0] for x in values) and not isinstance(values[0], str):
            return values[0]
    return None


def dense_value(v: Value) -> np.ndarray | None:
    """The elements of ``v`` as a numpy array of its shape (splats broadcast), or None if unknown or too big."""
    t = v.type
    dtype = NUMPY_DTYPES.get(dtype_of(t)) if isinstance(t, (ScalarType, IndexType, ShapedType)) else None
    if dtype is None:
        return None
    shape = ()
    if isinstance(t, ShapedType):
        if not t.is_static or math.prod(t.static_shape()) > MAX_FOLD_ELEMENTS:
            return None
        shape = t.static_shape()
    splat = splat_value(v)
    if splat is not None:
        return np.full(shape, splat, dtype=dtype)
    op = getattr(v, "op", None)
    if op is None or not op.has_trait(Constant):
        return None
    values = flat(op.attributes.get("value"))
    if len(values) != math.prod(shape):
        return None
    return np.array(values, dtype=dtype).reshape(shape)


def is_constant(v: Value) -> bool:
    return splat_value(v) is not None or dense_value(v) is not None


def python_scalar(x, dtype: str):
    """A numpy scalar → the Python number an attribute holds for ``dtype`` (bool, int or float)."""
    if dtype == "i1":
        return bool(x)
    if dtype.startswith(("i", "ui")):
        return int(x)
    return float(x)


NUMPY_UNARY = {
    "neg": np.negative, "abs": np.abs, "exp": np.exp, "log": np.log, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x), "reciprocal": lambda x: 1 / x, "tanh": np.tanh,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "relu": lambda x: np.maximum(x, 0), "sin": np.sin, "cos": np.cos,
    "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "logical_not": np.logical_not,
}  # fmt: skip
NUMPY_BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "max": np.maximum, "min": np.minimum,
    "pow": np.power, "logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor,
}  # fmt: skip
NUMPY_COMPARE = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
            "ge": np.greater_equal}  # fmt: skip
_INDEX = {
    "arith.addi": lambda a, b: a + b, "arith.subi": lambda a, b: a - b, "arith.muli": lambda a, b: a * b,
    "arith.floordivsi": lambda a, b: a // b if b else None, "arith.ceildivsi": lambda a, b: ceil_div(a, b) if b else None,
    "arith.remsi": lambda a, b: a - b * int(a / b) if b else None, "arith.minsi": min, "arith.maxsi": max,
}  # fmt: skip
INT_FUNS_THAT_NEED_FLOATS = ("div", "pow", "exp", "log", "sqrt", "rsqrt", "reciprocal", "tanh", "sigmoid", "sin",
                             "cos")  # fmt: skip


def evaluate(op_name: str, attrs: dict, args: list[np.ndarray], out_dtype: str) -> np.ndarray | None:
    """Evaluate an elementwise op on constant arrays in the operand dtype, rounded to ``out_dtype``; None if the
    op (or this dtype combination) is not folded."""
    out_np = NUMPY_DTYPES.get(out_dtype)
    if out_np is None:
        return None
    with np.errstate(all="ignore"):
        if op_name == "hfusion.elemwise_unary":
            fn = NUMPY_UNARY.get(attrs.get("fun"))
            if fn is None or (args[0].dtype.kind in "iub" and attrs["fun"] in INT_FUNS_THAT_NEED_FLOATS):
                return None
            result = fn(args[0])
        elif op_name == "hfusion.elemwise_binary":
            fn = NUMPY_BINARY.get(attrs.get("fun"))
            if fn is None or (args[0].dtype.kind in "iub" and attrs["fun"] in INT_FUNS_THAT_NEED_FLOATS):
                return None
            result = fn(args[0], args[1].astype(args[0].dtype))
        elif op_name == "hfusion.compare":
            result = NUMPY_COMPARE[attrs["predicate"]](args[0], args[1].astype(args[0].dtype))
        elif op_name == "hfusion.select":
            result = np.where(args[0], args[1], args[2])
        elif op_name == "hfusion.cast":
            if args[0].dtype.kind == "f" and np.dtype(out_np).kind in "iu":
                return None  # float → int rounding depends on round_mode; left to the hardware
            if np.dtype(out_np).kind == "f" and attrs.get("round_mode", "rint") != "rint" and args[0].dtype != out_np:
                return None  # numpy rounds to nearest even only
            result = args[0]
        elif op_name in _INDEX:
            value = _INDEX[op_name](int(args[0]), int(args[1]))
            return None if value is None else np.array(value, dtype=out_np)
        else:
            return None
    return np.asarray(result).astype(out_np)

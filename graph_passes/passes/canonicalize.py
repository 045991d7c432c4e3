"""``canonicalize``: MLIR-style cleanups run to a fixed point by the shared greedy driver.

Identities, chains, constant folding, canonical operand order, max/min before an exact f16 -> f32 widening,
division by a power of two as a multiply, the sum of a one-hot select per slice (``one_hot_sums.py``), zero-size
tensors (``zero_size.py``: no op computes a value of no elements) and dead pure ops. Each rule is one row of a table
with the rule in a trailing comment; the driver (``graph_passes.rewrite``) runs them until none fires.
"""

from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np

from ..dialects.hfusion import unit_dims_inserted
from ..ir.core import Operation, Pure
from ..ir.types import ScalarType, TensorType, dtype_of
from ..rewrite import Pattern, Rewriter, apply_patterns_greedily
from ..schedule.kernel_info import EXACT_INTEGERS
from .base import ModulePass, PassContext
from .unit_reductions import reduce_over_unit_dims
from .folding import NUMPY_DTYPES, dense_value, evaluate, is_constant, python_scalar, splat_value
from .one_hot_sums import sum_of_one_hot
from .registry import register_pass
from .zero_size import (check_no_reduction_of_nothing, concat_without_empty, empty_result, matmul_of_nothing,
                        reduce_of_nothing)

LHS, RHS = "lhs", "rhs"

# (op, fun, the constant operand, its value): the op returns the other operand.
IDENTITIES = [
    ("hfusion.elemwise_binary", "add", RHS, 0),  # x+0 -> x
    ("hfusion.elemwise_binary", "add", LHS, 0),  # 0+x -> x
    ("hfusion.elemwise_binary", "sub", RHS, 0),  # x-0 -> x
    ("hfusion.elemwise_binary", "mul", RHS, 1),  # x*1 -> x
    ("hfusion.elemwise_binary", "mul", LHS, 1),  # 1*x -> x
    ("hfusion.elemwise_binary", "div", RHS, 1),  # x/1 -> x
    ("hfusion.elemwise_binary", "pow", RHS, 1),  # x**1 -> x
    ("arith.addi", None, RHS, 0),  # i+0 -> i
    ("arith.addi", None, LHS, 0),  # 0+i -> i
    ("arith.subi", None, RHS, 0),  # i-0 -> i
    ("arith.muli", None, RHS, 1),  # i*1 -> i
    ("arith.muli", None, LHS, 1),  # 1*i -> i
    ("arith.floordivsi", None, RHS, 1),  # i floordiv 1 -> i
    ("arith.ceildivsi", None, RHS, 1),  # i ceildiv 1 -> i
]

COMMUTATIVE = {
    "hfusion.elemwise_binary": ("add", "mul", "max", "min", "logical_and", "logical_or", "logical_xor",
                                "bitwise_and", "bitwise_or", "bitwise_xor"),
    "arith.addi": None, "arith.muli": None, "arith.minsi": None, "arith.maxsi": None,
}  # fmt: skip   (None: every instance is commutative)

MIRRORED_PREDICATE = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}

# dtype pairs (a, b) where a -> b -> a gives back every value of a
LOSSLESS_WIDENING = {
    ("f16", "f32"), ("f16", "f64"), ("bf16", "f32"), ("bf16", "f64"), ("f32", "f64"),
    ("i8", "i16"), ("i8", "i32"), ("i8", "i64"), ("i16", "i32"), ("i16", "i64"), ("i32", "i64"),
    ("ui8", "i16"), ("ui8", "i32"), ("ui8", "i64"), ("i1", "i8"), ("i1", "i32"), ("i1", "i64"),
    ("i8", "f16"), ("i8", "f32"), ("ui8", "f16"), ("ui8", "f32"), ("i16", "f32"), ("i32", "f64"),
    ("i1", "f16"), ("i1", "f32"),
}  # fmt: skip

FOLDABLE = ("hfusion.elemwise_unary", "hfusion.elemwise_binary", "hfusion.compare", "hfusion.select", "hfusion.cast",
            "arith.addi", "arith.subi", "arith.muli", "arith.floordivsi", "arith.ceildivsi", "arith.remsi",
            "arith.minsi", "arith.maxsi")  # fmt: skip


# ---------------------------------------------------------------------------------------------------------------
# Patterns


def fold_identity(op: Operation, rw: Rewriter) -> bool:
    """x+0, x*1, x-0, x/1 … -> x, when x already has the result's type."""
    fun = op.attributes.get("fun")
    for name, row_fun, pos, value in IDENTITIES:
        if name != op.name or row_fun not in (None, fun):
            continue
        const, kept = op.operand(pos), op.operand(RHS if pos == LHS else LHS)
        c = splat_value(const)
        if c is None or isinstance(c, bool) or c != value or kept.type != op.result.type:
            continue
        rw.replace_op(op, [kept])
        return True
    return False


def constants_to_the_right(op: Operation, rw: Rewriter) -> bool:
    """c+x -> x+c for commutative ops; c<x -> x>c for compares."""
    if len(op.operands) != 2:
        return False
    lhs, rhs = op.operands
    if not is_constant(lhs) or is_constant(rhs):
        return False
    if op.name == "hfusion.compare":
        op.attributes["predicate"] = MIRRORED_PREDICATE[op.attributes["predicate"]]  # c<x -> x>c
    elif op.name not in COMMUTATIVE or (COMMUTATIVE[op.name] and op.attributes.get("fun") not in COMMUTATIVE[op.name]):
        return False
    rw.set_operands(op, [rhs, lhs])
    return True


def fold_constants(op: Operation, rw: Rewriter) -> bool:
    """op(constants…) -> constant: a splat result becomes hfusion.fill (tensor) / arith.constant (scalar), a small
    dense result an arith.constant."""
    if not op.operands or len(op.results) != 1:
        return False
    out_t = op.result.type
    out_dtype = dtype_of(out_t)
    splats = [splat_value(v) for v in op.operands]
    if all(s is not None for s in splats):
        args = [_as_array(s, v.type) for s, v in zip(splats, op.operands)]
        if any(a is None for a in args):
            return False
        result = evaluate(op.name, op.attributes, args, out_dtype)
        if result is None:
            return False
        value = python_scalar(result.reshape(()).item(), out_dtype)
        if isinstance(out_t, TensorType):
            new = rw.create("hfusion.fill", [], [out_t], {"value": value})
        else:
            new = rw.create("arith.constant", [], [out_t], {"value": value})
        rw.replace_op(op, new.results)
        return True
    if not isinstance(out_t, TensorType) or not out_t.is_static:
        return False
    args = [dense_value(v) for v in op.operands]
    if any(a is None for a in args):
        return False
    result = evaluate(op.name, op.attributes, args, out_dtype)
    if result is None:
        return False
    values = [python_scalar(x, out_dtype) for x in np.broadcast_to(result, out_t.static_shape()).reshape(-1).tolist()]
    new = rw.create("arith.constant", [], [out_t], {"value": values})
    rw.replace_op(op, new.results)
    return True


def _as_array(value, t):
    dtype = NUMPY_DTYPES.get(dtype_of(t))
    return None if dtype is None else np.array(value, dtype=dtype)


def fold_transpose(op: Operation, rw: Rewriter) -> bool:
    """transpose(x, identity) -> x; transpose(transpose(x, p), q) -> x when inverse, else transpose(x, p∘q);
    transpose(broadcast(x)) -> broadcast(x) when x's dims keep their order."""
    perm = list(op.attributes["perm"])
    src = op.operand("input")
    if perm == list(range(len(perm))) and src.type == op.result.type:
        rw.replace_op(op, [src])  # transpose(x, id) -> x
        return True
    inner = getattr(src, "op", None)
    if inner is not None and inner.name == "hfusion.broadcast":
        return _transpose_of_broadcast(op, inner, perm, rw)
    if inner is None or inner.name != "hfusion.transpose":
        return False
    first = list(inner.attributes["perm"])
    composed = [first[p] for p in perm]  # out[k] = x.shape[first[perm[k]]]
    x = inner.operand("input")
    if composed == list(range(len(composed))) and x.type == op.result.type:
        rw.replace_op(op, [x])  # transpose(transpose(x, p), p^-1) -> x
    else:
        new = rw.create("hfusion.transpose", [x], [op.result.type], {"perm": composed})
        rw.replace_op(op, new.results)  # transpose(transpose(x, p), q) -> transpose(x, p∘q)
    return True


def _transpose_of_broadcast(op: Operation, brc: Operation, perm: list, rw: Rewriter) -> bool:
    """transpose(broadcast(x, dims), p) -> broadcast(x, the positions p moves dims to), when p keeps x's own dims
    in their order (``repeat``'s expand, clone and permute: the copies interleaved with x's dims, no data moved)."""
    dims = set(brc.attributes["dims"])
    kept = [d for d in perm if d not in dims]
    if kept != sorted(kept):
        return False
    new = rw.create("hfusion.broadcast", [brc.operand("input")], [op.result.type],
                    {"dims": [k for k, d in enumerate(perm) if d in dims]})
    rw.replace_op(op, new.results)
    return True


def fold_reshape(op: Operation, rw: Rewriter) -> bool:
    """reshape(x) to x's type -> x; reshape(reshape(x)) -> reshape(x); reshape(cast(reshape(x))) -> cast(x);
    reshape(broadcast(x)) dropping only added unit dims -> broadcast(x); reshape(slice(x)) dropping unit dims of x
    -> slice(reshape(x))."""
    src = op.operand("input")
    if src.type == op.result.type:
        rw.replace_op(op, [src])  # reshape(x: T) -> T  ->  x
        return True
    inner = getattr(src, "op", None)
    if inner is not None and inner.name == "hfusion.cast" and len(src.uses) == 1:
        return _unshape_cast(op, inner, rw)
    if inner is not None and inner.name == "hfusion.broadcast":
        return _squeeze_broadcast(op, inner, rw)
    if inner is not None and inner.name == "hfusion.slice" and len(src.uses) == 1:
        return _squeeze_slice(op, inner, rw)
    if inner is None or inner.name != "hfusion.reshape":
        return False
    new = rw.create("hfusion.reshape", [inner.operand("input")], [op.result.type])
    rw.replace_op(op, new.results)  # reshape(reshape(x)) -> reshape(x)
    return True


def _squeeze_broadcast(op: Operation, brc: Operation, rw: Rewriter) -> bool:
    """reshape(broadcast(x, dims)) dropping unit dims that the broadcast added -> broadcast(x, the other dims)
    (``repeat``'s expand over unit dims, then the view that drops them: position ids repeated over a batch)."""
    shape = brc.result.type.shape
    dropped = unit_dims_inserted(op.result.type.shape, shape)
    dims = set(brc.attributes["dims"])
    if not dropped or not set(dropped) <= dims:
        return False
    kept = [k for k in range(len(shape)) if k not in dropped]
    new = rw.create("hfusion.broadcast", [brc.operand("input")], [op.result.type],
                    {"dims": [n for n, k in enumerate(kept) if k in dims]})
    rw.replace_op(op, new.results)
    return True


def gather_past_unit_dims(op: Operation, rw: Rewriter) -> bool:
    """gather(x, index, dim d) whose input and index have unit dims before d -> reshape(gather(x', index', dim 0))
    with x', index' without them (a rotary table ``[1, P, D]`` gathered by position along dim 1: a row gather
    of ``[P, D]``, which the vector kernels lower as one DMA per row). Not along the last dim: that gather is a
    ``vgather`` of the rows as they are (a buffer of ids ``[1, P]`` gathered by position)."""
    d = op.attributes["dim"]
    x, index = op.operand("input"), op.operand("index")
    if d == 0 or d == x.type.rank - 1 or any(str(t.shape[k]) != "1" for t in (x.type, index.type) for k in range(d)):
        return False
    x2 = rw.create("hfusion.reshape", [x], [x.type.with_shape(x.type.shape[d:])]).result
    i2 = rw.create("hfusion.reshape", [index], [index.type.with_shape(index.type.shape[d:])]).result
    g = rw.create("hfusion.gather", [x2, i2], [op.result.type.with_shape(op.result.type.shape[d:])], {"dim": 0})
    rw.replace_op(op, [rw.create("hfusion.reshape", [g.result], [op.result.type]).result])
    return True


def _squeeze_slice(op: Operation, sl: Operation, rw: Rewriter) -> bool:
    """reshape(slice(x)) dropping unit dims that are unit in x too -> slice(reshape(x)): the slice reads x through
    a view, and a kernel loads it (a precomputed alibi bias ``[H, 1, L]`` sliced to the sequence, then squeezed)."""
    x = sl.operand("input")
    dropped = unit_dims_inserted(op.result.type.shape, sl.result.type.shape)
    if not dropped or any(str(x.type.shape[k]) != "1" for k in dropped):
        return False
    keep = [k for k in range(x.type.rank) if k not in dropped]
    view = rw.create("hfusion.reshape", [x], [x.type.with_shape([x.type.shape[k] for k in keep])]).result
    attrs = {name: [sl.attributes[name][k] for k in keep] for name in ("offsets", "sizes", "strides")}
    rw.replace_op(op, rw.create("hfusion.slice", [view], [op.result.type], attrs).results)
    return True


def _non_unit(shape) -> list:
    return [str(d) for d in shape if str(d) != "1"]


def _unshape_cast(op: Operation, cast: Operation, rw: Rewriter) -> bool:
    """reshape(cast(reshape(x))) -> cast(x) when the two reshapes only add and remove unit dims (a batch norm's f16
    weight unsqueezed to [C, 1, 1], widened, and squeezed back): no reshape of a computed value is left for a
    kernel."""
    inner = getattr(cast.operand("input"), "op", None)
    if inner is None or inner.name != "hfusion.reshape" or inner.operand("input").type.shape != op.result.type.shape:
        return False
    if _non_unit(inner.result.type.shape) != _non_unit(op.result.type.shape):
        return False  # not unit dims added and removed: a flattened kernel's loop (hfusion-flatten-ops) stays
    new = rw.create("hfusion.cast", [inner.operand("input")], [op.result.type], dict(cast.attributes))
    rw.replace_op(op, new.results)  # reshape(cast(reshape(x))) -> cast(x)
    return True


def fold_cast(op: Operation, rw: Rewriter) -> bool:
    """cast(x) to x's type -> x; cast(cast(x: a -> b) -> a) -> x when a -> b is lossless."""
    src = op.operand("input")
    if src.type == op.result.type:
        rw.replace_op(op, [src])  # cast(x: T) -> T  ->  x
        return True
    inner = getattr(src, "op", None)
    if inner is not None and inner.name == "hfusion.arange":
        return fold_cast_of_arange(op, inner, rw)
    if inner is None or inner.name != "hfusion.cast":
        return False
    x = inner.operand("input")
    if x.type != op.result.type or (dtype_of(x.type), dtype_of(src.type)) not in LOSSLESS_WIDENING:
        return False  # a cast that loses information is kept
    rw.replace_op(op, [x])  # cast(cast(x: f16 -> f32) -> f16) -> x
    return True


def fold_cast_of_arange(op: Operation, arange: Operation, rw: Rewriter) -> bool:
    """cast(arange(start, step): int) -> arange(start, step) in the cast's dtype, when the length is static and
    every value is an integer the new dtype holds exactly (then both give the same numbers)."""
    t = op.result.type
    length = arange.result.type.shape[0]
    start, step = arange.attributes["start"], arange.attributes["step"]
    src_dtype = dtype_of(arange.result.type)
    if not str(length).isdigit() or t.dtype not in EXACT_INTEGERS or not src_dtype.startswith(("i", "ui")) or \
            src_dtype == "i1":
        return False
    if float(start) != int(start) or float(step) != int(step):
        return False
    if abs(int(start)) + abs(int(step)) * max(int(length) - 1, 0) > EXACT_INTEGERS[t.dtype]:
        return False
    if t.dtype == "bf16":  # no bf16 arithmetic after hfusion-legalize-bf16: an f32 arange, cast (exactly) to bf16
        wide = rw.create("hfusion.arange", [], [t.with_dtype("f32")], {"start": start, "step": step})
        new = rw.create("hfusion.cast", [wide.result], [t], {"round_mode": "rint"})
    else:
        new = rw.create("hfusion.arange", [], [t], {"start": start, "step": step})
    rw.replace_op(op, new.results)  # cast(arange: i64 -> f32) -> arange: f32 (exact values)
    return True


def div_by_power_of_two(op: Operation, rw: Rewriter) -> bool:
    """x / 2^k -> x * 2^-k for a float scalar constant: the same value (scaling by a power of two is exact in either
    form), and a multiply has a vector-scalar instruction where a divide does not (a mean's division by its count)."""
    if op.attributes.get("fun") != "div":
        return False
    c = op.operand(RHS)
    value = splat_value(c)
    if not isinstance(c.type, ScalarType) or dtype_of(c.type) not in ("f16", "f32", "bf16") or \
            isinstance(value, bool) or not isinstance(value, (int, float)) or value == 0:
        return False
    mantissa, exp = math.frexp(abs(float(value)))
    if mantissa != 0.5 or not -14 <= exp - 1 <= 14:  # a power of two whose reciprocal is normal in f16 too
        return False
    inv = rw.create("arith.constant", [], [c.type], {"value": 1.0 / float(value)})
    new = rw.create("hfusion.elemwise_binary", [op.operand(LHS), inv.result], [op.result.type], {"fun": "mul"})
    rw.replace_op(op, new.results)  # x / 4096 -> x * (1/4096)
    return True


def reduce_before_widening(op: Operation, rw: Rewriter) -> bool:
    """max/min(cast(x: f16 -> f32)) -> cast(max/min(x)): the widening is exact and monotone, so the extremum is the
    same value; the reduction reads half the bytes (f16 lanes: half the vector repeats of the f32 copy)."""
    if op.attributes.get("kind") not in ("max", "min"):
        return False
    src = op.operand("input")
    inner = getattr(src, "op", None)
    if inner is None or inner.name != "hfusion.cast" or (dtype_of(inner.operand("input").type), dtype_of(src.type)) != (
            "f16", "f32"):
        return False
    x = inner.operand("input")
    red = rw.create("hfusion.reduce", [x], [TensorType(op.result.type.shape, "f16")], dict(op.attributes))
    cast = rw.create("hfusion.cast", red.results, [op.result.type], dict(inner.attributes))
    rw.replace_op(op, cast.results)  # max(cast(x: f16 -> f32)) -> cast(max(x))
    return True


def erase_dead_pure(op: Operation, rw: Rewriter) -> bool:
    """A Pure op whose results are all unused is erased."""
    if not op.has_trait(Pure) or not op.results or any(r.uses for r in op.results):
        return False
    rw.erase_op(op)
    return True


PATTERNS = [
    *[Pattern(name, fold_identity, "fold_identity", "ops-folded") for name in dict.fromkeys(r[0] for r in IDENTITIES)],
    *[Pattern(name, fold_constants, "fold_constants", "ops-folded") for name in FOLDABLE],
    *[Pattern(name, constants_to_the_right, "constants_to_the_right", "operands-swapped")
      for name in (*COMMUTATIVE, "hfusion.compare")],
    Pattern("hfusion.transpose", fold_transpose, "fold_transpose", "chains-folded"),
    Pattern("hfusion.reshape", fold_reshape, "fold_reshape", "chains-folded"),
    Pattern("hfusion.cast", fold_cast, "fold_cast", "chains-folded"),
    Pattern("hfusion.gather", gather_past_unit_dims, "gather_past_unit_dims", "ops-folded"),
    Pattern("hfusion.reduce", reduce_before_widening, "reduce_before_widening", "reductions-narrowed"),
    Pattern("hfusion.reduce", sum_of_one_hot, "sum_of_one_hot", "reductions-folded"),
    Pattern("hfusion.elemwise_binary", div_by_power_of_two, "div_by_power_of_two", "ops-folded"),
    Pattern("hfusion.reduce", reduce_of_nothing, "reduce_of_nothing", "ops-folded"),
    Pattern("hfusion.reduce", reduce_over_unit_dims, "reduce_over_unit_dims", "reductions-folded"),
    Pattern("hfusion.concat", concat_without_empty, "concat_without_empty", "ops-folded"),
    *[Pattern(name, matmul_of_nothing, "matmul_of_nothing", "ops-folded")
      for name in ("hfusion.matmul", "hfusion.batch_matmul")],
    Pattern(None, empty_result, "empty_result", "ops-folded"),
    Pattern(None, erase_dead_pure, "erase_dead_pure", "ops-erased"),
]  # fmt: skip

COUNTERS = ("ops-folded", "operands-swapped", "chains-folded", "reductions-narrowed", "reductions-folded",
            "ops-erased")


@register_pass
@dataclass(frozen=True)
class Canonicalize(ModulePass):
    """Fold identities, chains and small constants, put constants on the right, erase dead pure ops."""

    name = "canonicalize"
    max_iterations: int = 10

    def run(self, module: Operation, ctx: PassContext) -> None:
        stats = apply_patterns_greedily(module, PATTERNS, max_sweeps=self.max_iterations)
        check_no_reduction_of_nothing(module)
        for counter in COUNTERS:
            ctx.count(counter, stats.by_counter.get(counter, 0))

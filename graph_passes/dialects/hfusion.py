"""``hfusion``: tensor-level compute ops, the input of fusion and scheduling (after AscendNPU-IR's HFusion).

Every op has value semantics on ``tensor<…>``. Broadcasting is always explicit (``hfusion.broadcast``); the only
implicit broadcast is a scalar operand (``f32``, ``i64`` …) of an elementwise op, which applies to every element.

=====================  ==========================================================================================
op                     meaning (``out`` is the result)
=====================  ==========================================================================================
elemwise_unary         out[i] = fun(x[i])
elemwise_binary        out[i] = fun(a[i], b[i])                  (floordiv, truncdiv, remainder, fmod: see DIVMOD_FUNS)
elemwise_ternary       out[i] = fun(a[i], b[i], c[i])            (fma: a*b+c; clamp: min(max(a, b), c))
compare                out[i] = a[i] <predicate> b[i]              (i1)
select                 out[i] = c[i] ? a[i] : b[i]
cast                   out[i] = dtype(x[i]) with ``round_mode``
bitcast                out[i] = the bytes of x[i] read as dtype    (same shape, same element size: i1 <-> i8)
broadcast              out[..] = x[.. without ``dims``]            (``dims``: the new dims of ``out``)
reduce                 out = kind over ``dims`` of x               (the reduced dims are dropped)
transpose              out[p(i)] = x[i] with out.shape[j] = x.shape[perm[j]]
matmul                 out = op(a) @ op(b)                          (op = transpose when the flag is set)
                       with a third operand ``init``: out = init + op(a) @ op(b)  (addmm; ``hivm-normalize-matmul``
                       makes it the product into zero and an add before any other pass)
batch_matmul           out[b] = op(a[b]) @ op(b[b])                (a rank-2 operand is one matrix for every b)
                       with ``k_chunk = c``: out[s] = op(a)[:, s·c:(s+1)·c] @ op(b)[s·c:(s+1)·c, :], a and b rank 2
                       (split-K partial products, ``hfusion-split-k``; the last chunk may be shorter)
fill                   out[..] = value
arange                 out[i] = start + i*step
gather                 out[i][j] = x[i][index[i][j]] along ``dim`` (torch.gather)
concat                 out = cat(inputs, dim)
slice                  out[i] = x[offsets + i*strides]             (``sizes`` = out.shape)
reshape                out = x with a new shape, same elements in row-major order (collapse / expand / general)
=====================  ==========================================================================================
"""

from __future__ import annotations

from ..ir.attrs import BoolAttr, DtypeAttr, IntAttr, IntListAttr, NumberAttr, SizeListAttr, StrAttr
from ..ir.core import Broadcast, Cube, Elementwise, Operation, Pure, Reduction, Vector, ViewLike, register_op
from ..ir.sizes import SizeVars, as_expr, expr_str
from ..ir.types import IndexType, ScalarType, TensorType

UNARY_FUNS = (
    "neg", "abs", "exp", "log", "sqrt", "rsqrt", "reciprocal", "tanh", "sigmoid", "relu", "gelu_erf", "gelu_tanh",
    "silu", "erf", "sin", "cos", "floor", "ceil", "trunc", "logical_not", "bitwise_not", "sign",
)  # fmt: skip
NOT_IN_PLACE_FUNS = ("silu", "gelu_tanh")
"""Unary funs whose vector sequence reads the source again after writing the destination (x · f(x)): their
result never takes the operand's buffer (the schedule's buffer plan, hivm-plan-memory's in-place reuse)."""
DIVMOD_FUNS = ("floordiv", "truncdiv", "remainder", "fmod")
"""Rounding divisions, with torch's meaning in the result dtype (both operands have it):

- ``floordiv`` = ``torch.div(a, b, rounding_mode="floor")``, ``truncdiv`` = ``rounding_mode="trunc"``,
  ``remainder`` = ``torch.remainder`` (the sign of ``b``), ``fmod`` = ``torch.fmod`` (the sign of ``a``).
- Floats: ATen's CPU kernels for two tensors (``div_floor_floating_vec``: fmod, then ``(a - mod) / b`` with its
  fix-ups; ``trunc(a / b)``); for f16/bf16 every step of them rounds to the dtype, as eager's vectorized half
  kernels do. (Eager computes a half division by a scalar in f32 and rounds once: the importer writes that as an
  f32 op between casts.)
- Integers: exact; ``INT_MIN // -1`` wraps to ``INT_MIN``. Division by zero, where eager raises
  ZeroDivisionError, gives quotient 0 and remainder ``a`` (``a == q*b + r`` still holds; ``c10::div_floor_integer``
  also returns 0).

``hfusion-decompose-divmod`` rewrites them into ops the vector unit has."""
BINARY_FUNS = (
    "add", "sub", "mul", "div", "max", "min", "pow", "logical_and", "logical_or", "logical_xor",
    "bitwise_and", "bitwise_or", "bitwise_xor", *DIVMOD_FUNS,
)  # fmt: skip
TERNARY_FUNS = ("fma", "clamp")
COMPARE_PREDICATES = ("eq", "ne", "lt", "le", "gt", "ge")
REDUCE_KINDS = ("sum", "max", "min", "prod", "any", "all")
ROUND_MODES = ("rint", "round", "floor", "ceil", "trunc")


def _module_sizes(op) -> SizeVars:
    """The size service of the module enclosing ``op`` (its symbols and size equalities), or a bare one."""
    while op is not None and op.name != "builtin.module":
        op = op.parent_op()
    return op.size_vars() if op is not None else SizeVars()


_SIZES = SizeVars()  # range-free shape questions inside verifiers (module ranges are not needed for equality)


def _shape_str(shape) -> str:
    return "[" + ", ".join(expr_str(d) for d in shape) + "]"


def _equal_size(op, a, b) -> bool:
    """Whether sizes ``a`` and ``b`` are equal, by their expressions or by a size equality (a guard) of the module
    enclosing ``op``: an imported op's sizes are written in the guards' canonical form (``torch.cat([x, x], 1)``
    beside a ``y`` of its size has ``s94`` where its inputs sum to ``2*s27``, and dynamo guards ``2*s27 == s94``)."""
    return _SIZES.statically_known_equal(a, b) or _module_sizes(op).statically_known_equal(a, b)


def _same_shape(op, a, b) -> bool:
    return len(a) == len(b) and all(_equal_size(op, x, y) for x, y in zip(a, b))


class HFusionOp(Operation):
    """Common checks: the result is a tensor; every tensor operand must be a tensor or a scalar."""

    def out_type(self) -> TensorType:
        t = self.result.type
        if not isinstance(t, TensorType):
            raise self.error(f"result must be a tensor, got {t}")
        return t

    def verify_(self) -> None:
        self.out_type()


class ElementwiseBase(HFusionOp):
    traits = (Pure, Elementwise, Vector)

    def verify_(self) -> None:
        out = self.out_type()
        for i, v in enumerate(self.operands):
            t = v.type
            if isinstance(t, (ScalarType, IndexType)):
                continue
            if not isinstance(t, TensorType):
                raise self.error(f"operand {i} must be a tensor or scalar, got {t}")
            if not _same_shape(self, t.shape, out.shape):
                raise self.error(
                    f"operand {i} shape {_shape_str(t.shape)} differs from result shape {_shape_str(out.shape)} "
                    "(broadcasts must be explicit)"
                )
        self.verify_dtypes(out)

    def verify_dtypes(self, out: TensorType) -> None:
        pass


@register_op
class ElemwiseUnaryOp(ElementwiseBase):
    name = "hfusion.elemwise_unary"
    operand_names = ("input",)
    result_names = ("result",)
    attribute_schema = {"fun": StrAttr(UNARY_FUNS)}


@register_op
class ElemwiseBinaryOp(ElementwiseBase):
    name = "hfusion.elemwise_binary"
    operand_names = ("lhs", "rhs")
    result_names = ("result",)
    attribute_schema = {"fun": StrAttr(BINARY_FUNS)}

    def verify_dtypes(self, out: TensorType) -> None:
        fun = self.attributes["fun"]
        if fun not in DIVMOD_FUNS:
            return
        if out.dtype == "i1":
            raise self.error(f"'{fun}' on i1: division rounds in a numeric dtype")
        for i, v in enumerate(self.operands):
            t = v.type
            if isinstance(t, IndexType):
                continue  # a size (an integer, converted to the result dtype as every elementwise op converts it)
            if t.dtype != out.dtype:
                raise self.error(f"'{fun}' operand {i} has type {t}, the result {out.dtype}: the division rounds in "
                                 f"one dtype (cast the operands first)")


@register_op
class ElemwiseTernaryOp(ElementwiseBase):
    name = "hfusion.elemwise_ternary"
    operand_names = ("a", "b", "c")
    result_names = ("result",)
    attribute_schema = {"fun": StrAttr(TERNARY_FUNS)}


@register_op
class CompareOp(ElementwiseBase):
    name = "hfusion.compare"
    operand_names = ("lhs", "rhs")
    result_names = ("result",)
    attribute_schema = {"predicate": StrAttr(COMPARE_PREDICATES)}

    def verify_dtypes(self, out: TensorType) -> None:
        if out.dtype != "i1":
            raise self.error(f"result must have dtype i1, got {out.dtype}")


@register_op
class SelectOp(ElementwiseBase):
    name = "hfusion.select"
    operand_names = ("cond", "true_value", "false_value")
    result_names = ("result",)

    def verify_dtypes(self, out: TensorType) -> None:
        cond = self.operand("cond").type
        dtype = cond.dtype
        if dtype != "i1":
            raise self.error(f"condition must have dtype i1, got {dtype}")


@register_op
class CastOp(ElementwiseBase):
    name = "hfusion.cast"
    operand_names = ("input",)
    result_names = ("result",)
    attribute_schema = {"round_mode": StrAttr(ROUND_MODES, optional=True, default="rint")}


class ViewOp(HFusionOp):
    """One tensor in, the same elements out (a view: reshape, slice, bitcast)."""

    operand_names = ("input",)
    result_names = ("result",)
    traits = (Pure, ViewLike)


@register_op
class BitcastOp(ViewOp):
    """The same bytes seen as another element type of the same size (AscendNPU-IR's ``hfusion.bitcast``).

    ``hfusion-legalize-bool`` uses it at the kernel boundary: GM bools are bytes (0 or 1), read and written as
    ``i8``; ``analyze_kernel`` treats it like a boundary reshape (a load or store, not a computation)."""

    name = "hfusion.bitcast"

    def verify_(self) -> None:
        out = self.out_type()
        src = self.operand("input").type
        if not isinstance(src, TensorType):
            raise self.error(f"input must be a tensor, got {src}")
        if not _same_shape(self, src.shape, out.shape):
            raise self.error(f"input shape {_shape_str(src.shape)} differs from result shape {_shape_str(out.shape)}")
        if src.element_bytes != out.element_bytes:
            raise self.error(f"element sizes differ ({src.dtype}: {src.element_bytes} B, "
                             f"{out.dtype}: {out.element_bytes} B)")


@register_op
class BroadcastOp(HFusionOp):
    name = "hfusion.broadcast"
    operand_names = ("input",)
    result_names = ("result",)
    attribute_schema = {"dims": IntListAttr()}
    traits = (Pure, Broadcast, Vector)

    def verify_(self) -> None:
        out = self.out_type()
        src = self.operand("input").type
        dims = list(self.attributes["dims"])
        if not isinstance(src, TensorType):
            raise self.error(f"input must be a tensor, got {src}")
        if src.dtype != out.dtype:
            raise self.error(f"input dtype {src.dtype} differs from result dtype {out.dtype}")
        if sorted(set(dims)) != dims or any(not 0 <= d < out.rank for d in dims):
            raise self.error(f"dims {dims} must be sorted, unique and within result rank {out.rank}")
        kept = [out.shape[i] for i in range(out.rank) if i not in dims]
        if not _same_shape(self, kept, src.shape):
            raise self.error(
                f"input shape {_shape_str(src.shape)} does not match result {_shape_str(out.shape)} "
                f"without broadcast dims {dims}"
            )


@register_op
class ReduceOp(HFusionOp):
    name = "hfusion.reduce"
    operand_names = ("input",)
    result_names = ("result",)
    attribute_schema = {"kind": StrAttr(REDUCE_KINDS), "dims": IntListAttr()}
    traits = (Pure, Reduction, Vector)

    def verify_(self) -> None:
        out = self.out_type()
        src = self.operand("input").type
        dims = list(self.attributes["dims"])
        if not isinstance(src, TensorType):
            raise self.error(f"input must be a tensor, got {src}")
        if sorted(set(dims)) != dims or any(not 0 <= d < src.rank for d in dims):
            raise self.error(f"dims {dims} must be sorted, unique and within input rank {src.rank}")
        kept = [src.shape[i] for i in range(src.rank) if i not in dims]
        if not _same_shape(self, kept, out.shape):
            raise self.error(
                f"result shape {_shape_str(out.shape)} must be input {_shape_str(src.shape)} without dims {dims}"
            )

    @property
    def is_last_axis(self) -> bool:
        return self.attributes["dims"] == [self.operand("input").type.rank - 1]


@register_op
class TransposeOp(HFusionOp):
    name = "hfusion.transpose"
    operand_names = ("input",)
    result_names = ("result",)
    attribute_schema = {"perm": IntListAttr()}
    traits = (Pure, Vector)

    def verify_(self) -> None:
        out = self.out_type()
        src = self.operand("input").type
        perm = list(self.attributes["perm"])
        if sorted(perm) != list(range(src.rank)):
            raise self.error(f"perm {perm} is not a permutation of {src.rank} dims")
        expected = [src.shape[p] for p in perm]
        if not _same_shape(self, expected, out.shape):
            raise self.error(f"result shape {_shape_str(out.shape)} must be {_shape_str(expected)}")


WIDE_PRODUCTS = {"f16": "f32", "bf16": "f32"}
"""Operand dtype -> the wider result a product may have besides the operands' own (the cube accumulates f16/bf16
products in f32 and its fixpipe writes either)."""


class MatmulBase(HFusionOp):
    """``op(a) @ op(b)``; ``batch_matmul`` has a leading batch dim on its result and on at least one operand, an
    operand without it (rank 2) being one matrix shared by every batch (a broadcast batch, never materialised).
    ``pad_n = p``: ``op(b)`` is read as if it had ``p`` more columns of zeros, so the result has ``N + p`` columns
    (``hfusion-pad-matmul-output``: result rows of whole 32-B blocks)."""

    operand_names = ("a", "b", "*init")
    result_names = ("result",)
    attribute_schema = {"transpose_a": BoolAttr(False), "transpose_b": BoolAttr(False), "pad_n": IntAttr(optional=True)}
    traits = (Pure, Cube)
    batch_rank = 0

    @property
    def init(self):
        """The accumulator's initial value (``out = init + product``), or None: the product into zero."""
        return self.operands[2] if len(self.operands) > 2 else None

    def verify_(self) -> None:
        out = self.out_type()
        if len(self.operands) > 3:
            raise self.error(f"takes a, b and at most one init, got {len(self.operands)} operands")
        init = self.init
        if init is not None and (not isinstance(init.type, TensorType) or init.type.dtype != out.dtype
                                 or not _same_shape(self, init.type.shape, out.shape)):
            raise self.error(f"init must be the result's type {out}, got {init.type}")
        a, b = (v.type for v in self.operands[:2])
        if self.attributes.get("k_chunk") is not None and init is None:
            self._verify_k_chunks(a, b, out)
            return
        r = self.batch_rank + 2
        ranks_ok = out.rank == r and {a.rank, b.rank} <= {2, r} and r in (a.rank, b.rank)
        if not ranks_ok:
            want = f"rank {r}" + (" (an operand may be rank 2, one matrix for every batch)" if self.batch_rank else "")
            raise self.error(f"operands and result must have {want}, got {a.rank}, {b.rank}, {out.rank}")
        if a.dtype != b.dtype:
            raise self.error(f"operands have two dtypes: {a.dtype} @ {b.dtype}")
        if out.dtype not in (a.dtype, WIDE_PRODUCTS.get(a.dtype)):
            raise self.error(f"a product of {a.dtype} operands cannot give {out.dtype}")
        am, ak = (a.shape[-1], a.shape[-2]) if self.attributes["transpose_a"] else (a.shape[-2], a.shape[-1])
        bk, bn = (b.shape[-1], b.shape[-2]) if self.attributes["transpose_b"] else (b.shape[-2], b.shape[-1])
        if not _equal_size(self, ak, bk):
            raise self.error(f"contraction sizes differ: {expr_str(ak)} vs {expr_str(bk)}")
        if a.rank == r and b.rank == r and not _same_shape(self, a.shape[: self.batch_rank],
                                                           b.shape[: self.batch_rank]):
            raise self.error(f"batch sizes differ: {_shape_str(a.shape[: self.batch_rank])} vs "
                             f"{_shape_str(b.shape[: self.batch_rank])}")
        batch = (a if a.rank == r else b).shape[: self.batch_rank]
        pad = self.attributes.get("pad_n")
        if pad is not None and (pad < 1 or init is not None):
            raise self.error(f"pad_n = {pad} must be >= 1, on a product into zero (no init)")
        expected = list(batch) + [am, as_expr(bn) + pad if pad else bn]
        if not _same_shape(self, expected, out.shape):
            raise self.error(f"result shape {_shape_str(out.shape)} must be {_shape_str(expected)}")

    def _verify_k_chunks(self, a, b, out) -> None:
        """Split-K partial products: rank-2 operands of a static contraction size ``K``, the result
        ``[ceil(K / k_chunk), M, N]``."""
        chunk = self.attributes["k_chunk"]
        if self.init is not None:
            raise self.error("k_chunk partial products take no init")
        if self.batch_rank != 1 or a.rank != 2 or b.rank != 2 or out.rank != 3:
            raise self.error(f"k_chunk needs a batch_matmul of rank-2 operands and a rank-3 result, got "
                             f"{a.rank}, {b.rank}, {out.rank}")
        if a.dtype != b.dtype or out.dtype not in (a.dtype, WIDE_PRODUCTS.get(a.dtype)):
            raise self.error(f"a product of {a.dtype} @ {b.dtype} operands cannot give {out.dtype}")
        am, ak = (a.shape[-1], a.shape[-2]) if self.attributes["transpose_a"] else (a.shape[-2], a.shape[-1])
        bk, bn = (b.shape[-1], b.shape[-2]) if self.attributes["transpose_b"] else (b.shape[-2], b.shape[-1])
        if not _equal_size(self, ak, bk):
            raise self.error(f"contraction sizes differ: {expr_str(ak)} vs {expr_str(bk)}")
        k = as_expr(ak)
        if not k.is_Integer or chunk < 1:
            raise self.error(f"k_chunk = {chunk} needs a static contraction size and a chunk >= 1, got K = {expr_str(ak)}")
        expected = [-(-int(k) // chunk), am, bn]
        if not _same_shape(self, expected, out.shape):
            raise self.error(f"result shape {_shape_str(out.shape)} must be {_shape_str(expected)} "
                             f"(K = {int(k)} in chunks of {chunk})")


@register_op
class MatmulOp(MatmulBase):
    name = "hfusion.matmul"


@register_op
class BatchMatmulOp(MatmulBase):
    name = "hfusion.batch_matmul"
    batch_rank = 1
    attribute_schema = {**MatmulBase.attribute_schema, "k_chunk": IntAttr(optional=True)}


@register_op
class FillOp(HFusionOp):
    name = "hfusion.fill"
    result_names = ("result",)
    attribute_schema = {"value": NumberAttr()}
    traits = (Pure, Vector)


@register_op
class ArangeOp(HFusionOp):
    name = "hfusion.arange"
    result_names = ("result",)
    attribute_schema = {"start": NumberAttr(), "step": NumberAttr()}
    traits = (Pure, Vector)

    def verify_(self) -> None:
        if self.out_type().rank != 1:
            raise self.error(f"result must be 1-D, got {self.result.type}")


@register_op
class GatherOp(HFusionOp):
    name = "hfusion.gather"
    operand_names = ("input", "index")
    result_names = ("result",)
    attribute_schema = {"dim": IntAttr()}
    traits = (Pure, Vector)

    def verify_(self) -> None:
        out = self.out_type()
        src, idx = (v.type for v in self.operands)
        dim = self.attributes["dim"]
        if not 0 <= dim < src.rank or idx.rank != src.rank:
            raise self.error(f"dim {dim} / index rank {idx.rank} invalid for input {src}")
        if idx.dtype not in ("i32", "i64"):
            raise self.error(f"index must be i32 or i64, got {idx.dtype}")
        if not _same_shape(self, idx.shape, out.shape) or out.dtype != src.dtype:
            raise self.error(f"result {out} must have the index's shape and the input's dtype")


@register_op
class ConcatOp(HFusionOp):
    name = "hfusion.concat"
    operand_names = ("*inputs",)
    result_names = ("result",)
    attribute_schema = {"dim": IntAttr()}
    traits = (Pure, Vector)

    def verify_(self) -> None:
        out = self.out_type()
        dim = self.attributes["dim"]
        if not 0 <= dim < out.rank:
            raise self.error(f"dim {dim} out of range for {out}")
        total = 0
        for i, v in enumerate(self.operands):
            t = v.type
            if t.rank != out.rank or any(
                j != dim and not _equal_size(self, t.shape[j], out.shape[j]) for j in range(out.rank)
            ):
                raise self.error(f"input {i} {t} does not match result {out} outside dim {dim}")
            total = total + t.shape[dim]
        if not _equal_size(self, total, out.shape[dim]):
            raise self.error(f"inputs sum to {expr_str(total)} along dim {dim}, result has {expr_str(out.shape[dim])}")


@register_op
class SliceOp(ViewOp):
    name = "hfusion.slice"
    attribute_schema = {"offsets": SizeListAttr(), "sizes": SizeListAttr(), "strides": SizeListAttr()}

    def verify_(self) -> None:
        out = self.out_type()
        src = self.operand("input").type
        offsets, sizes, strides = (self.attributes[k] for k in ("offsets", "sizes", "strides"))
        if not len(offsets) == len(sizes) == len(strides) == src.rank == out.rank:
            raise self.error(f"offsets/sizes/strides must each have {src.rank} entries")
        if not _same_shape(self, [as_expr(s) for s in sizes], out.shape):
            raise self.error(f"sizes {_shape_str(sizes)} differ from result shape {_shape_str(out.shape)}")


@register_op
class ReshapeOp(ViewOp):
    name = "hfusion.reshape"

    def verify_(self) -> None:
        out = self.out_type()
        src = self.operand("input").type
        if src.dtype != out.dtype:
            raise self.error(f"cannot change dtype ({src.dtype} -> {out.dtype})")
        n_src, n_out = src.numel(), out.numel()
        if not _equal_size(self, n_src, n_out):
            raise self.error(f"element count changes: {expr_str(src.numel())} -> {expr_str(out.numel())}")


def unit_dims_inserted(src, dst, sizes: SizeVars | None = None) -> list[int] | None:
    """Positions in ``dst`` of the unit dims a reshape ``src -> dst`` inserts (those ``dst -> src`` drops), or None
    if it does anything else."""
    sizes = sizes or _SIZES
    inserted, i = [], 0
    for j, d in enumerate(dst):
        if i < len(src) and sizes.statically_known_equal(src[i], d):
            i += 1
        elif sizes.statically_known_equal(d, 1):
            inserted.append(j)
        else:
            return None
    return inserted if i == len(src) else None


def reassociation(src_shape, dst_shape, sizes: SizeVars | None = None) -> list[list[int]] | None:
    """Groups of source dims that form each destination dim (a collapse), or None when not a pure collapse.

    For an expand, call with the arguments swapped. Used by canonicalization and flattening.
    """
    sizes = sizes or _SIZES
    groups, i = [], 0
    for d in dst_shape:
        group, prod = [], 1
        while i < len(src_shape):
            group.append(i)
            prod = prod * src_shape[i]
            i += 1
            if sizes.statically_known_equal(prod, d):
                # absorb trailing unit dims into this group when the next dst dim is not a unit dim
                break
        if not group or not sizes.statically_known_equal(prod, d):
            return None
        groups.append(group)
    while i < len(src_shape) and sizes.statically_known_equal(src_shape[i], 1) and groups:
        groups[-1].append(i)
        i += 1
    return groups if i == len(src_shape) else None

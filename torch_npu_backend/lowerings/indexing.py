"""Indexing: gather → ``hfusion.gather``; index_select, embedding and ``x[..., idx, ...]`` (one index tensor) are
gathers with a broadcast index (a known index: slices); index_put is concats or a one-hot sum; embedding_dense_backward
is a one-hot matmul (``onehot(indices)^T @ grad``), which keeps it on the Cube unit.
"""

from __future__ import annotations

import sympy
import torch

from graph_passes.dialects.hfusion import (ArangeOp, BroadcastOp, ConcatOp, GatherOp, MatmulOp, ReduceOp, SelectOp,
                                           TransposeOp)
from graph_passes.ir.core import Constant
from graph_passes.ir.types import INT_LIMITS, TensorType

from ..dtypes import opmath
from . import register_lowering
from .common import binary, compare, normalize_dim, select
from .multi_index import index_put_several, index_several
from .shape import scatter_values, slice_value

I32_MAX = INT_LIMITS["i32"][1]

aten = torch.ops.aten


@register_lowering(aten.gather.default)
def gather(ctx, x, dim, index, *, sparse_grad=False):
    v, idx = ctx.tensor(x), ctx.tensor(index)
    if v.type.rank == 0:
        return _gather_0d(ctx, v, idx)
    return ctx.emit(GatherOp, [v, idx], ctx.out_type(), dim=normalize_dim(ctx, dim, v.type.rank))


def _gather_0d(ctx, v, idx):
    """A 0-d source is one element (eager takes a 0-d or 1-d index into it): a gather along dim 0 of it as a
    1-element vector, the index flattened, the result in the op's shape."""
    out = ctx.out_type()
    flat = ctx.reshape(idx, [idx.type.numel()])
    got = ctx.emit(GatherOp, [ctx.reshape(v, [1]), flat], TensorType(tuple(flat.type.shape), v.type.dtype), dim=0)
    return ctx.reshape(got, out.shape)


def _index_select(ctx, v, dim, idx, out_shape):
    """out = v.index_select(dim, idx) for a 1-D idx: gather along ``dim`` with idx broadcast to ``out_shape``."""
    rank = v.type.rank
    idx = ctx.reshape(idx, [idx.type.shape[0] if i == dim else 1 for i in range(rank)])
    idx = ctx.broadcast_to(idx, out_shape)
    return ctx.emit(GatherOp, [v, idx], TensorType(tuple(out_shape), v.type.dtype), dim=dim)


@register_lowering(aten.index_select.default)
def index_select(ctx, x, dim, index):
    v, idx = ctx.tensor(x), ctx.tensor(index)
    if v.type.rank == 0:
        return _gather_0d(ctx, v, idx)
    dim = normalize_dim(ctx, dim, v.type.rank)
    out = ctx.out_type()
    idx = ctx.reshape(idx, [idx.type.numel()])
    return ctx.reshape(_index_select(ctx, v, dim, idx, out.shape), out.shape)


@register_lowering(aten.index.Tensor)
def index(ctx, x, indices):
    """``x[..., idx, ...]`` with one integer index tensor, the other dims whole (``qkv[..., [-2], :]``: the keys of a
    fused q/k/v projection): an index_select of the flattened index along its dim, negative indices counting from the
    end as eager, reshaped to ``x.shape[:d] + idx.shape + x.shape[d+1:]``. Several index tensors (broadcast together)
    are ``multi_index.index_several``; boolean masks (a result shape that depends on the data) are not lowered."""
    v = ctx.tensor(x)
    if sum(i is not None for i in indices) > 1:  # advanced indexing: lowerings/multi_index.py
        return index_several(ctx, v, indices, _index_select)
    d, idx, n = _one_index(ctx, v, indices)
    known = _constant_values(idx)
    if known is not None:
        return ctx.reshape(_take_runs(ctx, v, d, _counted_from_start(ctx, known, d, n)), ctx.out_type().shape)
    flat = _from_end(ctx, idx, n)
    rows = [*v.type.shape[:d], flat.type.shape[0], *v.type.shape[d + 1:]]
    return ctx.reshape(_index_select(ctx, v, d, flat, rows), ctx.out_type().shape)


@register_lowering(aten.index_put.default)
def index_put(ctx, x, indices, values, accumulate=False):
    """``x[..., idx, ...] = values`` (``+=`` with ``accumulate``) for one known index tensor (the backward of
    ``x[..., [-2], :]``: a fused projection's q/k/v split): per position picked, the values there — summed over
    repeats when accumulating — replace (or add to) that slice of ``x``, a concat along the dim. Another index is a
    one-hot sum when accumulating (:func:`_one_hot_sum`), else the one-hot of the last write (:func:`_put_last`). Several index tensors, accumulating, are ``multi_index.index_put_several`` (a one-hot sum over the
    merged dims: interpolate's backward)."""
    v = ctx.tensor(x)
    if sum(i is not None for i in indices) > 1:  # advanced indexing: lowerings/multi_index.py
        return index_put_several(ctx, v, indices, values, accumulate, _one_hot_sum)
    d, idx, n = _one_index(ctx, v, indices)
    vals = _values_along(ctx, v, d, idx, values)
    known = _constant_values(idx)
    if known is None:
        if not accumulate:
            return _put_last(ctx, v, d, idx, vals)
        return binary(ctx, "add", v, _one_hot_sum(ctx, v.type, d, idx, vals))
    picks = _counted_from_start(ctx, known, d, n)
    if not accumulate and len(set(picks)) != len(picks):
        raise ctx.error("repeated indices without accumulate (which value lands is not defined)")
    one = v.type.with_shape([*v.type.shape[:d], 1, *v.type.shape[d + 1:]])
    for k in dict.fromkeys(picks):
        part = None
        for j in (j for j, p in enumerate(picks) if p == k):
            piece = slice_value(ctx, vals, d, j, 1, 1, one)
            part = piece if part is None else binary(ctx, "add", part, piece)
        if accumulate:
            part = binary(ctx, "add", slice_value(ctx, v, d, k, 1, 1, one), part)
        v = scatter_values(ctx, v, part, d, sympy.Integer(k), sympy.Integer(k + 1), v.type)
    return v


def _put_last(ctx, v, d, idx, vals):
    """``v`` with ``vals_j`` written at position ``idx_j`` of dim ``d``, the last ``j`` winning where an index repeats
    (eager's serial loop; torch leaves the order undefined): the one-hot ``hot[k, j]`` kept only at ``j = last[k]``,
    the greatest ``j`` hot at ``k`` (an f32 max over ``j``: exact), summed, selected where some ``j`` is hot."""
    n, m = int(v.type.shape[d]), idx.type.numel()
    hot = _hot(ctx, _positions(ctx, n), idx, n, m)
    order = _bcast(ctx, ctx.emit(ArangeOp, [], TensorType((m,), "f32"), start=0, step=1), hot.type.with_dtype("f32"),
                   [0])
    last = ctx.emit(ReduceOp, [select(ctx, hot, order, ctx.scalar(-1.0, "f32"))], TensorType((n,), "f32"),
                    kind="max", dims=[1])
    only = binary(ctx, "logical_and", hot, compare(ctx, "eq", order, _bcast(ctx, last, order.type, [1])))
    written = _bcast(ctx, compare(ctx, "ge", last, ctx.scalar(0.0, "f32")), v.type.with_dtype("i1"),
                     [k for k in range(v.type.rank) if k != d])
    return select(ctx, written, _masked_sum(ctx, v.type, d, vals, only), v)


def _one_index(ctx, v, indices):
    """``(dim, index value, its static length)`` of ``x[..., idx, ...]``'s one integer index tensor; an error for
    several (broadcast together), a mask (a result shape that depends on the data) or a symbolic length (negative
    indices count from its end)."""
    given = [(d, i) for d, i in enumerate(indices) if i is not None]
    if len(given) != 1:
        raise ctx.error(f"{len(given)} index tensors: only one (the other dims taken whole) is lowered")
    d, index = given[0]
    idx = ctx.tensor(index)
    if idx.type.dtype not in ("i32", "i64"):
        raise ctx.error(f"an index tensor of {idx.type.dtype} (a mask: its result's shape depends on the data)")
    n = v.type.shape[d]
    if not n.is_Integer:
        raise ctx.error(f"an index into dim {d} of symbolic length {n} (negative indices count from its end)")
    return d, idx, int(n)


def _counted_from_start(ctx, known: list[int], d: int, n: int) -> list[int]:
    """Known indices into a dim of ``n``, negative ones counted from its end; an error naming one out of bounds."""
    for k in known:
        if not -n <= k < n:
            raise ctx.error(f"index {k} is out of bounds for dim {d} of size {n}")
    return [k + n if k < 0 else k for k in known]


def _from_end(ctx, idx, n: int, shape=None):
    """The index flattened (or as ``shape``), a negative one counted from the end of a dim of ``n`` (as eager)."""
    flat = ctx.reshape(idx, [idx.type.numel()] if shape is None else shape)
    dt = flat.type.dtype
    return select(ctx, compare(ctx, "lt", flat, ctx.scalar(0, dt)), binary(ctx, "add", flat, ctx.scalar(n, dt)), flat)


def _values_along(ctx, v, d, idx, values):
    """index_put's values broadcast to ``v``'s shape with the index's shape at dim ``d``, then its elements as one
    dim there: ``v.shape[:d] + [m] + v.shape[d+1:]``."""
    pre, post = list(v.type.shape[:d]), list(v.type.shape[d + 1:])
    wide = ctx.broadcast_to(ctx.cast(ctx.tensor(values), v.type.dtype), pre + list(idx.type.shape) + post)
    return ctx.reshape(wide, pre + [idx.type.numel()] + post)


def _one_hot_sum(ctx, out, d, idx, vals):
    """Zeros of type ``out`` with ``vals`` (:func:`_values_along`) added at the positions ``idx`` names along dim ``d``
    (the backward of ``x[..., idx, ...]``, whose index reaches it as a saved tensor): ``sum_j select(idx_j == k,
    vals_j, 0)`` for each position ``k`` — a compare over ``[n, m]`` (m = idx's elements; negative indices count from
    the end), the select over ``out``'s shape with ``m`` as a last dim (the values transposed there), and a last-axis
    sum. All on the vector unit; an index outside the dim matches no position (eager raises)."""
    n, m = int(out.shape[d]), idx.type.numel()
    pre, post = list(out.shape[:d]), list(out.shape[d + 1:])
    positions = _positions(ctx, n)
    if m == 1:  # one index (qkv[..., [-2], :]): a rank-0 index against the positions, a select, no sum
        one = _as_position(ctx, _from_end(ctx, idx, n, []))
        hot = compare(ctx, "eq", positions, _bcast(ctx, one, TensorType((n,), "i32"), [0]))
        mask = _bcast(ctx, hot, out.with_dtype("i1"), [k for k in range(out.rank) if k != d])
        row = _bcast(ctx, ctx.reshape(vals, pre + post), out, [d])
        return select(ctx, mask, row, ctx.scalar(0, out.dtype))
    return _masked_sum(ctx, out, d, vals, _hot(ctx, positions, idx, n, m))


def _hot(ctx, positions, idx, n, m):
    """``hot[k, j] = idx_j == k`` over ``[n, m]`` (negative indices counted from the end)."""
    nm = TensorType((n, m), "i32")
    flat = _as_position(ctx, _from_end(ctx, idx, n))
    return compare(ctx, "eq", _bcast(ctx, positions, nm, [1]), _bcast(ctx, flat, nm, [0]))


def _masked_sum(ctx, out, d, vals, hot):
    """``sum_j select(hot[k, j], vals_j, 0)`` at each position ``k`` of dim ``d``, as ``out``."""
    n, m = hot.type.shape
    pre, post = list(out.shape[:d]), list(out.shape[d + 1:])
    wide = TensorType(tuple(pre + [n] + post + [m]), out.dtype)  # m last: a last-axis sum
    if post:  # m after the dims that follow it
        perm = list(range(d)) + list(range(d + 1, vals.type.rank)) + [d]
        vals = ctx.emit(TransposeOp, [vals], TensorType(tuple(pre + post + [m]), out.dtype), perm=perm)
    mask = _bcast(ctx, hot, wide.with_dtype("i1"), list(range(d)) + list(range(d + 1, d + 1 + len(post))))
    picked = select(ctx, mask, _bcast(ctx, vals, wide, [d]), ctx.scalar(0, out.dtype))
    return ctx.emit(ReduceOp, [picked], out, kind="sum", dims=[wide.rank - 1])


def _constant_values(v) -> list[int] | None:
    """The values of a tensor that is an ``arith.constant`` (a lifted constant index: ``x[..., [-2], :]``)."""
    op = getattr(v, "op", None)
    if op is None or not op.has_trait(Constant) or not isinstance(op.attributes.get("value"), list):
        return None
    return [int(k) for k in op.attributes["value"]]


def _take_runs(ctx, v, d, picks: list[int]):
    """``v`` at positions ``picks`` of dim ``d``: a slice per run of consecutive positions, concatenated along ``d``
    (data movement, no gather: a known index is a view of its rows)."""
    runs = []
    for k in picks:
        if runs and runs[-1][0] + runs[-1][1] == k:
            runs[-1][1] += 1
        else:
            runs.append([k, 1])
    parts = []
    for start, size in runs:
        shape = [*v.type.shape[:d], size, *v.type.shape[d + 1:]]
        parts.append(slice_value(ctx, v, d, start, size, 1, TensorType(tuple(shape), v.type.dtype)))
    if len(parts) == 1:
        return parts[0]
    shape = [*v.type.shape[:d], len(picks), *v.type.shape[d + 1:]]
    return ctx.emit(ConcatOp, parts, TensorType(tuple(shape), v.type.dtype), dim=d)


@register_lowering(aten.embedding.default)
def embedding(ctx, weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    w, idx = ctx.tensor(weight), ctx.tensor(indices)
    if w.type.rank != 2:
        raise ctx.error(f"weight of rank {w.type.rank}")
    n = idx.type.numel()
    flat = ctx.reshape(idx, [n])
    rows = _index_select(ctx, w, 0, flat, [n, w.type.shape[1]])
    return ctx.reshape(rows, ctx.out_type().shape)


@register_lowering(aten.embedding_dense_backward.default)
def embedding_dense_backward(ctx, grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    """grad_weight[v, :] = sum over positions p with indices[p] == v (and v != padding_idx) of grad[p, :]."""
    if scale_grad_by_freq:
        raise ctx.error("scale_grad_by_freq=True")
    out = ctx.out_type()
    g, idx = ctx.tensor(grad_output), ctx.tensor(indices)
    n, d, vocab = idx.type.numel(), g.type.shape[-1], ctx.expr(num_weights)
    compute = opmath(out.dtype)
    g = ctx.cast(ctx.reshape(g, [n, d]), compute)
    idx = _as_position(ctx, ctx.reshape(idx, [n]))
    rows = _positions(ctx, vocab)
    nv = TensorType((n, vocab), "i32")
    hot = compare(ctx, "eq", _bcast(ctx, idx, nv, [1]), _bcast(ctx, rows, nv, [0]))
    if padding_idx is not None and 0 <= padding_idx <= I32_MAX:
        keep = compare(ctx, "ne", idx, ctx.scalar(padding_idx, "i32"))
        hot = binary(ctx, "logical_and", hot, _bcast(ctx, keep, nv.with_dtype("i1"), [1]))
    onehot = ctx.cast(hot, compute)
    res = ctx.emit(MatmulOp, [onehot, g], TensorType((vocab, d), compute), transpose_a=True, transpose_b=False)
    return ctx.cast(res, out.dtype)


def _as_position(ctx, idx):
    """An integer index as i32 for comparing with the positions ``0..n-1`` of a dim: an i64 index is clamped to
    ``[-1, 2^31-1]`` first (on the index tensor itself), so an index outside ``[0, n)`` still matches no position
    and none wraps into range. The compare over the wide ``index × n`` domain then runs on the vector unit (i32
    compares) instead of as an i64 scalar loop per element (docs/codegen.md, i64)."""
    if idx.type.dtype == "i32":
        return idx
    shape = idx.type.shape  # narrowed as one contiguous vector (or a rank-0 value), whatever its layout
    flat = idx if idx.type.rank <= 1 else ctx.reshape(idx, [idx.type.numel()])
    if flat.type.dtype == "i64":
        flat = binary(ctx, "min", binary(ctx, "max", flat, ctx.scalar(-1, "i64")), ctx.scalar(I32_MAX, "i64"))
    return ctx.reshape(ctx.cast(flat, "i32"), shape)


def _positions(ctx, n):
    """``arange(n)`` in i32: the positions ``0..n-1`` along a dim, compared with an index narrowed by
    :func:`_as_position` (i32 compares run on the vector unit). Every position is exact in i32 only when
    ``n <= 2^31``: for a symbolic ``n`` (a vocabulary sized by a symbol with ``dynamic=True``) the importer records
    that as a size predicate, checked on every run (a longer dim is a clear error, not wrapped positions), and the
    bound it gives the symbol lets the arange lower."""
    n = sympy.sympify(n)
    if not n.is_Integer:
        ctx.assert_predicate(sympy.Le(n, I32_MAX + 1), ctx.node_name(),
                             f"positions 0..{n}-1 along a dim are compared in i32")
    return ctx.emit(ArangeOp, [], TensorType((n,), "i32"), start=0, step=1)


def _bcast(ctx, v, out_type, dims):
    return ctx.emit(BroadcastOp, [v], out_type.with_dtype(v.type.dtype), dims=dims)


@register_lowering(aten.scatter.value)
def scatter_value(ctx, x, dim, index, value):
    """out = x with out[.., index[.., j, ..], ..] = value along ``dim``: a one-hot mask and a select.

    mask[i, c] = any_j(index[i, j] == c) (the compare runs over index.shape + [C] with C = x.shape[dim], then
    ``any`` reduces j); index must match x outside ``dim`` (the case nll_loss's backward produces). With one index
    per slice (j of extent 1) the mask is the compare itself, over x's shape.
    """
    v, idx = _one_element_as_vector(ctx, ctx.tensor(x)), _one_element_as_vector(ctx, ctx.tensor(index))
    out = ctx.out_type()
    rank = v.type.rank
    dim = normalize_dim(ctx, dim, rank)
    if idx.type.rank != rank or any(idx.type.shape[i] != v.type.shape[i] for i in range(rank) if i != dim):
        raise ctx.error(f"index {idx.type} must match input {v.type} outside dim {dim}")
    c = v.type.shape[dim]
    positions = _positions(ctx, c)
    if idx.type.shape[dim] == 1:  # one position per slice (nll_loss's backward): no ``any`` over j, no transpose
        along = ctx.reshape(positions, [c if i == dim else 1 for i in range(rank)])
        mask = ctx.broadcast_to(compare(ctx, "eq", _as_position(ctx, idx), along), v.type.shape)
    else:
        wide = TensorType(tuple(idx.type.shape) + (c,), "i32")  # [.., K (at dim), .., C (last)]
        hot = compare(ctx, "eq", _bcast(ctx, _as_position(ctx, idx), wide, [rank]),
                      _bcast(ctx, positions, wide, list(range(rank))))  # fmt: skip
        mask = ctx.emit(ReduceOp, [hot], TensorType(tuple(idx.type.shape[:dim] + idx.type.shape[dim + 1:]) + (c,),
                                                    "i1"), kind="any", dims=[dim])  # fmt: skip
        if dim != rank - 1:
            perm = list(range(rank - 1))
            perm.insert(dim, rank - 1)
            mask = ctx.emit(TransposeOp, [mask], TensorType(tuple(v.type.shape), "i1"), perm=perm)
    picked = ctx.emit(SelectOp, [mask, ctx.scalar(value, out.dtype), ctx.cast(v, out.dtype)],
                      out.with_shape(v.type.shape))
    return ctx.reshape(picked, out.shape)


def _one_element_as_vector(ctx, v):
    """A 0-d scatter operand as the 1-element vector eager treats it as (its only index is 0); others unchanged."""
    return ctx.reshape(v, [1]) if v.type.rank == 0 else v


@register_lowering(aten.scatter.src)
def scatter_src(ctx, x, dim, index, src):
    """out = x with out[.., index[.., 0, ..], ..] = src[.., 0, ..] along ``dim``, one index per slice (the backward of
    ``max.dim``/``min.dim``: the gradient scattered to the selected positions): the one-hot compare of
    :func:`scatter_value` and a select of ``src`` broadcast along ``dim``. Several indices per slice are refused."""
    v, idx, s = (_one_element_as_vector(ctx, ctx.tensor(t)) for t in (x, index, src))
    out = ctx.out_type()
    rank = v.type.rank
    dim = normalize_dim(ctx, dim, rank)
    if idx.type.rank != rank or idx.type.shape[dim] != 1 or \
            any(idx.type.shape[i] != v.type.shape[i] for i in range(rank) if i != dim):
        raise ctx.error(f"index {idx.type} into {v.type} along dim {dim}: one index per slice (extent 1 along dim, "
                        f"the input's extents elsewhere) is lowered")
    if tuple(s.type.shape) != tuple(idx.type.shape):
        s = slice_value(ctx, s, dim, 0, 1, 1, s.type.with_shape(idx.type.shape))  # src[.., :1, ..] as eager reads it
    c = v.type.shape[dim]
    along = ctx.reshape(_positions(ctx, c), [c if i == dim else 1 for i in range(rank)])
    mask = ctx.broadcast_to(compare(ctx, "eq", _as_position(ctx, idx), along), v.type.shape)
    wide = opmath(out.dtype)  # f16/bf16 select in f32 (exact): a 16-bit column broadcast lacks staging room in
    picked = ctx.broadcast_to(ctx.cast(s, wide), v.type.shape)  # codegen for some row counts
    chosen = ctx.emit(SelectOp, [mask, picked, ctx.cast(v, wide)], TensorType(tuple(v.type.shape), wide))
    return ctx.reshape(ctx.cast(chosen, out.dtype), out.shape)


@register_lowering(aten.flip.default)
def flip(ctx, x, dims):
    """x reversed along ``dims``: an index_select of ``arange(n - 1, -1, -1)`` per dim (a cumsum's backward flips
    its gradient, sums and flips back). A gather along the last dim runs as ``vgather``; along another dim it is an
    element gather, interpreted (docs/runtime.md)."""
    v = ctx.tensor(x)
    for d in sorted({normalize_dim(ctx, d, v.type.rank) for d in dims}):
        n = v.type.shape[d]
        if not n.is_Integer:
            raise ctx.error(f"flip of dim {d} of symbolic length {n}")
        if int(n) < 2:
            continue
        idx = ctx.emit(ArangeOp, [], TensorType((n,), "i64"), start=int(n) - 1, step=-1)
        v = _index_select(ctx, v, d, idx, v.type.shape)
    return v

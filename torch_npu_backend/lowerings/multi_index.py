"""``x[i0, i1, ...]`` with several integer index tensors (advanced indexing), reached from ``index.Tensor``'s
lowering (``lowerings/indexing.py``) when it holds more than one index tensor.

The index tensors name consecutive dims ``d .. d+m-1`` (the others taken whole, ``None``): they broadcast together
to a shape ``B``, and ``x[..., i0, .., im-1, ...]`` is ``x`` with those dims merged into one of ``N = Π n_k`` elements
indexed by the linear index, an index_select along the merged dim::

    lin = Σ_k wrap(i_k) · Π_{l>k} n_l             (wrap: a negative index counts from its dim's end, as eager)
    lin = N where some i_k is outside [-n_k, n_k)  (an invalid position: the gather stops the kernel, eager raises)
    out = index_select(reshape(x, x.shape[:d] + [N] + x.shape[d+m:]), d, lin)  → x.shape[:d] + B + x.shape[d+m:]

Index tensors separated by a ``None`` (eager moves ``B`` to the front) and boolean masks (a result shape that
depends on the data) are refused, so they fall back to the host.
"""

from __future__ import annotations

import sympy

from graph_passes.ir.types import TensorType

from .common import binary, broadcast_shape, compare, select


def index_several(ctx, v, indices, index_select):
    """The value of ``v[indices]`` (``index_select(ctx, v, dim, flat_index, rows)`` gathers rows)."""
    d0, m, total, lin, count = _linear_index(ctx, v, indices)
    merged = ctx.reshape(v, [*v.type.shape[:d0], total, *v.type.shape[d0 + m:]])
    rows = [*v.type.shape[:d0], count, *v.type.shape[d0 + m:]]
    return ctx.reshape(index_select(ctx, merged, d0, lin, rows), ctx.out_type().shape)


def index_put_several(ctx, v, indices, values, accumulate, one_hot_sum):
    """The value of ``v[indices] += values`` (the backward of ``x[i, j]``: interpolate's ``_unsafe_index``), with
    ``one_hot_sum(ctx, out_type, dim, index, vals)`` the values summed at the positions an index names along a dim
    (an index outside its dim matches none; eager raises). Index tensors that each vary along their own dim of the
    broadcast shape (interpolate's ``[Ho, 1]`` and ``[Wo]``) are summed one dim at a time, a one-hot over
    ``Wo × W`` then ``Ho × H``; others by the linear index into the merged dims, a one-hot over ``Ho·Wo × H·W``.
    Without ``accumulate`` it is refused (repeated positions: which value lands is not defined)."""
    if not accumulate:
        raise ctx.error(f"{sum(i is not None for i in indices)} index tensors without accumulate (repeated "
                        f"positions: which value lands is not defined)")
    dims, idx, sizes = _index_tensors(ctx, v, indices)
    d0, m = dims[0], len(dims)
    pre, post = list(v.type.shape[:d0]), list(v.type.shape[d0 + m:])
    shape = broadcast_shape(ctx, *idx)
    vals = ctx.broadcast_to(ctx.cast(ctx.tensor(values), v.type.dtype), [*pre, *shape, *post])
    along = _own_dims(idx, shape)
    if along is not None:  # Note: one one-hot per dim, each over that dim's index and positions only
        out = [*pre, *shape, *post]
        for k in reversed(range(m)):  # the last dim first: its values need no transpose (nothing after it)
            out[d0 + k] = sizes[k]
            flat = ctx.broadcast_to(ctx.reshape(along[k], [along[k].type.numel()]), [shape[k]])
            vals = one_hot_sum(ctx, TensorType(tuple(out), v.type.dtype), d0 + k, flat, vals)
        return binary(ctx, "add", v, vals)
    _, _, total, lin, count = _linear_index(ctx, v, indices)
    merged = ctx.reshape(v, [*pre, total, *post])
    vals = ctx.reshape(vals, [*pre, count, *post])
    merged_type = TensorType(tuple([*pre, total, *post]), v.type.dtype)
    return ctx.reshape(binary(ctx, "add", merged, one_hot_sum(ctx, merged_type, d0, lin, vals)), v.type.shape)


def _own_dims(idx, shape):
    """The index tensors when the k-th varies along dim k of their broadcast ``shape`` only (extent 1 elsewhere):
    their sum over positions is separable, one dim at a time; else None."""
    if len(shape) != len(idx):
        return None
    for k, t in enumerate(idx):
        ext = [1] * (len(shape) - t.type.rank) + list(t.type.shape)
        if any(e != 1 for j, e in enumerate(ext) if j != k):
            return None
    return idx


def _index_tensors(ctx, v, indices):
    """``(dims, index values, static sizes of those dims)`` for integer index tensors on adjacent dims of ``v``;
    an error naming the dims for index tensors apart, a mask or symbolic sizes."""
    given = [(d, i) for d, i in enumerate(indices) if i is not None]
    dims = [d for d, _ in given]
    if dims != list(range(dims[0], dims[0] + len(dims))):
        raise ctx.error(f"index tensors at dims {dims} are not adjacent (the result moves their shape first)")
    idx = [ctx.tensor(i) for _, i in given]
    for d, t in zip(dims, idx):
        if t.type.dtype not in ("i32", "i64"):
            raise ctx.error(f"an index tensor of {t.type.dtype} at dim {d} (a mask: its result's shape depends on "
                            f"the data)")
    sizes = [v.type.shape[d] for d in dims]
    if not all(n.is_Integer for n in sizes):
        raise ctx.error(f"index tensors into dims {dims} of sizes {[str(n) for n in sizes]}: symbolic sizes")
    return dims, idx, [int(n) for n in sizes]


def _linear_index(ctx, v, indices):
    """``(d, m, N, lin, count)`` for index tensors on the ``m`` adjacent dims ``d .. d+m-1`` of ``v``: ``lin`` the
    flat linear index (``count`` elements) into those dims merged into one of ``N``, ``N`` where an index is outside
    its dim."""
    dims, idx, sizes = _index_tensors(ctx, v, indices)
    total = 1
    for n in sizes:
        total *= n
    dtype = "i64" if any(t.type.dtype == "i64" for t in idx) or total > 2**31 - 1 else "i32"
    shape = broadcast_shape(ctx, *idx)
    count = sympy.Mul(*shape) if shape else sympy.Integer(1)
    lin, bad, stride = None, None, total
    for n, t in zip(sizes, idx):
        stride //= n
        flat = ctx.reshape(ctx.broadcast_to(ctx.cast(t, dtype), shape), [count])
        outside = binary(ctx, "logical_or", compare(ctx, "lt", flat, ctx.scalar(-n, dtype)),
                         compare(ctx, "ge", flat, ctx.scalar(n, dtype)))
        flat = select(ctx, compare(ctx, "lt", flat, ctx.scalar(0, dtype)), binary(ctx, "add", flat,
                                                                               ctx.scalar(n, dtype)), flat)
        term = flat if stride == 1 else binary(ctx, "mul", flat, ctx.scalar(stride, dtype))
        lin = term if lin is None else binary(ctx, "add", lin, term)
        bad = outside if bad is None else binary(ctx, "logical_or", bad, outside)
    lin = select(ctx, bad, ctx.scalar(total, dtype), lin)
    return dims[0], len(dims), total, lin, count

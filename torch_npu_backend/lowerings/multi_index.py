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

from .common import binary, broadcast_shape, compare, select


def index_several(ctx, v, indices, index_select):
    """The value of ``v[indices]`` (``index_select(ctx, v, dim, flat_index, rows)`` gathers rows)."""
    d0, m, total, lin, count = _linear_index(ctx, v, indices)
    merged = ctx.reshape(v, [*v.type.shape[:d0], total, *v.type.shape[d0 + m:]])
    rows = [*v.type.shape[:d0], count, *v.type.shape[d0 + m:]]
    return ctx.reshape(index_select(ctx, merged, d0, lin, rows), ctx.out_type().shape)


def index_put_several(ctx, v, indices, values, accumulate, one_hot_sum):
    """The value of ``v[indices] += values`` (the backward of ``x[i, j]``: interpolate's ``_unsafe_index``): ``v``
    with the indexed dims merged, plus ``one_hot_sum(ctx, merged, d, lin, vals)`` of the values at the linear index
    (an index outside its dim, the position ``N``, matches none). Without ``accumulate`` it is refused (repeated
    positions: which value lands is not defined)."""
    if not accumulate:
        raise ctx.error(f"{sum(i is not None for i in indices)} index tensors without accumulate (repeated "
                        f"positions: which value lands is not defined)")
    d0, m, total, lin, count = _linear_index(ctx, v, indices)
    pre, post = list(v.type.shape[:d0]), list(v.type.shape[d0 + m:])
    merged = ctx.reshape(v, [*pre, total, *post])
    shape = [*pre, *broadcast_shape(ctx, *(ctx.tensor(i) for i in indices if i is not None)), *post]
    vals = ctx.broadcast_to(ctx.cast(ctx.tensor(values), v.type.dtype), shape)
    vals = ctx.reshape(vals, [*pre, count, *post])
    summed = binary(ctx, "add", merged, one_hot_sum(ctx, merged, d0, lin, vals))
    return ctx.reshape(summed, v.type.shape)


def _linear_index(ctx, v, indices):
    """``(d, m, N, lin, count)`` for index tensors on the ``m`` adjacent dims ``d .. d+m-1`` of ``v``: ``lin`` the
    flat linear index (``count`` elements) into those dims merged into one of ``N``, ``N`` where an index is outside
    its dim."""
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
    sizes = [int(n) for n in sizes]
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

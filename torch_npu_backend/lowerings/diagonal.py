"""``diagonal`` and ``diagonal_scatter`` (the backward of ``diagonal``, through torch's ``diagonal_backward``
decomposition: zeros, then the gradient scattered onto the diagonal) with slices, concats and reshapes only.

Note: element ``i`` of the diagonal of a row-major ``[n, m]`` matrix is at ``p0 + i·(m + 1)`` of the flattened
matrix (``p0``: where the first one is, from the offset and whether ``dim1`` is the row or the column dim):
``diagonal`` is a strided slice of the flattened matrix. Appending ``n`` elements to the flattened matrix and
reading it as ``[n, m + 1]`` puts position ``p0 + i·(m + 1)`` at row ``i + p0 // (m + 1)``, column ``p0 % (m + 1)``:
scattering onto the diagonal is replacing part of that column (concats) — no scatter or index arithmetic.
(torch's decomposition of ``diagonal`` is an ``as_strided`` view, which has no value-semantics lowering.) When the
two dims are not the last two, a transpose moves them there first (keeping their order).
"""

from __future__ import annotations

import torch

from graph_passes.dialects.hfusion import ConcatOp, FillOp, TransposeOp

from . import register_lowering
from .common import normalize_dim
from .shape import _with_dim, scatter_values, slice_value

aten = torch.ops.aten


def _to_last(ctx, v, offset, dim1, dim2):
    """(v with dim1 and dim2 moved last in their order, the permutation, the first element's flat position in a
    last-two-dims matrix, the diagonal's length)."""
    rank = v.type.rank
    d1, d2 = normalize_dim(ctx, dim1, rank), normalize_dim(ctx, dim2, rank)
    if d1 == d2:
        raise ctx.error(f"dim1 and dim2 are both {d1}")
    lo, hi = sorted((d1, d2))
    perm = [d for d in range(rank) if d not in (d1, d2)] + [lo, hi]
    if perm != list(range(rank)):
        v = ctx.emit(TransposeOp, [v], v.type.with_shape([v.type.shape[d] for d in perm]), perm=perm)
    n, m = v.type.shape[-2:]
    if not (n.is_Integer and m.is_Integer):
        raise ctx.error(f"diagonal of a [{n}, {m}] matrix: symbolic sizes are not supported")
    first1, first2 = max(-offset, 0), max(offset, 0)  # the first element's index along dim1 and dim2
    size1, size2 = (int(n), int(m)) if d1 < d2 else (int(m), int(n))
    length = min(size1 - first1, size2 - first2)
    if length <= 0:
        raise ctx.error(f"offset {offset} leaves no diagonal in a [{n}, {m}] matrix")
    row, col = (first1, first2) if d1 < d2 else (first2, first1)
    return v, perm, row * int(m) + col, length


def _skewed(ctx, v):
    """v [..., n, m] flattened, n zeros appended, read as [..., n, m + 1]."""
    *batch, n, m = v.type.shape
    flat = ctx.reshape(v, [*batch, n * m])
    zeros = ctx.emit(FillOp, [], _with_dim(flat.type, len(batch), n), value=0.0 if v.type.dtype[0] in "fb" else 0)
    padded = ctx.emit(ConcatOp, [flat, zeros], _with_dim(flat.type, len(batch), n * (m + 1)), dim=len(batch))
    return ctx.reshape(padded, [*batch, n, m + 1])


@register_lowering(aten.diagonal.default)
def diagonal(ctx, x, offset=0, dim1=0, dim2=1):
    """The flattened matrix from ``p0``, every (m + 1)-th element: one strided slice."""
    v, _, p0, length = _to_last(ctx, ctx.tensor(x), offset, dim1, dim2)
    *batch, n, m = v.type.shape
    flat = ctx.reshape(v, [*batch, n * m])
    return slice_value(ctx, flat, len(batch), p0, length, int(m) + 1, ctx.out_type())


@register_lowering(aten.diagonal_scatter.default)
def diagonal_scatter(ctx, x, src, offset=0, dim1=0, dim2=1):
    out = ctx.out_type()
    v, perm, p0, length = _to_last(ctx, ctx.cast(ctx.tensor(x), out.dtype), offset, dim1, dim2)
    *batch, n, m = v.type.shape
    r = len(batch)
    top, col = divmod(p0, int(m) + 1)
    s = _skewed(ctx, v)
    rows = slice_value(ctx, s, r, top, length, 1, _with_dim(s.type, r, length))
    column = ctx.reshape(ctx.cast(ctx.tensor(src), out.dtype), [*batch, length, 1])
    rows = scatter_values(ctx, rows, column, r + 1, col, col + 1, rows.type)
    s = scatter_values(ctx, s, rows, r, top, top + length, s.type)
    flat = ctx.reshape(s, [*batch, n * (m + 1)])
    flat = slice_value(ctx, flat, r, 0, n * m, 1, _with_dim(flat.type, r, n * m))
    v = ctx.reshape(flat, [*batch, n, m])
    inverse = [perm.index(d) for d in range(len(perm))]
    if inverse != list(range(len(perm))):
        v = ctx.emit(TransposeOp, [v], out, perm=inverse)
    return v

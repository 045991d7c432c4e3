"""``avg_pool2d`` and ``max_pool2d_with_indices`` over the strided slices of their windows. ``avg_pool2d`` sums them
(``adaptive_avg_pool2d`` reaches us as it through torch's decomposition when the input's size is a multiple of the
output's, a global average pool included):

    xp = pad(x, top/left: padding, bottom/right: up to the last window)            (zeros; f16/bf16 in f32)
    s  = Σ_{i < kh, j < kw} xp[..., i : i + (OH-1)·sh + 1 : sh, j : j + (OW-1)·sw + 1 : sw]   (row-major order)
    out = s / divisor                                  (per output position: the window's counted elements)

The sum runs in eager's order (window row by row, one accumulator), so f32 is eager's value; f16/bf16 round once,
as eager's CPU kernel (it accumulates in f32). The divisor is ``divisor_override``, else per position the window's
extent inside the padded input (``count_include_pad``) or inside the input (not), clipped for ``ceil_mode``'s last
windows, as ATen's ``avg_pool2d`` computes it: one number when every window counts alike, else a row-count column
times a column-count row, built from fills.

``max_pool2d_with_indices`` scans the same slices of the input padded with -inf as eager's CPU kernel scans a
window, keeping the value and its flat input position (``h·W + w``) where an element is greater or NaN::

    m, i = -inf, first position inside the input      (per output: eager's initial maxindex)
    for each slice k (row-major):  m, i = (x_k, pos_k) where x_k > m or x_k is NaN

so ties give the first position, NaN the last NaN, a window of -inf the first position inside the input.
Positions are f32 (exact below 2^24 input elements per plane), cast to i64 once.

Note: lowerings, not decompositions: torch has none for these core aten ops. Their backward ops
(``avg_pool2d_backward``, ``max_pool2d_with_indices_backward``) are not lowered.
"""

from __future__ import annotations

import torch

from graph_passes.dialects.hfusion import ArangeOp, ConcatOp, FillOp, SliceOp
from graph_passes.ir.types import TensorType

from ..dtypes import opmath
from . import register_lowering
from .common import binary, compare, select
from .shape import pad_value

aten = torch.ops.aten


def _pair(ctx, v, what, default=None):
    v = list(v) if isinstance(v, (list, tuple)) else [v]
    if not v and default is not None:
        return default
    if len(v) == 1:
        v = v * 2
    if len(v) != 2 or not all(isinstance(e, int) for e in v):
        raise ctx.error(f"{what}={v}: one or two integers")
    return v


def _counts(out_n, k, s, p, size, include_pad):
    """Per output position along one dim: the window's elements inside [0, size + 2p) (include_pad) or the input
    [p, p + size), the window clipped to size + 2p first (ATen's hend = min(hstart + k, size + pad))."""
    lo, hi = (0, size + 2 * p) if include_pad else (p, p + size)
    counts = []
    for o in range(out_n):
        start, end = o * s, min(o * s + k, size + 2 * p)
        counts.append(max(0, min(end, hi) - max(start, lo)))
    return counts


def _vector(ctx, values, dtype):
    """A 1-D tensor of static ``values``: a concat of one fill per run of equal values."""
    runs = []
    for v in values:
        if runs and runs[-1][0] == v:
            runs[-1][1] += 1
        else:
            runs.append([v, 1])
    parts = [ctx.emit(FillOp, [], TensorType((n,), dtype), value=float(v)) for v, n in runs]
    if len(parts) == 1:
        return parts[0]
    return ctx.emit(ConcatOp, parts, TensorType((len(values),), dtype), dim=0)


def _geometry(ctx, v, out_shape, kernel_size, stride, padding):
    """(kh, kw, sh, sw, ph, pw, h, w, oh, ow) as static ints."""
    if v.type.rank not in (3, 4):
        raise ctx.error(f"input of rank {v.type.rank} (3 or 4)")
    (kh, kw), (ph, pw) = _pair(ctx, kernel_size, "kernel_size"), _pair(ctx, padding, "padding")
    sh, sw = _pair(ctx, stride, "stride", default=[kh, kw])
    h, w = v.type.shape[-2:]
    oh, ow = out_shape[-2:]
    if not all(d.is_Integer for d in (h, w, oh, ow)):
        raise ctx.error(f"a {h}x{w} input pooled to {oh}x{ow}: symbolic sizes are not supported")
    return kh, kw, sh, sw, ph, pw, int(h), int(w), int(oh), int(ow)


def _windows(ctx, v, g, fill):
    """v padded with ``fill`` as the windows read it, and its k_h·k_w strided slices (row-major order)."""
    kh, kw, sh, sw, ph, pw, h, w, oh, ow = g
    need_h, need_w = (oh - 1) * sh + kh, (ow - 1) * sw + kw  # rows/cols the windows read (ceil_mode: past the pad)
    v = pad_value(ctx, v, [pw, max(pw, need_w - w - pw), ph, max(ph, need_h - h - ph)], fill)
    rank, lead = v.type.rank, list(v.type.shape[:-2])
    sizes = [*lead, oh, ow]
    for i in range(kh):
        for j in range(kw):
            yield i, j, ctx.emit(SliceOp, [v], TensorType(tuple(sizes), v.type.dtype),
                                 offsets=[0] * (rank - 2) + [i, j], sizes=sizes, strides=[1] * (rank - 2) + [sh, sw])


@register_lowering(aten.avg_pool2d.default)
def avg_pool2d(ctx, x, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):  # fmt: skip
    out = ctx.out_type()
    v = ctx.tensor(x)
    g = _geometry(ctx, v, out.shape, kernel_size, stride, padding)
    kh, kw, sh, sw, ph, pw, h, w, oh, ow = g
    dtype = opmath(out.dtype)
    acc = None
    for _, _, piece in _windows(ctx, ctx.cast(v, dtype), g, 0):
        acc = piece if acc is None else binary(ctx, "add", acc, piece)
    if divisor_override:
        divisor = ctx.scalar(float(divisor_override), dtype)
    else:
        rows = _counts(oh, kh, sh, ph, h, count_include_pad)
        cols = _counts(ow, kw, sw, pw, w, count_include_pad)
        if len(set(rows)) == 1 and len(set(cols)) == 1:
            divisor = ctx.scalar(float(rows[0] * cols[0]), dtype)
        else:
            column = ctx.reshape(_vector(ctx, rows, dtype), [oh, 1])
            divisor = binary(ctx, "mul", column, _vector(ctx, cols, dtype))
    return ctx.cast(binary(ctx, "div", acc, divisor), out.dtype)


def _grid(ctx, rows, cols, w):
    """rows[oh]·w + cols[ow] as an f32 [OH, OW] grid (rows/cols: (start, step, n) aranges or static lists)."""
    def vec(spec):
        if isinstance(spec, list):
            return _vector(ctx, spec, "f32")
        start, step, n = spec
        return ctx.emit(ArangeOp, [], TensorType((n,), "f32"), start=start, step=step)

    column = ctx.reshape(binary(ctx, "mul", vec(rows), ctx.scalar(float(w), "f32")), [_length(rows), 1])
    return binary(ctx, "add", column, vec(cols))


def _length(spec):
    return len(spec) if isinstance(spec, list) else spec[2]


@register_lowering(aten.max_pool2d_with_indices.default)
def max_pool2d_with_indices(ctx, x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    values_type, index_type = ctx.out_type(0), ctx.out_type(1)
    if _pair(ctx, dilation, "dilation") != [1, 1]:
        raise ctx.error(f"dilation={dilation}: only 1 is lowered")
    v = ctx.tensor(x)
    g = _geometry(ctx, v, values_type.shape, kernel_size, stride, padding)
    kh, kw, sh, sw, ph, pw, h, w, oh, ow = g
    if h * w > 2**24:
        raise ctx.error(f"a {h}x{w} plane: positions are f32, exact up to 2^24 elements")
    first = _grid(ctx, [max(o * sh - ph, 0) for o in range(oh)], [max(o * sw - pw, 0) for o in range(ow)], w)
    m, idx = ctx.scalar(float("-inf"), "f32"), first
    for i, j, piece in _windows(ctx, ctx.cast(v, "f32"), g, float("-inf")):
        pos = _grid(ctx, (i - ph, sh, oh), (j - pw, sw, ow), w)
        for hit in (compare(ctx, "gt", piece, m), compare(ctx, "ne", piece, piece)):  # greater, or NaN
            m, idx = select(ctx, hit, piece, m), select(ctx, hit, pos, idx)
    indices = ctx.broadcast_to(ctx.cast(idx, "i64"), index_type.shape)
    return ctx.cast(m, values_type.dtype), indices

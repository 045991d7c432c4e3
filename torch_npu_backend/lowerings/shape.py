"""Shape and data-movement lowerings: views, expand, permute, slicing, concatenation, splitting, scatters of slices.

Views become value-semantics ops (``hfusion.reshape``, ``hfusion.slice``, ``hfusion.transpose``); clone and alias
are the identity on values. ``transpose``/``t``/``split.Tensor``/``squeeze.dim`` reach us as ``permute``/
``split_with_sizes``/``squeeze.dims`` through the core-aten decompositions.
"""

from __future__ import annotations

import sympy
import torch

from graph_passes.dialects.hfusion import ConcatOp, FillOp, SliceOp, TransposeOp

from . import register_lowering
from .common import fill_value, normalize_dim

aten = torch.ops.aten


@register_lowering(aten.view.default, aten._unsafe_view.default)
def view(ctx, x, size):
    return ctx.reshape(ctx.tensor(x), ctx.out_type().shape)


@register_lowering(aten.unsqueeze.default)
def unsqueeze(ctx, x, dim):
    return ctx.reshape(ctx.tensor(x), ctx.out_type().shape)


@register_lowering(aten.squeeze.dims, aten.squeeze.dim, aten.squeeze.default)
def squeeze(ctx, x, dim=None):
    return ctx.reshape(ctx.tensor(x), ctx.out_type().shape)


@register_lowering(aten.expand.default)
def expand(ctx, x, size, *, implicit=False):
    return ctx.broadcast_to(ctx.tensor(x), ctx.out_type().shape)


@register_lowering(aten.permute.default)
def permute(ctx, x, dims):
    v = ctx.tensor(x)
    perm = [normalize_dim(ctx, d, v.type.rank) for d in dims]
    if perm == list(range(v.type.rank)):
        return v
    return ctx.emit(TransposeOp, [v], ctx.out_type(), perm=perm)


@register_lowering(aten.clone.default, aten.alias.default, aten.lift_fresh_copy.default)
def clone(ctx, x, *, memory_format=None):
    return ctx.tensor(x)  # value semantics: a copy or an alias is the same value


@register_lowering(aten.copy.default)
def copy(ctx, x, src, non_blocking=False):
    """``x.copy_(src)`` functionalized (labels shifted right by assigning a slice): ``src`` cast to ``x``'s dtype
    and broadcast to its shape; ``x``'s values are not read."""
    out = ctx.out_type()
    return ctx.broadcast_to(ctx.cast(ctx.tensor(src), out.dtype), out.shape)


def slice_value(ctx, v, dim, offset, size, step, out_type):
    """``v`` along ``dim`` from ``offset``, ``size`` elements ``step`` apart, as ``out_type`` (``v`` itself when that
    is all of it)."""
    rank = v.type.rank
    offsets = [0] * rank
    sizes = list(out_type.shape)
    strides = [1] * rank
    offsets[dim], strides[dim] = offset, step
    if sizes[dim] != size:
        raise ctx.error(f"slice size {size} does not match the result {out_type}")
    if offset == 0 and step == 1 and size == v.type.shape[dim]:
        return v
    return ctx.emit(SliceOp, [v], out_type, offsets=offsets, sizes=sizes, strides=strides)


def _start(ctx, start, size, default=0):
    """A start/end index as an expression in [0, size] (negative counts from the end; static values clamped)."""
    if start is None:
        return sympy.sympify(default)
    e = ctx.expr(start)
    if e.is_Integer and int(e) < 0:
        e = e + size
    if e.is_Integer and size.is_Integer:
        e = sympy.Integer(min(max(int(e), 0), int(size)))
    elif e.is_Integer and int(e) >= 2**62:  # end=sys.maxsize means "to the end"
        e = size
    return e


@register_lowering(aten.slice.Tensor)
def slice_(ctx, x, dim=0, start=None, end=None, step=1):
    v = ctx.tensor(x)
    dim = normalize_dim(ctx, dim, v.type.rank)
    out = ctx.out_type()
    offset = _start(ctx, start, v.type.shape[dim])
    return slice_value(ctx, v, dim, offset, out.shape[dim], int(step), out)


@register_lowering(aten.select.int)
def select(ctx, x, dim, index):
    v = ctx.tensor(x)
    dim = normalize_dim(ctx, dim, v.type.rank)
    offset = _start(ctx, index, v.type.shape[dim])
    sliced = slice_value(ctx, v, dim, offset, sympy.Integer(1), 1, _with_dim(v.type, dim, 1))
    return ctx.reshape(sliced, ctx.out_type().shape)


@register_lowering(aten.cat.default)
def cat(ctx, tensors, dim=0):
    out = ctx.out_type()
    dim = normalize_dim(ctx, dim, out.rank)
    values = []
    for t in tensors:
        shape = ctx.meta(t).shape
        if len(shape) == 1 and shape[0] == 0 and out.rank != 1:
            continue  # torch's legacy rule: 1-D empty tensors are skipped by cat
        v = ctx.cast(ctx.tensor(t), out.dtype)
        if v.type.shape[dim] == 0:
            continue
        values.append(v)
    if len(values) == 1:
        return values[0]
    return ctx.emit(ConcatOp, values, out, dim=dim)


@register_lowering(aten.split_with_sizes.default)
def split_with_sizes(ctx, x, split_sizes, dim=0):
    v = ctx.tensor(x)
    dim = normalize_dim(ctx, dim, v.type.rank)
    results, offset = [], sympy.Integer(0)
    for i, s in enumerate(split_sizes):
        out = ctx.out_type(i)
        results.append(slice_value(ctx, v, dim, offset, out.shape[dim], 1, out))
        offset = offset + ctx.expr(s)
    return tuple(results)


@register_lowering(aten.slice_scatter.default)
def slice_scatter(ctx, x, src, dim=0, start=None, end=None, step=1):
    v = ctx.tensor(x)
    dim = normalize_dim(ctx, dim, v.type.rank)
    size = v.type.shape[dim]
    lo, hi = _start(ctx, start, size), _start(ctx, end, size, size)
    if step != 1:
        return _strided_scatter(ctx, v, ctx.tensor(src), dim, lo, hi, int(step))
    return scatter_values(ctx, v, ctx.tensor(src), dim, lo, hi)


def _strided_scatter(ctx, v, s, dim, lo, hi, step):
    """``x[..., lo:hi:step, ...] = s`` over every ``step``-th element of the dim (``x[..., ::2]`` and ``x[..., 1::2]``
    in the backward of an interleaved rotary embedding): ``x`` seen as ``[n / step, step]`` along the dim, ``s``
    replacing position ``lo`` of the inner one (a concat along it), then seen whole again. Other strided ranges are
    refused."""
    n = v.type.shape[dim]
    if not (n.is_Integer and lo.is_Integer and hi.is_Integer):
        raise ctx.error(f"slice_scatter with step={step} over a symbolic range")
    n, lo, hi = int(n), int(lo), int(hi)
    if n % step or not 0 <= lo < step or hi < n - step + lo + 1:
        raise ctx.error(f"slice_scatter [{lo}:{hi}:{step}] of a dim of {n}: only every step-th element of the whole "
                        f"dim (from a start below the step, the length a multiple of it) is lowered")
    shape = list(v.type.shape)
    split = v.type.with_shape(shape[:dim] + [sympy.Integer(n // step), sympy.Integer(step)] + shape[dim + 1:])
    inner = ctx.reshape(s, shape[:dim] + [sympy.Integer(n // step), sympy.Integer(1)] + shape[dim + 1:])
    out = scatter_values(ctx, ctx.reshape(v, split.shape), inner, dim + 1, sympy.Integer(lo), sympy.Integer(lo + 1),
                         split.with_dtype(ctx.out_type().dtype))
    return ctx.reshape(out, ctx.out_type().shape)


@register_lowering(aten.select_scatter.default)
def select_scatter(ctx, x, src, dim, index):
    v = ctx.tensor(x)
    dim = normalize_dim(ctx, dim, v.type.rank)
    start = _start(ctx, index, v.type.shape[dim])
    one = _with_dim(v.type, dim, 1).shape
    return scatter_values(ctx, v, ctx.reshape(ctx.tensor(src), one), dim, start, start + 1)


def scatter_values(ctx, v, s, dim, lo, hi, out=None):
    """``out`` (default: the node's result type) = v with out[lo:hi] along ``dim`` replaced by ``s``:
    concat(v[:lo], s, v[hi:]), empty pieces left out."""
    out = out or ctx.out_type()
    size = v.type.shape[dim]
    values = []
    for offset, length in ((sympy.Integer(0), lo), (hi, size - hi)):
        length = sympy.simplify(length)
        if length == 0:
            continue
        values.append((offset, slice_value(ctx, v, dim, offset, length, 1, _with_dim(v.type, dim, length))))
    piece = ctx.cast(s, out.dtype)
    ordered = [p for o, p in values if o == 0] + [piece] + [p for o, p in values if o != 0]
    if len(ordered) == 1:
        return ordered[0]
    return ctx.emit(ConcatOp, ordered, out, dim=dim)


@register_lowering(aten.constant_pad_nd.default)
def constant_pad_nd(ctx, x, pad, value=0):
    """``F.pad(x, pad, value=value)`` (a causal LM's labels padded with the ignore index, a mask widened by one
    column)."""
    amounts = [ctx.expr(p) for p in pad]
    if not all(a.is_Integer for a in amounts):
        raise ctx.error(f"pad {list(pad)}: symbolic amounts are not supported")
    v = pad_value(ctx, ctx.tensor(x), [int(a) for a in amounts], value)
    out = ctx.out_type()
    if tuple(v.type.shape) != tuple(out.shape):
        raise ctx.error(f"padded shape {list(v.type.shape)} does not match the result {out}")
    return v


def pad_value(ctx, v, amounts: list[int], value):
    """``v`` padded: per dim from the last, ``amounts = [before, after, ...]``; a negative amount slices that many
    elements off, a positive one concatenates a fill of ``value``."""
    if len(amounts) % 2 or len(amounts) // 2 > v.type.rank:
        raise ctx.error(f"pad {amounts} must hold two amounts per dim for at most {v.type.rank} dims")
    fill = fill_value(ctx, value, v.type.dtype)
    for i in range(len(amounts) // 2):
        dim, (before, after) = v.type.rank - 1 - i, amounts[2 * i: 2 * i + 2]
        if before < 0 or after < 0:
            cut = v.type.shape[dim] - max(-before, 0) - max(-after, 0)
            v = slice_value(ctx, v, dim, max(-before, 0), cut, 1, _with_dim(v.type, dim, cut))
        fills = [ctx.emit(FillOp, [], _with_dim(v.type, dim, n), value=fill) if n > 0 else None for n in (before, after)]
        parts = [p for p in (fills[0], v, fills[1]) if p is not None]
        if len(parts) > 1:
            length = v.type.shape[dim] + max(before, 0) + max(after, 0)
            v = ctx.emit(ConcatOp, parts, _with_dim(v.type, dim, length), dim=dim)
    return v


def _with_dim(t, dim, size):
    """``t`` with extent ``size`` along ``dim``."""
    shape = list(t.shape)
    shape[dim] = sympy.sympify(size)
    return t.with_shape(shape)


@register_lowering(aten.as_strided.default)
def as_strided(ctx, x, size, stride, storage_offset=None):
    """``as_strided`` that reads a row-major prefix of a contiguous input: a reshape (of the flat input's first
    elements when the view is smaller). AOTAutograd writes views it regenerates so (group_norm's weighted
    decomposition: ``[2, 3, 2, 1]`` as ``[2, 6]`` of strides ``[6, 1]``); other strides or offsets fall back."""
    meta = ctx.meta(x)
    size, stride = [ctx.expr(s) for s in size], [ctx.expr(s) for s in stride]
    offset = ctx.expr(storage_offset or 0)
    if not all(e.is_Integer for e in [*size, *stride, offset, *(ctx.expr(d) for d in meta.shape)]):
        raise ctx.error("as_strided of symbolic sizes, strides or offset")
    size, stride = [int(s) for s in size], [int(s) for s in stride]
    row_major, step = [], 1
    for s in reversed(size):
        row_major.append(step)
        step *= s
    row_major.reverse()
    numel, whole = step, meta.numel()
    if int(offset) != 0 or meta.storage_offset() != 0 or not meta.is_contiguous() or numel > whole or any(
            n != 1 and s != r for n, s, r in zip(size, stride, row_major)):
        raise ctx.error(f"as_strided to {size} of strides {stride}, offset {int(offset)}, from {list(meta.shape)} of "
                        f"strides {list(meta.stride())}: only a row-major prefix of a contiguous input")
    flat = ctx.reshape(ctx.tensor(x), [whole])
    if numel < whole:
        flat = slice_value(ctx, flat, 0, sympy.Integer(0), sympy.Integer(numel), 1, flat.type.with_shape((numel,)))
    return ctx.reshape(flat, size)

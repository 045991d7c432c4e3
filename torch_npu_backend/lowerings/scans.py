"""Scans along a dim of static length: ``cumprod``, ``cummax``/``cummin`` (values and indices), ``logcumsumexp``
(and ``cumsum``'s static case, ``reductions.py``), each as ⌈log2 n⌉ steps of Hillis and Steele's scan::

    for k = 1, 2, 4, … < n:   v[i] = combine(v[i - k], v[i])      (v[i - k] for i < k: the combine's identity)

where ``v[i - k]`` is ``v`` shifted by ``k`` along the dim (a slice and a concatenated fill): elementwise ops the
vector kernels run. The combine is associative, so the result is the scan's; a float product or sum associates in
another order than eager's left to right (eager's cumprod of f32 accumulates in f64 on the CPU): a few f32 ulp.

- ``cumprod``: ``a·b`` (identity 1), in f32 for f16/bf16, rounded once.
- ``cummax`` (``cummin``): the later element where it is NaN, or where neither is NaN and it is ``>=`` (``<=``) the
  earlier one; else the earlier: eager's ``isnan(x) || (!isnan(out) && x >= out)``, so ties and NaN take the later
  index, and a NaN, once met, stays. Values compare in f32 (f16/bf16 widen exactly) or i64; the indices are f32
  positions (exact below 2^24) carried alongside, converted to i64.
- ``logcumsumexp``: ``max + log1p(exp(min - max))``, or ``max`` where min = max is infinite (eager's
  ``log_add_exp``; identity -inf), in f32.
"""

from __future__ import annotations

import sympy
import torch

from graph_passes.dialects.hfusion import ArangeOp, FillOp
from graph_passes.ir.types import INT_LIMITS, TensorType, is_float_dtype

from ..dtypes import opmath
from . import register_lowering
from .common import binary, compare, normalize_dim, select
from .shape import pad_value
from .transcendental import F32

aten = torch.ops.aten


def scan(ctx, values, dim, combine, identities):
    """The inclusive scan of the values (one or more of one shape) along ``dim`` of static length:
    ``combine(earlier, later) -> values``; ``identities`` are the values shifted in before the first element."""
    rank = values[0].type.rank
    n = values[0].type.shape[dim]
    if not n.is_Integer:
        raise ctx.error(f"scan over dim {dim} of symbolic length {n}: the step count must be static")
    k, tail = 1, [0, 0] * (rank - 1 - dim)
    while k < int(n):
        earlier = [pad_value(ctx, v, tail + [k, -k], fill) for v, fill in zip(values, identities)]
        values = combine(earlier, values)
        k *= 2
    return values


def _prepared(ctx, x, dim):
    """(x's value in the compute dtype of the result, the dim normalised); a 0-d value is scanned as itself."""
    out = ctx.out_type(0) if isinstance(ctx.node.meta["val"], tuple) else ctx.out_type()
    v = ctx.tensor(x)
    return v, (normalize_dim(ctx, dim, v.type.rank) if v.type.rank else None), out


@register_lowering(aten.cumprod.default)
def cumprod(ctx, x, dim, *, dtype=None):
    v, d, out = _prepared(ctx, x, dim)
    v = ctx.cast(v, opmath(out.dtype))
    if d is None:
        return ctx.cast(v, out.dtype)
    one = 1.0 if is_float_dtype(v.type.dtype) else 1
    (r,) = scan(ctx, [v], d, lambda e, l: [binary(ctx, "mul", e[0], l[0])], [one])
    return ctx.cast(r, out.dtype)


def _cumext(name, later_wins):
    def lower(ctx, x, dim):
        v, d, out = _prepared(ctx, x, dim)
        floats = is_float_dtype(v.type.dtype)
        keys = ctx.cast(v, "f32" if floats else "i64")
        if d is None:  # a 0-d value: itself, at index 0
            return v, ctx.emit(FillOp, [], ctx.out_type(1), value=0)
        n = keys.type.shape[d]
        shape = [sympy.Integer(1)] * keys.type.rank
        shape[d] = n
        pos = ctx.broadcast_to(ctx.reshape(ctx.emit(ArangeOp, [], TensorType((n,), "f32"), start=0, step=1), shape),
                               keys.type.shape)
        lo, hi = INT_LIMITS["i64"]
        identity = (float("-inf") if floats else lo) if name == "cummax" else (float("inf") if floats else hi)
        m = F32(ctx)

        def combine(earlier, later):
            (ev, ei), (lv, li) = earlier, later
            take = compare(ctx, later_wins, lv, ev)
            if floats:
                take = m.bin("logical_or", m.cmp("ne", lv, lv), m.bin("logical_and", m.cmp("eq", ev, ev), take))
            return [select(ctx, take, lv, ev), select(ctx, take, li, ei)]

        vals, idx = scan(ctx, [keys, pos], d, combine, [identity, -1.0])
        return ctx.cast(vals, out.dtype), ctx.cast(idx, "i64")

    lower.__name__ = name
    return lower


register_lowering(aten.cummax.default)(_cumext("cummax", "ge"))
register_lowering(aten.cummin.default)(_cumext("cummin", "le"))


@register_lowering(aten.logcumsumexp.default)
def logcumsumexp(ctx, x, dim):
    v, d, out = _prepared(ctx, x, dim)
    v = ctx.cast(v, "f32")
    if d is None:
        return ctx.cast(v, out.dtype)
    m = F32(ctx)

    def combine(earlier, later):
        hi, lo = m.max(earlier[0], later[0]), m.min(earlier[0], later[0])
        r = m.add(hi, m.log1p(m.exp(m.sub(lo, hi))))
        both_inf = m.bin("logical_and", m.cmp("eq", lo, hi), m.cmp("eq", m.abs(lo), float("inf")))
        return [m.where(both_inf, hi, r)]

    (r,) = scan(ctx, [v], d, combine, [float("-inf")])
    return ctx.cast(r, out.dtype)

"""Conversions to a float dtype with a round mode, rounded once from the exact source value (the meaning of
``hfusion.cast {round_mode}`` into a float type; torch's ``.to`` rounds to nearest even only).

Modes as ``hfusion.cast``: ``rint`` (nearest, ties to even), ``round`` (nearest, ties away from zero), ``floor``,
``ceil``, ``trunc``. Sources: integers (any int64) or a wider float. Method: ``r = x.to(dtype)`` is the nearest
value; the exact comparison of ``r`` with ``x`` (in int64, or in float64 for a float source) says on which side
of ``x`` it lies, and a step to the neighbouring value of ``dtype`` fixes the directed modes and the ties.
"""

from __future__ import annotations

import torch

_BITS = {torch.float32: torch.int32, torch.float16: torch.int16, torch.bfloat16: torch.int16}
TWO_63 = 2.0**63


def _step(r: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    """The neighbour of each finite ``r`` toward +inf (``up``) or -inf, in ``r``'s dtype."""
    r = r + 0.0  # -0 -> +0
    bits = r.view(_BITS[r.dtype]).to(torch.int64)
    grow = ((r > 0) & up) | ((r < 0) & ~up)  # moving away from zero adds one to the magnitude's bits
    shrink = ((r > 0) & ~up) | ((r < 0) & up)
    bits = torch.where(grow, bits + 1, torch.where(shrink, bits - 1, bits))
    out = bits.to(_BITS[r.dtype]).view(r.dtype)
    tiny = torch.ones((), dtype=_BITS[r.dtype]).view(r.dtype)  # the smallest subnormal
    return torch.where(r == 0, torch.where(up, tiny, -tiny), out)


def _compare(r: torch.Tensor, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(r > x, r < x), exactly."""
    rd = r.to(torch.float64)
    if x.is_floating_point():
        xd = x.to(torch.float64)
        return rd > xd, rd < xd
    big = rd >= TWO_63
    ri = torch.where(big, torch.zeros_like(rd), rd).to(torch.int64)
    return big | (~big & (ri > x)), ~big & (ri < x)


def _is_tie(r: torch.Tensor, away: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """x is exactly halfway between r and its neighbour ``away``."""
    if x.is_floating_point():
        xd = x.to(torch.float64)
        return (xd - r.to(torch.float64)).abs() == (away.to(torch.float64) - xd).abs()
    # integers: |x - r| and |away - x| in int64 (a value of 2^63 is 2^63 - 1, plus one)
    def dist(v):
        d = v.to(torch.float64)
        big = d.abs() >= TWO_63
        vi = torch.where(big, torch.zeros_like(d), d).to(torch.int64)
        edge = torch.where(d > 0, torch.full_like(vi, 2**63 - 1), torch.full_like(vi, -(2**63 - 1)))
        return torch.where(big, (edge - x).abs() + 1, (vi - x).abs())

    return dist(r) == dist(away)


def round_to_float(x: torch.Tensor, dtype: torch.dtype, mode: str) -> torch.Tensor:
    """``x`` (an integer or wider float tensor) in float ``dtype``, rounded once with ``mode``."""
    r = x.to(dtype)
    if mode == "rint":
        return r
    finite = torch.isfinite(r) & (torch.isfinite(x) if x.is_floating_point() else torch.ones_like(r, dtype=torch.bool))
    above, below = _compare(r, x)
    positive = x > 0
    if mode == "floor":
        fix, up = above, torch.zeros_like(above)
    elif mode == "ceil":
        fix, up = below, torch.ones_like(below)
    elif mode == "trunc":
        fix, up = (positive & above) | (~positive & below), ~positive
    elif mode == "round":  # differs from rint only on a tie rint broke toward zero
        toward_zero = (positive & below) | (~positive & above)
        away = _step(torch.where(finite, r, torch.zeros_like(r)), positive)
        fix, up = toward_zero & _is_tie(r, away, x), positive
    else:
        raise ValueError(f"unknown round mode {mode!r}")
    fix = fix & finite
    out = torch.where(fix, _step(torch.where(finite, r, torch.zeros_like(r)), up), r)
    if mode in ("floor", "ceil", "trunc") and x.is_floating_point():  # overflow rounds to the largest finite
        largest = torch.tensor(torch.finfo(dtype).max, dtype=dtype)  # when the mode rounds toward zero
        toward_zero = {"floor": positive, "ceil": ~positive, "trunc": torch.ones_like(positive)}[mode]
        clip = torch.isinf(r) & torch.isfinite(x) & toward_zero
        out = torch.where(clip, torch.where(positive, largest, -largest), out)
    return out

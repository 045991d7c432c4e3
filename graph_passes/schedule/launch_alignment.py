"""Work splits whose GM alignment only the launch knows.

Two cores never write one 32-B GM block (docs/schedule.md). With symbolic sizes a split may keep that rule for some
sizes only (f32 rows of ``T`` are whole blocks when 8 divides T): the schedule splits anyway and the launch decides
— the tiling's ``block_dim`` is the usual core count when every such byte count is whole blocks, or its dim has a
single tile at this launch (nothing is split there), and 1 otherwise (every work item on one core, in order).
Expressed with ``Min``/``Max``/``Mod`` so the tiling stays an IR size expression. A dim whose count only the
launch knows steps its work items per launch (:func:`launch_step`), in granules that keep the rule at that
launch's sizes (:func:`rows_for_whole_blocks`).
"""

from __future__ import annotations

import sympy


def aligned_or_whole(size, tiles, block: int) -> sympy.Expr:
    """1 when ``size`` bytes are whole ``block``-byte blocks or the dim has one tile (``tiles`` == 1), else 0."""
    whole = 1 - sympy.Min(1, sympy.Mod(size, block))
    single = 1 - sympy.Min(1, tiles - 1)
    return sympy.Max(whole, single)


def launch_block_dim(block_dim, checks, block: int) -> sympy.Expr:
    """``block_dim`` when every ``(bytes, tiles)`` of ``checks`` is :func:`aligned_or_whole`, else 1."""
    ok = sympy.Mul(*[aligned_or_whole(size, tiles, block) for size, tiles in dict.fromkeys(checks)])
    return 1 + (block_dim - 1) * ok


def rows_for_whole_blocks(row_bytes, block: int) -> sympy.Expr:
    """The fewest rows of ``row_bytes`` bytes that are whole ``block``-byte blocks (``block`` a power of two):
    ``block / gcd(row_bytes, block)``, each power of two dividing the row halving it (bool rows of ``T`` bytes: 2
    rows at T = 16, 8 at T = 12, 32 at T odd)."""
    gcd, k = sympy.Integer(1), 2
    while k <= block:
        gcd = gcd * (2 - sympy.Min(1, sympy.Mod(row_bytes, k)))
        k *= 2
    return sympy.floor(sympy.Integer(block) / gcd)


def launch_step(n, tile: int, granule, cores: int, others) -> sympy.Expr:
    """The work items' step along a dim of ``n`` elements split per launch: ``granule``s spread over the cores left
    per work item of the other dims (``others`` of them), at least one granule (a launch may have no rows) and at
    most the compile-time ``tile``: ``Min(tile, g·Max(1, ceiling(n / (g·want))))``,
    ``want = ceiling(cores / Max(1, others))``."""
    want = sympy.ceiling(sympy.Integer(cores) / sympy.Max(1, others))
    return sympy.Min(tile, granule * sympy.Max(1, sympy.ceiling(n / (granule * want))))

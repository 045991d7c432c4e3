"""Work items of a data-movement kernel's result: tiles of several of its dims, flattened, cyclic over the cores.

A result of shape ``N`` in tiles ``T`` is split along its *work dims* (:func:`work_dims`); each work item is one
tile along every work dim and the whole of every other dim (looped tile by tile inside the work item)::

    work items = Π_{d in work dims} ceil(N_d / T_d)       t = flattened (i_d …) over the work dims, row-major

Two cores never write the same 32-B GM block (the GM write granule): a work item's GM footprint is a union of
contiguous runs, each starting at ``Σ_e i_e·S_e`` (``S_e = Π_{j>e} N_j`` elements, ``es`` bytes each) and ending at
the next tile boundary of its innermost work dim ``d`` or at the end of ``d``'s slab. So dim ``d`` may be a work dim
only when

- (tiles) ``T_d·S_d·es`` is whole blocks: ``T_d`` is a multiple of :func:`block_step` (the row step), and
- (slabs) one index of the dims outside ``d`` — ``N_d·S_d·es`` bytes — is whole blocks, or every dim outside
  ``d`` is 1 (:func:`slabs_whole`): the last, partial tile of ``d`` ends where the next slab starts, and the
  outer dims' offsets are multiples of a slab.

Symbolic sizes count only through the integer factor they are known to have (``4*s0`` f32 rows: 16 B).

For static dims the tiles are shrunk (:func:`spread`), outermost dim first, until there are work items for every
core: along each dim the tile is the multiple of its step that gives the busiest core the fewest elements
(``ceil(items / cores) × Π T``, the larger tile on a tie), among those that keep at most twice as many work items
as cores — a ``[1, 12, 512, 64]`` result in tiles ``[1, 1, 384, 64]`` becomes 48 work items of ``[1, 1, 128, 64]``.
Symbolic dims keep the tile UB gave them (their tile count is a size expression in the ``tiling`` attribute), and a
result with a symbolic work dim is not spread: its work items are not known, as many as ``s0`` may give. The
innermost symbolic work dim steps per launch instead, at most its tile (:func:`launch_steps`). A dim whose
tiles or slabs are whole blocks only for some sizes is a work dim too (:func:`launch_work_dims`): the launch runs the
kernel on every core when its sizes make them whole blocks, on one core otherwise.
"""

from __future__ import annotations

import math
from typing import Callable

import sympy

from ..intmath import align_up, ceil_div
from ..ir.sizes import as_expr
from .launch_alignment import launch_step

BLOCK = 32  # bytes: UB alignment, GM write granule, one element per block in a gather buffer
SPREAD_ITEMS = 2  # spread considers up to this many work items per core


def _content(e) -> int:
    """The largest integer known to divide the size expression ``e`` (``256*s0 + 768``: 256)."""
    c = sympy.expand(as_expr(e)).as_content_primitive()[0]
    return abs(int(c)) if c.is_Integer and c != 0 else 1


def _inner(shape: list, d: int):
    """S_d: elements of one index of dim ``d`` (the product of the dims inside it)."""
    return sympy.Mul(*[as_expr(n) for n in shape[d + 1:]])


def block_step(shape: list, es: int, d: int) -> int:
    """The multiple of ``T_d`` that makes a tile of dim ``d`` whole 32-B GM blocks."""
    return BLOCK // math.gcd(_content(_inner(shape, d) * es), BLOCK)


def slabs_whole(shape: list, es: int, d: int) -> bool:
    """One index of the dims outside ``d`` is whole 32-B blocks, or there is no such index but the first."""
    if all(as_expr(n) == 1 for n in shape[:d]):
        return True
    return _content(as_expr(shape[d]) * _inner(shape, d) * es) % BLOCK == 0


def work_dims(shape: list, es: int, tile: list[int], uppers: list[int]) -> list[int]:
    """The dims split across work items: the tile may not cover the dim (``uppers``: the dims' upper bounds) and
    splitting keeps every core's GM writes whole 32-B blocks for every size (module docstring). The others are
    looped inside the work item."""
    return [d for d in range(len(shape)) if _unaligned(shape, es, tile, uppers, d) == []]


def launch_work_dims(shape: list, es: int, tile: list[int], uppers: list[int]) -> tuple[list[int], list]:
    """The work dims when sizes only the launch knows are taken to keep the rule, and the ``(bytes, tiles)`` the
    launch must find whole 32-B blocks or one tile (a tile's and a slab's, per dim that needs them). A head
    transposed out of ``[B, T, H, D]`` with every size symbolic has only the batch as a work dim by
    :func:`work_dims` (f32 rows of ``D`` may be 4 B apart): one work item at batch 2; taking ``H`` and ``T`` too
    when ``4*D`` and ``4*T*D`` are whole blocks spreads it over the cores (one core otherwise, ``block_dim`` in
    ``movement.tiling_params``, launch_alignment.py)."""
    dims, checks = [], []
    for d in range(len(shape)):
        need = _unaligned(shape, es, tile, uppers, d)
        if need is not None:
            dims.append(d)
            checks += [(size, sympy.ceiling(as_expr(shape[d]) / tile[d])) for size in need]
    return dims, checks


def _unaligned(shape: list, es: int, tile: list[int], uppers: list[int], d: int) -> list | None:
    """The byte counts a split of dim ``d`` needs whole 32-B blocks and that are not known to be — its tile's
    (``T_d·S_d·es``, :func:`block_step`) and, unless every dim outside it is 1, its slab's (``N_d·S_d·es``,
    :func:`slabs_whole`) — or None when ``d`` is never split: its tile covers it, or such a count is static."""
    if tile[d] >= uppers[d]:
        return None
    sizes = [tile[d] * _inner(shape, d) * es]
    if not all(as_expr(n) == 1 for n in shape[:d]):
        sizes.append(as_expr(shape[d]) * _inner(shape, d) * es)
    need = [sympy.expand(size) for size in sizes if _content(size) % BLOCK]
    return None if any(size.is_Integer for size in need) else need


def launch_steps(shape: list, es: int, tile: list[int], uppers: list[int], dims: list[int], cores: int) -> dict:
    """The innermost symbolic work dim whose tiles and slabs are whole blocks for every size → its work items'
    step, chosen per launch (:func:`launch_alignment.launch_step`) in granules of its :func:`block_step`, at most
    ``T_d``. A head transposed out of ``[B, H, T, 16]`` into ``[B, T, H, 16]`` in tiles of 384 rows of T was one
    work item per batch; at T = 16 it takes 16 steps of one row. Empty when there is no such dim."""
    symbolic = [d for d in dims if not as_expr(shape[d]).is_Integer and _unaligned(shape, es, tile, uppers, d) == []]
    if not symbolic:
        return {}
    d = symbolic[-1]
    others = sympy.Mul(*[sympy.ceiling(as_expr(shape[k]) / tile[k]) for k in dims if k != d])
    return {d: launch_step(as_expr(shape[d]), tile[d], block_step(shape, es, d), cores, others)}


def static_items(shape: list, es: int, tile: list[int], uppers: list[int]) -> int:
    """The work items, counting one tile per symbolic work dim."""
    return math.prod(ceil_div(int(shape[d]), tile[d]) for d in work_dims(shape, es, tile, uppers)
                     if as_expr(shape[d]).is_Integer)


def spread(shape: list, es: int, tile: list[int], uppers: list[int], cores: int, steps: list[int],
           fits: Callable[[list[int]], bool]) -> list[int]:
    """``tile`` with its static dims shrunk, outermost first, until the work items fill ``cores`` (module
    docstring). ``steps[d]``: the multiple a new tile of dim d must be (at least :func:`block_step`); a tile that
    does not ``fits`` is never chosen. A tile with a symbolic work dim is kept: its work items are not known."""
    tile = list(tile)
    if any(not as_expr(shape[d]).is_Integer for d in work_dims(shape, es, tile, uppers)):
        return tile
    count = lambda t: static_items(shape, es, t, uppers)  # noqa: E731

    def busiest(t) -> int:
        return ceil_div(count(t), cores) * math.prod(t)

    for d in range(len(shape)):
        if count(tile) >= cores:
            break
        n = as_expr(shape[d])
        if not n.is_Integer or not slabs_whole(shape, es, d):
            continue
        n, step = int(n), steps[d]
        others = count(with_size(tile, d, n))
        best = tile
        for c in range(2, min(ceil_div(n, step), ceil_div(SPREAD_ITEMS * cores, others)) + 1):
            t = align_up(ceil_div(n, c), step)  # the smallest multiple of step with at most c tiles
            trial = with_size(tile, d, t)
            if t < best[d] and fits(trial) and busiest(trial) < busiest(best):
                best = trial
        tile = best
    return tile


def with_size(tile, d, t):
    """A copy of ``tile`` with size ``t`` along dim ``d``."""
    out = list(tile)
    out[d] = t
    return out

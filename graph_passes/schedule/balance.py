"""The tile of an elementwise kernel with static shapes that the estimate (cost.py) says runs fastest.

``tiling._balance`` shrinks the UB-sized tile, outermost dim first, until every core has a work item; it does not
weigh how the work items land on the cores. On a small kernel that matters: 256×512 f32 shrunk to rows of 6
(``ceil(256 / 48)``) gives 43 row tiles, and cutting the columns in two then gives 86 work items — two per core on
38 cores, each paying the whole chain of dependent vector steps (a GELU: ~21 start-ups of 30 cycles) — where 24×2
tiles of 11×256 give every core one. So, for a kernel without reductions, every split of the parallel dims into at
most ``MAX_ITEMS_PER_CORE`` work items per core (per dim: ``ceil(n / k)`` rounded up to the dim's step — its
whole-block step, or whole 256-B repeats for the last dim) that fits UB is estimated with
``cost.kernel_time`` (the busiest core's first load — the loads its first op reads, hivm-inject-sync's first flag
— its work items, its last store), and the fastest wins; a tie
keeps ``_balance``'s tile.
"""

from __future__ import annotations

import itertools

from ..intmath import align_up, ceil_div
from .buffers import BufferPlan
from .cost import kernel_time, values_estimate
from .kernel_info import KernelInfo
from .software_pipeline import compute_order

MAX_ITEMS_PER_CORE = 2  # splits with more work items than this × cores are not considered


def _choices(n: int, cap: int, step: int, max_tiles: int) -> list[int]:
    """Tile sizes for a dim of ``n`` at most ``cap``: ceil(n / k) rounded up to ``step``, for k up to
    ``max_tiles`` tiles."""
    out = set()
    for k in range(1, max_tiles + 1):
        per_tile = ceil_div(n, k)
        r = min(n, align_up(per_tile, step))
        if r <= cap:
            out.add(r)
    return sorted(out, reverse=True)


def fastest_split(info: KernelInfo, plan: BufferPlan, cap, tile, target, multi_buffer: int, steps: dict,
                  repeat: int, keep, whole_dims) -> list[int]:
    """The tile (see the module docstring): ``cap`` is the UB-sized tile (no dim larger), ``tile`` the balanced
    one (kept on a tie), ``steps`` each non-last parallel dim's step, ``repeat`` the last dim's elements per
    256-B repeat, ``keep`` the dims whose tile stays, ``whole_dims`` the dims a tile covers (its
    loop-invariant loads)."""
    cores = target.vector_cores
    limit = MAX_ITEMS_PER_CORE * cores
    last = info.rank - 1
    dims = [d for d in info.parallel_dims if d not in keep]
    # Note: the last dim in whole 256-B repeats (or whole): the estimate does not see that narrower GM rows are
    # bursts of their own, each filling whole 512-B L2 lines from DDR.
    options = {d: _choices(int(info.domain[d]), int(cap[d]), repeat if d == last else steps[d], limit) for d in dims}
    order = compute_order(info, plan)
    first_in = _first_loads(plan, order)

    def cost(t) -> float:
        return kernel_time(info, plan, t, target, values_estimate(order, plan, t, target), first_in=first_in)

    best, best_time = list(tile), cost(tile)
    for combo in itertools.product(*(options[d] for d in dims)):
        t = list(tile)
        items = 1
        for d, size in zip(dims, combo):
            t[d] = size
            items *= ceil_div(int(info.domain[d]), size)
        if items > limit or t == best:
            continue
        if plan.ub_bytes(t, target.ub_align, multi_buffer, whole_dims(t)) > target.ub_bytes:
            continue
        time = cost(t)
        if time < best_time:
            best, best_time = t, time
    return best


def _first_loads(plan: BufferPlan, order: list) -> list:
    """The loaded buffers the work item's first computed op reads (an inlined broadcast: its source's)."""
    if not order:
        return []
    out = []
    for x in order[0].op.operands:
        if x in plan.inlined:
            x = x.op.operands[0]
        b = plan.of_value.get(x)
        if b is not None and b.loaded and b not in out:
            out.append(b)
    return out

"""The last round of a row kernel's work items, spread over every core (docs/schedule.md, *Work split*).

Work items are dealt cyclically: with ``F`` full rounds of ``B`` work items of ``T`` rows, the ``M`` rows left
(fewer than ``T · B``) would go to the first ``ceil(M / T)`` cores in tiles of ``T`` rows, and those cores end a
whole tile after the others. Instead the last round cuts its ``M`` rows into units of ``g`` rows (the whole-GM-block
step of the dim, docs/schedule.md: every work item still writes whole 32-B blocks) and gives each of
``B' = min(B, ceil(M / g))`` cores ``q`` units, the first ``r`` of them one more (``q, r = divmod(units, B')``)::

    work item t < F·B:   rows [t·T, t·T + T)
    work item F·B + u:   rows [F·T·B + g·(u·q + min(u, r)), … + g·(q + (u < r))), the last one ending at n

The cores with a larger last item are the lowest block indices, whose loads also come first in the shared DDR.
The busiest core then ends at most ``g`` rows after the others instead of a whole tile (docs/schedule.md,
*Measurements*). Static shapes only (the round count is a compile-time integer).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from ..intmath import ceil_div
from ..ir.sizes import as_expr
from .kernel_info import KernelInfo


@dataclass(frozen=True)
class BalancedTail:
    dim: int  # the domain dim the work items tile
    n: int  # its extent
    tile: int  # rows of a full work item (T)
    cores: int  # the block dim (B)
    unit: int  # rows of one unit of the last round (g)
    full_items: int  # F·B work items of T rows
    per_item: int  # q: units of every last-round work item
    extra: int  # r: the first r last-round work items take one unit more
    tail_items: int  # B': last-round work items

    @property
    def n_tiles(self) -> int:
        return self.full_items + self.tail_items

    @cached_property
    def tail_rows(self) -> list[int]:
        """Rows of each last-round work item (the last one may end early, at the tensor's end)."""
        return [self.rows_of(self.full_items + u)[1] for u in range(self.tail_items)]

    @property
    def heavy_rows(self) -> int:
        """Rows of the largest last-round work item."""
        return max(self.tail_rows)

    @property
    def heavy_cores(self) -> int:
        """Cores whose last work item is the largest (the first block indices)."""
        return self.tail_rows.count(self.heavy_rows)

    def rows_of(self, t: int) -> tuple[int, int]:
        """(first row, rows) of work item ``t`` (the lowering emits the same arithmetic, hfusion_to_hivm.tile_of)."""
        if t < self.full_items:
            return t * self.tile, self.tile
        u = t - self.full_items
        lo = u * self.per_item + min(u, self.extra)
        hi = lo + self.per_item + (1 if u < self.extra else 0)
        start = self.full_items * self.tile + self.unit * lo
        return start, min(self.unit * (hi - lo), self.n - start)

    def tiling(self) -> dict:
        """The tiling parameters the lowering reads (static integers)."""
        return {"tail_full": self.full_items, "tail_unit": self.unit, "tail_units": self.per_item,
                "tail_extra": self.extra}


def balanced_tail(dim: int, n: int, tile: int, cores: int, unit: int) -> BalancedTail | None:
    """The balanced last round of ``n`` rows in tiles of ``tile`` over ``cores``, or None when there is no partial
    round after a full one, or when it would neither give the busiest cores fewer rows nor make fewer of them the
    busiest than the cyclic deal."""
    rounds = n // (tile * cores)
    rest = n - rounds * tile * cores
    if rounds == 0 or rest == 0:
        return None
    units = ceil_div(rest, unit)
    items = min(cores, units)
    q, r = divmod(units, items)
    tail = BalancedTail(dim, n, tile, cores, unit, rounds * cores, q, r, items)
    cyclic_rows = min(tile, rest)  # the cyclic deal's busiest cores: whole tiles of the rest, or the rest on one
    cyclic_cores = rest // tile if rest >= tile else 1
    if (tail.heavy_rows, tail.heavy_cores) >= (cyclic_rows, cyclic_cores):
        return None
    return tail


def row_tail(info: KernelInfo, tile, cores: int, gm_steps: dict) -> BalancedTail | None:
    """The balanced last round of a static row kernel (its last dim reduced) whose work items tile one parallel dim
    other than the last; None for any other kernel."""
    if info.rank - 1 not in info.reduce_dims:
        return None
    parallel = list(info.parallel_dims)
    if not all(as_expr(info.domain[d]).is_Integer for d in parallel):
        return None
    tiled = [d for d in parallel if int(tile[d]) < int(info.domain[d])]
    if len(tiled) != 1 or tiled[0] == info.rank - 1:
        return None
    d = tiled[0]
    return balanced_tail(d, int(info.domain[d]), int(tile[d]), cores, gm_steps.get(d, 1))

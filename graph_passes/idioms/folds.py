"""Folds of a last-dim reduction: rows longer than one repeat fold pairwise into partials (in scratch or in their
source's buffer), or, rows of whole repeats, block by block (each level reduces every 32-B block to one element)."""

from __future__ import annotations

from ..intmath import align_up, ceil_div
from .limits import MAX_REPEAT, REPEAT_BYTES

SCRATCH_ROWS = 16  # rows folded at once by a long-row reduction
FOLD_PARTIALS = 16  # most 256-B partials per row a long-row reduction folds into
WIDE_FOLD_PARTIALS = 32  # ... when the tile leaves UB for it (``wide``): one fold step fewer for rows of 64 chunks
FOLD_REPEATS = 64  # most 256-B partials of one group of rows (G·K): the reduction's scratch is at most 16 KiB


def row_fold_shape(rows: int, chunks: int, wide: bool = False) -> tuple[int, int]:
    """(G, K) of a last-dim reduction over ``rows`` rows of ``chunks`` 256-B column chunks (> 1): G rows at a
    time, each row's chunks folded into K partials (a power of two, at most half the chunks), which then halve to
    one in log2(K) steps — log-depth, so few rows of many chunks do not pay one dependent instruction per chunk.
    Its scratch is G·K·256 B. ``wide``: up to WIDE_FOLD_PARTIALS partials (the schedule grants it when the tile
    leaves UB for the larger scratch)."""
    g = max(1, min(rows, SCRATCH_ROWS))
    k = 1
    while k * 2 <= min(chunks // 2, WIDE_FOLD_PARTIALS if wide else FOLD_PARTIALS, FOLD_REPEATS // g):
        k *= 2
    return g, k


BLOCK_FOLD_BYTES = FOLD_REPEATS * REPEAT_BYTES  # most scratch of a block fold's levels (as a pairwise row fold's)


def block_fold_lengths(cols: int, es: int) -> list[int]:
    """The row lengths a last-dim sum, max or min over rows of ``cols`` elements of ``es`` bytes passes through
    when block reductions fold it (``vcgadd/vcgmax/vcgmin`` reduce every 32-B block to one
    element, 1 cycle a repeat against 2 for a pairwise ``vadd`` level and 7 for ``vcadd``): ``[cols, cols/e, …]``
    (``e`` elements a block), one dependent step per level, while the row is longer than one repeat and the next
    one is whole 32-B blocks (so every level reads whole repeats of contiguous rows). The last length is then
    reduced per repeat (``vcadd …``, at most one repeat a row) or, longer, by the pairwise fold. Empty (no block
    fold) unless the rows are whole repeats longer than one, at most MAX_REPEAT of them, and the fold takes fewer
    dependent steps than the pairwise one in place (ceil(log2 chunks) + 1: rows of two repeats keep it — the same
    steps and cycles, and its order of summation). f32 rows of 4096: 4096, 512, 64 — three dependent steps with
    the ``vcadd``, where the pairwise fold takes seven."""
    lanes, per_block = REPEAT_BYTES // es, 32 // es
    chunks = cols // lanes
    if cols <= lanes or (cols * es) % REPEAT_BYTES or chunks > MAX_REPEAT:
        return []
    out = [cols]
    while out[-1] > lanes and (out[-1] // per_block * es) % 32 == 0:
        out.append(out[-1] // per_block)
    return out if len(out) > 1 and block_fold_levels(out, es) < in_place_fold_levels(1, chunks) else []


def block_fold_levels(lengths: list[int], es: int) -> int:
    """Dependent steps of a block fold through ``lengths`` (:func:`block_fold_lengths`) of one group of rows: one
    per level, then one per-repeat reduction, or the pairwise fold in place of a last length longer than a repeat
    (:func:`in_place_fold_levels`)."""
    left = ceil_div(lengths[-1], REPEAT_BYTES // es)
    return len(lengths) - 1 + (1 if left == 1 else in_place_fold_levels(1, left))


def block_fold_bytes(rows: int, lengths: list[int], es: int, in_place: bool) -> int:
    """Scratch of a block fold (:func:`block_fold_lengths`) of ``rows`` rows at a time: the first level's results
    and, unless the source dies at the reduction (``in_place``: the second level writes into it), the second's —
    the levels alternate between the two, so no level overwrites what it reads."""
    align = lambda n: align_up(n, 32)  # noqa: E731
    second = align(rows * lengths[2] * es) if len(lengths) > 2 and not in_place else 0
    return align(rows * lengths[1] * es) + second


def block_fold_rows(rows: int, lengths: list[int], es: int, in_place: bool, budget: int = BLOCK_FOLD_BYTES) -> int:
    """Rows a block fold reduces at a time: all of them, or the most whose scratch (:func:`block_fold_bytes`) fits
    ``budget`` (at most MAX_REPEAT: its last step takes one repeat a row); 0 when one row does not fit."""
    g = min(rows, MAX_REPEAT)
    while g and block_fold_bytes(g, lengths, es, in_place) > budget:
        g = min(g - 1, budget * g // block_fold_bytes(g, lengths, es, in_place))
    return g


def in_place_fold_levels(rows: int, chunks: int) -> int:
    """Dependent steps of a last-dim reduction folded in its source's buffer (no scratch), ``rows`` rows
    of ``chunks`` 256-B column chunks (> 1): per group of MAX_REPEAT rows, chunk k ⊕= chunk k + H for the
    largest power of two H < chunks, then the H chunks halve to one, then one per-repeat reduce —
    ceil(log2(chunks)) + 1 (a scratch fold into K partials takes ceil((chunks − 2K) / K) more)."""
    return ((chunks - 1).bit_length() + 1) * ceil_div(rows, MAX_REPEAT)


def block_fold_scratch(rows: int, lengths: list[int], es: int, in_place: bool) -> int:
    """Scratch of a block fold of ``rows`` rows, :func:`block_fold_rows` of them at a time (0: no block fold)."""
    return block_fold_bytes(block_fold_rows(rows, lengths, es, in_place), lengths, es, in_place) if lengths else 0

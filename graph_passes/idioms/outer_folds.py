"""Folds of a reduction over a dim that is not the last: a pairwise tree of elementwise combines of whole rows."""

from __future__ import annotations

from ..intmath import align_up, ceil_div
from .folds import FOLD_REPEATS
from .limits import REPEAT_BYTES

OUTER_FOLD_BYTES = FOLD_REPEATS * REPEAT_BYTES  # a non-wide outer fold's scratch: at most 16 KiB, as a row fold's


def outer_fold_rows(rows: int, lead: int, row_bytes: int, budget: int | None = None, ub_align: int = 32) -> int:
    """K of a reduction over a non-last dim of ``rows`` rows, each ``row_bytes`` bytes of the dims inside it, for
    each of ``lead`` indices of the dims outside it: codegen folds rows r and r + K into K scratch rows, the rows
    from 2K on K at a time, then halves the K rows to one — each step one set of instructions over all the rows it
    combines, :func:`outer_fold_levels` dependent steps. K is the power of two (at most half the next one at or
    above ``rows``) whose rows fit ``budget`` bytes (None: any) with the fewest steps, the smallest on a tie
    (256 rows: K = 128, 8 steps; 300 rows: K = 128, 9 steps — as many as K = 256 takes). K = 1 folds into the
    destination itself (no scratch: one step per row)."""
    best, k = 1, 2
    while k < rows and (budget is None or outer_fold_bytes(k, lead, row_bytes, ub_align) <= budget):
        if outer_fold_levels(rows, k) < outer_fold_levels(rows, best):
            best = k
        k *= 2
    return best


def outer_fold_levels(rows: int, k: int) -> int:
    """Dependent steps of an outer fold of ``rows`` rows into ``k`` (:func:`outer_fold_rows`): the first pairs, one
    per further K rows, the halvings."""
    return 1 + max(0, ceil_div(rows, k) - 2) + (k.bit_length() - 1)


def outer_fold_bytes(k: int, lead: int, row_bytes: int, ub_align: int = 32) -> int:
    """Scratch of an outer fold into ``k`` rows (:func:`outer_fold_rows`): per index of the dims outside the reduced
    one, ``k`` rows padded to whole ``ub_align`` blocks (so that every slab starts aligned); none for k = 1."""
    return 0 if k <= 1 else lead * align_up(k * row_bytes, ub_align)

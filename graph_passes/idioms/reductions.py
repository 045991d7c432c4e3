"""A reduction over several dims, one dim at a time, and the scratch of its stages and folds."""

from __future__ import annotations

from ..intmath import align_up, ceil_div, prod
from .folds import SCRATCH_ROWS, block_fold_lengths, block_fold_scratch, row_fold_shape
from .limits import REPEAT_BYTES
from .outer_folds import OUTER_FOLD_BYTES, outer_fold_bytes, outer_fold_rows

def reduce_stages(shape, dims) -> list[list[int]]:
    """The shapes a reduction over several ``dims`` of a buffer of ``shape`` goes through, one dim at a time: the
    dims above the last from the innermost out (elementwise accumulation of rows: every stage keeps the padded
    rows, so its rows stay 32-B aligned), then the last dim (when reduced); the last entry is the result's shape.
    Codegen keeps every stage but the last in scratch."""
    last = len(shape) - 1
    order = sorted((d for d in dims if d != last), reverse=True) + ([last] if last in dims else [])
    out, cur = [], list(shape)
    for d in order:
        cur = list(cur)
        cur[d] = 1
        out.append(cur)
    return out


def reduce_scratch_bytes(shape, dims, es: int, ub_align: int, kind: str = "sum", wide: bool = False,
                         blocks: bool = False) -> int:
    """Scratch a reduction of a buffer of ``shape`` over ``dims`` needs: its
    intermediate stages (:func:`reduce_stages`, all but the result) and the largest need of one stage — a last-dim
    reduction of rows longer than one repeat folds ``min(rows, SCRATCH_ROWS)`` rows of 256 B (``blocks``, the rows
    held whole: at most that, the levels of a block fold, :func:`block_fold_bytes`); a reduction over a
    non-last dim folds its rows into :func:`outer_fold_rows` scratch rows (the whole tree when ``wide``, else at
    most OUTER_FOLD_BYTES of them); a reduction of a
    contiguous vector (a 1-D buffer, or a non-last dim with every other dim 1) longer than one repeat keeps the
    per-repeat partials of every level; a product over the last dim (no per-repeat product instruction) folds
    ``min(rows, SCRATCH_ROWS)`` rows of 256 B plus a 32-B block each, whatever the row's length."""
    align = lambda n: align_up(n, ub_align)  # noqa: E731
    dims = [d for d in dims if shape[d] > 1] or list(dims)[:1]
    stages = reduce_stages(shape, dims)
    total = sum(align(prod(s) * es) for s in stages[:-1])
    lanes = REPEAT_BYTES // es
    need, cur = 0, list(shape)
    for stage in stages:
        d = next((k for k, (a, b) in enumerate(zip(cur, stage)) if a != b), None)
        vector = d is not None and kind != "prod" and (d != len(cur) - 1 or len(cur) == 1) and \
            all(n == 1 for k, n in enumerate(cur) if k != d)  # a contiguous vector
        if d == len(cur) - 1 and kind == "prod":
            need = max(need, min(prod(cur[:-1]), SCRATCH_ROWS) * (REPEAT_BYTES + 32))
        elif vector:
            n, levels = cur[d], 0  # per-repeat partials, level by level (none within one repeat)
            while n > lanes:
                n = ceil_div(n, lanes)
                levels += align(n * es)
            need = max(need, levels)
        elif d == len(cur) - 1 and cur[d] > lanes:
            g, k = row_fold_shape(prod(cur[:-1]), ceil_div(cur[d], lanes), wide)
            fold = g * k * REPEAT_BYTES
            lengths = block_fold_lengths(cur[d], es) if blocks and kind != "prod" else []
            if lengths:  # Note: at most the pairwise fold's (rows fold pairwise when a block level does not fit),
                # so a tile's scratch never grows as its rows shorten to whole repeats
                fold = min(fold, block_fold_scratch(prod(cur[:-1]), lengths, es, False))
            need = max(need, fold)
        elif d is not None and d != len(cur) - 1:  # an outer fold (two rows fold straight into the result)
            lead, row_bytes = prod(cur[:d]), prod(cur[d + 1:]) * es
            k = outer_fold_rows(cur[d], lead, row_bytes, None if wide else OUTER_FOLD_BYTES, ub_align)
            need = max(need, outer_fold_bytes(k, lead, row_bytes, ub_align))
        cur = stage
    return total + need
